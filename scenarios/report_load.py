#!/usr/bin/env python3
"""How big the HTML report of a long run is, and how fast Chromium opens it.

Runs four jobs for SECONDS (default 60: a random reader on psync, a random
writer on io_uring, a mixed job on the adaptive engine at depth 8, a
sequential reader on libaio), writing json+ and the HTML page; then loads the
page in headless Chromium ROUNDS times, each time timing it from the page's
own clock (navigation start to the end of its load event, and to its first
contentful paint), and prints the size and the medians as one markdown row.

usage: python3 scenarios/report_load.py [--seconds 60] [--rounds 5] [--dir DIR]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TIMING = """<script>addEventListener('load',function(){setTimeout(function(){
var t=performance.timing,p=performance.getEntriesByName('first-contentful-paint')[0];
console.log('TIMING '+(t.loadEventEnd-t.navigationStart)+' '+(p?p.startTime.toFixed(1):'-'));},0);});</script>"""


def hybrio_binary():
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "hybrio-bench"], cwd=ROOT, check=True)
    return os.path.join(ROOT, "target", "release", "hybrio")


def load_ms(browser, page):
    """(load event end, first contentful paint) in ms, from the page's clock."""
    out = subprocess.run(
        [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
         "--v=0", "--window-size=1400,1800", "--dump-dom",
         "file://" + page],
        capture_output=True, text=True, timeout=120)
    found = re.search(r"TIMING (\d+) ([\d.]+|-)", out.stderr)
    if not found:
        sys.exit(f"report_load.py: no timing from {browser}: {out.stderr[-500:]}")
    return float(found.group(1)), (float(found.group(2)) if found.group(2) != "-" else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", help="where the jobs' files go (default: a temporary directory here)")
    args = ap.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        sys.exit("report_load.py: needs chromium (apt-get install chromium)")
    hybrio = hybrio_binary()
    work = os.path.abspath(tempfile.mkdtemp(prefix="report-load-", dir=args.dir or "."))
    try:
        common = ["--size=256m", "--time_based", f"--runtime={args.seconds}", "--filename=data"]
        jobs = ["--name=randread-psync", "--rw=randread", "--ioengine=psync",
                "--name=randwrite-uring", "--rw=randwrite", "--ioengine=io_uring", "--iodepth=8",
                "--name=mixed-adaptive", "--rw=randrw", "--ioengine=adaptive", "--iodepth=8",
                "--name=read-libaio", "--rw=read", "--ioengine=libaio", "--iodepth=4", "--direct=1"]
        subprocess.run([hybrio, *common, *jobs, "--output-format=json+,html", "--output=run.json"],
                       cwd=work, check=True, stderr=subprocess.DEVNULL)
        page = os.path.join(work, "run.html")
        size = os.path.getsize(page)
        with open(os.path.join(work, "run.json")) as f:
            windows = sum(len(j["timeline"]["points"]) for j in json.load(f)["hybrio"]["jobs"])
        timed = os.path.join(work, "timed.html")
        with open(page) as f:
            text = f.read()
        with open(timed, "w") as f:
            f.write(text.replace("</body>", TIMING + "</body>"))
        loads, paints = [], []
        for _ in range(args.rounds):
            load, paint = load_ms(browser, timed)
            loads.append(load)
            if paint is not None:
                paints.append(paint)
        print("| run | page size | windows | load event, ms | first paint, ms |")
        print("|---|---:|---:|---:|---:|")
        paint = f"{statistics.median(paints):.0f} ({min(paints):.0f}-{max(paints):.0f})" if paints else "-"
        print(f"| {args.seconds} s, 4 jobs | {size / 1e6:.2f} MB | {windows} | "
              f"{statistics.median(loads):.0f} ({min(loads):.0f}-{max(loads):.0f}) | {paint} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
