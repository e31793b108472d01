#!/usr/bin/env bash
# Draws every `hybrio compare` document under RESULTS (default scenarios/results) as an SVG
# beside it, with hybrio itself (`hybrio report --svg`): latency for seeds/003 (its question
# is latency as requests queue), IOPS elsewhere. scenarios/matrix_report.py embeds them.
#
# usage: scenarios/charts.sh [RESULTS]    (HYBRIO=path/to/hybrio to use another binary)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
results=${1:-$here/scenarios/results}
hybrio=${HYBRIO:-$here/target/release/hybrio}
if [ -z "${HYBRIO:-}" ]; then
    (cd "$here" && cargo build --release -q -p hybrio-bench)
fi
drawn=0
for doc in "$results"/*/*.json; do
    [ -e "$doc" ] || continue
    # Only compare documents (the filesystems' machine.json, plan.json and kernel.json are not).
    grep -q '"cells"' "$doc" && grep -q '"engines"' "$doc" || continue
    case $(basename "$doc") in
        seed003-*) figure=p99 ;;
        *) figure=iops ;;
    esac
    "$hybrio" report --svg --figure="$figure" "$doc" -o "${doc%.json}.svg"
    drawn=$((drawn + 1))
done
echo "charts.sh: drew $drawn chart(s) under $results"
