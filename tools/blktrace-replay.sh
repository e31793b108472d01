#!/usr/bin/env bash
# Captures a real workload's block I/O and replays the capture through fio
# 3.42 and hybrio, checking that both issue the same I/Os. As root: a loop
# device over a file in a scratch directory gets an ext4, fio's source tarball
# is extracted onto it and synced while the kernel traces the device; the
# trace is made into the one binary file fio reads (blkparse -d), which both
# replay at depth 1 onto a file of the device's size (replay_redirect,
# replay_no_stall), each logging what it issued (write_lat_log, log_offset).
# The direction, length and offset of every I/O must be the same, in order.
#
# The trace is the kernel's blktrace records (struct blk_io_trace, version 7)
# through ftrace's blk tracer in binary mode, each behind ftrace's 16 bytes
# (pid, cpu, time), which are cut off here, each record into its CPU's
# file as blktrace writes them: the blktrace tool's own relay
# files are refused in containers like CI's (EPERM), the tracer is not.
# Everything it made or set (mounts, the loop device, the tracer, the
# scratch directory) is undone at its exit, also on failure; KEEP=DIR keeps
# the capture there.
#
#   tools/blktrace-replay.sh [HYBRIO] [FIO]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
hybrio=${1:-$here/target/release/hybrio}
fio=${2:-$HOME/.cache/fio-3.42/fio}
tarball=${TARBALL:-$here/../shared/fio/fio-3.42.tar.gz}
for tool in blkparse losetup mkfs.ext4 python3; do
    command -v "$tool" >/dev/null || { echo "blktrace-replay.sh: $tool missing (apt-get install blktrace)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "blktrace-replay.sh: needs root (a loop device, the kernel's tracer)" >&2; exit 1; }
tracing=/sys/kernel/tracing
work=$(mktemp -d /tmp/blktrace-replay.XXXXXX)
loop="" mounted="" tracefs="" traced="" buffer=""
cleanup() {
    set +e
    if [ -n "$traced" ]; then
        echo 0 > "$tracing/tracing_on"
        echo nobin > "$tracing/trace_options"
        echo nop > "$tracing/current_tracer"
        echo 0 > "/sys/block/$traced/trace/enable"
    fi
    [ -n "$buffer" ] && echo "$buffer" > "$tracing/buffer_size_kb"
    [ -n "$mounted" ] && umount "$mounted"
    [ -n "$loop" ] && losetup -d "$loop"
    [ -n "$tracefs" ] && umount "$tracing"
    rm -rf "$work"
}
trap cleanup EXIT
if [ ! -e "$tracing/current_tracer" ]; then
    mount -t tracefs none "$tracing"
    tracefs=1
fi
grep -qw blk "$tracing/available_tracers" || { echo "blktrace-replay.sh: this kernel has no blk tracer" >&2; exit 1; }
truncate -s 256m "$work/disk.img"
loop=$(losetup -f --show "$work/disk.img")
dev=$(basename "$loop")
mkfs.ext4 -q "$loop"
mkdir "$work/mnt" "$work/trace"
buffer=$(cat "$tracing/buffer_size_kb")
echo 65536 > "$tracing/buffer_size_kb"
echo blk > "$tracing/current_tracer"
echo bin > "$tracing/trace_options"
echo > "$tracing/trace"
traced=$dev
echo 1 > "/sys/block/$dev/trace/enable"
echo 1 > "$tracing/tracing_on"
mount "$loop" "$work/mnt"
mounted=$work/mnt
tar -xzf "$tarball" -C "$work/mnt"
sync
umount "$work/mnt"
mounted=""
echo 0 > "$tracing/tracing_on"
cat "$tracing/trace" > "$work/ftrace.bin"
# The records, without ftrace's header line and the 16 bytes before each,
# into one file per CPU (the record's own `cpu`), as blktrace writes them.
python3 - "$work/ftrace.bin" "$work/trace/$dev.blktrace" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
at = data.index(b"#\n") + 2 if data.startswith(b"# tracer") else 0
per_cpu = {}
while at + 16 + 48 <= len(data):
    record = data[at + 16:at + 64]
    magic, = struct.unpack_from("<I", record)
    cpu, = struct.unpack_from("<I", record, 40)
    pdu, = struct.unpack_from("<H", record, 46)
    if magic & 0xffffff00 != 0x65617400:
        sys.exit(f"no blktrace record at byte {at + 16} of the trace")
    per_cpu.setdefault(cpu, bytearray()).extend(data[at + 16:at + 64 + pdu])
    at += 64 + pdu
for cpu, records in per_cpu.items():
    open(f"{sys.argv[2]}.{cpu}", "wb").write(records)
PY
(cd "$work/trace" && blkparse -q -i "$dev" -d "$work/merged.bin" -O)
if [ -n "${KEEP:-}" ]; then cp "$work/merged.bin" "$KEEP/"; fi
truncate -s 256m "$work/target"
for who in fio hybrio; do
    bin=$fio
    [ "$who" = hybrio ] && bin=$hybrio
    (cd "$work" && "$bin" --name="$who" --read_iolog=merged.bin --replay_redirect=target \
        --replay_no_stall=1 --iodepth=1 --write_lat_log="$who" --log_offset=1 --output=/dev/null)
    cut -d, -f3-5 "$work/${who}_lat."*log > "$work/$who.issued"
done
reads=$(awk -F, '$1 == 0' "$work/fio.issued" | wc -l)
echo "capture: $(stat -c %s "$work/merged.bin") bytes; fio issued $(wc -l < "$work/fio.issued") I/Os ($reads reads), hybrio $(wc -l < "$work/hybrio.issued")"
if ! diff -q "$work/fio.issued" "$work/hybrio.issued" >/dev/null; then
    diff "$work/fio.issued" "$work/hybrio.issued" | head -20
    echo "blktrace-replay.sh: hybrio's replay differs from fio's" >&2
    exit 1
fi
echo "the same I/Os, in the same order"
