#!/usr/bin/env bash
# Runs fio 3.42's own job-file tests (t/run-fio-tests.py, tests 1-37) against a fio binary, as
# fio's developers run them, and prints how many passed. The harness is fio's, unchanged: it
# passes `--max-jobs=16 --output-format=... --output=...` and reads the output back.
#
#   tools/fio-tests.sh [BINARY]       (default: target/release/hybrio; or a fio, to compare)
#
# Needs the fio 3.42 tarball (../shared/fio/fio-3.42.tar.gz, or $FIO_TARBALL) and Python's
# statsmodels, which the harness imports: installed once into a venv under ~/.cache (PyPI).
# The artifacts of each test (its command, stdout, stderr, output) stay in a folder printed at
# the end, without the data files the jobs wrote (over 1 MiB: gigabytes in all);
# $FIO_TESTS_KEEP=0 removes the folder, $FIO_TESTS_KEEP=all keeps the data files too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tarball=${FIO_TARBALL:-$root/../shared/fio/fio-3.42.tar.gz}
binary=$(realpath "${1:-$root/target/release/hybrio}")
[ -x "$binary" ] || { echo "fio-tests: no executable at $binary (cargo build --release -p hybrio-bench)" >&2; exit 1; }
[ -f "$tarball" ] || { echo "fio-tests: no fio 3.42 tarball at $tarball (set FIO_TARBALL)" >&2; exit 1; }
venv=${FIO_TESTS_VENV:-$HOME/.cache/hybrio-fio-tests-venv}
if ! "$venv/bin/python" -c 'import statsmodels' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q statsmodels
fi
work=$(mktemp -d)
if [ "${FIO_TESTS_KEEP:-1}" = 0 ]; then trap 'rm -rf "$work"' EXIT; fi
tar -xzf "$tarball" -C "$work"
# The harness reads the features it checks tests against (libaio, ...) from a configured tree.
(cd "$work/fio-3.42" && echo "FIO_VERSION = fio-3.42" > FIO-VERSION-FILE &&
   ./configure --disable-native > "$work/configure.log" 2>&1) ||
   { echo "fio-tests: fio's configure failed, see $work/configure.log" >&2; exit 1; }
artifacts="$work/artifacts"
# t0009 needs 4 CPUs (the harness skips it on fewer); the others run here.
set +e
(cd "$work/fio-3.42" && "$venv/bin/python" t/run-fio-tests.py --fio "$binary" \
   --fio-root "$work/fio-3.42" --artifact-root "$artifacts" --run-only $(seq 1 37)) \
   > "$work/summary.txt" 2>&1
set -e
if [ "${FIO_TESTS_KEEP:-1}" != all ]; then find "$artifacts" -type f -size +1M -delete 2>/dev/null || true; fi
grep -E '^(test-|[0-9]+ test)|passed|failed|skipped' "$work/summary.txt" | tail -45
echo "fio-tests: $(basename "$binary"): $(grep -cE 'PASSED' "$work/summary.txt") passed of the tests 1-37; artifacts in $artifacts"
