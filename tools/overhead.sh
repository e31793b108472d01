#!/usr/bin/env bash
# Instructions per request, counted by callgrind, for each engine on workloads where
# the I/O itself is cheap (page-cache hits on ext4 and tmpfs, the emulated device), so
# that what the engines and the benchmark do around each request shows.
#
#   tools/overhead.sh [ENGINES]        (default: psync,io_uring,adaptive)
#
# Each figure is a difference of two whole runs of hybrio, N and 4N requests
# (`loops=1` and `loops=4`): what one more request costs, with start-up, file set-up
# and the report left out. It counts user-space instructions only (callgrind sees
# no kernel), which is where the engines differ; the system calls are the same.
# Every count is exact and repeats to within a few hundred instructions a run, so one
# run of each is enough, and the figures do not depend on what else the machine does.
#
# The adaptive engine decides from what requests cost in time, and valgrind runs user
# code 20-50 times slower than natively. Its decisions follow what it sees there, so
# the workloads are chosen for choices that come out as natively: cached reads on tmpfs
# inline, and the emulated device at 300 us and depth 16 asynchronous (the path split
# is printed beside each figure, and a pair of runs that took other paths is repeated). Its explorations come back after at least 100 ms
# and 500 epochs of requests; under valgrind the count bound is the one that holds, so
# they weigh about ten times more per request than natively (see the note printed).
#
# SCRATCH  directory for the emulated device's data file (default /var/tmp/hybrio-overhead);
#          the tmpfs file goes to /dev/shm. Both are removed at exit.
# HYBRIO   a hybrio binary to measure instead of this tree's release build.
set -euo pipefail

engines=${1:-psync,io_uring,adaptive}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=${SCRATCH:-/var/tmp/hybrio-overhead}
shm=/dev/shm/hybrio-overhead.$$

if ! command -v valgrind > /dev/null; then
    echo "overhead.sh: valgrind is missing; installing it with apt-get" >&2
    apt-get install -y -qq valgrind > /dev/null
fi
cleanup() { rm -rf "$scratch" "$shm"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$scratch" "$shm"

if [ -n "${HYBRIO:-}" ]; then
    hybrio=$HYBRIO
else
    echo "overhead.sh: building hybrio (release)" >&2
    cargo build --quiet --release -p hybrio-bench --manifest-path "$here/Cargo.toml"
    hybrio=$here/target/release/hybrio
fi

# name | file | options (the request count is set by size / bs)
# (Page-cache hits on tmpfs, not ext4: there io_uring completes them inside the submit call,
# and under valgrind, which slows user code and not the kernel, the two paths come out close
# enough for the adaptive engine to switch between runs. On tmpfs io_uring hands every request
# to a kernel worker, and inline stays the choice.)
workloads=(
    "cached tmpfs 4k randread qd1|$shm/f.dat|--size=64m --rw=randread --bs=4k --iodepth=1"
    "emulated 300us 4k randread qd16|$scratch/f.dat|--size=32m --rw=randread --bs=4k --iodepth=16 --completion_latency=300us"
)

# Lays the files out and reads them into the page cache, natively.
for file in "$scratch/f.dat" "$shm/f.dat"; do
    "$hybrio" --name=layout --filename="$file" --size=64m --rw=write --bs=1m \
        --output-format=json > /dev/null
    "$hybrio" --name=warm --filename="$file" --size=64m --rw=read --bs=1m \
        --output-format=json > /dev/null
done

# Runs one callgrind measurement; prints "instructions requests paths-json".
measure() {
    local file=$1 engine=$2 loops=$3
    shift 3
    local out="$scratch/cg.out" json="$scratch/run.json" log="$scratch/cg.log"
    # shellcheck disable=SC2086 # the workload's options are words on purpose
    valgrind --tool=callgrind --callgrind-out-file="$out" "$hybrio" --name=t \
        --filename="$file" --ioengine="$engine" --loops="$loops" --output-format=json \
        "$@" > "$json" 2> "$log" || {
        echo "overhead.sh: callgrind run failed ($engine, $*):" >&2
        tail -5 "$log" >&2
        exit 1
    }
    local collected
    collected=$(grep -oE 'Collected : [0-9]+' "$log" | grep -oE '[0-9]+$')
    python3 - "$json" "$collected" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
job = doc["jobs"][0]
ios = job["read"]["total_ios"] + job["write"]["total_ios"]
paths = doc["hybrio"]["jobs"][0].get("paths")
print(sys.argv[2], ios, json.dumps(paths, separators=(",", ":")))
PY
}

echo "| workload | engine | instructions per request | adaptive paths (4N run) |"
echo "|---|---|---|---|"
IFS=, read -r -a engine_list <<< "$engines"
for workload in "${workloads[@]}"; do
    IFS='|' read -r name file options <<< "$workload"
    for engine in "${engine_list[@]}"; do
        # The two runs must have taken the same paths in the same shares, or
        # their difference measures a change of path: under valgrind the
        # adaptive engine now and then finds io_uring as cheap as pread for
        # page-cache hits on ext4 and switches. Up to three tries.
        for try in 1 2 3; do
            # shellcheck disable=SC2086
            read -r i1 n1 paths1 <<< "$(measure "$file" "$engine" 1 $options)"
            # shellcheck disable=SC2086
            read -r i4 n4 paths <<< "$(measure "$file" "$engine" 4 $options)"
            same=$(python3 - "$paths1" "$paths" <<'PY'
import json, sys
a, b = (json.loads(x) for x in sys.argv[1:3])
share = lambda p: p["async"] / max(1, p["async"] + p["inline"])
print("yes" if a is None or abs(share(a) - share(b)) < 0.02 else "no")
PY
)
            [ "$same" = yes ] && break
            echo "overhead.sh: $engine on $name took other paths in the two runs (try $try)" >&2
        done
        per=$(python3 -c "print(f'{($i4 - $i1) / ($n4 - $n1):.0f}')")
        [ "$same" = yes ] || per="$per (paths differed)"
        [ "$paths" = null ] && paths=-
        echo "| $name | $engine | $per | $paths |"
    done
done
echo
echo "Instructions per request: (I(4N) - I(N)) / 3N over whole runs of hybrio, user space only."
