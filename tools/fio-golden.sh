#!/usr/bin/env bash
# Captures what fio reports for each case of crates/hybrio-bench/tests/fio-3.33/golden/
# (a job file CASE.fio, or a command line CASE.args with one argument per line; CASE.env
# holds VAR=value lines for the environment), the fixtures the golden test compares
# hybrio against:
#   CASE.out    fio's normal output (its job lines: name, group, rw, bs, engine, depth)
#   CASE.json   fio's JSON (jobs, groups, options as given, bytes moved, depth)
#   CASE.files  the files the JSON run laid out, "name size" per line
# Each run is in an empty scratch directory holding a copy of the inputs.
#
#   tools/fio-golden.sh [FIO]     (fio 3.33: apt-get install fio)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
fio=${1:-fio}
golden=$here/crates/hybrio-bench/tests/fio-3.33/golden
"$fio" --version | grep -qx 'fio-3.33' || { echo "fio-golden.sh: needs fio 3.33, found $("$fio" --version)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
inputs() { find "$golden" -maxdepth 1 -type f \( -name '*.fio' -o -name '*.args' -o -name '*.inc' -o -name '*.env' \); }
for case_file in "$golden"/*.fio "$golden"/*.args; do
    name=$(basename "${case_file%.*}")
    if [ "${case_file##*.}" = args ]; then mapfile -t args < "$case_file"; else args=("$name.fio"); fi
    env_vars=()
    [ -f "$golden/$name.env" ] && mapfile -t env_vars < "$golden/$name.env"
    for format in normal json; do
        dir=$work/$name-$format
        mkdir "$dir"
        inputs | xargs cp -t "$dir"
        (cd "$dir" && env "${env_vars[@]}" "$fio" --output-format=$format "${args[@]}") > "$dir.stdout"
    done
    cp "$work/$name-normal.stdout" "$golden/$name.out"
    cp "$work/$name-json.stdout" "$golden/$name.json"
    (cd "$work/$name-json" && find . -type f ! -name '*.fio' ! -name '*.args' ! -name '*.inc' ! -name '*.env' \
        -printf '%P %s\n' | LC_ALL=C sort) > "$golden/$name.files"
    echo "$name: $(grep -c '(g=' "$golden/$name.out") job line(s), $(wc -l < "$golden/$name.files") file(s)"
done
