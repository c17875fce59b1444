#!/usr/bin/env bash
# each-test.sh BIN [FILTER]: the tests of one Rust test binary (those FILTER selects, as libtest
# filters), each in its own process, one after another, with its wall time; then the slowest three
# and libtest's kind of summary line. Exit status 1 if any failed (their output is printed).
#
# scripts/gpu-check.sh runs its test steps through this so that the logs say where the suite's
# device time goes (libtest on stable Rust reports only a binary's total); the cost is one process
# and one CUDA context per test.
set -uo pipefail
bin=$1 filter=${2:-}
listing=$("$bin" ${filter:+"$filter"} --list 2>&1) || { echo "$listing"; echo "each-test: listing $bin failed"; exit 1; }
names=$(sed -n 's/: test$//p' <<<"$listing")
[ -n "$names" ] || { echo "each-test: no tests in $bin${filter:+ matching '$filter'}"; exit 1; }
passed=0 failed=0 times=() failures=()
out=$(mktemp)
trap 'rm -f "$out"' EXIT
now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }  # milliseconds as seconds, one decimal
start=$(now_ms)
while IFS= read -r name; do
    [ -n "$name" ] || continue
    t0=$(now_ms)
    "$bin" --exact "$name" --test-threads=1 >"$out" 2>&1
    rc=$?
    dt=$(secs $(($(now_ms) - t0)))
    times+=("$dt s $name")
    if [ $rc = 0 ]; then
        passed=$((passed + 1))
        echo "test $name ... ok ($dt s)"
    else
        failed=$((failed + 1)) failures+=("$name")
        echo "test $name ... FAILED ($dt s, exit $rc)"
        cat "$out"
    fi
done <<<"$names"
total=$(secs $(($(now_ms) - start)))
[ ${#failures[@]} = 0 ] || echo "failures: ${failures[*]}"
printf '%s\n' "${times[@]}" | sort -rn | head -3 | paste -sd ';' | sed 's/^/slowest: /'
result=$([ $failed = 0 ] && echo ok || echo FAILED)
echo "test result: $result. $passed passed; $failed failed; each in its own process; finished in ${total}s"
[ $failed = 0 ]
