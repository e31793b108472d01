#!/usr/bin/env bash
# Checks hybrio against every example job file of fio 3.42 (its examples/ folder, which
# ../shared/fio/build.sh copies beside the binary it builds), or of another fio's
# (Debian's fio-examples 3.33: /usr/share/doc/fio/examples), and writes the outcome of
# each to tools/FIO-EXAMPLES.md: hybrio's one-line refusal, or, for a file that parses,
# the outcome of running a copy of it made small (sizes 1 MiB, also where none is set, runtime 1 s, at most 2
# loops, no start delay, 1 MiB where no size is set, directories, devices (1 MiB files) and files in
# /tmp in a scratch directory, and every job
# stopped after 3 s: --runtime=3 on the command line, for the rate-limited ones).
# A panic, a multi-line error, an exit status other than 0 or 1, or a file that parses
# and then does not run (or runs a job that does no I/O) fails the script.
#
#   tools/fio-examples.sh [HYBRIO [EXAMPLES_DIR]]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
hybrio=${1:-$here/target/release/hybrio}
# The fio a failing small copy is checked against: the one whose examples they are.
if [ $# -ge 2 ]; then
    examples=$2
    source_name="the job files of $examples"
    fio_bin=fio
else
    fio_bin=$("$here/../shared/fio/build.sh")
    examples=$(dirname "$fio_bin")/examples
    source_name="fio 3.42's examples/ folder"
fi
fio_version=$("$fio_bin" --version 2>/dev/null || echo fio)
out=$here/tools/FIO-EXAMPLES.md
[ -d "$examples" ] || { echo "fio-examples.sh: $examples missing (../shared/fio/build.sh, or apt-get install fio-examples)" >&2; exit 1; }
work=$(mktemp -d)
ext4="" xfs=""
cleanup() {
    if [ -n "$ext4" ]; then umount "$ext4" 2>/dev/null || true; fi
    if [ -n "$xfs" ]; then umount "$xfs" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
# The e4defrag examples move extents (EXT4_IOC_MOVE_EXT), which this
# machine's root ext4 refuses (EBUSY): they run on a fresh 512 MiB ext4 on a
# loop device, made once (as root) the first time one needs it.
if grep -qlE '^[[:space:]]*ioengine[[:space:]]*=[[:space:]]*e4defrag' "$examples"/*.fio; then
    truncate -s 512m "$work/ext4.img"
    mkfs.ext4 -q -F "$work/ext4.img"
    mkdir -p "$work/ext4"
    mount -o loop "$work/ext4.img" "$work/ext4"
    ext4=$work/ext4
fi
# The atomic-write examples need a filesystem that offers RWF_ATOMIC: XFS
# does on any device from Linux 6.16, so they run on a fresh 512 MiB XFS on a
# loop device (where mkfs.xfs is here).
if grep -qlE '^[[:space:]]*atomic[[:space:]]*=[[:space:]]*1' "$examples"/*.fio && command -v mkfs.xfs >/dev/null; then
    truncate -s 512m "$work/xfs.img"
    mkfs.xfs -q -f "$work/xfs.img"
    mkdir -p "$work/xfs"
    mount -o loop "$work/xfs.img" "$work/xfs"
    xfs=$work/xfs
fi
# Where the small copy of a job file runs.
small_dir() {
    if [ -n "$ext4" ] && grep -qE '^[[:space:]]*ioengine[[:space:]]*=[[:space:]]*e4defrag' "$1"; then
        echo "$ext4/run"
    elif [ -n "$xfs" ] && grep -qE '^[[:space:]]*atomic[[:space:]]*=[[:space:]]*1' "$1"; then
        echo "$xfs/run"
    else
        echo "$work/run"
    fi
}
# Some examples take their parameters from the environment (and say so in their
# comments); give them the sort of values they ask for, so that what follows is read too.
export FIO_BS=4k FIO_DIR=$work FIO_IODEPTH=4 FIO_RW=randread
export S3_KEY=key S3_ID=id CONT=cont POOL=pool SSE_KEY=key STORAGE_CLASS=STANDARD SWIFT_id=id
export GPU_DEV_IDS=0 unixsocket=$work/nbd.sock uri=nbd://localhost
# Runs a copy of the job file with its sizes and times made small, in a scratch
# directory, and prints "N job(s), each did I/O" or why it failed.
# Runs fio on the small copy run_small left in $1; true when fio fails on it too.
fio_fails_too() {
    local dir=$1 given
    command -v "$fio_bin" >/dev/null || return 1
    read -r -a given < "$dir/given"
    ! (cd "$dir" && timeout 120 "$fio_bin" --output-format=json --runtime=3 "${given[@]}" job.fio > fio.json 2> fio.err)
}
run_small() {
    local file=$1 dir
    dir=$(small_dir "$file")
    rm -rf "$dir" && mkdir -p "$dir"
    sed -E -e 's/^([[:space:]]*(size|filesize|io_size))[[:space:]]*=.*/\1=1m/' \
        -e 's/^([[:space:]]*runtime)[[:space:]]*=.*/\1=1/' \
        -e 's/^([[:space:]]*loops)[[:space:]]*=.*/\1=2/' \
        -e 's/^([[:space:]]*startdelay)[[:space:]]*=.*/\1=0/' \
        -e "s|^([[:space:]]*directory)[[:space:]]*=.*|\\1=$dir|" \
        -e "s|^([[:space:]]*filename)[[:space:]]*=/tmp/(.*)|\\1=$dir/\\2|" \
        -e "s|^([[:space:]]*filename)[[:space:]]*=/dev/.*|\\1=$dir/device\\nsize=1m|" \
        "$file" > "$dir/job.fio"
    # A file that names no file and may not create one takes its device from
    # the command line (its comments say so): a 1 MiB file stands in for it.
    # A file that sets no size runs with 1 MiB (its own size wins).
    local given=(--size=1m)
    if grep -qE '^[[:space:]]*allow_file_create[[:space:]]*=[[:space:]]*0' "$dir/job.fio" &&
        ! grep -qE '^[[:space:]]*(filename|directory|filename_format)[[:space:]]*=' "$dir/job.fio"; then
        truncate -s 1m "$dir/device"
        given+=(--filename="$dir/device")
    fi
    echo "${given[*]}" > "$dir/given"
    local status=0
    (cd "$dir" && timeout 120 "$hybrio" --output-format=json --runtime=3 "${given[@]}" job.fio) > "$dir/out.json" 2> "$dir/err" || status=$?
    if [ "$status" != 0 ]; then
        echo "exit $status running it: $(head -c 300 "$dir/err" | tr '\n|' '  ')"
        return 1
    fi
    python3 - "$dir/out.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
jobs = doc["jobs"]
kib = [sum(j[d]["io_kbytes"] for d in ("read", "write", "trim")) for j in jobs]
engine = lambda j: j.get("job options", {}).get(
    "ioengine", doc.get("global options", {}).get("ioengine"))
# cpuio and exec do no I/O: what they did is their time and CPU.
idle = [j["jobname"] for j, k in zip(jobs, kib)
        if k == 0 and not (engine(j) == "exec" and j["error"] == 0
                           or engine(j) == "cpuio" and j["usr_cpu"] > 0)]
if not jobs or idle:
    print(f"a job did no I/O ({kib} KiB per job)")
    sys.exit(1)
# Time-based jobs move a different amount each run: the table says only
# that each did I/O, so that it changes when an outcome does.
print(f"{len(jobs)} job(s), each did I/O" + (" (or burnt its CPU, or ran its program)" if any(k == 0 for k in kib) else ""))
PY
}
parsed=0 ran=0 refused=0 broken=0 lacking=0 failing=0
rows=()
for file in "$examples"/*.fio; do
    name=$(basename "$file")
    set +e
    (cd "$work" && "$hybrio" --showcmd "$file") > "$work/out" 2> "$work/err"
    status=$?
    set -e
    lines=$(wc -l < "$work/err")
    # fio's warnings (time_based without runtime, say) are lines too: a
    # file that parses is one whose --showcmd succeeds.
    if [ "$status" = 0 ]; then
        parsed=$((parsed + 1))
        if outcome=$(run_small "$file"); then
            ran=$((ran + 1))
            rows+=("| $name | parses and runs small: $outcome |")
        elif fio_fails_too "$(small_dir "$file")"; then
            # What fio does with the same small copy: it fails too.
            failing=$((failing + 1))
            first=$(grep -v '^hybrio: job .* requests submitted' "$(small_dir "$file")/err" | head -1 | head -c 200 | sed 's/|/\\|/g')
            rows+=("| $name | runs small and fails as $fio_version fails on the same copy: \`${first}\` |")
        elif program=$(grep -oE "run [^ :]+: No such file or directory" "$(small_dir "$file")/err" | head -1) && [ -n "$program" ]; then
            # An exec job's program this machine does not have.
            lacking=$((lacking + 1))
            rows+=("| $name | parses; running it needs a program this machine lacks: \`${program}\` |")
        else
            broken=$((broken + 1))
            rows+=("| $name | **BROKEN**: parses, then $outcome |")
        fi
    elif [ "$status" = 1 ] && [ "$lines" = 1 ] && ! grep -q panicked "$work/err"; then
        refused=$((refused + 1))
        message=$(sed -e "s|$examples/||g" -e 's/|/\\|/g' "$work/err")
        rows+=("| $name | refused: \`${message}\` |")
    else
        broken=$((broken + 1))
        rows+=("| $name | **BROKEN** (exit $status, $lines lines on stderr) |")
    fi
done
{
    echo "# fio's example job files"
    echo
    echo "Written by \`tools/fio-examples.sh\` with $("$hybrio" --version) on the $(ls "$examples"/*.fio | wc -l) job files of $source_name."
    echo "Each is read with \`hybrio --showcmd\` (parse and check every option, no I/O), with the environment variables some of them expect set to plausible values (see the script); each that parses is then run from a copy made small (sizes 1 MiB, also where none is set, runtime 1 s, at most 2 loops, no start delay, its directory a scratch one (a fresh ext4 for the e4defrag ones, a fresh XFS for the atomic ones), a device or a file in /tmp a 1 MiB file in it (also the one a file with allow_file_create=0 and no filename expects on the command line), every job stopped after 3 s) and must do I/O in every job."
    echo
    echo "$parsed parse ($ran of them run small, $failing fail as fio fails on the same small copy, $lacking need a program this machine lacks), $refused are refused with one line, $broken broken."
    echo
    echo "| job file | outcome |"
    echo "|---|---|"
    printf '%s\n' "${rows[@]}"
} > "$out"
echo "fio-examples.sh: $parsed parse ($ran run small, $failing fail as fio does, $lacking lack a program), $refused refused, $broken broken; wrote $out" >&2
[ "$broken" = 0 ]
