#!/usr/bin/env bash
# NVRTC 13.0 (the GPU machine's driver version) and cuobjdump/nvdisasm from PyPI in
# .venv-nvrtc130, installed on first use; prints the folder of libnvrtc.so.13. Used by
# gpu-check.sh and gpu-ab.sh (bundles ship kernels compiled here for sm_90) and
# kernel-resources.sh. `--bin` prints the folder of cuobjdump instead.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-nvrtc130
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install -q "nvidia-cuda-nvrtc==13.0.*" "nvidia-cuda-cuobjdump" "nvidia-cuda-nvdisasm" >&2
fi
sub=$([ "${1:-}" = --bin ] && echo bin || echo lib)
ls -d "$PWD/$venv"/lib/python3*/site-packages/nvidia/cu13/$sub | head -1
