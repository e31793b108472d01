#!/usr/bin/env python3
"""What scenarios/matrix.sh asks of Python: how much space the job files need, what a
filesystem does (O_DIRECT, dropping the cache) and so which cells it runs, the kernel
probe, the confirmation stage's engines and machine.json. Standard library only.

    matrix_helper.py need JOBFILE...
    matrix_helper.py plan --fs NAME --dir DIR --out PLAN.json JOBFILE...
    matrix_helper.py probe --hybrio PATH --dir DIR --plan PLAN.json --out KERNEL.json
    matrix_helper.py contenders DOC.json JOBFILE
    matrix_helper.py machine --out MACHINE.json --fs NAME --dir DIR [...]
"""

import argparse
import ctypes
import datetime
import json
import mmap
import os
import re
import subprocess
import sys
import tempfile

# matrix_report.py is a script beside this one, not a package: no __pycache__ in scenarios/.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from matrix_cells import ADAPTIVE, SYNC_ENGINES, is_true, parse_job_file  # noqa: E402

UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}
# The probe's files, laid out beside the matrix's (their share of `need`).
PROBE_READ, PROBE_READ_SIZE = "m-probe.dat", 128 * 2**20
PROBE_WRITE, PROBE_WRITE_SIZE = "m-probe-w.dat", 64 * 2**20
# One run of each probe workload: long enough for thousands of requests on any of
# the filesystems, short enough that the probe takes a few seconds.
PROBE_RUNTIME = "500ms"
# The share of a test file left cached after POSIX_FADV_DONTNEED above which the
# filesystem is taken not to drop its cache (a few pages may stay mapped or dirty).
DROP_LEFT_MAX = 0.10


def fail(message):
    print(f"matrix_helper.py: {message}", file=sys.stderr)
    sys.exit(1)


def parse_size(text):
    """fio's sizes as the matrix uses them: a number with an optional k/m/g/t/p
    suffix (with or without i/b), powers of 1024 (fio's default kb_base); None for
    anything else (a percentage, a range)."""
    found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgtp]?)(?:i?b)?", text.strip().lower())
    return int(float(found.group(1)) * UNITS[found.group(2)]) if found else None


def is_network(job):
    """A job whose file is a socket (fio's net engine, or hybrio's protocol= on any engine)."""
    return job.get("ioengine") == "net" or "protocol" in job or "proto" in job


def job_files_need(paths):
    """Bytes the job files' data files take: each file once, at its largest size."""
    sizes = {}
    for path in paths:
        for group in parse_job_file(path):
            for job in group["jobs"]:
                if is_network(job):
                    continue
                name = job.get("filename")
                size = parse_size(job.get("filesize") or job.get("size") or "")
                if not name or size is None:
                    fail(f"{path}: a job without filename= or a plain size= (cannot tell the space it needs)")
                sizes[name] = max(sizes.get(name, 0), size * int(job.get("nrfiles", "1")))
    return sum(sizes.values())


def cmd_need(args):
    print(job_files_need(args.jobs) + PROBE_READ_SIZE + PROBE_WRITE_SIZE)


def resident_share(path, size):
    """The share of the file's pages in the page cache (mincore over a mapping, which
    faults nothing in)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    fd = os.open(path, os.O_RDWR)
    try:
        with mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE) as m:
            view = (ctypes.c_char * size).from_buffer(m)
            try:
                pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
                vec = ctypes.create_string_buffer(pages)
                if libc.mincore(ctypes.addressof(view), size, vec) != 0:
                    raise OSError(ctypes.get_errno(), "mincore")
                return sum(b & 1 for b in vec.raw[:pages]) / pages
            finally:
                del view
    finally:
        os.close(fd)


def check_filesystem(directory):
    """What the filesystem under `directory` does with O_DIRECT and with
    POSIX_FADV_DONTNEED, tried on a test file: {key: (works, what was seen)}."""
    size = 8 * 2**20
    fd, path = tempfile.mkstemp(prefix=".matrix-check-", dir=directory)
    try:
        os.write(fd, os.urandom(size))
        os.fsync(fd)
        os.close(fd)
        found = {}
        try:
            direct = os.open(path, os.O_RDONLY | os.O_DIRECT)
            try:
                buf = mmap.mmap(-1, 4096)
                got = os.preadv(direct, [buf], 4096)
            finally:
                os.close(direct)
            found["O_DIRECT"] = (got == 4096, f"accepted (a 4k O_DIRECT read of a test file returned {got} bytes)")
        except OSError as e:
            found["O_DIRECT"] = (False, f"refused: {e.strerror} (errno {e.errno}) on open or a 4k read")
        with open(path, "rb") as f:
            while f.read(2**20):
                pass
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        left = resident_share(path, size)
        if left <= DROP_LEFT_MAX:
            found["posix_fadvise(DONTNEED)"] = (True, f"drops the cache ({left:.0%} of a test file stayed cached)")
        else:
            found["posix_fadvise(DONTNEED)"] = (False, f"left {left:.0%} of a test file cached (nothing to drop)")
        return found
    finally:
        os.unlink(path)


def is_direct(job):
    return is_true(job.get("direct", "0")) or not is_true(job.get("buffered", "1"))


def reads_buffered_from_device(job):
    """A buffered read job whose data fio's invalidate (default 1) drops first, so
    that it reads from the device (the emulated device's data stays cached anyway)."""
    emulated = bool(job.get("completion_latency"))
    return "read" in job.get("rw", "read") and not is_direct(job) and not emulated and is_true(job.get("invalidate", "1"))


def plan_filesystem(fstype, found, paths, first=True):
    """Which cells of each job file run on this filesystem; skipped ones and the ones
    that run but mean something else here, each with its reason. Network cells touch no
    filesystem: they run on the run's first one only."""
    direct_ok, direct_text = found["O_DIRECT"]
    drop_ok, drop_text = found["posix_fadvise(DONTNEED)"]
    plan = {"checks": {k: text for k, (_, text) in found.items()}, "o_direct": direct_ok, "drop_cache": drop_ok}
    plan.update(skipped=[], notes=[], runs=[])
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0]
        kept, skipped = [], {}
        notes = {}
        for group in parse_job_file(path):
            cell = group["names"][0]
            jobs = group["jobs"]
            direct = any(is_direct(j) for j in jobs)
            reason = None
            if any(is_network(j) for j in jobs):
                if not first:
                    reason = "a network cell: it touches no filesystem, so it runs on the first one only"
            elif direct and not direct_ok:
                reason = f"O_DIRECT {direct_text}"
            elif any(j.get("drop_cache_after") for j in jobs) and not drop_ok:
                reason = f"posix_fadvise(DONTNEED) {drop_text}, so drop_cache_after would not move the cell off the cache"
            if reason:
                skipped.setdefault(reason, []).append(cell)
                continue
            kept.append(group)
            if direct and fstype == "tmpfs":
                notes.setdefault("O_DIRECT on tmpfs copies from memory: there is no device behind it", []).append(cell)
            if not drop_ok and any(reads_buffered_from_device(j) for j in jobs):
                notes.setdefault(
                    "invalidate=1 drops nothing here: the reads come from memory, not from a device", []
                ).append(cell)
        plan["skipped"] += [{"job": stem, "cells": cells, "reason": r} for r, cells in skipped.items()]
        plan["notes"] += [{"job": stem, "cells": cells, "note": n} for n, cells in notes.items()]
        if kept:
            # All of a kept cell's sections: the jobs that join its first one belong to it.
            sections = [] if not skipped else [name for g in kept for name in g["names"]]
            plan["runs"].append({"job": stem, "path": os.path.abspath(path), "sections": sections})
    return plan


def cmd_plan(args):
    fstype = findmnt(args.dir).get("FSTYPE", "?")
    plan = plan_filesystem(fstype, check_filesystem(args.dir), args.jobs, first=args.first)
    plan["fs"] = args.fs
    with open(args.out, "w") as f:
        json.dump(plan, f, indent=1)
    for run in plan["runs"]:
        print("\t".join(["run", run["job"], run["path"], ",".join(run["sections"])]))
    ran = {run["job"] for run in plan["runs"]}
    for stem in sorted({s["job"] for s in plan["skipped"]} - ran):
        print("\t".join(["skip", stem, "", ""]))
    for s in plan["skipped"]:
        print(f"matrix_helper.py: {args.fs}: skipping {s['job']} ({', '.join(s['cells'])}): {s['reason']}", file=sys.stderr)


# The matrix's typical workloads (cached-qd1, w8k-qd1, disk-qd4, read128k-buffered), in
# an order where each leaves the cache as the next expects it: the cached reads find
# the file read in, and the sequential reads drop it (invalidate=1) last. The third
# field says whether the workload needs O_DIRECT.
READ_FILE = [f"--filename={PROBE_READ}", f"--size={PROBE_READ_SIZE}"]
PROBES = [
    ("4k cached random read", READ_FILE + ["--rw=randread", "--bs=4k", "--invalidate=0"], False),
    ("8k buffered write", [f"--filename={PROBE_WRITE}", f"--size={PROBE_WRITE_SIZE}", "--rw=write", "--bs=8k"], False),
    ("4k O_DIRECT random read, depth 4", READ_FILE + ["--rw=randread", "--bs=4k", "--direct=1", "--iodepth=4"], True),
    ("128k buffered sequential read (cache dropped)", READ_FILE + ["--rw=read", "--bs=128k", "--invalidate=1"], False),
]
TRACEPOINTS = ("io_uring:io_uring_submit_req", "io_uring:io_uring_queue_async_work")


def run_probe(hybrio, directory, name, options):
    """One workload on io_uring under `perf stat`: (submitted, handed to io-wq, IOPS).
    perf counts the tracepoints for hybrio's own threads only, so whatever else the
    machine does with io_uring stays out."""
    with tempfile.NamedTemporaryFile("r", suffix=".perf") as stat:
        cmd = ["perf", "stat", "-x,", "-o", stat.name, "-e", ",".join(TRACEPOINTS), "--", hybrio]
        cmd += ["--name=probe", *options, "--ioengine=io_uring"]
        cmd += [f"--runtime={PROBE_RUNTIME}", "--time_based", "--thread", "--output-format=json"]
        done = subprocess.run(cmd, cwd=directory, capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise RuntimeError(f"{name}: exit status {done.returncode}: {last}")
        counts = {}
        for line in stat.read().splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[2] in TRACEPOINTS:
                if not fields[0].strip().isdigit():
                    raise RuntimeError(f"perf could not count {fields[2]} ({fields[0]})")
                counts[fields[2]] = int(fields[0])
    missing = [t for t in TRACEPOINTS if t not in counts]
    if missing:
        raise RuntimeError(f"perf stat did not report {', '.join(missing)}")
    report = json.loads(done.stdout)
    iops = sum(j[d].get("iops", 0) for j in report.get("jobs", []) for d in ("read", "write"))
    return counts[TRACEPOINTS[0]], counts[TRACEPOINTS[1]], iops


def cmd_probe(args):
    with open(args.plan) as f:
        plan = json.load(f)
    kernel = {
        "method": (
            f"`perf stat -e {','.join(TRACEPOINTS)}` over {PROBE_RUNTIME} of `hybrio --ioengine=io_uring "
            "--thread` per workload, on files of this filesystem (counted for hybrio's threads only)"
        ),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "workloads": [],
    }
    try:
        # Lay the files out and read the read file into the cache, with plain reads and
        # writes, so that the probed runs see what the matrix's cells see.
        for path, size, rw in ((PROBE_READ, PROBE_READ_SIZE, "read"), (PROBE_WRITE, PROBE_WRITE_SIZE, "write")):
            cmd = [args.hybrio, "--name=warm", f"--filename={path}", f"--size={size}", f"--rw={rw}", "--bs=1m"]
            cmd += ["--ioengine=psync", "--invalidate=0", "--output-format=terse"]
            done = subprocess.run(cmd, cwd=args.dir, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"laying out {path}: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
        for name, options, direct in PROBES:
            if direct and not plan.get("o_direct", True):
                kernel["workloads"].append({"name": name, "skipped": "O_DIRECT refused here"})
                continue
            submitted, punted, iops = run_probe(args.hybrio, args.dir, name, options)
            kernel["workloads"].append({"name": name, "submitted": submitted, "punted": punted, "iops": iops})
            share = f"{punted / submitted:.0%}" if submitted else "-"
            print(
                f"matrix_helper.py: {plan.get('fs', '?')}: {name}: io-wq took {punted} of {submitted} requests ({share})",
                file=sys.stderr,
            )
    except Exception as e:  # noqa: BLE001
        # Whatever went wrong is reported in RESULTS.md in place of the table: a probe
        # of a few seconds must not stop the matrix's hour.
        kernel = {"error": str(e)}
        print(f"matrix_helper.py: the kernel probe failed: {e}", file=sys.stderr)
    with open(args.out, "w") as f:
        json.dump(kernel, f, indent=1)


def cmd_contenders(args):
    """The engines of the confirmation stage: the static engines within 10% of the
    best static one's median IOPS in any cell, the p99 reference of every cell deeper
    than 1 (the best-IOPS engine that keeps the depth in flight, which can be far
    below psync in IOPS), and adaptive."""
    with open(args.doc) as f:
        doc = json.load(f)
    depth = {g["names"][0]: g["depth"] for g in parse_job_file(args.job)} if os.path.exists(args.job) else {}
    keep = set()
    for cell in doc.get("cells", []):
        iops = {r["engine"]: r.get("iops") or 0 for r in cell.get("results", []) if r["engine"] != ADAPTIVE}
        if not iops:
            continue
        best = max(iops.values())
        keep |= {engine for engine, value in iops.items() if value >= 0.9 * best}
        if depth.get(cell.get("name"), 1) > 1:
            keeping = {e: v for e, v in iops.items() if e not in SYNC_ENGINES}
            if keeping:
                keep.add(max(keeping, key=keeping.get))
    engines = [e for e in doc.get("engines", []) if e in keep]
    if ADAPTIVE in doc.get("engines", []) and engines:
        print(",".join(engines + [ADAPTIVE]))


def findmnt(directory):
    out = subprocess.run(
        ["findmnt", "-n", "-P", "-o", "SOURCE,FSTYPE,OPTIONS,TARGET", "-T", directory],
        capture_output=True,
        text=True,
    ).stdout
    # The last line is the mount on top, where mounts are stacked on the directory.
    last = (out.strip().splitlines() or [""])[-1]
    found = {}
    for field in last.split('" '):
        key, _, value = field.partition('="')
        found[key.strip()] = value.rstrip('"')
    return found


def cmd_machine(args):
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    ram_kib = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal"))
    mount = findmnt(args.dir)
    busy = int(args.busy_pct)
    machine = {
        "fs": args.fs,
        "fstype": mount.get("FSTYPE", "?"),
        "dir": args.dir,
        "device": args.device or mount.get("SOURCE", "?"),
        "backing": args.backing or None,
        "mount_options": mount.get("OPTIONS", "?"),
        "setup": args.setup or None,
        "nproc": os.cpu_count(),
        "model": model,
        "ram": f"{ram_kib / 2**20:.1f} GiB",
        "kernel": os.uname().release,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "load_before": args.load_before,
        "load_after": args.load_after,
        "busy_before_pct": busy,
        # The load average after an earlier filesystem of the same run is the matrix's
        # own: only the first filesystem's says whether other work was going on.
        "busy": busy > 15 or (args.first and float(args.load_before.split()[0]) > 0.5),
    }
    with open(args.out, "w") as f:
        json.dump(machine, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("need")
    p.add_argument("jobs", nargs="+")
    p = sub.add_parser("plan")
    p.add_argument("--first", action="store_true", help="the run's first filesystem: network cells run here")
    p.add_argument("--fs", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("jobs", nargs="+")
    p = sub.add_parser("probe")
    p.add_argument("--hybrio", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--plan", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("contenders")
    p.add_argument("doc")
    p.add_argument("job")
    p = sub.add_parser("machine")
    p.add_argument("--out", required=True)
    p.add_argument("--fs", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--device", default="")
    p.add_argument("--backing", default="")
    p.add_argument("--setup", default="")
    p.add_argument("--load-before", required=True)
    p.add_argument("--load-after", required=True)
    p.add_argument("--busy-pct", required=True)
    p.add_argument("--first", action="store_true")
    args = parser.parse_args()
    try:
        {
            "need": cmd_need,
            "plan": cmd_plan,
            "probe": cmd_probe,
            "contenders": cmd_contenders,
            "machine": cmd_machine,
        }[args.command](args)
    except KeyboardInterrupt:
        # Ctrl-C reaches matrix.sh too, which says so and cleans up.
        sys.exit(130)


if __name__ == "__main__":
    main()
