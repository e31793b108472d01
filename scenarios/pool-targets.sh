#!/usr/bin/env bash
# The pool engine's two targets, measured side by side in alternation (REPEATS pairs, default 5):
#  1. depth 1, 4k random reads from the page cache: pool's mean latency against psync's;
#  2. depth 32, 4k random O_DIRECT reads: pool's IOPS against io_uring's (and libaio's).
# Prints each pair's ratio and their median. Files go to $SCRATCH (default /var/tmp/hybrio-scenarios).
set -euo pipefail
repeats=${1:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=${SCRATCH:-/var/tmp/hybrio-scenarios}
mkdir -p "$scratch"
cargo build --quiet --release -p hybrio-bench --manifest-path "$here/Cargo.toml"
hybrio="$here/target/release/hybrio"
cd "$scratch"

figure() { # engine, then options; prints "iops lat_mean_us"
    local engine=$1; shift
    "$hybrio" --output-format=json --name=t --ioengine="$engine" --rw=randread --bs=4k --time_based "$@" |
        python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["read"]; print(j["iops"], j["lat_ns"]["mean"]/1000)'
}

cached=(--filename=pool-cached.dat --size=64m --invalidate=0 --runtime=2 --iodepth=1)
direct=(--filename=pool-direct.dat --size=1g --direct=1 --runtime=3 --iodepth=32)
"$hybrio" --name=layout --filename=pool-direct.dat --size=1g --rw=write --bs=1m >/dev/null
"$hybrio" --name=layout --filename=pool-cached.dat --size=64m --rw=write --bs=1m >/dev/null
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for rep in $(seq 1 "$repeats"); do
    cat pool-cached.dat >/dev/null
    echo "cached $rep psync $(figure psync "${cached[@]}")" >>"$results"
    echo "cached $rep pool $(figure pool "${cached[@]}")" >>"$results"
    echo "direct $rep io_uring $(figure io_uring "${direct[@]}")" >>"$results"
    echo "direct $rep pool $(figure pool "${direct[@]}")" >>"$results"
    echo "direct $rep libaio $(figure libaio "${direct[@]}")" >>"$results"
    echo "pool-targets.sh: round $rep/$repeats done" >&2
done
python3 - "$results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
fig = {(w, int(r), e): (float(i), float(l)) for w, r, e, i, l in rows}
reps = sorted({int(r) for _, r, *_ in rows})
def show(title, pairs, unit):
    print(f"{title}: median {statistics.median(pairs):.2f} (min {min(pairs):.2f}, max {max(pairs):.2f}) {unit}")
lat = [fig["cached", r, "pool"][1] / fig["cached", r, "psync"][1] for r in reps]
show("depth 1 cached 4k randread, pool/psync mean latency", lat, "x")
print("  psync mean us:", [round(fig["cached", r, "psync"][1], 2) for r in reps])
print("  pool mean us: ", [round(fig["cached", r, "pool"][1], 2) for r in reps])
iops = [fig["direct", r, "pool"][0] / fig["direct", r, "io_uring"][0] for r in reps]
show("depth 32 O_DIRECT 4k randread, pool/io_uring IOPS", iops, "x")
aio = [fig["direct", r, "libaio"][0] / fig["direct", r, "io_uring"][0] for r in reps]
show("depth 32 O_DIRECT 4k randread, libaio/io_uring IOPS", aio, "x")
for e in ("io_uring", "pool", "libaio"):
    print(f"  {e} IOPS:", [round(fig['direct', r, e][0]) for r in reps])
PY
