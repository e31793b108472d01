#!/usr/bin/env python3
"""The C API's per-request cost against liburing's and pread's on one loop
(per_request.c): random 4 KiB reads of a cached file.

Each round is one process (`per_request pair`) that runs the C API's loop and
the reference's in turn, CHUNKS times, and times each chunk by the process's
CPU time (user and system): both sides meet the machine as it is at that
moment, and time other work takes the processor away is not charged. The
figure is the median of every chunk's ratio over all rounds; in brackets the
lowest and highest of the rounds' own medians. Both sides run on one
processor (--cpu).

usage: python3 crates/hybrio-capi/bench/compare.py [--rounds 5] [--reads 400000] [--chunks 20] [--cpu 1]

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
    # (what, hybrio's engine, depth, the reference)
    ("io_uring path, depth 1, against liburing", "io_uring", 1, "liburing"),
    ("io_uring path, depth 8, against liburing", "io_uring", 8, "liburing"),
    ("io_uring path, depth 16, against liburing", "io_uring", 16, "liburing"),
    ("psync path, depth 1, against pread", "psync", 1, "pread"),
    ("adaptive, depth 1, against pread", "adaptive", 1, "pread"),
    ("adaptive, depth 16, against liburing", "adaptive", 16, "liburing"),
]


def build(work):
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "hybrio-capi"], cwd=ROOT, check=True)
    program = os.path.join(work, "per_request")
    subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-I", os.path.join(ROOT, "crates/hybrio-capi/include"),
                    os.path.join(HERE, "per_request.c"), os.path.join(ROOT, "target/release/libhybrio_capi.a"),
                    "-luring", "-lpthread", "-ldl", "-lm", "-o", program], check=True)
    return program


def one_round(program, engine, depth, reference, data, reads, chunks, cpu):
    """Each chunk's (hybrio ns, reference ns) of CPU per read."""
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    out = subprocess.run([program, "pair", engine, str(depth), reference, data, str(reads), str(chunks)],
                         capture_output=True, text=True, check=True, preexec_fn=pin).stdout
    found = re.findall(r"chunk \d+: ([\d.]+) ([\d.]+) ns of CPU/read", out)
    if len(found) != chunks:
        raise SystemExit(f"per_request pair printed {len(found)} chunks of {chunks}:\n{out}")
    return [(float(a), float(b)) for a, b in found]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reads", type=int, default=400000, help="reads a round, each side")
    ap.add_argument("--chunks", type=int, default=20, help="turns a round")
    ap.add_argument("--cpu", type=int, default=min(1, os.cpu_count() - 1),
                    help="processor both sides run on (-1: not pinned)")
    args = ap.parse_args()
    cpu = args.cpu if args.cpu >= 0 else None
    with tempfile.TemporaryDirectory(prefix="capi-bench-") as work:
        program = build(work)
        data = os.path.join(work, "data")
        with open(data, "wb") as f:
            f.write(os.urandom(64 << 20))
        with open(data, "rb") as f:
            while f.read(1 << 20):
                pass
        print(f"| loop | hybrio CPU ns/read | reference CPU ns/read | hybrio / reference "
              f"({args.rounds} rounds x {args.chunks} turns) |")
        print("|---|---:|---:|---:|")
        for what, engine, depth, reference in PAIRS:
            chunks, round_medians = [], []
            for _ in range(args.rounds):
                got = one_round(program, engine, depth, reference, data, args.reads, args.chunks, cpu)
                chunks += got
                round_medians.append(statistics.median(a / b for a, b in got))
            print(f"| {what} | {statistics.median(a for a, _ in chunks):.0f} | "
                  f"{statistics.median(b for _, b in chunks):.0f} | "
                  f"{statistics.median(a / b for a, b in chunks):.2f} "
                  f"({min(round_medians):.2f}-{max(round_medians):.2f}) |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
