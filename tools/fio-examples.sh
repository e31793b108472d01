#!/usr/bin/env bash
# Checks hybrio against every example job file Debian's fio-examples package installs
# (apt-get install fio-examples; nothing of it is committed) and writes the outcome of
# each to tools/FIO-EXAMPLES.md: "parses" (with its jobs) or hybrio's one-line refusal.
# A panic, a multi-line error or an exit status other than 0 or 1 fails the script.
#
#   tools/fio-examples.sh [HYBRIO]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
hybrio=${1:-$here/target/release/hybrio}
examples=/usr/share/doc/fio/examples
out=$here/tools/FIO-EXAMPLES.md
[ -d "$examples" ] || { echo "fio-examples.sh: $examples missing (apt-get install fio-examples)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Some examples take their parameters from the environment (and say so in their
# comments); give them the sort of values they ask for, so that what follows is read too.
export FIO_BS=4k FIO_DIR=$work FIO_IODEPTH=4 FIO_RW=randread
export S3_KEY=key S3_ID=id CONT=cont POOL=pool SSE_KEY=key STORAGE_CLASS=STANDARD SWIFT_id=id
export GPU_DEV_IDS=0 unixsocket=$work/nbd.sock uri=nbd://localhost
parsed=0 refused=0 broken=0
rows=()
for file in "$examples"/*.fio; do
    name=$(basename "$file")
    set +e
    (cd "$work" && "$hybrio" --showcmd "$file") > "$work/out" 2> "$work/err"
    status=$?
    set -e
    lines=$(wc -l < "$work/err")
    if [ "$status" = 0 ] && [ "$lines" = 0 ]; then
        parsed=$((parsed + 1))
        jobs=$(grep -o -- '--name=[^ ]*' "$work/out" | wc -l)
        rows+=("| $name | parses: $jobs job(s) |")
    elif [ "$status" = 1 ] && [ "$lines" = 1 ] && ! grep -q panicked "$work/err"; then
        refused=$((refused + 1))
        message=$(sed -e "s|$examples/||g" -e 's/|/\\|/g' "$work/err")
        rows+=("| $name | refused: \`${message}\` |")
    else
        broken=$((broken + 1))
        rows+=("| $name | **BROKEN** (exit $status, $lines lines on stderr) |")
    fi
done
{
    echo "# fio's example job files"
    echo
    echo "Written by \`tools/fio-examples.sh\` with $("$hybrio" --version) on the $(ls "$examples"/*.fio | wc -l) job files of Debian's fio-examples $(dpkg-query -W -f='${Version}' fio-examples 2>/dev/null || echo '?')."
    echo "Each is read with \`hybrio --showcmd\` (parse and check every option, no I/O), with the environment variables some of them expect set to plausible values (see the script)."
    echo
    echo "$parsed parse, $refused are refused with one line, $broken broken."
    echo
    echo "| job file | outcome |"
    echo "|---|---|"
    printf '%s\n' "${rows[@]}"
} > "$out"
echo "fio-examples.sh: $parsed parse, $refused refused, $broken broken; wrote $out" >&2
[ "$broken" = 0 ]
