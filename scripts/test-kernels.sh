#!/usr/bin/env bash
# CI without a GPU: NVRTC (from PyPI) compiles every CUDA kernel variant for sm_80 and sm_90, so a
# kernel that does not compile fails CI. Installs nvidia-cuda-nvrtc into .venv-nvrtc if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
lib=$(python3 - <<'PY' 2>/dev/null || true
import glob, os, site
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for p in glob.glob(os.path.join(d, "nvidia", "cu13", "lib", "libnvrtc.so*")):
        print(os.path.dirname(p)); raise SystemExit
PY
)
if [ -z "$lib" ]; then
    [ -d .venv-nvrtc ] || python3 -m venv .venv-nvrtc
    .venv-nvrtc/bin/pip install -q "nvidia-cuda-nvrtc>=13,<14"
    lib=$(ls -d .venv-nvrtc/lib/python3*/site-packages/nvidia/cu13/lib | head -1)
fi
export LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}"
cargo build --release --bin btchol
target/release/btchol kernels --check --arch sm_80 --arch sm_90
