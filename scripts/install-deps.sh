#!/usr/bin/env bash
# Installs, with apt-get, whatever the build, the demo and the tests need and this Debian
# machine lacks. Safe to run again: it does nothing when everything is there.
set -eu
packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libfmt-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev googletest
  libopenmpi-dev openmpi-bin libgloo-dev python3-mpi4py help2man dpkg-dev
  podman runc busybox-static
  clang libclang-rt-14-dev clang-format
  slurm-wlm munge libmunge2 gdb qemu-user-static file libsodium-dev nmap etcd-server etcd-client nftables openssl libssl3 python3-etcd
  libnghttp2-14 libnghttp2-dev
  prometheus chromium python3-pil fonts-dejavu-core
  zsh tcsh hyperfine python3 python3-torch python3-yaml python3-jsonschema python3-venv procps iproute2 util-linux unzip
)
# The Azure ML SDK (PyPI), for the test that loads examples/azureml/ with it, into the default
# python3 (where pip installs).
if ! python3 -c 'import azure.ai.ml' 2>/dev/null; then
  echo "install-deps: installing azure-ai-ml (pip)"
  python3 -m pip install -q --root-user-action=ignore azure-ai-ml >/dev/null
fi
# py-spy (PyPI), for the hang test's Python stacks (--hang-timeout uses it where installed).
if ! python3 -c 'import shutil, sys; sys.exit(shutil.which("py-spy") is None)' 2>/dev/null; then
  echo "install-deps: installing py-spy (pip)"
  python3 -m pip install -q --root-user-action=ignore py-spy >/dev/null
fi
# JAX's CPU build (PyPI), for the JAX tests (its cross-process collectives run over Gloo).
if ! python3 -c 'import jax' 2>/dev/null; then
  echo "install-deps: installing jax[cpu] (pip)"
  python3 -m pip install -q --root-user-action=ignore "jax[cpu]" >/dev/null
fi
# Zig's toolchain (PyPI), for the aarch64 test that compiles the tagging's unit tests for Arm
# (the release's wheels get their own in pip's isolated build environment).
if ! python3 -c 'import ziglang' 2>/dev/null; then
  echo "install-deps: installing ziglang (pip)"
  python3 -m pip install -q --root-user-action=ignore ziglang >/dev/null
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The newest torch (PyPI, about 5 GB with its CUDA libraries; it runs on the CPU) in a virtual
# environment of its own under the user's cache (after apt: python3-venv), for the flight
# recorder's tests (Debian's python3-torch is 1.13, which has none). tests/CMakeLists.txt's
# AML_NEWEST_TORCH_PYTHON names its Python.
newest_torch="$HOME/.cache/aml-launch/torch-2.15"
if ! "$newest_torch/bin/python" -c 'import numpy, torch, sys; sys.exit(torch.__version__ < "2.15")' 2>/dev/null; then
  echo "install-deps: installing torch 2.15 (pip) into $newest_torch"
  python3 -m venv "$newest_torch"
  "$newest_torch/bin/python" -m pip install -q --root-user-action=ignore "torch==2.15.*" numpy >/dev/null
fi
