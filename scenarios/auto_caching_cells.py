#!/usr/bin/env python3
"""The matrix's cells with uncached=auto: does letting the adaptive engine choose the caching
cost anything where the data is read again (or rewritten in place)?

    python3 scenarios/auto_caching_cells.py [--rounds N] [--dir DIR] [--hybrio PATH]
        [--json OUT.json] [--markdown OUT.md] [CELL ...]

Each cell (a job of scenarios/matrix/*.fio, by its section name; default: the ext4 cells that
read their data again, and seeds/000's 8 KiB writes over one 256 MiB region) runs on the
adaptive engine twice per round, as the job file has it (cached) and with uncached=auto added
to its [global] section, in turns whose order alternates from round to round. Figures are the
medians over the rounds of IOPS and of the per-round ratio auto/cached, with the lowest and
highest round. The files live in DIR (default /var/tmp/hybrio-matrix, the matrix's scratch
directory on the root filesystem); a job that keeps its files cached (invalidate=0) has them
read through the cache before each run, as `hybrio compare` does. The table also gives what
auto sent uncached and what its helper read ahead of read streams.
Standard library only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from seed002_streaming import write_report

HERE = os.path.dirname(os.path.abspath(__file__))
MATRIX = os.path.join(HERE, "matrix")
DEFAULT_CELLS = ["cached-qd1", "cached-qd16", "cache-then-disk-qd4", "read128k-buffered", "w8k-qd1", "w8k-qd4"]


def job_file_of(cell):
    """The matrix job file that has the section `cell`."""
    for name in sorted(os.listdir(MATRIX)):
        if name.endswith(".fio"):
            with open(os.path.join(MATRIX, name)) as f:
                if f"[{cell}]" in f.read().split():
                    return os.path.join(MATRIX, name)
    sys.exit(f"auto_caching_cells.py: no matrix job file has a section [{cell}]")


def with_auto(path, out_dir):
    """A copy of the job file at `path` with uncached=auto in its [global] section."""
    with open(path) as f:
        lines = f.read().splitlines()
    if "[global]" not in lines:
        lines = ["[global]"] + lines
    at = lines.index("[global]") + 1
    copy = os.path.join(out_dir, "auto-" + os.path.basename(path))
    with open(copy, "w") as f:
        f.write("\n".join(lines[:at] + ["uncached=auto"] + lines[at:]) + "\n")
    return copy


def warm(job_file, cwd):
    """Reads a job file's files (filename=) through the page cache when the job keeps them
    cached (invalidate=0), as `hybrio compare` does before such a cell."""
    with open(job_file) as f:
        text = f.read()
    if "invalidate=0" not in text:
        return
    for line in text.splitlines():
        if line.strip().startswith("filename="):
            path = os.path.join(cwd, line.split("=", 1)[1].strip())
            if os.path.exists(path):
                with open(path, "rb") as data:
                    while data.read(1 << 20):
                        pass


def run(hybrio, job_file, cell, cwd):
    warm(job_file, cwd)
    out = subprocess.run([hybrio, "--ioengine=adaptive", f"--section={cell}", "--output-format=json", job_file],
                         cwd=cwd, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"{cell} failed ({out.returncode}): {out.stderr.strip()[:300]}")
    doc = json.loads(out.stdout[out.stdout.index("{"):])
    iops = sum(job[d]["iops"] for job in doc["jobs"] for d in ("read", "write"))
    paths = [job.get("paths") or {} for job in doc.get("hybrio", {}).get("jobs", [])]
    uncached = sum(p.get("uncached", 0) for p in paths)
    read_ahead_mib = sum(p.get("read_ahead_bytes", 0) for p in paths) / (1 << 20)
    return iops, uncached, read_ahead_mib


def spread(values):
    return {"median": statistics.median(values), "low": min(values), "high": max(values)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cells", nargs="*", default=DEFAULT_CELLS)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--dir", default="/var/tmp/hybrio-matrix")
    ap.add_argument("--hybrio", default=os.path.join(HERE, "..", "target", "release", "hybrio"))
    ap.add_argument("--json", default=os.path.join(HERE, "results", "auto-caching-cells.json"))
    ap.add_argument("--markdown", default=os.path.join(HERE, "results", "auto-caching-cells.md"))
    args = ap.parse_args()
    hybrio = os.path.abspath(args.hybrio)
    if not os.access(hybrio, os.X_OK):
        sys.exit(f"auto_caching_cells.py: no hybrio at {hybrio} (cargo build --release)")
    os.makedirs(args.dir, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = open("/proc/loadavg").read().split()[:3]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for cell in args.cells:
            plain = job_file_of(cell)
            variants = {"cached": plain, "auto": with_auto(plain, tmp)}
            runs = {"cached": [], "auto": []}
            uncached, read_ahead = [], []
            for r in range(args.rounds):
                order = ["cached", "auto"] if r % 2 == 0 else ["auto", "cached"]
                for variant in order:
                    print(f"auto_caching_cells.py: {cell} round {r + 1}/{args.rounds}: {variant}", file=sys.stderr)
                    iops, sent, ahead = run(hybrio, variants[variant], cell, args.dir)
                    runs[variant].append(iops)
                    if variant == "auto":
                        uncached.append(sent)
                        read_ahead.append(ahead)
            ratios = [a / c for a, c in zip(runs["auto"], runs["cached"]) if c > 0]
            results[cell] = {"cached_iops": spread(runs["cached"]), "auto_iops": spread(runs["auto"]),
                             "ratio": spread(ratios), "uncached_requests": spread(uncached),
                             "read_ahead_mib": spread(read_ahead)}
    doc = {"started": started, "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "rounds": args.rounds, "dir": args.dir, "load_before": load_before,
           "load_after": open("/proc/loadavg").read().split()[:3], "results": results}
    write_report(doc, args.json, args.markdown, render)


def render(doc):
    k = lambda x: f"{x / 1000:.1f}k"
    ahead = lambda m: f"{m['median']:.0f} ({m['low']:.0f}-{m['high']:.0f})" if m else "-"
    out = [f"The matrix's cells on the adaptive engine, as written (cached) and with uncached=auto, "
           f"{doc['started']} to {doc['finished']}, {doc['rounds']} rounds in alternation, in {doc['dir']}; "
           f"median (lowest-highest round). Load average before {' '.join(doc['load_before'])}, after "
           f"{' '.join(doc['load_after'])}.", "",
           "| cell | cached IOPS | auto IOPS | auto / cached | requests auto sent uncached | MiB auto read ahead |",
           "|---|---:|---:|---:|---:|---:|"]
    for cell, r in doc["results"].items():
        c, a, x, u = r["cached_iops"], r["auto_iops"], r["ratio"], r["uncached_requests"]
        out.append(f"| {cell} | {k(c['median'])} ({k(c['low'])}-{k(c['high'])}) | {k(a['median'])} "
                   f"({k(a['low'])}-{k(a['high'])}) | {x['median']:.2f} ({x['low']:.2f}-{x['high']:.2f}) | "
                   f"{u['median']:.0f} ({u['low']:.0f}-{u['high']:.0f}) | {ahead(r.get('read_ahead_mib'))} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
