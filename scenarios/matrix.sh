#!/usr/bin/env bash
# The scenario matrix: every cell (stonewall group) of scenarios/matrix/*.fio run by
# `hybrio compare` under each engine, in alternation, ROUNDS times, on each filesystem
# of FILESYSTEMS in turn; then scenarios/matrix_report.py writes scenarios/RESULTS.md
# from the JSON documents.
#
#   scenarios/matrix.sh [ROUNDS [CONFIRM_ROUNDS]]
#   FILESYSTEMS="ext4 xfs btrfs tmpfs fastdev" scenarios/matrix.sh 5 12    (all of them, as root)
#
# First stage: every engine, ROUNDS rounds (default 3: about 10-15 minutes with 5 engines
# per filesystem). Confirmation stage: for each job file, adaptive against the static
# engines that came within 10% of the best static engine's median IOPS in any of its
# cells, and against each deeper-than-1 cell's p99 reference (the best engine that keeps
# the depth in flight), CONFIRM_ROUNDS more rounds (default 9; 0 skips it). On this
# machine one engine's rounds of one cell spread by 10-30% (the disk is shared, the vCPUs
# too), so settling a 5% difference takes more pairs than a five-engine round can afford;
# the report pairs both stages' rounds.
#
# FILESYSTEMS  where the matrix runs, one after another (default "ext4"):
#     ext4     the SCRATCH directory itself (on the root ext4); its files are kept
#     xfs      XFS on a loop device (direct I/O, so that reads past XFS's cache reach the
#     btrfs    disk rather than the cache of the image) over a sparse image file in SCRATCH
#     tmpfs    a tmpfs mount in SCRATCH
#     fastdev  XFS on a loop device (direct I/O) over an image file in a tmpfs mount: a
#              real block device (4k O_DIRECT reads in ~19 us here), where O_DIRECT is CPU-bound
#   Each but ext4 is made for the run and removed before the next one starts (so RAM is
#   not held twice), and at exit, also on failure, Ctrl-C or SIGTERM; they need root
#   (mount, losetup, mkfs), and mkfs.xfs, mkfs.btrfs and perf are installed with apt-get
#   when missing. Before its cells, each filesystem gets a few seconds of kernel probe:
#   what share of io_uring's requests the kernel hands to its io-wq worker threads.
#   Cells a filesystem cannot run (O_DIRECT refused; drop_cache_after where dropping the
#   cache drops nothing, as on tmpfs) are skipped with the reason, in RESULTS.md.
# SCRATCH      directory for the ext4 data files and the other filesystems' images and
#              mount points (default /var/tmp/hybrio-matrix, on the root ext4); the job
#              files name their files relative to the directory compare runs from
#              (hybrio's job files have no ${VAR} expansion). About 8 GiB of data per
#              filesystem; ext4's are kept between runs, so that they are laid out once.
# ENGINES      engine list for compare (default psync,pool,libaio,io_uring,adaptive)
# RESULTS      where the JSON documents go, one directory per filesystem (default
#              scenarios/results: scenarios/results/ext4/, scenarios/results/xfs/, ...)
# REPORT       the report written at the end (default scenarios/RESULTS.md)
# MATRIX       which job files (default scenarios/matrix/*.fio)
# HYBRIO       a hybrio binary to use instead of building one (cargo build --release)
set -euo pipefail

rounds=${1:-3}
confirm_rounds=${2:-9}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=${SCRATCH:-/var/tmp/hybrio-matrix}
engines=${ENGINES:-psync,pool,libaio,io_uring,adaptive}
results=${RESULTS:-$here/scenarios/results}
report=${REPORT:-$here/scenarios/RESULTS.md}
helper=$here/scenarios/matrix_helper.py
known="ext4 xfs btrfs tmpfs fastdev"
mib=$((1 << 20))

note() { echo "matrix.sh: $*" >&2; }
die() {
    note "$*"
    exit 1
}

case $rounds in
    '' | *[!0-9]* | 0) die "ROUNDS must be a positive whole number, got '$rounds'" ;;
esac
case $confirm_rounds in
    '' | *[!0-9]*) die "CONFIRM_ROUNDS must be a whole number, got '$confirm_rounds'" ;;
esac
read -r -a fs_list <<< "${FILESYSTEMS-ext4}"
[ "${#fs_list[@]}" -gt 0 ] || die "FILESYSTEMS is empty; name one or more of: $known"
seen=" "
for fs in "${fs_list[@]}"; do
    case " $known " in
        *" $fs "*) ;;
        *) die "unknown filesystem '$fs' in FILESYSTEMS (known: $known)" ;;
    esac
    case $seen in
        *" $fs "*) die "'$fs' is named twice in FILESYSTEMS" ;;
    esac
    seen="$seen$fs "
    if [ "$fs" != ext4 ] && [ "$(id -u)" -ne 0 ]; then
        die "FILESYSTEMS=$fs needs root (mount, losetup, mkfs); ext4 alone does not"
    fi
done
if [ -n "${MATRIX:-}" ]; then
    read -r -a jobs <<< "$MATRIX"
else
    jobs=("$here"/scenarios/matrix/*.fio)
fi
for i in "${!jobs[@]}"; do
    [ -f "${jobs[$i]}" ] || die "no such job file: ${jobs[$i]}"
    jobs[i]=$(cd "$(dirname "${jobs[$i]}")" && pwd)/$(basename "${jobs[$i]}")
done

if [ -n "${HYBRIO:-}" ]; then
    hybrio=$HYBRIO
    [ -x "$hybrio" ] || die "HYBRIO=$hybrio is not an executable file"
else
    note "building hybrio (release)"
    cargo build --quiet --release -j2 -p hybrio-bench --manifest-path "$here/Cargo.toml"
    hybrio="$here/target/release/hybrio"
fi
# `--help` exits 0 whatever follows it, so look for the subcommand in the usage text.
# The help is read whole first: grep -q leaving early would end hybrio with SIGPIPE, which
# pipefail takes for a failure.
help_text=$("$hybrio" --help 2>&1 || true)
if ! grep -qE 'hybrio compare( |$)' <<< "$help_text"; then
    die "this hybrio has no 'compare' subcommand yet (it comes with the adaptive engine)"
fi

# Installs PACKAGE with apt-get when COMMAND is missing; false if it stays missing.
need_tool() {
    local command=$1 package=$2
    command -v "$command" > /dev/null 2>&1 && return 0
    [ "$(id -u)" -eq 0 ] || return 1
    note "installing $package with apt-get ($command is missing)"
    # A stale package list is the usual reason an install fails; one update, then again.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" > /dev/null \
        || { apt-get update -q > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$package" > /dev/null; } \
        || return 1
    command -v "$command" > /dev/null 2>&1
}
for fs in "${fs_list[@]}"; do
    case $fs in
        xfs | fastdev) need_tool mkfs.xfs xfsprogs || die "mkfs.xfs is missing and apt-get could not install xfsprogs" ;;
        btrfs) need_tool mkfs.btrfs btrfs-progs || die "mkfs.btrfs is missing and apt-get could not install btrfs-progs" ;;
    esac
done
# Without perf the matrix still runs; kernel.json then says why there is no probe.
need_tool perf linux-perf || note "perf is missing and could not be installed: no kernel probe"

mkdir -p "$scratch" "$results"
# One run at a time per scratch directory: what the next run finds mounted there is then
# left by a run that was killed (SIGKILL, a crash), and can be removed. A hybrio compare
# orphaned by a killed matrix.sh inherits the lock and holds it until it ends.
exec 9> "$scratch/.matrix.lock"
flock -n 9 || die "another matrix.sh is running on $scratch (it holds $scratch/.matrix.lock)"

# Where each filesystem lives; teardown_fs works from these paths alone, so that it also
# clears what a killed run left.
mount_of() { echo "$scratch/$1"; }
image_of() {
    case $1 in
        xfs | btrfs) echo "$scratch/$1.img" ;;
        fastdev) echo "$scratch/fastdev-ram/fastdev.img" ;;
    esac
}

# Unmounts DIR if it is mounted (and whatever is stacked on it). A busy mount (a process
# still closing its files) is retried for 10 s (TRIES), then detached lazily: gone from
# the tree at once, freed when its last user goes. That is reported, as the RAM or loop
# device it holds stays taken until then. False if anything is left mounted.
unmount() {
    local dir=$1 tries=${2:-10} try
    for _ in 1 2 3 4; do
        mountpoint -q "$dir" 2> /dev/null || return 0
        for try in $(seq "$tries"); do
            umount "$dir" 2> /dev/null && continue 2
            [ "$try" -eq "$tries" ] || sleep 1
        done
        local users='' pids
        if command -v fuser > /dev/null; then
            pids=$(fuser -m "$dir" 2> /dev/null | grep -o '[0-9]\+' | paste -sd, -)
            [ -z "$pids" ] || users=" (used by: $(ps -o pid=,comm= -p "$pids" | tr -s ' \n' ' '))"
        fi
        note "WARNING: $dir stayed busy for $tries s$users; unmounting it lazily"
        umount --lazy "$dir" || {
            note "ERROR: could not unmount $dir"
            return 1
        }
        leftovers+=("$dir was busy: lazily unmounted, freed when its last user goes")
    done
    mountpoint -q "$dir" 2> /dev/null && {
        note "ERROR: $dir is still mounted after 4 unmounts"
        return 1
    }
    return 0
}

# Loop devices whose backing file is IMAGE (also once the file is deleted); with
# "attached", not those already set to detach when their last user closes them.
loops_of() {
    losetup --list --noheadings --output NAME,AUTOCLEAR,BACK-FILE 2> /dev/null \
        | while read -r name autoclear back; do
            [ "${2:-}" != attached ] || [ "$autoclear" != 1 ] || continue
            case $back in "$1" | "$1 (deleted)") echo "$name" ;; esac
        done
}

# Removes everything filesystem FS put in SCRATCH: mount, loop device, image, tmpfs.
# Idempotent, and every step is tried whatever the one before did.
teardown_fs() {
    local fs=$1 image dev ok=0
    [ "$fs" = ext4 ] && return 0
    image=$(image_of "$fs")
    unmount "$(mount_of "$fs")" || ok=1
    if [ -n "$image" ]; then
        for dev in $(loops_of "$image"); do
            # On a device still in use (a lazy unmount) the kernel sets autoclear instead:
            # it detaches when its last user closes it.
            losetup -d "$dev" 2> /dev/null || ok=1
            if [ -e "/sys/block/${dev#/dev/}/loop" ]; then
                leftovers+=("$dev (backing $image) detaches when its last user closes it")
            fi
        done
        rm -f "$image"
    fi
    if [ "$fs" = fastdev ]; then
        # A loop device waiting for its last user keeps the image open: no use waiting.
        local tries=10
        [ -z "$(loops_of "$image")" ] || tries=1
        unmount "$scratch/fastdev-ram" "$tries" || ok=1
        rmdir "$scratch/fastdev-ram" 2> /dev/null || true
    fi
    rmdir "$(mount_of "$fs")" 2> /dev/null || true
    return "$ok"
}

# Whatever of FS is still there, one line each (empty: nothing).
remains_of() {
    local fs=$1 image
    [ "$fs" = ext4 ] && return 0
    image=$(image_of "$fs")
    if mountpoint -q "$(mount_of "$fs")" 2> /dev/null; then echo "mounted: $(mount_of "$fs")"; fi
    if [ "$fs" = fastdev ] && mountpoint -q "$scratch/fastdev-ram" 2> /dev/null; then
        echo "mounted: $scratch/fastdev-ram"
    fi
    [ -n "$image" ] || return 0
    local dev
    for dev in $(loops_of "$image" attached); do echo "loop device: $dev ($image)"; done
    if [ -e "$image" ]; then echo "image: $image"; fi
}

child=
active=
leftovers=()
# Stops the running hybrio compare, if any: it ends its current run on the first signal
# and at once on a second; SIGKILL after 10 s in case it is stuck laying out a file.
stop_child() {
    [ -n "$child" ] || return 0
    kill -TERM "$child" 2> /dev/null || true
    for _ in $(seq 20); do
        kill -0 "$child" 2> /dev/null || break
        sleep 0.5
    done
    kill -KILL "$child" 2> /dev/null || true
    wait "$child" 2> /dev/null || true
    child=
}
cleanup() {
    local status=$?
    # A second Ctrl-C must not cut the unmounting short.
    trap '' INT TERM HUP
    set +e
    stop_child
    rm -f "$results"/*/*.json.part "$results"/*/confirm/*.json.part
    if [ -n "$active" ]; then
        note "removing $active"
        teardown_fs "$active"
        active=
    fi
    local fs remains=()
    for fs in $known; do
        mapfile -t -O "${#remains[@]}" remains < <(remains_of "$fs")
    done
    if [ "${#remains[@]}" -gt 0 ]; then
        note "ERROR: these could not be removed; remove them by hand (umount, losetup -d, rm):"
        printf 'matrix.sh:   %s\n' "${remains[@]}" >&2
        status=1
    fi
    if [ "${#leftovers[@]}" -gt 0 ]; then
        note "WARNING: removed, but these are freed only when their last user goes:"
        printf 'matrix.sh:   %s\n' "${leftovers[@]}" >&2
    fi
    exit "$status"
}
on_signal() {
    trap '' INT TERM HUP
    note "interrupted by SIG$1: stopping and removing what the run made"
    exit "$2"
}
trap cleanup EXIT
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP

for fs in $known; do
    if [ -n "$(remains_of "$fs")" ]; then
        note "$fs: removing what an earlier run that was killed left in $scratch"
        teardown_fs "$fs" || die "could not remove the $fs an earlier run left in $scratch"
    fi
done

# Space for the job files' data and the probe's files, and what each filesystem adds:
# XFS and btrfs keep a log and metadata (btrfs allocates in 1 GiB chunks), hence the
# 15% + 1.5 GiB over the data in the images; tmpfs adds nothing but rounding.
need=$(python3 "$helper" need "${jobs[@]}")
image_bytes=$(((need + need * 15 / 100 + 1536 * mib + mib - 1) / mib * mib))
tmpfs_bytes=$(((need + need * 5 / 100 + 256 * mib + mib - 1) / mib * mib))
gib() { awk -v b="$1" 'BEGIN { printf "%.1f GiB", b / 2^30 }'; }
avail_ram=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) * 1024))
avail_disk=$(df --output=avail -B1 "$scratch" | tail -1)
for fs in "${fs_list[@]}"; do
    case $fs in
        ext4)
            # The last line is the mount on top, where mounts are stacked.
            fstype=$(findmnt -n -o FSTYPE -T "$scratch" | tail -1)
            [ "$fstype" = ext4 ] || die "SCRATCH=$scratch is on $fstype, not ext4: set SCRATCH to a directory on ext4, or leave ext4 out of FILESYSTEMS"
            ;;
        xfs | btrfs) [ "$avail_disk" -ge "$image_bytes" ] \
            || die "$fs needs $(gib "$image_bytes") free in $scratch for its image; $(gib "$avail_disk") are" ;;
        tmpfs | fastdev)
            # What the files take stays in RAM for the whole run; 2 GiB are left for the rest.
            want=$tmpfs_bytes
            [ "$fs" = tmpfs ] || want=$image_bytes
            [ "$avail_ram" -ge $((want + 2048 * mib)) ] \
                || die "$fs needs $(gib "$want") of RAM and 2 GiB to spare; $(gib "$avail_ram") are available"
            ;;
    esac
done

# Attaches IMAGE to a loop device with direct I/O; prints the device. Direct I/O keeps
# the image's own page cache out: without it a read that misses the filesystem's cache
# is served from the cache of the image (ext4's, or tmpfs's through a slower path:
# 4k O_DIRECT reads take ~55 us instead of ~19 on the fast device).
attach_loop() {
    local dev
    dev=$(losetup --find --show --direct-io=on "$1")
    if [ "$(cat "/sys/block/${dev#/dev/}/loop/dio" 2> /dev/null)" != 1 ]; then
        note "WARNING: $dev runs without direct I/O (the kernel refused it for $1)"
    fi
    echo "$dev"
}

# Makes filesystem FS; sets dir (where compare runs), device, backing and setup (for
# machine.json).
setup_fs() {
    local fs=$1 mnt image
    mnt=$(mount_of "$fs")
    image=$(image_of "$fs")
    backing=
    case $fs in
        ext4)
            dir=$scratch
            device=
            setup="The scratch directory on the root filesystem; its data files are kept between runs."
            return 0
            ;;
        tmpfs)
            mkdir -p "$mnt"
            active=$fs
            mount -t tmpfs -o "size=$((tmpfs_bytes / mib))m,mode=0755" hybrio-matrix-tmpfs "$mnt"
            device="hybrio-matrix-tmpfs"
            backing="RAM, up to $(gib "$tmpfs_bytes")"
            setup="A tmpfs mount of up to $(gib "$tmpfs_bytes") made for the run."
            ;;
        xfs | btrfs | fastdev)
            active=$fs
            if [ "$fs" = fastdev ]; then
                mkdir -p "$scratch/fastdev-ram"
                mount -t tmpfs -o "size=$(((image_bytes + 64 * mib) / mib))m,mode=0700" hybrio-matrix-fastdev "$scratch/fastdev-ram"
            fi
            truncate -s "$image_bytes" "$image"
            device=$(attach_loop "$image")
            local dio=off under
            [ "$(cat "/sys/block/${device#/dev/}/loop/dio" 2> /dev/null)" = 1 ] && dio=on
            if [ "$fs" = btrfs ]; then
                mkfs.btrfs -q -f "$device" > /dev/null
            else
                mkfs.xfs -q -f "$device"
            fi
            mkdir -p "$mnt"
            mount "$device" "$mnt"
            under=$(findmnt -n -o FSTYPE -T "$(dirname "$image")" | tail -1)
            backing="loop, direct I/O $dio, over a sparse $(gib "$image_bytes") image on $under"
            local made=XFS
            [ "$fs" = btrfs ] && made=btrfs
            setup="$made (mkfs defaults) on $device, a loop device with direct I/O $dio over a sparse $(gib "$image_bytes") image file ($image) on $under, made for the run."
            ;;
    esac
    dir=$mnt
}

# CPU time used by everything on the machine over 5 s, as a percentage of all CPUs:
# run before each filesystem, it says whether other work was going on.
busy_pct() {
    read -r _ u1 n1 s1 i1 w1 q1 sq1 st1 _ < /proc/stat
    sleep 5 &
    wait $!
    read -r _ u2 n2 s2 i2 w2 q2 sq2 st2 _ < /proc/stat
    local busy=$(((u2 + n2 + s2 + q2 + sq2 + st2) - (u1 + n1 + s1 + q1 + sq1 + st1)))
    local idle=$(((i2 + w2) - (i1 + w1)))
    echo $((100 * busy / (busy + idle)))
}

# Runs compare on one job file (or some of its sections) into OUT, which appears only
# once complete: an interrupted run leaves no half document for the report to read. It
# runs in the background and is waited for, so that a signal is handled at once (bash
# runs traps only between foreground commands).
compare() {
    local out=$1 job=$2 sections=$3 engine_list=$4 n=$5 args=()
    local section
    for section in ${sections//,/ }; do args+=("--section=$section"); done
    (cd "$dir" && exec "$hybrio" compare --engines="$engine_list" --rounds="$n" \
        --output-format=json --output="$out.part" "${args[@]}" "$job") &
    child=$!
    local rc=0
    wait "$child" || rc=$?
    child=
    [ "$rc" -eq 0 ] || return "$rc"
    mv "$out.part" "$out"
}

first=(--first)
for fs in "${fs_list[@]}"; do
    out="$results/$fs"
    mkdir -p "$out"
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    busy_before=$(busy_pct)
    note "$fs: setting up"
    setup_fs "$fs"
    plan=$(python3 "$helper" plan "${first[@]}" --fs "$fs" --dir "$dir" --out "$out/plan.json" "${jobs[@]}")
    runs=()
    while IFS=$'\t' read -r kind stem path sections; do
        case $kind in
            run) runs+=("$stem"$'\t'"$path"$'\t'"$sections") ;;
            # A document from an earlier run of a file skipped now would read as this run's.
            skip) rm -f "$out/$stem.json" "$out/confirm/$stem.json" ;;
        esac
    done <<< "$plan"
    if command -v perf > /dev/null 2>&1; then
        note "$fs: kernel probe (io_uring's hand-offs to io-wq)"
        python3 "$helper" probe --hybrio "$hybrio" --dir "$dir" --plan "$out/plan.json" --out "$out/kernel.json"
    else
        echo '{"error": "perf is missing and apt-get could not install linux-perf"}' > "$out/kernel.json"
    fi
    for run in "${runs[@]}"; do
        IFS=$'\t' read -r stem path sections <<< "$run"
        # (compare leaves libaio out of a file with network jobs, and says so)
        note "$fs: $stem ($rounds rounds: $engines${sections:+; sections $sections})"
        compare "$out/$stem.json" "$path" "$sections" "$engines" "$rounds"
    done
    # The confirmation stage; stale documents from an earlier run must not be paired with this one.
    rm -rf "$out/confirm"
    if [ "$confirm_rounds" -gt 0 ]; then
        mkdir -p "$out/confirm"
        for run in "${runs[@]}"; do
            IFS=$'\t' read -r stem path sections <<< "$run"
            contenders=$(python3 "$helper" contenders "$out/$stem.json" "$path")
            [ -n "$contenders" ] || continue
            note "$fs: $stem, confirmation ($confirm_rounds rounds: $contenders)"
            compare "$out/confirm/$stem.json" "$path" "$sections" "$contenders" "$confirm_rounds"
        done
    fi
    load_after=$(cut -d' ' -f1-3 /proc/loadavg)
    python3 "$helper" machine --out "$out/machine.json" --fs "$fs" --dir "$dir" --device "$device" \
        --backing "$backing" --setup "$setup" --load-before "$load_before" --load-after "$load_after" \
        --busy-pct "$busy_before" "${first[@]}"
    first=()
    if [ -n "$active" ]; then
        note "$fs: removing it"
        teardown_fs "$fs" || die "could not remove $fs completely (see above)"
        active=
    fi
done

# The report reads each cell's depth from its job file: from MATRIX's directory when its
# files share one.
jobs_dir=$(dirname "${jobs[0]}")
for job in "${jobs[@]}"; do
    [ "$(dirname "$job")" = "$jobs_dir" ] || jobs_dir=$here/scenarios/matrix
done
# The charts, drawn by hybrio from the compare documents, embedded by the report.
HYBRIO="$hybrio" "$here/scenarios/charts.sh" "$results"
python3 "$here/scenarios/matrix_report.py" --results "$results" --jobs "$jobs_dir" --output "$report"
