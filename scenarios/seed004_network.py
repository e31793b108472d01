#!/usr/bin/env python3
"""seeds/004 on loopback, side by side: hybrio against fio's net engine and iperf3.

    python3 scenarios/seed004_network.py [--rounds N] [--seconds S] [--hybrio PATH]
        [--json OUT.json] [--markdown OUT.md]

Each round runs every configuration once, in an order that turns from round to round, so
that what else the machine does hits each alike; figures are medians over the rounds, with
the lowest and highest round. Only loopback addresses (127.0.0.1) are used.

UDP, 64-byte datagrams, one receiver and one sender:
  fio          fio's net engine, fio's job (one sendto per datagram, one recv per datagram)
  iperf3       iperf3 -u -l 64 -b 0 (server and client, two processes)
  hybrio/fio-job  the same job file as fio's, run by hybrio (ioengine=net)
  hybrio/<engine>  hybrio's receiver on <engine> fed by a sender of 64 datagrams per call
               (datagram_size=64: UDP_SEGMENT), so that the sender is not the limit; the GRO
               row takes up to 64 datagrams per receive (UDP_GRO)
Figures: datagrams received per second (over the receiver's time), datagrams lost
(counted by the receiver from fio's sequence trailers), and CPU per datagram received for
the whole of each tool (user + system time of its processes, set-up included, over
datagrams received).

TCP, fio against hybrio: stream throughput (4 KiB and 128 KiB, the receiver's bits per
second) and ping-pong round trips of 64 bytes with TCP_NODELAY (the sender's p50 and p99).

Needs fio and iperf3 (apt-get install fio iperf3); a missing one is left out with a note.
Standard library only.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        udp = s.getsockname()[1]
    return udp


def timed(cmd, **kw):
    """Runs cmd; returns (stdout, user+system seconds of it and its children)."""
    before = os.times()
    # Every run is bounded: a fio receiver whose sender failed waits for ever.
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    if out.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({out.returncode}): {out.stderr.strip()[-400:]}")
    return out.stdout, cpu


def parse(out):
    """A JSON document from a tool's stdout (fio prints "waiting for connection" first)."""
    return json.loads(out[out.index("{"):])


def job_of(doc, name):
    return next(j for j in doc["jobs"] if j["jobname"] == name)


def udp_job(port, seconds, receiver, sender, bs_recv=64):
    """A fio job file text: a receiver section and a sender section."""
    # fio reads an engine's options (protocol, port) only after its ioengine: it
    # goes first; a section's own ioengine then overrides it (hybrio's rows).
    lines = ["[global]", "ioengine=net", "protocol=udp", f"port={port}", "size=100g", "time_based",
             f"runtime={seconds}", "thread"]
    lines += ["[receiver]", "rw=read", f"bs={bs_recv}"] + receiver
    lines += ["[sender]", "rw=write", "hostname=127.0.0.1", "startdelay=0.2"] + sender
    return "\n".join(lines) + "\n"


def udp_figures(doc, cpu, datagram=64):
    r = job_of(doc, "receiver")
    seconds = r["read"]["runtime"] / 1000 or r["job_runtime"] / 1000
    received = r["read"]["io_bytes"] / datagram
    return {
        "datagrams_per_s": received / seconds if seconds else 0.0,
        "lost": r["read"]["drop_ios"],
        "cpu_ns_per_datagram": cpu / received * 1e9 if received else None,
    }


def run_fio_udp(tools, port, seconds, work, datagram=64):
    path = os.path.join(work, "fio-udp.fio")
    with open(path, "w") as f:
        f.write(udp_job(port, seconds, ["ioengine=net"], ["ioengine=net", f"bs={datagram}"], datagram))
    out, cpu = timed([tools["fio"], "--output-format=json", path])
    return udp_figures(parse(out), cpu, datagram)


def run_hybrio_udp(tools, port, seconds, work, receiver, sender, bs_recv=64, datagram=64):
    path = os.path.join(work, "hybrio-udp.fio")
    with open(path, "w") as f:
        f.write(udp_job(port, seconds, receiver, sender, bs_recv))
    out, cpu = timed([tools["hybrio"], "--output-format=json", path])
    doc = parse(out)
    figures = udp_figures(doc, cpu, datagram)
    queue = next(j for j in doc["hybrio"]["jobs"] if j["jobname"] == "receiver").get("completion_queue")
    if queue:
        figures["completions_per_reap"] = queue["completions_per_reap"]
        figures["head_commits_per_reap"] = queue["head_commits_per_reap"]
    return figures


def run_iperf3(tools, port, seconds, work):
    server = subprocess.Popen(
        [tools["iperf3"], "-s", "-1", "-B", "127.0.0.1", "-p", str(port), "-J"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    time.sleep(0.3)
    before = os.times()
    try:
        subprocess.run(
            [tools["iperf3"], "-c", "127.0.0.1", "-p", str(port), "-u", "-l", "64", "-b", "0",
             "-t", str(seconds), "-J"],
            capture_output=True, text=True, check=True, timeout=seconds + 30,
        )
        out, _ = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    doc = json.loads(out)
    s = doc["end"]["sum"]
    received = s["packets"] - s["lost_packets"]
    return {
        "datagrams_per_s": received / s["seconds"],
        "lost": s["lost_packets"],
        "cpu_ns_per_datagram": cpu / received * 1e9 if received else None,
    }


def tcp_job(port, seconds, bs, engine_recv, engine_send, pingpong=False):
    lines = ["[global]", "ioengine=net", "protocol=tcp", f"port={port}", "size=100g", "time_based",
             f"runtime={seconds}", "thread", f"bs={bs}"]
    if pingpong:
        lines += ["nodelay=1", "pingpong=1"]
    lines += ["[receiver]", "listen", "rw=read", "protocol=tcp"] + engine_recv
    # fio's own example starts its TCP sender a second late: sooner, a receiver
    # thread not yet listening refuses it now and then.
    lines += ["[sender]", "rw=write", "protocol=tcp", "hostname=127.0.0.1", "startdelay=1"] + engine_send
    return "\n".join(lines) + "\n"


def run_tcp(tool, tools, port, seconds, work, bs, engine, pingpong):
    path = os.path.join(work, f"{tool}-tcp.fio")
    engines = (["ioengine=net"], ["ioengine=net"]) if tool == "fio" else (
        (["ioengine=net"], [f"ioengine={engine}"]) if pingpong else ([f"ioengine={engine}"], ["ioengine=net"]))
    with open(path, "w") as f:
        f.write(tcp_job(port, seconds, bs, engines[0], engines[1], pingpong))
    out, cpu = timed([tools[tool], "--output-format=json", path])
    doc = parse(out)
    if pingpong:
        w = job_of(doc, "sender")["write"]
        pct = (w.get("lat_ns") or {}).get("percentile") or w["clat_ns"]["percentile"]
        # fio's lat_ns has no percentiles unless asked: clat is the whole of a
        # synchronous round trip; hybrio's io_uring splits it, so take total.
        if tool == "hybrio":
            pct = w["lat_ns"].get("percentile") or pct
        return {"round_trips_per_s": w["iops"], "p50_us": pct["50.000000"] / 1e3, "p99_us": pct["99.000000"] / 1e3}
    r = job_of(doc, "receiver")["read"]
    return {"gbit_per_s": r["bw_bytes"] * 8 / 1e9}


def median_spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    m = statistics.median(values)
    return {"median": m, "low": min(values), "high": max(values), "rounds": values}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--hybrio", default=os.path.join(HERE, "..", "target", "release", "hybrio"))
    ap.add_argument("--json", default=os.path.join(HERE, "results", "seed004-network.json"))
    ap.add_argument("--markdown", default=os.path.join(HERE, "results", "seed004-network.md"))
    ap.add_argument("--only", default="", help="run only the configurations whose names start with this")
    args = ap.parse_args()
    tools = {"hybrio": os.path.abspath(args.hybrio), "fio": shutil.which("fio"), "iperf3": shutil.which("iperf3")}
    if not os.access(tools["hybrio"], os.X_OK):
        sys.exit(f"seed004_network.py: no hybrio at {tools['hybrio']} (cargo build --release)")
    for name in ("fio", "iperf3"):
        if not tools[name]:
            print(f"seed004_network.py: {name} is not installed (apt-get install {name}): left out", file=sys.stderr)
    s = args.seconds
    gso = ["ioengine=psync", "bs=4k", "datagram_size=64"]
    # 32 datagrams of 1 KiB a call: 64 would pass UDP's 64 KiB limit.
    gso1k = ["ioengine=psync", "bs=32k", "datagram_size=1k"]
    qd16 = ["iodepth=16", "iodepth_batch_submit=8", "iodepth_batch_complete_min=8"]
    qd128 = ["iodepth=128", "iodepth_batch_submit=32", "iodepth_batch_complete_min=32"]
    multishot = ["ioengine=io_uring", "recv_multishot=1"]

    def hybrio_udp(receiver, sender=gso, datagram=64):
        return ("hybrio", lambda p, w: run_hybrio_udp(tools, p, s, w, receiver, sender, datagram, datagram))

    configs = {
        "udp/fio": ("fio", lambda p, w: run_fio_udp(tools, p, s, w)),
        "udp/iperf3": ("iperf3", lambda p, w: run_iperf3(tools, p, s, w)),
        "udp/hybrio fio-job": ("hybrio", lambda p, w: run_hybrio_udp(tools, p, s, w, ["ioengine=net"], ["ioengine=net", "bs=64"])),
        "udp/hybrio psync": ("hybrio", lambda p, w: run_hybrio_udp(tools, p, s, w, ["ioengine=psync"], gso)),
        "udp/hybrio io_uring qd1": hybrio_udp(["ioengine=io_uring"]),
        "udp/hybrio io_uring qd16 batch8": hybrio_udp(["ioengine=io_uring"] + qd16),
        "udp/hybrio io_uring qd128 batch32": hybrio_udp(["ioengine=io_uring"] + qd128),
        "udp/hybrio io_uring multishot qd16 batch8": hybrio_udp(multishot + qd16),
        "udp/hybrio io_uring multishot qd128 batch32": hybrio_udp(multishot + qd128),
        "udp/hybrio adaptive qd16": ("hybrio", lambda p, w: run_hybrio_udp(
            tools, p, s, w, ["ioengine=adaptive", "iodepth=16", "iodepth_batch_submit=8", "iodepth_batch_complete_min=8"], gso)),
        "udp/hybrio GRO": ("hybrio", lambda p, w: run_hybrio_udp(
            tools, p, s, w, ["ioengine=adaptive", "datagram_size=64"], gso, bs_recv="4k")),
        "udp1k/fio": ("fio", lambda p, w: run_fio_udp(tools, p, s, w, 1024)),
        "udp1k/hybrio psync": hybrio_udp(["ioengine=psync"], gso1k, 1024),
        "udp1k/hybrio io_uring qd16 batch8": hybrio_udp(["ioengine=io_uring"] + qd16, gso1k, 1024),
        "udp1k/hybrio io_uring multishot qd16 batch8": hybrio_udp(multishot + qd16, gso1k, 1024),
        "udp1k/hybrio adaptive qd16": hybrio_udp(["ioengine=adaptive"] + qd16, gso1k, 1024),
        "tcp 4k/fio": ("fio", lambda p, w: run_tcp("fio", tools, p, s, w, "4k", None, False)),
        "tcp 4k/hybrio net": ("hybrio", lambda p, w: run_tcp("hybrio", tools, p, s, w, "4k", "net", False)),
        "tcp 4k/hybrio adaptive": ("hybrio", lambda p, w: run_tcp("hybrio", tools, p, s, w, "4k", "adaptive", False)),
        "tcp 128k/fio": ("fio", lambda p, w: run_tcp("fio", tools, p, s, w, "128k", None, False)),
        "tcp 128k/hybrio net": ("hybrio", lambda p, w: run_tcp("hybrio", tools, p, s, w, "128k", "net", False)),
        "tcp 128k/hybrio adaptive": ("hybrio", lambda p, w: run_tcp("hybrio", tools, p, s, w, "128k", "adaptive", False)),
        "pingpong/fio": ("fio", lambda p, w: run_tcp("fio", tools, p, s, w, "64", None, True)),
        "pingpong/hybrio net": ("hybrio", lambda p, w: run_tcp("hybrio", tools, p, s, w, "64", "net", True)),
        "pingpong/hybrio adaptive": ("hybrio", lambda p, w: run_tcp("hybrio", tools, p, s, w, "64", "adaptive", True)),
    }
    names = [n for n, (tool, _) in configs.items() if tools[tool] and n.startswith(args.only)]
    results = {n: [] for n in names}
    failures = {}
    load_before = open("/proc/loadavg").read().split()[:3]
    with tempfile.TemporaryDirectory() as work:
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                print(f"seed004_network.py: round {r + 1}/{args.rounds}: {name}", file=sys.stderr)
                try:
                    results[name].append(configs[name][1](free_port(), work))
                except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
                    # A failed run (fio's TCP receiver now and then refuses its sender) is
                    # left out of the medians and counted in the report.
                    print(f"seed004_network.py: {name} failed: {str(e)[:300]}", file=sys.stderr)
                    failures[name] = failures.get(name, 0) + 1
    load_after = open("/proc/loadavg").read().split()[:3]
    summary = {}
    for name, rounds in results.items():
        if not rounds:
            continue
        keys = rounds[0].keys()
        summary[name] = {k: median_spread([x.get(k) for x in rounds]) for k in keys}
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rounds": args.rounds, "seconds": s,
           "load_before": load_before, "load_after": load_after, "results": summary, "failed_runs": failures}
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    with open(args.markdown, "w") as f:
        f.write(render(doc))
    print(render(doc))


def render(doc):
    res = doc["results"]
    def med(name, key):
        v = res.get(name, {}).get(key)
        return v["median"] if v else None
    def cell(name, key, fmt):
        v = res.get(name, {}).get(key)
        if not v:
            return "-"
        return f"{fmt(v['median'])} ({fmt(v['low'])}-{fmt(v['high'])})"
    out = [f"seeds/004 on loopback, {doc['date']}: {doc['rounds']} rounds of {doc['seconds']} s, "
           f"configurations in turn; median (lowest-highest round). Load average before "
           f"{' '.join(doc['load_before'])}, after {' '.join(doc['load_after'])}."
           + (f" Runs that failed and are left out: {doc['failed_runs']}." if doc.get("failed_runs") else ""), ""]
    for prefix, title in (("udp/", "UDP, 64-byte datagrams"), ("udp1k/", "UDP, 1 KiB datagrams")):
        fio_rate, fio_cpu = med(prefix + "fio", "datagrams_per_s"), med(prefix + "fio", "cpu_ns_per_datagram")
        if not any(n.startswith(prefix) for n in res):
            continue
        out += [f"| {title} | received/s | lost | CPU ns per datagram | x fio's rate | x fio's CPU/datagram | completions per reap | CQ head commits per reap |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for name in [n for n in res if n.startswith(prefix)]:
            rate, cpu = med(name, "datagrams_per_s"), med(name, "cpu_ns_per_datagram")
            ratio = f"{rate / fio_rate:.2f}" if rate and fio_rate else "-"
            cpu_ratio = f"{cpu / fio_cpu:.2f}" if cpu and fio_cpu else "-"
            out.append(f"| {name[len(prefix):]} | {cell(name, 'datagrams_per_s', lambda x: f'{x / 1e3:.0f}k')} | "
                       f"{cell(name, 'lost', lambda x: f'{x:.0f}')} | {cell(name, 'cpu_ns_per_datagram', lambda x: f'{x:.0f}')} | "
                       f"{ratio} | {cpu_ratio} | {cell(name, 'completions_per_reap', lambda x: f'{x:.1f}')} | "
                       f"{cell(name, 'head_commits_per_reap', lambda x: f'{x:.2f}')} |")
        out.append("")
    out += ["| TCP stream | receiver Gbit/s | x fio |", "|---|---:|---:|"]
    for bs in ("4k", "128k"):
        base = med(f"tcp {bs}/fio", "gbit_per_s")
        for name in [n for n in res if n.startswith(f"tcp {bs}/")]:
            v = med(name, "gbit_per_s")
            out.append(f"| {name} | {cell(name, 'gbit_per_s', lambda x: f'{x:.2f}')} | {v / base:.2f} |" if base and v else f"| {name} | {cell(name, 'gbit_per_s', lambda x: f'{x:.2f}')} | - |")
    out += ["", "| TCP ping-pong, 64 bytes, TCP_NODELAY | round trips/s | p50 us | p99 us | p50 x fio | p99 x fio |",
            "|---|---:|---:|---:|---:|---:|"]
    b50, b99 = med("pingpong/fio", "p50_us"), med("pingpong/fio", "p99_us")
    for name in [n for n in res if n.startswith("pingpong/")]:
        p50, p99 = med(name, "p50_us"), med(name, "p99_us")
        out.append(f"| {name[9:]} | {cell(name, 'round_trips_per_s', lambda x: f'{x / 1e3:.1f}k')} | "
                   f"{cell(name, 'p50_us', lambda x: f'{x:.1f}')} | {cell(name, 'p99_us', lambda x: f'{x:.1f}')} | "
                   f"{(p50 / b50) if p50 and b50 else 0:.2f} | {(p99 / b99) if p99 and b99 else 0:.2f} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
