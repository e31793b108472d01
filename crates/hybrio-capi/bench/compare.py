#!/usr/bin/env python3
"""The C API's per-request cost against liburing's and pread's on one loop
(per_request.c): random 4 KiB reads of a cached file, each pair run in turn,
ROUNDS times, medians of the per-round ratios.

usage: python3 crates/hybrio-capi/bench/compare.py [--rounds 9] [--reads 200000] [--cpu 1]

Needs gcc and liburing-dev. Builds the release library and per_request, makes a
64 MiB file in a temporary directory, reads it once into the page cache.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

PAIRS = [
    # (what, hybrio's command, the reference's command)
    ("io_uring path, depth 1", ["hybrio", "io_uring", "{f}", "{n}", "1"], ["liburing", "{f}", "{n}", "1"]),
    ("io_uring path, depth 16", ["hybrio", "io_uring", "{f}", "{n}", "16"], ["liburing", "{f}", "{n}", "16"]),
    ("psync path, depth 1", ["hybrio", "psync", "{f}", "{n}", "1"], ["pread", "{f}", "{n}"]),
    ("adaptive, depth 1, against pread", ["hybrio", "adaptive", "{f}", "{n}", "1"], ["pread", "{f}", "{n}"]),
    ("adaptive, depth 16, against liburing", ["hybrio", "adaptive", "{f}", "{n}", "16"], ["liburing", "{f}", "{n}", "16"]),
]


def build(work):
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "hybrio-capi"], cwd=ROOT, check=True)
    program = os.path.join(work, "per_request")
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(ROOT, "crates/hybrio-capi/include"),
                    os.path.join(HERE, "per_request.c"), os.path.join(ROOT, "target/release/libhybrio_capi.a"),
                    "-luring", "-lpthread", "-ldl", "-lm", "-o", program], check=True)
    return program


def ns_per_read(program, args, cpu):
    # Both sides of a pair on the same processor: no migration between them.
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    out = subprocess.run([program, *args], capture_output=True, text=True, check=True,
                         preexec_fn=pin).stdout
    return float(re.match(r"([\d.]+) ns/read", out).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--reads", type=int, default=200000)
    ap.add_argument("--cpu", type=int, default=min(1, os.cpu_count() - 1),
                    help="processor both sides run on (-1: not pinned)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="capi-bench-") as work:
        program = build(work)
        data = os.path.join(work, "data")
        with open(data, "wb") as f:
            f.write(os.urandom(64 << 20))
        with open(data, "rb") as f:
            while f.read(1 << 20):
                pass
        fill = lambda cmd: [a.format(f=data, n=args.reads) for a in cmd]
        print(f"| loop | hybrio ns/read | reference ns/read | ratio (lowest-highest), {args.rounds} rounds |")
        print("|---|---:|---:|---:|")
        for what, mine, theirs in PAIRS:
            pairs = []
            for _ in range(args.rounds):
                cpu = args.cpu if args.cpu >= 0 else None
                a = ns_per_read(program, fill(mine), cpu)
                b = ns_per_read(program, fill(theirs), cpu)
                pairs.append((a, b, a / b))
            ratios = [r for _, _, r in pairs]
            print(f"| {what} | {statistics.median(p[0] for p in pairs):.0f} | "
                  f"{statistics.median(p[1] for p in pairs):.0f} | "
                  f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
