#!/usr/bin/env python3
"""hybrio-tokio's benchmark: every workload of scenarios/tokio_probe in one run, written up.

Builds the probe (release), makes its files in SCRATCH when missing, and runs, each on a
2-worker tokio runtime with every way in turn in each round:
  cached   4 KiB random reads of a cached file from 64 tasks: hybrio-tokio, a plain pread in
           the task, RWF_NOWAIT, spawn_blocking, tokio::fs, one ring behind a mutex, the floor
  others   the same against compio and monoio, each a runtime per thread
  direct   O_DIRECT 4 KiB random reads, 32 in flight: spawn_blocking, and fio's io_uring
  others-direct  O_DIRECT 4 KiB random reads from 64 tasks against compio and monoio
  stream   a cold sequential read in 1 MiB requests (--stream-gib, 4 by default)
  wal      16 tasks appending 8 KiB records, sync_data after each
  parquet  the parquet crate's async reader over a 1 GiB file, cold and cached, and 20,000
           range reads
and writes scenarios/results/tokio-bench.{json,md}: hybrio-tokio's ratio to each other way,
the median over the rounds and each round's, and the times of calls ready at their first poll.

  scenarios/tokio_bench.py [--scratch DIR] [--stream-gib N] [--only cached,wal,...]
  scenarios/tokio_bench.py --self-test      (the output parser, on canned text)
"""
import argparse
import datetime
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(HERE, "tokio_probe")
sys.path.insert(0, HERE)
from seed002_streaming import write_report  # noqa: E402

RATIO = re.compile(r"^(?P<a>.+?) / (?P<b>.+?): median (?P<median>[\d.]+) \(rounds: (?P<rounds>[\d., ]+)\)$")
INLINE = re.compile(r"^(?P<what>.+): (?P<calls>\d+) inline calls; p50 (?P<p50>[\d.]+) us, p99 (?P<p99>[\d.]+) us, p99\.9 (?P<p999>[\d.]+) us, max (?P<max>[\d.]+) us$")
SECTION = re.compile(r"^(scan, cold|scan, cached|range reads):$")


def parse(text):
    """The ratio lines (hybrio-tokio over each other way) and inline-call lines of a workload's output."""
    ratios, inline, section = [], [], None
    for line in text.splitlines():
        line = line.strip()
        m = SECTION.match(line)
        if m:
            section = m.group(1)
            continue
        m = RATIO.match(line)
        if m:
            ratios.append({
                "of": m.group("a"),
                "against": m.group("b") + (f" ({section})" if section else ""),
                "median": float(m.group("median")),
                "rounds": [float(x) for x in m.group("rounds").split(",")],
            })
            continue
        m = INLINE.match(line)
        if m:
            inline.append({k: (m.group(k) if k == "what" else float(m.group(k)))
                           for k in ("what", "calls", "p50", "p99", "p999", "max")})
    return ratios, inline


def self_test():
    text = """round 0
  hybrio-tokio            11043 records/s  p50   1351.9 us  p99   3190.6 us  cpu 106.40 us/op
hybrio-tokio / tokio::fs: median 1.20 (rounds: 1.22, 1.06, 1.20)
hybrio-tokio / spawn_blocking: median 0.90 (rounds: 0.89, 0.90, 1.07)
hybrio-tokio / fio io_uring: median 0.75 (rounds: 0.80, 0.65, 0.75)
hybrio-tokio / RWF_NOWAIT in the task: median 1.06 (rounds: 1.06, 0.97)
hybrio-tokio's appends: 4597 inline calls; p50 10.4 us, p99 494.6 us, p99.9 708.5 us, max 2597.0 us
scan, cold:
hybrio-tokio / tokio::fs: median 1.28 (rounds: 0.49, 1.39, 1.28)
"""
    ratios, inline = parse(text)
    assert [r["against"] for r in ratios] == ["tokio::fs", "spawn_blocking", "fio io_uring",
                                              "RWF_NOWAIT in the task", "tokio::fs (scan, cold)"], ratios
    assert ratios[0]["median"] == 1.20 and ratios[0]["rounds"] == [1.22, 1.06, 1.20], ratios[0]
    assert inline == [{"what": "hybrio-tokio's appends", "calls": 4597.0, "p50": 10.4, "p99": 494.6,
                       "p999": 708.5, "max": 2597.0}], inline
    assert parse("nothing here") == ([], [])
    print("tokio_bench self-test: passed")


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, text=True, **kw)


def make_file(path, mib):
    """A file of `mib` MiB of random bytes, made once."""
    if os.path.exists(path) and os.path.getsize(path) == mib << 20:
        return
    with open("/dev/urandom", "rb") as src, open(path, "wb") as dst:
        for _ in range(mib):
            dst.write(src.read(1 << 20))
    os.sync()


def render(doc):
    out = [f"# hybrio-tokio's benchmark ({doc['date']})", "",
           f"`scenarios/tokio_bench.py` on {doc['machine']}; a 2-worker tokio runtime, every way in turn "
           "in each round; hybrio-tokio's rate over each other way's, the median over the rounds and "
           "each round's. See docs/tokio-design.md.", "",
           "| workload | against | median | rounds |", "|---|---|---|---|"]
    for name, result in doc["workloads"].items():
        for r in result["ratios"]:
            rounds = ", ".join(f"{x:.2f}" for x in r["rounds"])
            out.append(f"| {name} | {r['against']} | {r['median']:.2f} | {rounds} |")
    out += ["", "Calls ready at their first poll (inline, or finished inside the submit):", "",
            "| workload | calls | p50 us | p99 us | p99.9 us | max us |", "|---|---|---|---|---|---|"]
    for name, result in doc["workloads"].items():
        for i in result["inline"]:
            out.append(f"| {name}: {i['what']} | {i['calls']:.0f} | {i['p50']:.1f} | {i['p99']:.1f} | "
                       f"{i['p999']:.1f} | {i['max']:.1f} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--scratch", default="/var/tmp/hybrio-tokio-bench",
                    help="where the files go (on a device, not tmpfs)")
    ap.add_argument("--stream-gib", type=int, default=4)
    ap.add_argument("--only", default="cached,others,direct,others-direct,stream,wal,parquet")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "tokio-bench"))
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    os.makedirs(args.scratch, exist_ok=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(PROBE, "target"))
    run(["cargo", "build", "--release", "--quiet", "--manifest-path", os.path.join(PROBE, "Cargo.toml"), "--bins"],
        env={**os.environ, "CARGO_TARGET_DIR": target})
    binary = lambda name: os.path.join(target, "release", name)  # noqa: E731
    small = os.path.join(args.scratch, "cached.dat")
    make_file(small, 256)
    wanted = args.only.split(",")
    commands = {
        "cached": [binary("tprobe"), small, "2000", "5"],
        "others": [binary("others"), small, "2000", "5"],
        "direct": [binary("direct"), small, "3000", "5"],
        "others-direct": [binary("others"), small, "1500", "3", "direct"],
        "wal": [binary("wal"), args.scratch, "200", "5"],
        "parquet": [binary("parquet"), os.path.join(args.scratch, "probe.parquet"), "1024", "3"],
    }
    if "stream" in wanted:
        stream = os.path.join(args.scratch, "stream.dat")
        make_file(stream, args.stream_gib << 10)
        commands["stream"] = [binary("stream"), stream, "3"]
    doc = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
           "machine": f"{os.cpu_count()} CPUs, Linux {os.uname().release}", "workloads": {}}
    for name in wanted:
        if name == "cached":
            with open(small, "rb") as f:
                while f.read(1 << 20):
                    pass
        text = run(commands[name], capture_output=True).stdout
        ratios, inline = parse(text)
        doc["workloads"][name] = {"command": " ".join(commands[name]), "ratios": ratios, "inline": inline,
                                  "output": text}
    write_report(doc, args.out + ".json", args.out + ".md", render)


if __name__ == "__main__":
    main()
