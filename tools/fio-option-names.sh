#!/usr/bin/env bash
# Writes crates/hybrio-bench/src/options/fio_names.rs: every option name and alias
# that the installed fio knows (its general options and every engine's), and its
# engines, so that hybrio can tell "an option or engine fio has that hybrio does not
# implement" from a typo.
# Run with fio 3.33 installed (apt-get install fio); the output is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/crates/hybrio-bench/src/options/fio_names.rs
version=$(fio --version)
# Engines fio 3.33 documents (HOWTO, examples/) that Debian's build leaves out: a job
# file naming one is still a fio job file, refused as unsupported, not as a typo.
extra_engines="dfs http ime_aio ime_psync ime_psyncv libblkio libcufile libhdfs libiscsi
librpma_apm_client librpma_apm_server librpma_gpspm_client librpma_gpspm_server nfs
solarisaio windowsaio xnvme"
names=$(mktemp)
trap 'rm -f "$names"' EXIT
# Options fio 3.33 reads that its help does not list: the nfs engine's (left out of
# Debian's build) and `threads` (fio's parser takes it; examples/steadystate.fio uses it).
printf '%s\n' nfs_url threads >> "$names"
# `--cmdhelp=all` lists general options one per line ("name : help"), indented
# when they belong to a category; `--enghelp=ENGINE` lists an engine's options.
fio --cmdhelp=all | sed -n 's/^ *\([a-z0-9_]*\) *: .*/\1/p' >> "$names"
for engine in $(fio --enghelp | tail -n +2); do
    fio --enghelp="$engine" 2>/dev/null | sed -n 's/^ *\([a-z0-9_]*\) *: .*/\1/p' >> "$names" || true
done
# Aliases are shown by `--cmdhelp=NAME` as "alias: other".
for name in $(sort -u "$names"); do
    fio --cmdhelp="$name" 2>/dev/null | sed -n 's/^ *alias: *\([a-z0-9_]*\)$/\1/p' >> "$names" || true
done
{
    echo "//! Every option name and alias fio knows ($version, general and engine options),"
    echo "//! and its engines, sorted. Written by tools/fio-option-names.sh; do not edit."
    echo
    echo "/// fio's option names and aliases, sorted for binary search."
    echo "pub static FIO_OPTION_NAMES: &[&str] = &["
    LC_ALL=C sort -u "$names" | grep -v '^$' | sed 's/.*/    "&",/'
    echo "];"
    echo
    echo "/// The engines fio lists in \`--enghelp\`, sorted for binary search."
    echo "pub static FIO_ENGINES: &[&str] = &["
    { fio --enghelp | tail -n +2 | tr -d '\t '; printf '%s\n' $extra_engines; } |
        LC_ALL=C sort -u | grep -v '^$' | sed 's/.*/    "&",/'
    echo "];"
} > "$out"
echo "wrote $out" >&2
