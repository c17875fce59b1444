#!/usr/bin/env bash
# Tests of the language bindings (bindings/): Python (pytest), MATLAB/Octave (MEX built with
# mkoctfile, run in GNU Octave), Julia (syntax check: Julia itself is not installable here).
#
#   scripts/test-bindings.sh            from anywhere; works in the repository root
#
# Builds the library (cargo build --release), points BTCHOL_LIB at target/release/libbtchol.so
# (unless BTCHOL_LIB is already set), installs what a fresh Debian machine lacks (as root: numpy,
# pytest and the tree-sitter Julia grammar with pip; octave and liboctave-dev with apt-get, which
# takes a few minutes once), and ends with one line "bindings: N passed, M failed, K skipped"
# counting tests. Exits non-zero on any failure. Idempotent: installs only what is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

passed=0 failed=0 skipped=0
failures=()
count() { # count PASSED FAILED SKIPPED [NAME-if-failed]
    passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + $3))
    if [ "$2" -gt 0 ]; then failures+=("$4"); fi
}

py=${PYTHON:-python3}
pip_install() { # pip_install MODULE PACKAGE...: installs the packages when MODULE does not import
    "$py" -c "import $1" 2>/dev/null && return 0
    echo "--- installing $*  (pip)"
    "$py" -m pip install -q "${@:2}" || "$py" -m pip install -q --break-system-packages "${@:2}"
}

echo "=== building libbtchol (cargo build --release)"
if ! cargo build --release --quiet; then
    echo "FAILED: cargo build --release"
    echo "bindings: 0 passed, 1 failed"
    exit 1
fi
export BTCHOL_LIB=${BTCHOL_LIB:-$root/target/release/libbtchol.so}
echo "BTCHOL_LIB=$BTCHOL_LIB"
if [ ! -f "$BTCHOL_LIB" ]; then
    echo "FAILED: $BTCHOL_LIB does not exist"
    echo "bindings: 0 passed, 1 failed"
    exit 1
fi

# ---- Python ------------------------------------------------------------------------------------
echo "=== python: pytest bindings/python/tests"
pip_install numpy numpy
pip_install pytest pytest
log=$(mktemp)
"$py" -m pytest -q -rs bindings/python/tests 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
summary=$(grep -E '[0-9]+ (passed|failed|skipped|error)' "$log" | tail -1)
n_of() { echo "$summary" | grep -oE "[0-9]+ $1" | grep -oE '[0-9]+' || echo 0; }
p=$(n_of passed); f=$(( $(n_of failed) + $(n_of 'errors?') )); s=$(n_of skipped)
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi # crashed or collected nothing
count "$p" "$f" "$s" "python (pytest exit $rc)"
rm -f "$log"

# ---- MATLAB / GNU Octave -----------------------------------------------------------------------
echo "=== matlab: MEX with mkoctfile, tests in GNU Octave"
if ! command -v mkoctfile >/dev/null; then
    echo "--- installing octave liboctave-dev (apt-get; a few minutes)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq octave liboctave-dev >/dev/null
fi
mdir=$root/bindings/matlab
mbuild=$mdir/build
if command -v mkoctfile >/dev/null; then
    rm -rf "$mbuild" && mkdir -p "$mbuild"
    # A private link directory: -lbtchol finds libbtchol.so, and the loader finds it (or the
    # SONAME libbtchol.so.0, should the library get one) through LD_LIBRARY_PATH.
    ln -s "$BTCHOL_LIB" "$mbuild/libbtchol.so"
    ln -s "$BTCHOL_LIB" "$mbuild/libbtchol.so.0"
    if (cd "$mbuild" && mkoctfile --mex -I"$root/include" "$mdir/btchol_mex.c" -L"$mbuild" -lbtchol \
            -o btchol_mex.mex); then
        count 1 0 0
        log=$(mktemp)
        LD_LIBRARY_PATH="$mbuild${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            octave --no-gui --no-window-system --norc --quiet \
            --eval "addpath('$mbuild'); addpath('$mdir'); exit(test_btchol() > 0)" 2>&1 \
            | grep -v "ignoring const execution_exception" | tee "$log"
        rc=${PIPESTATUS[0]}
        line=$(grep -E '^matlab: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
        p=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)
        f=$(echo "$line" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' || echo 0)
        if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then f=1; fi
        count "${p:-0}" "${f:-0}" 0 "octave tests (exit $rc)"
        rm -f "$log"
    else
        echo "FAILED: mkoctfile --mex btchol_mex.c"
        count 0 1 0 "octave: MEX build"
    fi
    # The gpuArray path (MATLAB + CUDA only) at least compiles, against declaration stand-ins.
    inc=$(mkoctfile -p INCFLAGS)
    # shellcheck disable=SC2086
    if ${CC:-cc} -fsyntax-only -std=c99 -Wall -Wextra -Werror $inc -I"$mdir/syntax-check" -I"$root/include" \
            -DBTCHOL_MEX_GPU -DBTCHOL_MEX_GPU_SYNTAX_CHECK "$mdir/btchol_mex.c"; then
        echo "ok: btchol_mex.c gpuArray path compiles (syntax check against stand-in declarations)"
        count 1 0 0
    else
        count 0 1 0 "btchol_mex.c gpuArray syntax check"
    fi
else
    echo "FAILED: mkoctfile is missing and could not be installed (apt-get needs root)"
    count 0 1 0 "octave: not installed"
fi

# ---- Julia -------------------------------------------------------------------------------------
echo "=== julia: syntax check (no Julia on this machine)"
if command -v julia >/dev/null; then
    if julia --startup-file=no "$root/bindings/julia/test_btchol.jl"; then count 1 0 0; else count 0 1 0 "julia tests"; fi
else
    pip_install tree_sitter_julia tree-sitter tree-sitter-julia >/dev/null 2>&1 || true
    "$py" bindings/julia/check_syntax.py bindings/julia/BTChol.jl bindings/julia/test_btchol.jl
    case $? in
        0) count 1 0 0 ;;
        2) echo "skipped: no Julia and no tree-sitter Julia grammar"; count 0 0 1 ;;
        *) count 0 1 0 "julia syntax check" ;;
    esac
fi

echo
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "bindings: $passed passed, $failed failed, $skipped skipped"
exit $((failed > 0))
