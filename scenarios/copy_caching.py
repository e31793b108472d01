#!/usr/bin/env python3
"""The library's copy example (crates/hybrio/examples/copy.rs) on the adaptive engine, its files
opened with Caching::Auto (its default) and with Caching::Cached: what letting the engine choose
the caching does for a copy larger than the page cache holds dirty.

    python3 scenarios/copy_caching.py [--rounds N] [--gib N] [--bs 128k] [--dir DIR] [--copy PATH]
        [--json OUT.json] [--markdown OUT.md]

The source is GIB GiB (default: twice the dirty limit, vm.dirty_bytes or vm.dirty_ratio of
MemAvailable, as seed002_streaming.py sizes its writes), written once. Each run copies it to a
fresh file with an fdatasync at the end (--fsync, in the copy's time), cold: `sync`, the page
cache dropped, then 6 s for the VM's free memory to settle (seed002_streaming.py's helpers). The two
ways alternate, the first changing each round. Figures are medians over the rounds with the
lowest and highest. Needs root (drop_caches) and the example built
(cargo build --release -p hybrio --example copy). Standard library only.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

from seed002_streaming import SETTLE_S, dirty_limit, drop_page_cache, median_spread as spread, parse_size, write_report

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--gib", type=int, help="the source's size (default: twice the dirty limit)")
    ap.add_argument("--bs", default="128k")
    ap.add_argument("--dir", default="/var/tmp/hybrio-copy")
    ap.add_argument("--copy", default=os.path.join(HERE, "..", "target", "release", "examples", "copy"))
    ap.add_argument("--json", default=os.path.join(HERE, "results", "copy-caching.json"))
    ap.add_argument("--markdown", default=os.path.join(HERE, "results", "copy-caching.md"))
    args = ap.parse_args()
    copy = os.path.abspath(args.copy)
    if not os.access(copy, os.X_OK):
        sys.exit(f"copy_caching.py: no copy example at {copy} (cargo build --release -p hybrio --example copy)")
    if os.geteuid() != 0:
        sys.exit("copy_caching.py: needs root, to drop the page cache before each run")
    bs = parse_size(args.bs)
    gib = args.gib or -(-2 * dirty_limit() // (1 << 30))
    os.makedirs(args.dir, exist_ok=True)
    src, dst = os.path.join(args.dir, "source"), os.path.join(args.dir, "copy")
    ways = ["auto", "cached"]
    runs = {way: [] for way in ways}
    load_before = open("/proc/loadavg").read().split()[:3]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    try:
        with open(src, "wb") as f:
            chunk = os.urandom(1 << 20)
            for _ in range(gib * 1024):
                f.write(chunk)
            os.fsync(f.fileno())
        for r in range(args.rounds):
            for way in ways if r % 2 == 0 else reversed(ways):
                print(f"copy_caching.py: round {r + 1}/{args.rounds}: {way}", file=sys.stderr)
                if os.path.exists(dst):
                    os.unlink(dst)
                drop_page_cache()
                time.sleep(SETTLE_S)
                out = subprocess.run([copy, "--engine", "adaptive", "--caching", way, "--bs", str(bs), "--fsync",
                                      "--json", src, dst], capture_output=True, text=True, timeout=900)
                if out.returncode != 0:
                    sys.exit(f"copy_caching.py: the copy failed ({out.returncode}): {out.stderr.strip()}")
                doc = json.loads(out.stdout)
                runs[way].append({"mib_per_s": doc["bytes"] / doc["seconds"] / (1 << 20),
                                  "uncached": doc["uncached"], "read_ahead_mib": doc["read_ahead"] / (1 << 20)})
    finally:
        shutil.rmtree(args.dir, ignore_errors=True)
    ratios = [a["mib_per_s"] / c["mib_per_s"] for a, c in zip(runs["auto"], runs["cached"])]
    doc = {"started": started, "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "rounds": args.rounds, "gib": gib, "bs": bs, "load_before": load_before,
           "load_after": open("/proc/loadavg").read().split()[:3],
           "results": {way: {k: spread([x[k] for x in rs]) for k in rs[0]} for way, rs in runs.items()},
           "auto_over_cached": spread(ratios)}
    write_report(doc, args.json, args.markdown, render)


def render(doc):
    s = lambda v, fmt: f"{fmt(v['median'])} ({fmt(v['low'])}-{fmt(v['high'])})"
    n = lambda x: f"{x:.0f}"
    out = [f"The copy example on the adaptive engine copying {doc['gib']} GiB in {doc['bs'] >> 10} KiB requests "
           f"(cold, an fdatasync at the end), {doc['started']} to {doc['finished']}, {doc['rounds']} rounds in "
           f"alternation; median (lowest-highest round). Load average before {' '.join(doc['load_before'])}, "
           f"after {' '.join(doc['load_after'])}.", "",
           "| caching | MiB/s | writes sent uncached | MiB read ahead |", "|---|---:|---:|---:|"]
    for way, r in doc["results"].items():
        out.append(f"| {way} | {s(r['mib_per_s'], n)} | {s(r['uncached'], n)} | {s(r['read_ahead_mib'], n)} |")
    x = doc["auto_over_cached"]
    out += ["", f"auto / cached, round by round: {x['median']:.2f} ({x['low']:.2f}-{x['high']:.2f})."]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
