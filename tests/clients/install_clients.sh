#!/usr/bin/env bash
# The training frameworks the client tests run under aml-launch, each in a virtual environment
# of its own under ~/.cache/aml-launch-tests (made once, reused):
#   torch-clients/  Debian's python3 with its python3-torch 1.13 (system site packages), plus
#                   PyTorch Lightning 2.2 and Hugging Face accelerate 0.30 from PyPI. Their
#                   dependencies are named here, without torch: Debian's torch calls itself
#                   1.13.0a0, which pip would not take for ">=1.13" and would replace.
#   tf-clients/     the default python3 with tensorflow-cpu and tf_keras (Keras 2, which
#                   MultiWorkerMirroredStrategy needs) from PyPI.
#   torch-new/      the default python3 with the newest torch from PyPI (2.15, its CUDA
#                   libraries too; it runs on the CPU), whose torchrun the two-host
#                   comparison runs (tests/clients/torchrun_two_hosts.sh).
# pip compiles no .pyc (--no-compile): Python compiles what a test imports, on first import, and
# most of torch's and TensorFlow's thousands of modules are never imported here.
# Prints the three interpreters' paths. usage: install_clients.sh
set -eu
cache=${XDG_CACHE_HOME:-$HOME/.cache}/aml-launch-tests
mkdir -p "$cache"
torch_env=$cache/torch-clients
tf_env=$cache/tf-clients

if ! "$torch_env/bin/python" -c 'import lightning.pytorch, accelerate, torch' 2>/dev/null; then
  rm -rf "$torch_env"
  /usr/bin/python3 -m venv --system-site-packages "$torch_env"
  "$torch_env/bin/pip" install -q --no-compile --no-deps "lightning==2.2.5" "torchmetrics==1.3.2" \
    "lightning-utilities==0.11.2" "accelerate==0.30.1" >&2
  "$torch_env/bin/pip" install -q --no-compile "fsspec<2025" "tqdm" "typing-extensions" "packaging" "psutil" \
    "pyyaml" "huggingface_hub<0.30" "safetensors" >&2
fi
if ! "$tf_env/bin/python" -c 'import tensorflow, tf_keras' 2>/dev/null; then
  rm -rf "$tf_env"
  python3 -m venv "$tf_env"
  "$tf_env/bin/pip" install -q --no-compile "tensorflow-cpu==2.21.*" "tf_keras==2.21.*" >&2
fi
torch_new=$cache/torch-new
if ! "$torch_new/bin/python" -c 'import torch.distributed.run' 2>/dev/null; then
  rm -rf "$torch_new"
  python3 -m venv "$torch_new"
  "$torch_new/bin/pip" install -q --no-compile "torch==2.15.*" >&2
fi
echo "$torch_env/bin/python"
echo "$tf_env/bin/python"
echo "$torch_new/bin/python"
