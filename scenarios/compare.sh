#!/usr/bin/env bash
# Runs one scenario job file under fio and under hybrio, alternating, REPEATS times,
# and prints each job's figures side by side: medians with min-max, and hybrio/fio ratios.
#
#   scenarios/compare.sh scenarios/seed000-buffered-writes.fio [REPEATS]
#
# Files are made in $SCRATCH (default /var/tmp/hybrio-scenarios, on the root filesystem).
# A job file containing the line "# compare.sh: fresh-files" has its data files deleted
# before every run, so that write scenarios always start from an empty file.
set -euo pipefail

job_file=${1:?usage: compare.sh JOBFILE [REPEATS]}
repeats=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
job_path=$(cd "$(dirname "$job_file")" && pwd)/$(basename "$job_file")
scratch=${SCRATCH:-/var/tmp/hybrio-scenarios}

if ! command -v fio >/dev/null 2>&1; then
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
    for tool in fio hybrio; do
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

python3 - "$results" "$repeats" "$(basename "$job_file")" <<'PY'
import json, os, statistics, sys

results, repeats, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def load(tool, rep):
    with open(os.path.join(results, f"{tool}.{rep}.json")) as f:
        text = f.read()
    # fio may print notices before its JSON document; hybrio never does.
    return json.loads(text[text.index("{"):])

def figures(job):
    iops = sum(job[d]["iops"] for d in ("read", "write"))
    ios = sum(job[d]["total_ios"] for d in ("read", "write")) or 1
    lat = sum(job[d]["lat_ns"]["mean"] * job[d]["total_ios"] for d in ("read", "write")) / ios / 1000
    p99 = max(float(job[d]["clat_ns"].get("percentile", {}).get("99.000000", 0)) for d in ("read", "write")) / 1000
    cpu = job["usr_cpu"] + job["sys_cpu"]
    return {"iops": iops, "lat": lat, "p99": p99, "cpu": cpu}

runs = {tool: [load(tool, r) for r in range(1, repeats + 1)] for tool in ("fio", "hybrio")}
names = [j["jobname"] for j in runs["fio"][0]["jobs"]]

def spread(values, fmt):
    med = statistics.median(values)
    if len(values) == 1:
        return fmt(med)
    return f"{fmt(med)} ({fmt(min(values))}-{fmt(max(values))})"

k = lambda v: f"{v/1000:.1f}k"
us = lambda v: f"{v:.1f}"
ratio = lambda v: f"{v:.2f}"
print(f"### {name}: median of {repeats} runs (min-max), fio {runs['fio'][0].get('fio version', '?')} vs {runs['hybrio'][0].get('fio version', '?')}")
print()
print("| job | fio IOPS | hybrio IOPS | hybrio/fio IOPS | fio lat avg us | hybrio lat avg us | fio clat p99 us | hybrio clat p99 us | fio CPU % | hybrio CPU % |")
print("|---|---|---|---|---|---|---|---|---|---|")
for i, job in enumerate(names):
    f = [figures(r["jobs"][i]) for r in runs["fio"]]
    h = [figures(r["jobs"][i]) for r in runs["hybrio"]]
    ratios = [b["iops"] / a["iops"] if a["iops"] else float("nan") for a, b in zip(f, h)]
    print(f"| {job} | {spread([x['iops'] for x in f], k)} | {spread([x['iops'] for x in h], k)} | {spread(ratios, ratio)} "
          f"| {spread([x['lat'] for x in f], us)} | {spread([x['lat'] for x in h], us)} "
          f"| {spread([x['p99'] for x in f], us)} | {spread([x['p99'] for x in h], us)} "
          f"| {spread([x['cpu'] for x in f], us)} | {spread([x['cpu'] for x in h], us)} |")
PY
