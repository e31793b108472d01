#!/usr/bin/env bash
# The scenario matrix: every cell (stonewall group) of scenarios/matrix/*.fio run by
# `hybrio compare` under each engine, in alternation, ROUNDS times; then
# scenarios/matrix_report.py writes scenarios/RESULTS.md from the JSON documents.
#
#   scenarios/matrix.sh [ROUNDS [CONFIRM_ROUNDS]]
#
# First stage: every engine, ROUNDS rounds (default 3: about 10-15 minutes with 5 engines).
# Confirmation stage: for each job file, adaptive against the static engines that came
# within 10% of the best static engine's median IOPS in any of its cells, CONFIRM_ROUNDS
# more rounds (default 9; 0 skips it). On this machine one engine's rounds of one cell
# spread by 10-30% (the disk is shared, the vCPUs too), so settling a 5% difference takes
# more pairs than a five-engine round can afford; the report pairs both stages' rounds.
#
# SCRATCH   directory for the data files (default /var/tmp/hybrio-matrix, on the root ext4);
#           the job files name their files relative to it, and compare runs from there
#           (hybrio's job files have no ${VAR} expansion). About 8 GiB; kept between runs,
#           so that files are laid out once.
# ENGINES   engine list for compare (default psync,pool,libaio,io_uring,adaptive)
# RESULTS   where the JSON documents go (default scenarios/results)
# MATRIX    which job files (default scenarios/matrix/*.fio)
set -euo pipefail

rounds=${1:-3}
confirm_rounds=${2:-9}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=${SCRATCH:-/var/tmp/hybrio-matrix}
engines=${ENGINES:-psync,pool,libaio,io_uring,adaptive}
results=${RESULTS:-$here/scenarios/results}
case $rounds in
    '' | *[!0-9]* | 0) echo "matrix.sh: ROUNDS must be a positive whole number, got '$rounds'" >&2; exit 1 ;;
esac
case $confirm_rounds in
    '' | *[!0-9]*) echo "matrix.sh: CONFIRM_ROUNDS must be a whole number, got '$confirm_rounds'" >&2; exit 1 ;;
esac

echo "matrix.sh: building hybrio (release)" >&2
cargo build --quiet --release -j2 -p hybrio-bench --manifest-path "$here/Cargo.toml"
hybrio="$here/target/release/hybrio"
# `--help` exits 0 whatever follows it, so look for the subcommand in the usage text.
if ! "$hybrio" --help 2>&1 | grep -qE 'hybrio compare( |$)'; then
    echo "matrix.sh: this hybrio has no 'compare' subcommand yet (it comes with the adaptive engine)" >&2
    exit 1
fi
mkdir -p "$scratch" "$results"

# CPU time used by everything on the machine over 5 s, as a percentage of all CPUs:
# run before the matrix, it says whether other work was going on.
busy_pct() {
    read -r _ u1 n1 s1 i1 w1 q1 sq1 st1 _ < /proc/stat
    sleep 5
    read -r _ u2 n2 s2 i2 w2 q2 sq2 st2 _ < /proc/stat
    local busy=$(( (u2 + n2 + s2 + q2 + sq2 + st2) - (u1 + n1 + s1 + q1 + sq1 + st1) ))
    local idle=$(( (i2 + w2) - (i1 + w1) ))
    echo $(( 100 * busy / (busy + idle) ))
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
busy_before=$(busy_pct)

if [ -n "${MATRIX:-}" ]; then
    read -r -a jobs <<< "$MATRIX"
else
    jobs=("$here"/scenarios/matrix/*.fio)
fi
for job in "${jobs[@]}"; do
    job=$(cd "$(dirname "$job")" && pwd)/$(basename "$job")
    name=$(basename "$job" .fio)
    echo "matrix.sh: $name ($rounds rounds: $engines)" >&2
    (cd "$scratch" && "$hybrio" compare --engines="$engines" --rounds="$rounds" \
        --output-format=json --output="$results/$name.json" "$job")
done

# The confirmation stage; stale documents from an earlier run must not be paired with this one.
rm -rf "$results/confirm"
if [ "$confirm_rounds" -gt 0 ]; then
    mkdir -p "$results/confirm"
    for job in "${jobs[@]}"; do
        job=$(cd "$(dirname "$job")" && pwd)/$(basename "$job")
        name=$(basename "$job" .fio)
        contenders=$(python3 - "$results/$name.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
keep = set()
for cell in doc.get("cells", []):
    iops = {r["engine"]: r.get("iops") or 0 for r in cell.get("results", []) if r["engine"] != "adaptive"}
    if iops:
        best = max(iops.values())
        keep |= {engine for engine, value in iops.items() if value >= 0.9 * best}
engines = [e for e in doc.get("engines", []) if e in keep]
if "adaptive" in doc.get("engines", []) and engines:
    print(",".join(engines + ["adaptive"]))
PY
)
        if [ -z "$contenders" ]; then
            continue
        fi
        echo "matrix.sh: $name, confirmation ($confirm_rounds rounds: $contenders)" >&2
        (cd "$scratch" && "$hybrio" compare --engines="$contenders" --rounds="$confirm_rounds" \
            --output-format=json --output="$results/confirm/$name.json" "$job")
    done
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The machine: what RESULTS.md opens with. "busy" when other work used more than 15% of
# the CPUs before the run, or the 1-minute load average before it was above 0.5 (the
# matrix itself keeps at least one CPU busy, so the load after says little on its own).
python3 - "$results/machine.json" "$scratch" "$load_before" "$load_after" "$busy_before" <<'PY'
import datetime, json, os, subprocess, sys
path, scratch, before, after, busy = sys.argv[1:6]
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
ram_kib = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal"))
fstype = subprocess.run(["df", "--output=fstype", scratch], capture_output=True, text=True).stdout.split()
machine = {
    "nproc": os.cpu_count(),
    "model": model,
    "ram": f"{ram_kib / 2**20:.1f} GiB",
    "kernel": os.uname().release,
    "scratch": scratch,
    "fstype": fstype[-1] if fstype else "?",
    "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
    "load_before": before,
    "load_after": after,
    "busy_before_pct": int(busy),
    "busy": int(busy) > 15 or float(before.split()[0]) > 0.5,
}
with open(path, "w") as f:
    json.dump(machine, f, indent=1)
PY
python3 "$here/scenarios/matrix_report.py" --results "$results" --jobs "$here/scenarios/matrix" \
    --output "$here/scenarios/RESULTS.md"
