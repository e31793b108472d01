#!/usr/bin/env bash
# hybrio --mpi on a real network filesystem on this one machine: a GlusterFS
# volume served over TCP by glusterd on this host's name and mounted through
# its FUSE client, the target of IOR's three layouts (a file per process, one
# shared file in segments, one shared file in strided blocks).
#
# usage: scenarios/glusterfs_mpi.sh [RANKS] [MIB_PER_RANK]   (default 4 ranks, 64 MiB each)
#
# Needs root, /dev/fuse, glusterfs-server and glusterfs-client (Debian), Open
# MPI, and hybrio built with the mpi feature (cargo build --release -p
# hybrio-bench --features mpi). Everything lives under a scratch directory and
# is removed at exit, also on failure: the mount, the volume, the glusterd
# this script started, the brick.
set -euo pipefail
ranks=${1:-4}
mib=${2:-64}
here=$(cd "$(dirname "$0")/.." && pwd)
hybrio="$here/target/release/hybrio"
[ -x "$hybrio" ] || { echo "build first: cargo build --release -p hybrio-bench --features mpi" >&2; exit 1; }
for tool in glusterd gluster mpirun; do
    command -v $tool >/dev/null || { echo "needs $tool (apt-get install glusterfs-server glusterfs-client openmpi-bin)" >&2; exit 1; }
done
scratch=$(mktemp -d /tmp/hybrio-gluster.XXXXXX)
volume="hybrio$$"
started_glusterd=""
cleanup() {
    set +e
    mountpoint -q "$scratch/mnt" && umount "$scratch/mnt"
    gluster --mode=script volume stop "$volume" force >/dev/null 2>&1
    gluster --mode=script volume delete "$volume" >/dev/null 2>&1
    [ -n "$started_glusterd" ] && pkill -x glusterd
    rm -rf "$scratch"
}
trap cleanup EXIT
mkdir -p "$scratch/brick" "$scratch/mnt"
if ! pgrep -x glusterd >/dev/null; then
    glusterd --log-file="$scratch/glusterd.log"
    started_glusterd=1
    for _ in $(seq 50); do gluster pool list >/dev/null 2>&1 && break; sleep 0.2; done
fi
# glusterd refuses "localhost" and 127.0.0.1 as a brick's host; this host's
# name (127.0.0.1 in /etc/hosts here) it takes.
host=$(hostname)
gluster --mode=script volume create "$volume" "$host:$scratch/brick" force >/dev/null
gluster --mode=script volume start "$volume" >/dev/null
mount -t glusterfs "$host:/$volume" "$scratch/mnt"
echo "GlusterFS $(gluster --version | head -1 | awk '{print $2}') volume $volume on $host, mounted at $scratch/mnt ($(findmnt -no FSTYPE "$scratch/mnt"))"

run() {
    local name=$1; shift
    cat > "$scratch/$name.fio" <<EOF
[global]
ioengine=psync
bs=64k
end_fsync=1
$*
[write]
rw=write
[read]
stonewall
rw=read
EOF
    echo
    echo "== $name"
    mpirun --allow-run-as-root --oversubscribe -np "$ranks" "$hybrio" --mpi "$scratch/$name.fio" \
        | grep -E "^ +(WRITE|READ):|^  rank |straggler"
}
run "file per process" "filename=$scratch/mnt/f.\$rank
size=${mib}m"
run "one file, a segment each" "filename=$scratch/mnt/segmented
offset=(\$rank*$mib)m
size=${mib}m"
run "one file, strided blocks" "filename=$scratch/mnt/strided
offset=(\$rank*64)k
size=($((mib * ranks))*1024-\$rank*64)k
io_size=${mib}m
zonemode=strided
zonesize=64k
zonerange=64k
zoneskip=((\$nranks-1)*64)k"
