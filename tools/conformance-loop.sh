#!/bin/sh
# Runs the conformance suite for one engine flavour many times in a row and
# stops at the first failure: for races that show once in hundreds of runs.
#
#   tools/conformance-loop.sh [RUNS [FLAVOUR [TEST_FILTER]]]
#
# RUNS defaults to 1000, FLAVOUR to "io_uring depth 8, sqpoll" (a flavour's
# name as the suite prints it), TEST_FILTER to the whole suite
# ("engine::conformance::"). Prints the runs passed and the time taken.
set -eu
runs=${1:-1000}
flavour=${2:-io_uring depth 8, sqpoll}
filter=${3:-engine::conformance::}
cd "$(dirname "$0")/.."
binary=$(cargo test -p hybrio --lib --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "hybrio":
        print(m["executable"])')
[ -x "$binary" ] || { echo "conformance-loop: no test binary built" >&2; exit 1; }
# A copy: a build meanwhile must not change what the loop runs.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp "$binary" "$scratch/hybrio-tests"
binary=$scratch/hybrio-tests
log=$scratch/log
start=$(date +%s)
run=0
while [ "$run" -lt "$runs" ]; do
    run=$((run + 1))
    if ! HYBRIO_CONFORMANCE_FLAVOUR="$flavour" "$binary" -q --nocapture "$filter" >"$log" 2>&1; then
        cat "$log"
        echo "conformance-loop: run $run of $runs failed ($flavour)" >&2
        exit 1
    fi
    if ! grep -q "conformance: running $flavour" "$log"; then
        grep -i skipping "$log" >&2 || true
        echo "conformance-loop: no test ran the flavour '$flavour' (not permitted here, or no such name)" >&2
        exit 1
    fi
done
echo "conformance-loop: $runs runs in a row passed ($flavour, $filter) in $(( $(date +%s) - start )) s"
