#!/usr/bin/env python3
"""hybrio --mpi under mpirun against fio's client/server mode on the same job:
aggregate IOPS side by side, and the merged p99 against the p99 of every
process's latencies pooled (fio 3.33's "All clients" entry has no percentiles;
fio 3.39 and later compute them from the servers' summed histograms).

usage: python3 scenarios/mpi_vs_fio_client.py [--ranks 4] [--rounds 3] [--seconds 3]

Needs fio, Open MPI's mpirun and hybrio built with the mpi feature
(cargo build --release -p hybrio-bench --features mpi). Starts fio servers on
127.0.0.1 (ports 8811 on), stops them at exit, also on failure.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HYBRIO = os.path.join(os.path.dirname(HERE), "target", "release", "hybrio")
FIRST_PORT = 8811


def job_text(data, seconds):
    return (f"[global]\nioengine=psync\nrw=randread\nbs=4k\nsize=64m\nfilename={data}\n"
            f"runtime={seconds}\ntime_based\n[randread]\n")


def pooled_p99(entries):
    """fio's rule (the smallest value whose cumulative count reaches 99% of
    all) over every entry's json+ bins pooled."""
    bins = {}
    for entry in entries:
        for value, count in entry["read"]["clat_ns"]["bins"].items():
            bins[int(value)] = bins.get(int(value), 0) + count
    total = sum(bins.values())
    rank = 0.99 * total
    seen = 0
    for value in sorted(bins):
        seen += bins[value]
        if seen >= rank:
            return value
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=3)
    args = ap.parse_args()
    servers = []
    try:
        with tempfile.TemporaryDirectory(prefix="mpi-vs-fio-") as work:
            data = os.path.join(work, "data")
            with open(data, "wb") as f:
                f.write(os.urandom(64 << 20))
            job = os.path.join(work, "job.fio")
            with open(job, "w") as f:
                f.write(job_text(data, args.seconds))
            hosts = os.path.join(work, "hosts")
            with open(hosts, "w") as f:
                for i in range(args.ranks):
                    f.write(f"ip:127.0.0.1,{FIRST_PORT + i}\n")
            for i in range(args.ranks):
                servers.append(subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{FIRST_PORT + i}"],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(1)
            rows = []
            for _ in range(args.rounds):
                fio = json.loads(subprocess.run(
                    ["fio", f"--client={hosts}", "--output-format=json+", job],
                    capture_output=True, text=True, check=True, timeout=120).stdout)
                mine = json.loads(subprocess.run(
                    ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(args.ranks),
                     HYBRIO, "--mpi", "--output-format=json+", job],
                    capture_output=True, text=True, check=True, timeout=120).stdout)
                f_each = [c for c in fio["client_stats"] if c["jobname"] != "All clients"]
                f_all = next(c for c in fio["client_stats"] if c["jobname"] == "All clients")
                h_each = [c for c in mine["client_stats"] if c["jobname"] != "All clients"]
                h_all = next(c for c in mine["client_stats"] if c["jobname"] == "All clients")
                rows.append({
                    "fio_iops": f_all["read"]["iops"],
                    "hybrio_iops": h_all["read"]["iops"],
                    "fio_all_p99": f_all["read"]["clat_ns"].get("percentile", {}).get("99.000000"),
                    "fio_pooled_p99": pooled_p99(f_each),
                    "fio_each_p99": [c["read"]["clat_ns"]["percentile"]["99.000000"] for c in f_each],
                    "hybrio_p99": h_all["read"]["clat_ns"]["percentile"]["99.000000"],
                    "hybrio_pooled_p99": pooled_p99(h_each),
                })
            ratios = [r["hybrio_iops"] / r["fio_iops"] for r in rows]
            print(f"| round | fio IOPS (All clients) | hybrio IOPS (All clients) | hybrio/fio | "
                  f"fio All clients p99 | fio pooled p99 | fio each process's p99 | "
                  f"hybrio merged p99 | hybrio pooled p99 |")
            print("|---|---:|---:|---:|---|---:|---|---:|---:|")
            for i, r in enumerate(rows):
                print(f"| {i + 1} | {r['fio_iops']:.0f} | {r['hybrio_iops']:.0f} | "
                      f"{r['hybrio_iops'] / r['fio_iops']:.3f} | {r['fio_all_p99'] or 'none'} | "
                      f"{r['fio_pooled_p99']} | {', '.join(str(p) for p in r['fio_each_p99'])} | "
                      f"{r['hybrio_p99']} | {r['hybrio_pooled_p99']} |")
            print(f"\nmedian hybrio/fio IOPS {statistics.median(ratios):.3f} "
                  f"({min(ratios):.3f}-{max(ratios):.3f}), {args.rounds} rounds, {args.ranks} processes")
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                server.kill()


if __name__ == "__main__":
    sys.exit(main())
