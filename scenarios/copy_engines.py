#!/usr/bin/env python3
"""The library's copy example (crates/hybrio/examples/copy.rs) on each engine, for a library
caller's short job: is the adaptive engine within 0.95x of the best fixed engine, that is, its time
no more than the best fixed engine's time / 0.95?

    python3 scenarios/copy_engines.py [--rounds 15] [--mib 300] [--depth 16] [--bs 128k]
        [--engines psync,pool,libaio,io_uring,adaptive] [--variants nofsync,fsync] [--dir DIR]
        [--copy PATH] [--json OUT.json] [--markdown OUT.md] [--self-test]

The job: a new user copies a file they have just written. The source, MIB MiB of random data, is
written once (and fsynced, so it is clean) and stays in the page cache; every run copies it,
buffered (the example's default Caching::Auto), through the Driver, at depth 16 in 128 KiB
requests (the example's default --bs and the size the docs measure copies with), to a fresh
destination that is deleted after the run. Two variants: without and with the example's final
fdatasync (--fsync, in the copy's time). Before each run `sync` leaves nothing dirty from earlier
runs. The time is the example's own (--json: from its first request, the engine's learning
included, opening the files not).

Each round runs every engine once in each variant (the variants alternate which goes first), the
engines in an order that rotates by one each round, so no engine always goes first. Per engine:
the median time over the rounds with the lowest and highest. Adaptive against the best fixed
engine: per round, adaptive's time over the fastest fixed engine's time in that same round; the
median of those ratios with the lowest and highest, and in how many rounds adaptive was slower.
Adaptive's path split (requests inline / asynchronous) is the example's count. The machine's load
average is noted at the start and the end; nothing here fails on a time. Scratch files live in
DIR (default a fresh directory under /var/tmp), removed at exit, also on failure or Ctrl-C.
Needs the example built: cargo build --release -p hybrio --example copy. Standard library only.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from seed002_streaming import median_spread, parse_size, write_report

HERE = os.path.dirname(os.path.abspath(__file__))
BAR = 0.95  # adaptive's time may be at most the best fixed engine's time / BAR
VARIANTS = {"nofsync": [], "fsync": ["--fsync"]}
LABELS = {"nofsync": "no fsync", "fsync": "fsync at the end"}


def round_order(engines, r):
    """Round r's order: the engines rotated by r, so each goes first in turn."""
    k = r % len(engines)
    return engines[k:] + engines[:k]


def summarize(times, adaptive="adaptive"):
    """times: {engine: [seconds per round]} (equal lengths, round by round) -> the variant's figures."""
    fixed = [e for e in times if e != adaptive]
    rounds = len(times[adaptive])
    best_per_round = [min(fixed, key=lambda e: times[e][r]) for r in range(rounds)]
    ratios = [times[adaptive][r] / times[best_per_round[r]][r] for r in range(rounds)]
    medians = {e: median_spread(ts) for e, ts in times.items()}
    best = min(fixed, key=lambda e: medians[e]["median"])
    ratio = median_spread(ratios)
    # What a fixed choice scores against the same bar: each fixed engine over the best of the others,
    # round by round (how much of adaptive's ratio the rounds' own spread allows).
    fixed_vs_others = {e: median_spread([times[e][r] / min(times[f][r] for f in fixed if f != e)
                                         for r in range(rounds)]) for e in fixed} if len(fixed) > 1 else {}
    return {"times": medians, "per_round": times, "ratios": ratios, "ratio": ratio,
            "fixed_vs_others": fixed_vs_others,
            "best_fixed": best, "best_fixed_per_round": {e: best_per_round.count(e) for e in fixed},
            "adaptive_slower": sum(x > 1 for x in ratios), "beyond_bar": sum(x > 1 / BAR for x in ratios),
            "rounds": rounds, "within_bar": ratio["median"] <= 1 / BAR}


def self_test():
    ok = True

    def check(what, got, want):
        nonlocal ok
        good = abs(got - want) < 1e-9 if isinstance(want, float) else got == want
        print(f"{'ok  ' if good else 'FAIL'} {what}: {got!r} (want {want!r})")
        ok &= good

    times = {"psync": [1.0, 2.0, 1.0, 4.0], "io_uring": [0.5, 1.0, 2.0, 1.0], "adaptive": [0.6, 0.9, 1.1, 1.0]}
    s = summarize(times)
    # per round best fixed: io_uring 0.5, io_uring 1.0, psync 1.0, io_uring 1.0 -> 1.2, 0.9, 1.1, 1.0
    check("ratios", [round(x, 9) for x in s["ratios"]], [1.2, 0.9, 1.1, 1.0])
    check("median ratio (even count)", s["ratio"]["median"], 1.05)
    check("lowest ratio", s["ratio"]["low"], 0.9)
    check("highest ratio", s["ratio"]["high"], 1.2)
    check("adaptive slower in", s["adaptive_slower"], 2)
    check("beyond 1/0.95 in", s["beyond_bar"], 2)
    check("best fixed by median", s["best_fixed"], "io_uring")
    check("best fixed per round", s["best_fixed_per_round"], {"psync": 1, "io_uring": 3})
    check("io_uring median", s["times"]["io_uring"]["median"], 1.0)
    check("psync median", s["times"]["psync"]["median"], 1.5)
    check("within the bar (1.05 <= 1.0526)", s["within_bar"], True)
    # psync over io_uring per round: 2, 2, 0.5, 4; io_uring over psync: 0.5, 0.5, 2, 0.25
    check("psync over the best other fixed", s["fixed_vs_others"]["psync"]["median"], 2.0)
    check("io_uring over the best other fixed", s["fixed_vs_others"]["io_uring"]["median"], 0.5)
    runs = [{"inline": 9, "async": 1, "seconds": 2.0}, {"inline": 1, "async": 9, "seconds": 1.0},
            {"inline": 8, "async": 2, "seconds": 3.0}]
    split = path_split([dict(r, explored=0, switches=0, uncached=0, learning_ns=0) for r in runs])
    check("runs mostly inline", split["by_path"]["mostly_inline"]["runs"], 2)
    check("their median time", split["by_path"]["mostly_inline"]["seconds"]["median"], 2.5)
    check("runs mostly asynchronous", split["by_path"]["mostly_async"]["seconds"]["median"], 1.0)
    s = summarize({"psync": [1.0, 1.0, 1.0], "adaptive": [1.06, 1.0, 1.2]})
    check("median ratio (odd count)", s["ratio"]["median"], 1.06)
    check("1.06 is beyond the bar", s["within_bar"], False)
    check("rotation", [round_order(["a", "b", "c"], r) for r in range(4)],
          [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]])
    check("parse_size 128k", parse_size("128k"), 131072)
    doc = {"variants": {"fsync": s}, "engines": ["psync", "adaptive"], "paths": {}}
    check("render mentions the ratio", "1.060** (1.000-1.200)" in render(dict(doc, **HEADER_EXAMPLE)), True)
    return ok


HEADER_EXAMPLE = {"mib": 1, "depth": 16, "bs": 131072, "rounds": 3, "commit": "0" * 40, "dir": "/var/tmp",
                  "started": "s", "finished": "f", "load_start": [0.0] * 3, "load_end": [0.0] * 3,
                  "load_rounds": [0.0]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--mib", type=int, default=300, help="the source's size in MiB")
    ap.add_argument("--depth", type=int, default=16)
    ap.add_argument("--bs", default="128k", help="request size (the example's default, 128k)")
    ap.add_argument("--engines", default="psync,pool,libaio,io_uring,adaptive")
    ap.add_argument("--variants", default="nofsync,fsync")
    ap.add_argument("--dir", default="/var/tmp", help="where the scratch directory is made")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(HERE, "..", "target"))
    ap.add_argument("--copy", default=os.path.join(target, "release", "examples", "copy"))
    ap.add_argument("--json", default=os.path.join(HERE, "results", "copy-engines.json"))
    ap.add_argument("--markdown", default=os.path.join(HERE, "results", "copy-engines.md"))
    ap.add_argument("--self-test", action="store_true", help="check the arithmetic on made-up numbers")
    args = ap.parse_args()
    if args.self_test:
        sys.exit(0 if self_test() else 1)
    copy = os.path.abspath(args.copy)
    if not os.access(copy, os.X_OK):
        sys.exit(f"copy_engines.py: no copy example at {copy} (cargo build --release -p hybrio --example copy)")
    engines, variants = args.engines.split(","), args.variants.split(",")
    if "adaptive" not in engines or len(engines) < 2 or any(v not in VARIANTS for v in variants):
        sys.exit("copy_engines.py: --engines needs adaptive and a fixed engine; --variants: nofsync, fsync")
    bs = parse_size(args.bs)
    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    # SIGTERM too leaves through the finally below, which removes the scratch directory.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("copy_engines.py: terminated"))
    times = {v: {e: [] for e in engines} for v in variants}
    paths = []
    load_start, load_rounds = list(os.getloadavg()), []
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    scratch = tempfile.mkdtemp(prefix="hybrio-copy-engines.", dir=args.dir)
    try:
        src, dst = os.path.join(scratch, "source"), os.path.join(scratch, "copy")
        with open(src, "wb") as f:
            for _ in range(args.mib):
                f.write(os.urandom(1 << 20))
            os.fsync(f.fileno())
        for r in range(args.rounds):
            load_rounds.append(os.getloadavg()[0])
            for v in variants if r % 2 == 0 else variants[::-1]:
                for e in round_order(engines, r):
                    print(f"copy_engines.py: round {r + 1}/{args.rounds}: {LABELS[v]}: {e}", file=sys.stderr)
                    os.sync()
                    cmd = [copy, "--engine", e, "--depth", str(args.depth), "--bs", str(bs), "--json", *VARIANTS[v],
                           src, dst]
                    try:
                        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
                    finally:
                        if os.path.exists(dst):
                            os.unlink(dst)
                    if out.returncode != 0:
                        sys.exit(f"copy_engines.py: {e} failed ({out.returncode}): {out.stderr.strip()}")
                    run = json.loads(out.stdout)
                    if run["bytes"] != args.mib << 20:
                        sys.exit(f"copy_engines.py: {e} copied {run['bytes']} bytes of {args.mib << 20}")
                    times[v][e].append(run["seconds"])
                    if e == "adaptive":
                        paths.append(dict(run, variant=v))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    doc = {"started": started, "finished": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
           "commit": commit, "copy": copy, "dir": args.dir, "mib": args.mib, "depth": args.depth, "bs": bs,
           "rounds": args.rounds, "engines": engines, "bar": BAR, "load_start": load_start,
           "load_end": list(os.getloadavg()), "load_rounds": load_rounds,
           "variants": {v: summarize(times[v]) for v in variants},
           "paths": {v: path_split([p for p in paths if p["variant"] == v]) for v in variants}}
    write_report(doc, args.json, args.markdown, render)


def path_split(runs):
    """Adaptive's path counts over its runs: medians (lowest-highest) and its share inline."""
    if not runs:
        return None
    keys = ["inline", "async", "explored", "switches", "uncached", "learning_ns"]
    out = {k: median_spread([p[k] for p in runs]) for k in keys}
    share = lambda p: p["inline"] / max(1, p["inline"] + p["async"])
    out["inline_share"] = median_spread([share(p) for p in runs])
    # A run's time beside its path split: whether the runs that went one way were the slow ones.
    by = lambda keep: [p["seconds"] for p in runs if keep(share(p))]
    out["by_path"] = {name: {"runs": len(ts), "seconds": median_spread(ts) if ts else None}
                      for name, ts in [("mostly_inline", by(lambda x: x > 0.5)),
                                       ("mostly_async", by(lambda x: x <= 0.5))]}
    return out


def render(doc):
    ms = lambda v: f"{v['median'] * 1e3:.0f} ({v['low'] * 1e3:.0f}-{v['high'] * 1e3:.0f})"
    load = lambda xs: " ".join(f"{x:.2f}" for x in xs)
    vs = list(doc["variants"])
    rs = doc["load_rounds"]
    out = [f"The copy example (commit {doc['commit'][:7]}) copying a {doc['mib']} MiB file just written (in the page "
           f"cache) to a fresh file, buffered, depth {doc['depth']}, {doc['bs'] >> 10} KiB requests, through the "
           f"Driver, in {doc['dir']}; {doc['rounds']} rounds, every engine once per round and variant, the order "
           f"rotating each round; {doc['started']} to {doc['finished']}. Load average (1, 5, 15 min) at the start "
           f"{load(doc['load_start'])}, at the end {load(doc['load_end'])}; 1-min at the rounds' starts "
           f"{min(rs):.2f}-{max(rs):.2f} (2 CPUs).", "",
           "| ms, median (lowest-highest) | " + " | ".join(LABELS[v] for v in vs) + " |",
           "|---|" + "---:|" * len(vs)]
    for e in doc["engines"]:
        out.append(f"| {e} | " + " | ".join(ms(doc["variants"][v]["times"][e]) for v in vs) + " |")
    row = lambda name, f: out.append(f"| {name} | " + " | ".join(f(doc["variants"][v]) for v in vs) + " |")
    row("best fixed engine (by median)", lambda s: s["best_fixed"])
    row("best fixed engine, rounds won",
        lambda s: ", ".join(f"{e} {n}" for e, n in s["best_fixed_per_round"].items() if n))
    row("**adaptive / best fixed in the round**",
        lambda s: f"**{s['ratio']['median']:.3f}** ({s['ratio']['low']:.3f}-{s['ratio']['high']:.3f})")
    row("adaptive slower", lambda s: f"in {s['adaptive_slower']} of {s['rounds']} rounds")
    row(f"adaptive beyond best / {BAR}", lambda s: f"in {s['beyond_bar']} of {s['rounds']} rounds")
    row(f"within {BAR}x (median ratio <= {1 / BAR:.3f})", lambda s: "yes" if s["within_bar"] else "**no**")
    row("each fixed engine / best of the other fixed in the round",
        lambda s: ", ".join(f"{e} {r['median']:.3f}" for e, r in s.get("fixed_vs_others", {}).items()))
    out.append("")
    for v, p in doc["paths"].items():
        if p:
            m = lambda k: f"{p[k]['median']:.0f}"
            out.append(f"Adaptive's paths, {LABELS[v]} (median per run): {m('inline')} inline, {m('async')} "
                       f"asynchronous ({p['inline_share']['median'] * 100:.0f}% inline, "
                       f"{p['inline_share']['low'] * 100:.0f}-{p['inline_share']['high'] * 100:.0f}% over the "
                       f"runs), {m('explored')} explored, {m('switches')} switches, {m('uncached')} writes sent "
                       f"uncached, learning {p['learning_ns']['median'] / 1e6:.1f} ms.")
            for name, label in [("mostly_inline", "more than half inline"), ("mostly_async", "half or more asynchronous")]:
                b = p.get("by_path", {}).get(name)
                if b and b["runs"]:
                    t = b["seconds"]
                    out.append(f"Its runs {label}: {b['runs']}, "
                               f"{t['median'] * 1e3:.0f} ms ({t['low'] * 1e3:.0f}-{t['high'] * 1e3:.0f}).")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
