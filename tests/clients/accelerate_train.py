"""Hugging Face accelerate (0.30) under aml-launch: a few DDP steps on CPU (gloo). Every rank
prints one line the test reads: its place as accelerate sees it and a checksum of the weights
after training (equal on every rank when the gradients were really averaged)."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset


def main():
    accelerator = Accelerator(cpu=True)
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(256, 8)
    data = DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=16, shuffle=True)
    model, optimizer, data = accelerator.prepare(model, optimizer, data)
    for step, (inputs, targets) in enumerate(data):
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        if step == 4:
            break
    checksum = sum(p.detach().double().sum().item() for p in accelerator.unwrap_model(model).parameters())
    state = accelerator.state
    print(f"CLIENT accelerate env={state.distributed_type} rank={state.process_index} "
          f"world={state.num_processes} main={int(state.is_main_process)} weights={checksum:.10f}", flush=True)


if __name__ == "__main__":
    main()
