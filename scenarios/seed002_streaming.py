#!/usr/bin/env python3
"""seeds/002 where it shows: one thread streaming sequential writes past the page cache's
dirty limit, and cold sequential reads, buffered, uncached (RWF_DONTCACHE) and O_DIRECT,
hybrio against fio.

    python3 scenarios/seed002_streaming.py [--rounds N] [--bs 128k,1m] [--directions write,read]
        [--dir DIR] [--hybrio PATH] [--json OUT.json] [--markdown OUT.md]

The size comes from the machine, not from this file: twice the dirty limit
(vm.dirty_bytes, or vm.dirty_ratio of MemAvailable), in whole GiB, so that buffered
writes meet the kernel's throttling as seeds/002 did. Every run writes a fresh file in DIR
(default /var/tmp/hybrio-seed002, removed at exit), after `sync` and dropping the page
cache, and ends with an fsync that counts in its time (fio's end_fsync). Reads read one file
of that size, written once, cold: the page cache dropped before each run. Each round runs
every configuration once, in an order that turns from round to round; figures are medians
over the rounds with the lowest and highest round.

Per run: MiB/s (bytes over the job's time, the fsync included), CPU seconds per GiB (user +
system of the tool's processes), and the page cache's largest size and dirty pages over the
run (/proc/meminfo, sampled every 100 ms), which is what seeds/002 blamed. The report
names the device's read_ahead_kb. Needs root (drop_caches) and fio (apt-get install fio;
left out with a note when missing). Standard library only.
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def meminfo():
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, value = line.split(":", 1)
            out[key] = int(value.split()[0]) * 1024
    return out


def dirty_limit():
    """The dirty-page limit in bytes: vm.dirty_bytes, else vm.dirty_ratio of MemAvailable."""
    with open("/proc/sys/vm/dirty_bytes") as f:
        dirty_bytes = int(f.read())
    if dirty_bytes:
        return dirty_bytes
    with open("/proc/sys/vm/dirty_ratio") as f:
        ratio = int(f.read())
    return meminfo()["MemAvailable"] * ratio // 100


def read_ahead_kb(path):
    """The read_ahead_kb of the block device under `path` (its disk's, for a partition)."""
    dev = os.stat(path).st_dev
    base = f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"
    for queue in (f"{base}/queue/read_ahead_kb", f"{base}/../queue/read_ahead_kb"):
        if os.path.exists(queue):
            with open(queue) as f:
                return int(f.read())
    return None


def parse_size(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower()
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


class Sampler:
    """Samples the page cache's size and dirty pages every 100 ms while a run lasts."""

    def __init__(self):
        self.cached = self.dirty = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            m = meminfo()
            self.cached = max(self.cached, m["Cached"])
            self.dirty = max(self.dirty, m["Dirty"] + m.get("Writeback", 0))
            self.stop.wait(0.1)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def one_run(cmd, path, direction):
    if direction == "write" and os.path.exists(path):
        os.unlink(path)
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with Sampler() as sampler:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({out.returncode}): {out.stderr.strip()[:300]}")
    job = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]
    written = job[direction]["io_bytes"]
    seconds = job["job_runtime"] / 1000
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "mib_per_s": written / (1 << 20) / seconds,
        "cpu_s_per_gib": cpu / (written / (1 << 30)),
        "max_cached_gib": sampler.cached / (1 << 30),
        "max_dirty_gib": sampler.dirty / (1 << 30),
    }


def median_spread(values):
    values = [v for v in values if v is not None]
    return {"median": statistics.median(values), "low": min(values), "high": max(values)} if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bs", default="128k,1m")
    ap.add_argument("--directions", default="write,read",
                    help="write (a fresh file each run) and/or read (one file, laid out once, cold each run)")
    ap.add_argument("--dir", default="/var/tmp/hybrio-seed002")
    ap.add_argument("--hybrio", default=os.path.join(HERE, "..", "target", "release", "hybrio"))
    ap.add_argument("--json", default=os.path.join(HERE, "results", "seed002-streaming.json"))
    ap.add_argument("--markdown", default=os.path.join(HERE, "results", "seed002-streaming.md"))
    args = ap.parse_args()
    hybrio, fio = os.path.abspath(args.hybrio), shutil.which("fio")
    if not os.access(hybrio, os.X_OK):
        sys.exit(f"seed002_streaming.py: no hybrio at {hybrio} (cargo build --release)")
    if os.geteuid() != 0:
        sys.exit("seed002_streaming.py: needs root, to drop the page cache before each run")
    if not fio:
        print("seed002_streaming.py: fio is not installed (apt-get install fio): left out", file=sys.stderr)
    limit = dirty_limit()
    size_gib = -(-2 * limit // (1 << 30))
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, "stream")
    common = ["--name=stream", f"--filename={path}", f"--size={size_gib}g", "--output-format=json"]
    direction_options = {"write": ["--rw=write", "--end_fsync=1"], "read": ["--rw=read"]}
    modes = {
        "fio psync, buffered": (fio, ["--ioengine=psync"]),
        "hybrio psync, buffered": (hybrio, ["--ioengine=psync"]),
        "hybrio pvsync2, uncached": (hybrio, ["--ioengine=pvsync2", "--uncached=1"]),
        "hybrio io_uring, O_DIRECT, depth 1": (hybrio, ["--ioengine=io_uring", "--direct=1"]),
        "hybrio io_uring, O_DIRECT, depth 16": (hybrio, ["--ioengine=io_uring", "--direct=1", "--iodepth=16"]),
    }
    configs = {}
    for direction in args.directions.split(","):
        for bs in args.bs.split(","):
            for mode, (tool, extra) in modes.items():
                if tool:
                    configs[f"{direction} {bs} {mode}"] = (
                        [tool, f"--bs={bs}"] + common + direction_options[direction] + extra, direction)
    names = list(configs)
    results = {n: [] for n in names}
    failures = {}
    load_before = open("/proc/loadavg").read().split()[:3]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        if "read" in args.directions.split(","):
            # The file the reads read, written once (uncached: fast, and nothing stays cached).
            subprocess.run([hybrio, "--name=layout", f"--filename={path}", f"--size={size_gib}g", "--bs=1m",
                            "--rw=write", "--ioengine=pvsync2", "--uncached=1", "--end_fsync=1"],
                           check=True, capture_output=True)
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                print(f"seed002_streaming.py: round {r + 1}/{args.rounds}: {name}", file=sys.stderr)
                try:
                    cmd, direction = configs[name]
                    results[name].append(one_run(cmd, path, direction))
                except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
                    print(f"seed002_streaming.py: {name} failed: {e}", file=sys.stderr)
                    failures[name] = failures.get(name, 0) + 1
    finally:
        shutil.rmtree(args.dir, ignore_errors=True)
    summary = {n: {k: median_spread([x[k] for x in rs]) for k in rs[0]} for n, rs in results.items() if rs}
    doc = {"started": started, "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "rounds": args.rounds, "size_gib": size_gib, "dirty_limit_gib": limit / (1 << 30),
           "read_ahead_kb": read_ahead_kb(os.path.dirname(os.path.abspath(args.dir))),
           "load_before": load_before, "load_after": open("/proc/loadavg").read().split()[:3],
           "results": summary, "failed_runs": failures}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    with open(args.markdown, "w") as f:
        f.write(render(doc, args.directions.split(","), args.bs.split(",")))
    print(render(doc, args.directions.split(","), args.bs.split(",")))


def render(doc, directions, sizes):
    res = doc["results"]

    def cell(name, key, fmt):
        v = res.get(name, {}).get(key)
        return f"{fmt(v['median'])} ({fmt(v['low'])}-{fmt(v['high'])})" if v else "-"

    out = [f"seeds/002, one thread writing {doc['size_gib']} GiB sequentially (twice the dirty limit of "
           f"{doc['dirty_limit_gib']:.1f} GiB; a fresh file each run, an fsync at the end) and reading it "
           f"(cold: the page cache dropped before each run), {doc['started']} to {doc['finished']}: "
           f"{doc['rounds']} rounds, configurations in turn; median (lowest-highest round). read_ahead_kb "
           f"{doc['read_ahead_kb']}. Load average before {' '.join(doc['load_before'])}, after "
           f"{' '.join(doc['load_after'])}."
           + (f" Runs that failed and are left out: {doc['failed_runs']}." if doc.get("failed_runs") else ""), ""]
    for direction, bs in [(d, b) for d in directions for b in sizes]:
        prefix = f"{direction} {bs} "
        direct = res.get(f"{prefix}hybrio io_uring, O_DIRECT, depth 16", {}).get("mib_per_s")
        fio = res.get(f"{prefix}fio psync, buffered", {}).get("mib_per_s")
        out += [f"| {bs} {direction}s | MiB/s | x O_DIRECT depth 16 | x fio buffered | CPU s per GiB | largest page cache GiB | most dirty + writeback GiB |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for name in [n for n in res if n.startswith(prefix)]:
            rate = res[name]["mib_per_s"]["median"]
            x_direct = f"{rate / direct['median']:.2f}" if direct else "-"
            x_fio = f"{rate / fio['median']:.2f}" if fio else "-"
            out.append(f"| {name[len(prefix):]} | {cell(name, 'mib_per_s', lambda x: f'{x:.0f}')} | {x_direct} | "
                       f"{x_fio} | {cell(name, 'cpu_s_per_gib', lambda x: f'{x:.2f}')} | "
                       f"{cell(name, 'max_cached_gib', lambda x: f'{x:.1f}')} | "
                       f"{cell(name, 'max_dirty_gib', lambda x: f'{x:.1f}')} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    main()
