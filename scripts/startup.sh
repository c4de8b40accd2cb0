#!/bin/sh
# Start-up cost of `postmortem analyze` on a small graph: the median
# wall time of RUNS runs and the peak resident memory (`/usr/bin/time -v`,
# maximum over the runs), for GraphML input and for the same graph from a
# `.pmcfg` cache. Not a test: numbers depend on the machine.
#
#   scripts/startup.sh [POSTMORTEM] [RUNS]
#
# POSTMORTEM defaults to target/release/postmortem; the graph is tcas
# (v1, failure 1138) from ../shared/data/pldi2017, or the GraphML and report
# given in $GRAPH and $REPORT.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
pm=${1:-$root/target/release/postmortem}
runs=${2:-20}
data=$root/../shared/data/pldi2017/tcas/v1/singleton
graph=${GRAPH:-$data/tcas.graphml}
report=${REPORT:-$data/1138-trace/data.json}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$pm" cfg build "$graph" -o "$tmp/g.pmcfg" >/dev/null

measure() { # label, graph
    : >"$tmp/ms"
    : >"$tmp/kb"
    i=0
    while [ $i -lt "$runs" ]; do
        s=$(date +%s%N)
        "$pm" analyze --cfg "$2" --report "$report" >/dev/null 2>&1
        e=$(date +%s%N)
        echo $(((e - s) / 1000)) >>"$tmp/ms"
        /usr/bin/time -v "$pm" analyze --cfg "$2" --report "$report" 2>&1 >/dev/null |
            sed -n 's/.*Maximum resident set size (kbytes): //p' >>"$tmp/kb"
        i=$((i + 1))
    done
    med=$(sort -n "$tmp/ms" | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m/1000}')
    kb=$(sort -n "$tmp/kb" | tail -1)
    printf '%-8s median %s ms over %d runs, peak RSS %.1f MB\n' "$1" "$med" "$runs" "$(echo "$kb" | awk '{print $1/1024}')"
}
echo "$pm"
measure graphml "$graph"
measure pmcfg "$tmp/g.pmcfg"
