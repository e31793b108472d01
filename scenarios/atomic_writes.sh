#!/usr/bin/env bash
# Atomic writes (fio's atomic=1, RWF_ATOMIC) against ordinary ones, hybrio and fio 3.42 in turn:
# 16 KiB random O_DIRECT writes for 3 s on XFS (mkfs defaults: reflink, which offers atomic
# writes on any device from Linux 6.16) over a 2 GiB loop device in /dev/shm, as root.
#
#   scenarios/atomic_writes.sh [ROUNDS]     (HYBRIO=path/to/hybrio, FIO=path/to/fio-3.42)
#
# Prints one line a round, engine and mode: the IOPS of each tool.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
hybrio=${HYBRIO:-$here/target/release/hybrio}
fio=${FIO:-$("$here/../shared/fio/build.sh")}
work=$(mktemp -d)
image=$(mktemp -d /dev/shm/atomic.XXXX)
loop=""
cleanup() {
    umount "$work/mnt" 2>/dev/null || true
    if [ -n "$loop" ]; then losetup -d "$loop" 2>/dev/null || true; fi
    rm -rf "$image" "$work"
}
trap cleanup EXIT
truncate -s 2G "$image/img"
loop=$(losetup -f --show "$image/img")
mkfs.xfs -q -f "$loop"
mkdir "$work/mnt"
mount "$loop" "$work/mnt"
iops() {
    python3 -c 'import json, sys
text = sys.stdin.read()
print(round(json.loads(text[text.index("{"):])["jobs"][0]["write"]["iops"]))'
}
for round in $(seq "$rounds"); do
    for engine in io_uring libaio pvsync2; do
        depth=8
        [ "$engine" = pvsync2 ] && depth=1
        for atomic in 0 1; do
            job=(--name=atomic --directory="$work/mnt" --rw=randwrite --bs=16k --size=256m
                --direct=1 --atomic=$atomic --ioengine=$engine --iodepth=$depth
                --runtime=3 --time_based --output-format=json)
            h=$("$hybrio" "${job[@]}" 2>/dev/null | iops)
            f=$("$fio" "${job[@]}" 2>/dev/null | iops)
            echo "round $round $engine atomic=$atomic hybrio=$h fio=$f"
        done
    done
done
