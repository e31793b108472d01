#!/usr/bin/env bash
# Writes crates/hybrio-bench/src/options/fio_names.rs: every option name and alias
# that the given fios know (their general options and every engine's), and their
# engines, so that hybrio can tell "an option or engine fio has that hybrio does not
# implement" from a typo. Names of every version given are kept: a job file written
# for fio 3.33 (Debian's) or for fio 3.42 reads as a fio job file.
#
#   tools/fio-option-names.sh [FIO ...]   (default: fio on the path, 3.33, and fio 3.42
#                                          as ../shared/fio/build.sh builds it)
# The output is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=$here/crates/hybrio-bench/src/options/fio_names.rs
if [ $# -eq 0 ]; then
    set -- fio "$("$here/../shared/fio/build.sh")"
fi
versions=$(for fio in "$@"; do "$fio" --version; done | paste -sd, | sed 's/,/, /g')
# Engines fio 3.33 and 3.42 document (HOWTO, examples/) that a build here leaves out
# (no library for them): a job file naming one is still a fio job file, refused as
# unsupported, not as a typo.
extra_engines="dev-dax dfs gfapi gfapi_async http ime_aio ime_psync ime_psyncv libblkio
libcufile libhdfs libiscsi libpmem librpma_apm_client librpma_apm_server
librpma_gpspm_client librpma_gpspm_server nbd nfs pmemblk rados rbd rdma solarisaio
windowsaio xnvme"
names=$(mktemp)
# Options fio 3.33 reads that its help does not list: the nfs engine's (left out of
# Debian's build) and `threads` (fio's parser takes it; examples/steadystate.fio uses it).
printf '%s\n' nfs_url threads >> "$names"
# `--cmdhelp=all` lists general options one per line ("name : help"), indented
# when they belong to a category; `--enghelp=ENGINE` lists an engine's options.
engines=$(mktemp)
trap 'rm -f "$names" "$engines"' EXIT
for fio in "$@"; do
    "$fio" --cmdhelp=all | sed -n 's/^ *\([a-z0-9_]*\) *: .*/\1/p' >> "$names"
    "$fio" --enghelp | tail -n +2 | tr -d '\t ' >> "$engines"
    for engine in $("$fio" --enghelp | tail -n +2); do
        "$fio" --enghelp="$engine" 2>/dev/null | sed -n 's/^ *\([a-z0-9_]*\) *: .*/\1/p' >> "$names" || true
    done
    # `--cmdhelp=all` leaves out the options it hides (sprandom's spr_op, ...):
    # every name `--cmdhelp=NAME` describes is one.
    "$fio" --cmdhelp=all >/dev/null
    for name in $(strings "$fio" | grep -x '[a-z][a-z0-9_]*' | sort -u); do
        if "$fio" --cmdhelp="$name" 2>/dev/null | head -1 | grep -q "^ *$name: "; then
            echo "$name" >> "$names"
        fi
    done
    # Aliases are shown by `--cmdhelp=NAME` as "alias: other".
    for name in $(sort -u "$names"); do
        "$fio" --cmdhelp="$name" 2>/dev/null | sed -n 's/^ *alias: *\([a-z0-9_]*\)$/\1/p' >> "$names" || true
    done
done
{
    echo "//! Every option name and alias fio knows ($versions; general and engine options),"
    echo "//! and its engines, sorted. Written by tools/fio-option-names.sh; do not edit."
    echo
    echo "/// fio's option names and aliases, sorted for binary search."
    echo "pub static FIO_OPTION_NAMES: &[&str] = &["
    LC_ALL=C sort -u "$names" | grep -v '^$' | sed 's/.*/    "&",/'
    echo "];"
    echo
    echo "/// The engines fio lists in \`--enghelp\`, sorted for binary search."
    echo "pub static FIO_ENGINES: &[&str] = &["
    { cat "$engines"; printf '%s\n' $extra_engines; } |
        LC_ALL=C sort -u | grep -v '^$' | sed 's/.*/    "&",/'
    echo "];"
} > "$out"
echo "wrote $out" >&2
