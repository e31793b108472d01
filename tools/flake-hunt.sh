#!/usr/bin/env bash
# Runs the test suite N times on a busy machine, to find tests that fail by
# chance, and stops at the first failure with its output.
#
#   tools/flake-hunt.sh N
#
# It clones the committed HEAD of the checkout it is run from (uncommitted
# changes are not tested) into a temporary directory, builds the tests once,
# then runs the README's test command (`cargo test`, in the clone) N times,
# each run beside a load that keeps both cores busy (one busy loop per core,
# at the tests' own nice level) and a disk writer (dd writing and fsyncing a
# file in a loop in the scratch directory). Each run's number, outcome and
# duration is printed; at the first failure, the run's log tail and its
# `failures:` section, and the script exits with status 1.
#
# Environment:
#   CARGO_TARGET_DIR  where to build (default: inside the temporary directory,
#                     removed at the end); give a lasting one to build only
#                     what changed from one hunt to the next.
#   FLAKE_HUNT_LOG    keep every run's full log in this directory (default: in
#                     the temporary directory, removed at the end but for
#                     the failing run's, which is copied next to it as
#                     flake-hunt-failure.log in the current directory).
#
# Everything it starts (the load, the writer) and the temporary directory
# are cleaned up on exit, on failure and on Ctrl-C.
set -euo pipefail

usage() {
    echo "usage: $0 N   (N: how many runs of the test suite)" >&2
    exit 2
}

[[ $# -eq 1 && $1 =~ ^[1-9][0-9]*$ ]] || usage
runs=$1

source_repo=$(git rev-parse --show-toplevel)
commit=$(git -C "$source_repo" rev-parse HEAD)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/flake-hunt.XXXXXX")
load_pids=()

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    local pid
    for pid in "${load_pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${load_pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$scratch"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "flake-hunt: $runs runs of cargo test at ${commit:0:12}, in $scratch"
git clone --quiet --no-hardlinks "$source_repo" "$scratch/repo"
git -C "$scratch/repo" checkout --quiet --detach "$commit"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$scratch/target}"
logs="${FLAKE_HUNT_LOG:-$scratch/logs}"
mkdir -p "$logs"

echo "flake-hunt: building the tests once (target dir $CARGO_TARGET_DIR)"
(cd "$scratch/repo" && cargo test --no-run --quiet) >"$logs/build.log" 2>&1 || {
    tail -n 40 "$logs/build.log"
    echo "flake-hunt: the build failed" >&2
    exit 1
}

start_load() {
    local cores i
    cores=$(nproc)
    for ((i = 0; i < cores; i++)); do
        # A busy loop per core, at the same nice level as the tests.
        bash -c 'while :; do :; done' &
        load_pids+=($!)
    done
    # A writer beside them: 64 MiB written and fsynced, over and over.
    # (It ends its dd too when told to stop, so that none writes on.)
    bash -c 'trap "kill \$writer 2>/dev/null; exit 0" TERM
        while :; do
            dd if=/dev/zero of="$1/disk-load" bs=1M count=64 conv=fsync status=none &
            writer=$!
            wait "$writer"
        done' _ "$scratch" &
    load_pids+=($!)
}

start_load
echo "flake-hunt: load started: ${#load_pids[@]} processes (busy loops on $(nproc) cores, a disk writer)"

for ((run = 1; run <= runs; run++)); do
    log="$logs/run-$run.log"
    started=$(date +%s)
    if (cd "$scratch/repo" && cargo test) >"$log" 2>&1; then
        outcome=pass
    else
        outcome=FAIL
    fi
    took=$(($(date +%s) - started))
    printf 'run %d/%d: %s in %d s\n' "$run" "$runs" "$outcome" "$took"
    if [[ $outcome == FAIL ]]; then
        echo "---- the run's log, last 60 lines ----"
        tail -n 60 "$log"
        echo "---- failures ----"
        # Every test binary's failures section, with each failing test's output.
        sed -n '/^failures:$/,/^test result:/p' "$log"
        cp "$log" ./flake-hunt-failure.log
        echo "flake-hunt: run $run failed; its whole log is in ./flake-hunt-failure.log"
        exit 1
    fi
done
echo "flake-hunt: all $runs runs passed"
