#!/usr/bin/env bash
# Runs one scenario job file under fio and under hybrio, alternating, REPEATS times,
# and prints each job's figures side by side: medians with min-max, and hybrio/fio ratios.
#
#   scenarios/compare.sh scenarios/seed000-buffered-writes.fio [REPEATS]
#
# Files are made in $SCRATCH (default /var/tmp/hybrio-scenarios, on the root filesystem).
# TOOLS="hybrio" runs hybrio alone (for job files using options fio does not have).
# A job file containing the line "# compare.sh: fresh-files" has its data files deleted
# before every run, so that write scenarios always start from an empty file.
set -euo pipefail

job_file=${1:?usage: compare.sh JOBFILE [REPEATS]}
repeats=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
job_path=$(cd "$(dirname "$job_file")" && pwd)/$(basename "$job_file")
scratch=${SCRATCH:-/var/tmp/hybrio-scenarios}

tools=${TOOLS:-fio hybrio}
if [[ " $tools " == *" fio "* ]] && ! command -v fio >/dev/null 2>&1; then
    echo "compare.sh: installing fio (apt-get)" >&2
    if [ "$(id -u)" -eq 0 ]; then
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio) >&2
    else
        echo "compare.sh: fio is not installed and this is not root; install fio first" >&2
        exit 1
    fi
fi
echo "compare.sh: building hybrio (release)" >&2
cargo build --quiet --release -p hybrio-bench --manifest-path "$here/Cargo.toml"
hybrio="$here/target/release/hybrio"

mkdir -p "$scratch"
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
fresh=0
grep -q '^# compare.sh: fresh-files' "$job_path" && fresh=1

for rep in $(seq 1 "$repeats"); do
    for tool in $tools; do
        if [ "$fresh" = 1 ]; then
            grep -E '^\s*filename\s*=' "$job_path" | sed 's/.*=\s*//' | tr ':' '\n' | while read -r f; do
                rm -f "$scratch/$f"
            done
            sync
        fi
        echo "compare.sh: run $rep/$repeats: $tool" >&2
        if [ "$tool" = fio ]; then cmd=fio; else cmd=$hybrio; fi
        (cd "$scratch" && $cmd --output-format=json --output="$results/$tool.$rep.json" "$job_path" >/dev/null)
    done
done

python3 - "$results" "$repeats" "$(basename "$job_file")" "$tools" <<'PY'
import json, os, statistics, sys

results, repeats, name, tools = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split()

def load(tool, rep):
    with open(os.path.join(results, f"{tool}.{rep}.json")) as f:
        text = f.read()
    # fio may print notices before its JSON document; hybrio never does.
    return json.loads(text[text.index("{"):])

def option(run, job, key, default):
    own = job.get("job options", {})
    return own.get(key, run.get("global options", {}).get(key, default))

def figures(run, job):
    iops = sum(job[d]["iops"] for d in ("read", "write"))
    bw = sum(job[d]["bw_bytes"] for d in ("read", "write")) / 2**20
    ios = sum(job[d]["total_ios"] for d in ("read", "write")) or 1
    lat = sum(job[d]["lat_ns"]["mean"] * job[d]["total_ios"] for d in ("read", "write")) / ios / 1000
    p99 = max(float(job[d]["clat_ns"].get("percentile", {}).get("99.000000", 0)) for d in ("read", "write")) / 1000
    cpu = job["usr_cpu"] + job["sys_cpu"]
    # The latency an application keeping iodepth requests in flight sees (Little's law):
    # for a synchronous engine, which does one at a time, it includes the wait in line.
    depth = int(option(run, job, "iodepth", "1")) * int(option(run, job, "numjobs", "1"))
    app = depth / iops * 1e6 if iops else float("nan")
    return {"iops": iops, "bw": bw, "lat": lat, "p99": p99, "cpu": cpu, "app": app}

runs = {tool: [load(tool, r) for r in range(1, repeats + 1)] for tool in tools}
names = [j["jobname"] for j in runs[tools[0]][0]["jobs"]]

def spread(values, fmt):
    med = statistics.median(values)
    if len(values) == 1:
        return fmt(med)
    return f"{fmt(med)} ({fmt(min(values))}-{fmt(max(values))})"

k = lambda v: f"{v/1000:.1f}k"
mib = lambda v: f"{v:.0f}"
us = lambda v: f"{v:.1f}"
ratio = lambda v: f"{v:.2f}"
versions = " vs ".join(runs[t][0].get("fio version", "?") for t in tools)
print(f"### {name}: median of {repeats} runs (min-max), {versions}")
print()
columns = [("IOPS", "iops", k), ("MiB/s", "bw", mib), ("lat avg us", "lat", us),
           ("app lat us", "app", us), ("clat p99 us", "p99", us), ("CPU %", "cpu", us)]
header = ["job"]
for title, _, _ in columns:
    header += [f"{t} {title}" for t in tools]
    if title == "IOPS" and len(tools) == 2:
        header.append("hybrio/fio IOPS")
print("| " + " | ".join(header) + " |")
print("|" + "---|" * len(header))
for i, job in enumerate(names):
    figs = {t: [figures(r, r["jobs"][i]) for r in runs[t]] for t in tools}
    row = [job]
    for title, key, fmt in columns:
        row += [spread([x[key] for x in figs[t]], fmt) for t in tools]
        if title == "IOPS" and len(tools) == 2:
            a, b = figs[tools[0]], figs[tools[1]]
            row.append(spread([y["iops"] / x["iops"] if x["iops"] else float("nan") for x, y in zip(a, b)], ratio))
    print("| " + " | ".join(row) + " |")
PY
