#!/usr/bin/env bash
# Registers, stack (spills) and static shared memory of btchol's kernels as the GPU machine's
# NVRTC builds them, without a GPU: compiles the translation unit (kernels/, or the files of
# BTCHOL_KERNEL_DIR) with NVRTC 13.0 (the device's driver version; newer NVRTC allocates
# registers differently) and prints cuobjdump's resource usage per kernel.
#
#   scripts/kernel-resources.sh [REGEX] [DTYPE:LD ...]    e.g.  scripts/kernel-resources.sh factor_level f64:32 f32:32
#
# Defaults: every kernel, f64 and f32 at LD 8, 16, 32. Threads and fusion as the plan picks them
# (jit.rs KernelSpec::for_block_size). Installs NVRTC 13.0 and cuobjdump into .venv-nvrtc130.
# SASS=FILE also writes the SASS of the matching kernels (last shape) to FILE, the same
# instructions as the GPU machine's build (e.g. to count a loop's instructions per FMA).
set -euo pipefail
cd "$(dirname "$0")/.."
regex=${1:-.}; shift || true
shapes=("$@"); [ ${#shapes[@]} -eq 0 ] && shapes=(f64:8 f64:16 f64:32 f32:8 f32:16 f32:32)
venv=.venv-nvrtc130
lib=$(bash scripts/nvrtc-venv.sh)
bin=$(bash scripts/nvrtc-venv.sh --bin)
export LD_LIBRARY_PATH="$lib" PATH="$bin:$PATH"
for shape in "${shapes[@]}"; do
    dtype=${shape%%:*}; ld=${shape##*:}
    t=$([ "$dtype" = f64 ] && echo double || echo float)
    threads=${THREADS:-}
    [ -n "$threads" ] || threads=$([ "$ld" -le 32 ] && echo 128 || { [ "$ld" -le 64 ] && echo 256 || { [ "$ld" -le 128 ] && echo 384 || echo $(( (3 * ld + 31) / 32 * 32 )); }; })
    echo "== $dtype LD=$ld ($threads threads)"
    "$venv/bin/python" - "$lib/libnvrtc.so.13" "$t" "$ld" "$threads" "$regex" <<'PY'
import ctypes, os, re, subprocess, sys, tempfile
lib, t, ld, nt, regex = sys.argv[1:6]
names = ["common.cuh", "block_ops.cuh", "factor.cu", "solve.cu", "small.cu", "sequential.cu", "chunks.cu", "layout.cu"]  # jit.rs KERNEL_SOURCES
kdir = os.environ.get("BTCHOL_KERNEL_DIR")
def text(n):
    p = os.path.join(kdir, n) if kdir and os.path.exists(os.path.join(kdir, n)) else os.path.join("kernels", n)
    return open(p).read()
src = "".join(f'#line 1 "{n}"\n{text(n)}\n' for n in names)
nv = ctypes.CDLL(lib)
prog = ctypes.c_void_p()
assert nv.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"btchol.cu", 0, None, None) == 0
# Fused as the engine decides (KernelSpec::for_block_size with at most 200 KiB of shared memory).
size, ldi = (8 if t == "double" else 4), int(ld)
split = int(ldi > 64)  # jit.rs SPLIT_ABOVE_LD
sld = ldi + 4  # jit.rs KernelSpec::staged_ld
fused = int(not split and (ldi ** 2 + 2 * ldi * sld) * size + 4096 <= 200 * 1024)
opts = ["--gpu-architecture=sm_90", "--std=c++17", f"-DBT_T={t}", f"-DBT_LD={ld}", f"-DBT_NT={nt}", f"-DBT_FUSED={fused}",
        f"-DBT_SLD={sld}", f"-DBT_SPLIT={split}", "-DBT_BOOST=0",
        f"-DBT_GEMM_WIDE={int(t == 'double' and split)}",  # jit.rs KernelSpec::wide_gemm (sm_90)
        f"-DBT_ELIMINATE_CLUSTER={int(t == 'double' and (56 < ldi <= 64 or 72 < ldi <= 128))}"]  # jit.rs KernelSpec::eliminate_cluster (sm_90)
if nv.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])) != 0:
    n = ctypes.c_size_t(); nv.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    b = ctypes.create_string_buffer(n.value); nv.nvrtcGetProgramLog(prog, b); sys.exit(b.value.decode()[-3000:])
n = ctypes.c_size_t(); nv.nvrtcGetCUBINSize(prog, ctypes.byref(n))
b = ctypes.create_string_buffer(n.value); nv.nvrtcGetCUBIN(prog, b)
with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
    f.write(b.raw); f.flush()
    out = subprocess.run(["cuobjdump", "-res-usage", f.name], capture_output=True, text=True, check=True).stdout
    if os.environ.get("SASS"):
        sass = subprocess.run(["cuobjdump", "-sass", f.name], capture_output=True, text=True, check=True).stdout
        parts = re.split(r"(?=\n\s*Function : )", sass)
        open(os.environ["SASS"], "w").write("".join(p for p in parts if re.search(r"Function : \S*(" + regex + ")", p)))
for m in re.finditer(r"Function (\w+):\n\s*REG:(\d+) STACK:(\d+) SHARED:(\d+)", out):
    if re.search(regex, m.group(1)):
        print(f"  {m.group(1):40s} registers {m.group(2):>3}  stack {m.group(3):>4} B  static shared {m.group(4):>5} B")
PY
done
