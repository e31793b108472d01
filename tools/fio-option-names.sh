#!/usr/bin/env bash
# Writes crates/hybrio-bench/src/options/fio_names.rs: every option name and alias
# that the given fios know (their general options and every engine's), their
# engines, and the engines that list each engine option, so that hybrio can tell
# "an option or engine fio has that hybrio does not implement" from a typo, and
# say why it lacks an engine's option (what that engine needs). Names of every
# version given are kept: a job file written for fio 3.33 (Debian's) or for fio
# 3.42 reads as a fio job file.
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
# "OPTION ENGINE" for each engine option, nfs_url's too.
enginopts=$(mktemp)
printf '%s %s\n' nfs_url nfs >> "$enginopts"
# `--cmdhelp=all` lists general options one per line ("name : help"), indented
# when they belong to a category; `--enghelp=ENGINE` lists an engine's options.
engines=$(mktemp)
trap 'rm -f "$names" "$engines" "$enginopts"' EXIT
for fio in "$@"; do
    "$fio" --cmdhelp=all | sed -n 's/^ *\([a-z0-9_]*\) *: .*/\1/p' >> "$names"
    "$fio" --enghelp | tail -n +2 | tr -d '\t ' >> "$engines"
    for engine in $("$fio" --enghelp | tail -n +2); do
        "$fio" --enghelp="$engine" 2>/dev/null | sed -n 's/^ *\([a-z0-9_]*\) *: .*/\1/p' |
            tee -a "$names" | sed "s/\$/ $engine/" >> "$enginopts" || true
    done
    # `--cmdhelp=all` leaves out the options it hides (sprandom's spr_op, ...):
    # every name `--cmdhelp=NAME` describes is one. `strings` needs a path, not
    # the bare `fio` the default finds on the path.
    "$fio" --cmdhelp=all >/dev/null
    for name in $(strings "$(command -v "$fio")" | grep -x '[a-z][a-z0-9_]*' | sort -u); do
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
    echo
    echo "/// Each engine option (\`--enghelp=ENGINE\`) and the engines that list it, in the"
    echo "/// order \`--enghelp\` lists them, sorted by option for binary search."
    echo "pub static FIO_ENGINE_OPTIONS: &[(&str, &str)] = &["
    # One line per option, its engines in first-listed order, each once.
    awk '!seen[$0]++ { if (!($1 in engs)) { order[++n] = $1; engs[$1] = $2 } else engs[$1] = engs[$1] ", " $2 }
         END { for (i = 1; i <= n; i++) print order[i] "\t" engs[order[i]] }' "$enginopts" |
        LC_ALL=C sort -t "$(printf '\t')" -k1,1 | sed 's/^\(.*\)\t\(.*\)$/    ("\1", "\2"),/'
    echo "];"
} > "$out"
echo "wrote $out" >&2
