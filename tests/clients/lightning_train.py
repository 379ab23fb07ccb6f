"""PyTorch Lightning (2.2) under aml-launch: DDP on CPU (gloo) for a few steps. Every rank
prints one line the test reads: what Lightning took the launch for, its place, and a checksum
of the weights after training (equal on every rank when DDP really synchronized them)."""
import os

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, TensorDataset


class Regression(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def _register_sharded_tensor_state_dict_hooks_if_available(self):
        # Debian's torch 1.13 cannot import torch.distributed._shard on Python 3.11 (a dataclass
        # with a mutable default); this model has no sharded tensors to hook.
        pass

    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    torch.manual_seed(0)  # the same start on every rank; the data differs by rank (DistributedSampler)
    x = torch.randn(256, 8)
    y = x.sum(dim=1, keepdim=True)
    trainer = pl.Trainer(accelerator="cpu", devices=int(os.environ["LOCAL_WORLD_SIZE"]),
                         num_nodes=int(os.environ["GROUP_WORLD_SIZE"]), strategy="ddp", max_steps=5,
                         logger=False, enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False)
    model = Regression()
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=16))
    checksum = sum(p.detach().double().sum().item() for p in model.parameters())
    env = type(trainer.strategy.cluster_environment).__name__
    print(f"CLIENT lightning env={env} rank={trainer.global_rank} world={trainer.world_size} "
          f"main={int(trainer.is_global_zero)} weights={checksum:.10f}", flush=True)


if __name__ == "__main__":
    main()
