#!/usr/bin/env bash
# The test command (README): installs what a fresh machine lacks, then runs every test that needs
# no GPU. GPU tests skip (saying so) here; run scripts/gpu-check.sh on a GPU machine for those.
set -euo pipefail
cd "$(dirname "$0")/.."

failed=0
run() { # run NAME CMD...: one suite, counted in the summary
    echo "=== $1"
    if "${@:2}"; then passed_suites+=("$1"); else failed=$((failed + 1)); failed_suites+=("$1"); fi
}
passed_suites=(); failed_suites=()

run "rust: unit, integration and doc tests" cargo test --release --all-targets
run "rust: doc tests" cargo test --release --doc
# Say plainly whether the GPU tests ran or skipped (cargo hides the output of passing tests).
cargo test --release --test gpu_solve -- --nocapture 2>&1 | grep -m1 -E 'SKIPPED|test result' || true
[ -x scripts/test-c.sh ] && run "C API, CMake, examples" scripts/test-c.sh
[ -x scripts/test-bindings.sh ] && run "Python, Octave, Julia bindings" scripts/test-bindings.sh
[ -x scripts/test-kernels.sh ] && run "CUDA kernels compile (NVRTC, no GPU)" scripts/test-kernels.sh
# Formatting and lints, where the toolchain has rustfmt and clippy (rustup's default profile does).
if cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1; then
    run "rustfmt and clippy (warnings are errors)" \
        bash -c 'cargo fmt --check && cargo clippy --release --all-targets --quiet -- -D warnings'
else
    echo "=== rustfmt and clippy: SKIPPED (not installed: rustup component add rustfmt clippy)"
fi

echo
echo "suites: ${#passed_suites[@]} passed, $failed failed"
for s in "${failed_suites[@]}"; do echo "FAILED: $s"; done
exit $((failed > 0))
