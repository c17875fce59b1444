# Sourced by the experiment scripts in this folder when they run on the GPU machine: the
# repository root as working directory, CUDA 13.0 on the paths, $out (results; $OUT when the
# device tool sets it) and $B (the bundled bench binary), and the GPU's name printed first.
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/usr/local/cuda/bin:$PATH
out=${OUT:-.bundle-ab/out}; mkdir -p "$out"
B=.bundle-ab/btchol
nvidia-smi --query-gpu=name --format=csv,noheader
