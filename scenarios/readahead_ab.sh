#!/bin/bash
# The adaptive engine's readahead helper, paired: cold sequential reads of a file larger than the page
# cache (25 GiB here), adaptive engine at depth 1, buffered (uncached=0) against uncached=auto (cached
# reads, read ahead of by the helper), one run after the other, the order alternating, 6 pairs per
# request size; each run after sync, a dropped page cache and 6 s (see seed002_streaming.py).
# Prints one line per pair (MiB/s). Needs root and target/release/hybrio. Usage: readahead_ab.sh [GIB]
set -euo pipefail
G=${1:-25}; H=$(dirname "$0")/../target/release/hybrio; D=$(mktemp -d /var/tmp/hybrio-ab.XXXXXX); F=$D/big
trap 'rm -rf "$D"' EXIT
$H --name=w --filename=$F --size=${G}g --bs=1m --rw=write --ioengine=pvsync2 --uncached=1 --end_fsync=1 >/dev/null
one(){ sync; echo 3 > /proc/sys/vm/drop_caches; sleep 6; $H --name=r --filename=$F --rw=read --bs=$1 --ioengine=adaptive --uncached=$2 --output-format=json | python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["read"]["bw"]/1024)'; }
for bs in 128k 1m; do for r in 1 2 3 4 5 6; do
 if [ $((r%2)) = 1 ]; then a=$(one $bs 0); b=$(one $bs auto); else b=$(one $bs auto); a=$(one $bs 0); fi
 echo "$bs round $r buffered $a auto $b"
done; done
