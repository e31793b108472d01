#!/usr/bin/env python3
"""seeds/002 where it shows: one thread streaming sequential writes past the page cache's
dirty limit, and cold sequential reads, buffered, uncached (RWF_DONTCACHE) and O_DIRECT,
hybrio against fio.

    python3 scenarios/seed002_streaming.py [--rounds N] [--bs 128k,1m] [--directions write,read]
        [--jobs 1,2] [--modes all|auto|"NAME;NAME..."] [--fadvise 1] [--dir DIR] [--hybrio PATH]
        [--json OUT.json] [--markdown OUT.md]

The size comes from the machine, not from this file: twice the dirty limit
(vm.dirty_bytes, or vm.dirty_ratio of MemAvailable), in whole GiB, so that buffered
writes meet the kernel's throttling as seeds/002 did. Every run writes a fresh file in DIR
(default /var/tmp/hybrio-seed002, removed at exit), after `sync` and dropping the page
cache, and ends with an fsync that counts in its time (fio's end_fsync). Reads read one file
larger than the page cache can hold (MemAvailable with the cache dropped, plus 2 GiB), written
once, cold: the page cache dropped before each run. Each round runs
every configuration once, in an order shuffled anew each round (seeded), each run 6 s after
the page cache was dropped (see one_run); figures are medians over the rounds with the lowest
and highest round.

With two jobs, each writes (or reads) its own file of half the size, side by side, reported
together (group_reporting). The modes: fio's and hybrio's buffered psync, uncached pvsync2,
O_DIRECT at depth 1 and 16, and the adaptive engine buffered, uncached and with
uncached=auto (its own choice; at depth 1 and 16); `--modes auto` runs the adaptive ones only, and every
table says how each row compares with the best of hybrio's buffered and uncached rows.

Per run: MiB/s (bytes over the job's time, the fsync included), CPU seconds per GiB (user +
system of the tool's processes), and the page cache's largest size and dirty pages over the
run (/proc/meminfo, sampled every 100 ms), which is what seeds/002 blamed. The report
names the device's read_ahead_kb and the jobs' fadvise_hint. Needs root (drop_caches) and
fio (apt-get install fio; left out with a note when missing). Standard library only.
"""

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Seconds between dropping the page cache and a run (see one_run).
SETTLE_S = 6


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


def drop_page_cache():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def one_run(cmd, paths, direction):
    if direction == "write":
        for path in paths:
            if os.path.exists(path):
                os.unlink(path)
    drop_page_cache()
    # Every run starts with its free memory in the same state: on this VM (virtio-balloon free
    # page reporting) memory that stays free for a few seconds goes back to the host, and the
    # page cache's first use of it costs several times the CPU. Without the pause a run after
    # a cached one found its memory warm and one after an uncached one (which frees as it
    # goes) cold: 10 GiB of cold 128 KiB buffered reads ran at 1.2 GB/s or 0.5-0.7 GB/s.
    time.sleep(SETTLE_S)
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


def write_report(doc, json_path, markdown_path, render):
    """Writes `doc` as JSON and `render(doc)` as Markdown (making their directories), and prints the latter."""
    for out_path in (json_path, markdown_path):
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(json_path, "w") as f:
        json.dump(doc, f, indent=1)
    text = render(doc)
    with open(markdown_path, "w") as f:
        f.write(text)
    print(text)


def median_spread(values):
    values = [v for v in values if v is not None]
    return {"median": statistics.median(values), "low": min(values), "high": max(values)} if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--bs", default="128k,1m")
    ap.add_argument("--directions", default="write,read",
                    help="write (a fresh file each run) and/or read (one file, laid out once, cold each run)")
    ap.add_argument("--jobs", default="1", help="jobs side by side, each on its own file: 1 and/or 2")
    ap.add_argument("--modes", default="all",
                    help="all, auto (the adaptive engine buffered, uncached and auto), or names from the tables, "
                         "separated by ';'")
    ap.add_argument("--fadvise", default="1", choices=["0", "1", "normal", "sequential", "random"],
                    help="the jobs' fadvise_hint (fio's default 1: sequential for these jobs)")
    ap.add_argument("--dir", default="/var/tmp/hybrio-seed002")
    ap.add_argument("--hybrio", default=os.path.join(HERE, "..", "target", "release", "hybrio"))
    ap.add_argument("--json", default=os.path.join(HERE, "results", "seed002-streaming.json"))
    ap.add_argument("--markdown", default=os.path.join(HERE, "results", "seed002-streaming.md"))
    ap.add_argument("--svg", help="also draw the results as a bar chart here")
    ap.add_argument("--render", metavar="JSON",
                    help="run nothing: write the tables (and --svg) of this results document")
    args = ap.parse_args()
    if args.render:
        with open(args.render) as f:
            doc = json.load(f)
        directions, sizes, job_counts = cells_of(doc)
        with open(args.markdown, "w") as f:
            f.write(render(doc, directions, sizes, job_counts))
        if args.svg:
            with open(args.svg, "w") as f:
                f.write(chart(doc))
        return
    hybrio, fio = os.path.abspath(args.hybrio), shutil.which("fio")
    if not os.access(hybrio, os.X_OK):
        sys.exit(f"seed002_streaming.py: no hybrio at {hybrio} (cargo build --release)")
    if os.geteuid() != 0:
        sys.exit("seed002_streaming.py: needs root, to drop the page cache before each run")
    if not fio:
        print("seed002_streaming.py: fio is not installed (apt-get install fio): left out", file=sys.stderr)
    limit = dirty_limit()
    size_gib = -(-2 * limit // (1 << 30))
    # Reads: larger than the page cache could grow to (MemAvailable, with the cache dropped), so
    # that cached reads reclaim their own pages before the end, as a long stream does.
    drop_page_cache()
    read_gib = max(size_gib, meminfo()["MemAvailable"] // (1 << 30) + 2)
    os.makedirs(args.dir, exist_ok=True)
    job_counts = [int(j) for j in args.jobs.split(",")]
    direction_options = {"write": ["--rw=write", "--end_fsync=1"], "read": ["--rw=read"]}
    modes = {
        "fio psync, buffered": (fio, ["--ioengine=psync"]),
        "hybrio psync, buffered": (hybrio, ["--ioengine=psync"]),
        "hybrio pvsync2, uncached": (hybrio, ["--ioengine=pvsync2", "--uncached=1"]),
        "hybrio adaptive, buffered": (hybrio, ["--ioengine=adaptive"]),
        "hybrio adaptive, uncached": (hybrio, ["--ioengine=adaptive", "--uncached=1"]),
        "hybrio adaptive, auto": (hybrio, ["--ioengine=adaptive", "--uncached=auto"]),
        "hybrio adaptive, auto, depth 16": (hybrio, ["--ioengine=adaptive", "--uncached=auto", "--iodepth=16"]),
        "hybrio io_uring, O_DIRECT, depth 1": (hybrio, ["--ioengine=io_uring", "--direct=1"]),
        "hybrio io_uring, O_DIRECT, depth 16": (hybrio, ["--ioengine=io_uring", "--direct=1", "--iodepth=16"]),
    }
    if args.modes == "auto":
        modes = {m: v for m, v in modes.items() if m.startswith("hybrio adaptive")}
    elif args.modes != "all":
        wanted = [m.strip() for m in args.modes.split(";")]
        unknown = [m for m in wanted if m not in modes]
        if unknown:
            sys.exit(f"seed002_streaming.py: no mode {unknown[0]!r}; modes: {'; '.join(modes)}")
        modes = {m: v for m, v in modes.items() if m in wanted}

    def job_def(jobs, gib):
        """The job options and the files of `jobs` side by side, `gib` in all."""
        if jobs == 1:
            path = os.path.join(args.dir, "stream")
            return ["--name=stream", f"--filename={path}", f"--size={gib}g"], [path]
        each = gib * 1024 // jobs
        return ([f"--name=stream", f"--directory={args.dir}", f"--size={each}m", f"--numjobs={jobs}",
                 "--group_reporting"], [os.path.join(args.dir, f"stream.{j}.0") for j in range(jobs)])

    configs = {}
    for jobs in job_counts:
        for direction in args.directions.split(","):
            files, paths = job_def(jobs, read_gib if direction == "read" else size_gib)
            common = files + ["--output-format=json", f"--fadvise_hint={args.fadvise}"]
            for bs in args.bs.split(","):
                for mode, (tool, extra) in modes.items():
                    if tool:
                        configs[f"{jobs}j {direction} {bs} {mode}"] = (
                            [tool, f"--bs={bs}"] + common + direction_options[direction] + extra, paths,
                            direction)
    names = list(configs)
    results = {n: [] for n in names}
    failures = {}
    load_before = open("/proc/loadavg").read().split()[:3]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        if "read" in args.directions.split(","):
            # The files the reads read, written once (uncached: fast, and nothing stays cached).
            for jobs in job_counts:
                subprocess.run([hybrio] + job_def(jobs, read_gib)[0] + ["--bs=1m", "--rw=write", "--ioengine=pvsync2",
                                                              "--uncached=1", "--end_fsync=1"],
                               check=True, capture_output=True)
        for r in range(args.rounds):
            # A new order each round (seeded: the same each time the script runs), so that no
            # configuration always follows the same one.
            order = list(names)
            random.Random(r).shuffle(order)
            for name in order:
                print(f"seed002_streaming.py: round {r + 1}/{args.rounds}: {name}", file=sys.stderr)
                try:
                    cmd, paths, direction = configs[name]
                    results[name].append(one_run(cmd, paths, direction))
                except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
                    print(f"seed002_streaming.py: {name} failed: {e}", file=sys.stderr)
                    failures[name] = failures.get(name, 0) + 1
    finally:
        shutil.rmtree(args.dir, ignore_errors=True)
    summary = {n: {k: median_spread([x[k] for x in rs]) for k in rs[0]} for n, rs in results.items() if rs}
    doc = {"started": started, "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "rounds": args.rounds, "size_gib": size_gib, "read_size_gib": read_gib, "jobs": job_counts, "fadvise_hint": args.fadvise,
           "settle_s": SETTLE_S, "dirty_limit_gib": limit / (1 << 30),
           "read_ahead_kb": read_ahead_kb(os.path.dirname(os.path.abspath(args.dir))),
           "load_before": load_before, "load_after": open("/proc/loadavg").read().split()[:3],
           "results": summary, "failed_runs": failures}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    with open(args.markdown, "w") as f:
        f.write(render(doc, args.directions.split(","), args.bs.split(","), job_counts))
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(chart(doc))
    print(render(doc, args.directions.split(","), args.bs.split(","), job_counts))


def render(doc, directions, sizes, job_counts=(1,)):
    res = doc["results"]

    def cell(name, key, fmt):
        v = res.get(name, {}).get(key)
        return f"{fmt(v['median'])} ({fmt(v['low'])}-{fmt(v['high'])})" if v else "-"

    fadvise = doc.get("fadvise_hint", "1")
    settled = f", each run {doc['settle_s']} s after" if doc.get("settle_s") else ""
    order = ("configurations in an order shuffled each round" if doc.get("settle_s")
             else "configurations in turn")
    out = [f"seeds/002, {' or '.join(str(j) for j in job_counts)} job(s) writing {doc['size_gib']} GiB "
           f"sequentially in all (twice the dirty limit of {doc['dirty_limit_gib']:.1f} GiB; fresh files each "
           f"run, an fsync at the end; two jobs write half each, to their own files) and reading "
           + (f"{doc['read_size_gib']} GiB (more than the page cache can hold: MemAvailable with the cache dropped, "
              f"plus 2 GiB)" if doc.get("read_size_gib", doc["size_gib"]) != doc["size_gib"] else "it")
           + f" (cold: the page cache dropped before each run{settled}), {doc['started']} to {doc['finished']}: "
           f"{doc['rounds']} rounds, {order}; median (lowest-highest round). read_ahead_kb {doc['read_ahead_kb']}, "
           f"fadvise_hint={fadvise} (1: POSIX_FADV_SEQUENTIAL for these sequential jobs). Load average before "
           f"{' '.join(doc['load_before'])}, after {' '.join(doc['load_after'])}."
           + (f" Runs that failed and are left out: {doc['failed_runs']}." if doc.get("failed_runs") else ""), ""]
    def key(jobs, rest):
        """A cell's prefix; results written before jobs were a dimension have no "1j "."""
        name = f"{jobs}j {rest}"
        if jobs == 1 and not any(n.startswith(name) for n in res):
            return rest
        return name

    for jobs, direction, bs in [(j, d, b) for j in job_counts for d in directions for b in sizes]:
        prefix = key(jobs, f"{direction} {bs} ")
        cell_rows = [n for n in res if n.startswith(prefix)]
        direct = res.get(f"{prefix}hybrio io_uring, O_DIRECT, depth 16", {}).get("mib_per_s")
        fio = res.get(f"{prefix}fio psync, buffered", {}).get("mib_per_s")
        plain = [res[n]["mib_per_s"]["median"] for n in cell_rows
                 if n[len(prefix):].startswith("hybrio") and n.endswith((", buffered", ", uncached"))]
        best = max(plain) if plain else None
        jobs_word = "1 job" if jobs == 1 else f"{jobs} jobs"
        out += [f"| {jobs_word}, {bs} {direction}s | MiB/s | x O_DIRECT depth 16 | x fio buffered | "
                f"x best hybrio buffered/uncached | CPU s per GiB | largest page cache GiB | most dirty + writeback GiB |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name in cell_rows:
            rate = res[name]["mib_per_s"]["median"]
            x_direct = f"{rate / direct['median']:.2f}" if direct else "-"
            x_fio = f"{rate / fio['median']:.2f}" if fio else "-"
            x_best = f"{rate / best:.2f}" if best else "-"
            out.append(f"| {name[len(prefix):]} | {cell(name, 'mib_per_s', lambda x: f'{x:.0f}')} | {x_direct} | "
                       f"{x_fio} | {x_best} | {cell(name, 'cpu_s_per_gib', lambda x: f'{x:.2f}')} | "
                       f"{cell(name, 'max_cached_gib', lambda x: f'{x:.1f}')} | "
                       f"{cell(name, 'max_dirty_gib', lambda x: f'{x:.1f}')} |")
        out.append("")
    return "\n".join(out)


def cells_of(doc):
    """The directions, request sizes and job counts a results document has, in order."""
    directions, sizes, jobs = [], [], []
    for name in doc["results"]:
        words = name.split(" ")
        if not words[0].endswith("j"):
            words = ["1j"] + words
        for seen, word in ((jobs, int(words[0][:-1])), (directions, words[1]), (sizes, words[2])):
            if word not in seen:
                seen.append(word)
    return directions, sizes, jobs


def chart(doc):
    """A bar chart (SVG) of every cell's MiB/s, one group of bars per cell, a bar per
    configuration, a line from its lowest to its highest round."""
    res = doc["results"]
    groups = {}
    for name, r in res.items():
        words = name.split(" ", 3) if name.split(" ")[0].endswith("j") else ["1j"] + name.split(" ", 2)
        groups.setdefault(" ".join(words[:3]), []).append((words[3], r["mib_per_s"]))
    top = max(r["mib_per_s"]["high"] for r in res.values())
    scale = 10 ** len(str(int(top))) / 10
    top = -(-top // scale) * scale
    bar, gap, label_w, plot_w = 14, 10, 330, 520
    height = sum(len(g) * bar + gap + 18 for g in groups.values()) + 60
    palette = ["#4477aa", "#66ccee", "#228833", "#ccbb44", "#ee6677", "#aa3377", "#bbbbbb", "#000000"]
    colours = {}
    esc = lambda t: t.replace("&", "&amp;").replace("<", "&lt;")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + plot_w + 40}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="4" y="14" font-size="13">seeds/002: MiB/s, median of {doc["rounds"]} rounds '
           f'(line: lowest to highest), {esc(doc["started"])}</text>']
    y = 30
    for group, rows in groups.items():
        jobs, direction, bs = group.split(" ")
        out.append(f'<text x="4" y="{y + 10}" font-weight="bold">{esc(jobs[:-1])} job(s), {esc(bs)} '
                   f'{esc(direction)}s</text>')
        y += 16
        for mode, rate in rows:
            colour = colours.setdefault(mode, palette[len(colours) % len(palette)])
            w = plot_w * rate["median"] / top
            lo, hi = (label_w + plot_w * rate[k] / top for k in ("low", "high"))
            out += [f'<text x="{label_w - 6}" y="{y + bar - 3}" text-anchor="end">{esc(mode)}</text>',
                    f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar - 2}" fill="{colour}"/>',
                    f'<line x1="{lo:.1f}" x2="{hi:.1f}" y1="{y + bar / 2 - 1}" y2="{y + bar / 2 - 1}" '
                    f'stroke="#333"/>',
                    f'<text x="{label_w + w + 4:.1f}" y="{y + bar - 3}">{rate["median"]:.0f}</text>']
            y += bar
        y += gap
    for i in range(6):
        x = label_w + plot_w * i / 5
        out += [f'<line x1="{x:.1f}" x2="{x:.1f}" y1="26" y2="{y}" stroke="#ddd"/>',
                f'<text x="{x:.1f}" y="{y + 14}" text-anchor="middle">{top * i / 5:.0f}</text>']
    out.append(f'<text x="{label_w + plot_w / 2}" y="{y + 30}" text-anchor="middle">MiB/s</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
