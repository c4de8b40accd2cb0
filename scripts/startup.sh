#!/bin/sh
# Start-up cost of `postmortem analyze` on a small graph: the median wall
# time of RUNS runs and the peak resident memory (`/usr/bin/time -v`,
# the largest over RUNS runs), for GraphML input, for the same graph from
# a `.pmcfg` cache, and for `--version`. Not a test: the numbers depend on
# the machine and its load.
#
#   scripts/startup.sh [POSTMORTEM] [RUNS]
#
# POSTMORTEM defaults to target/release/postmortem; the graph is tcas
# (v1, failure 1138) from ../shared/data/pldi2017, or the GraphML and the
# report given in $GRAPH and $REPORT. Needs python3 (timing) and
# /usr/bin/time.
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
echo "$pm"
python3 - "$pm" "$runs" "$graph" "$tmp/g.pmcfg" "$report" <<'PY'
import statistics, subprocess, sys, time
pm, runs, graph, cache, report = sys.argv[1], int(sys.argv[2]), *sys.argv[3:]
def measure(label, args):
    ms, kb = [], []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([pm] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        ms.append((time.perf_counter() - t) * 1e3)
        out = subprocess.run(["/usr/bin/time", "-v", pm] + args, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True).stderr
        kb += [int(l.split(":")[1]) for l in out.splitlines() if "Maximum resident set size" in l]
    print(f"{label:9} median {statistics.median(ms):6.2f} ms over {runs} runs, peak RSS {max(kb) / 1024:5.1f} MB")
measure("graphml", ["analyze", "--cfg", graph, "--report", report])
measure("pmcfg", ["analyze", "--cfg", cache, "--report", report])
measure("--version", ["--version"])
PY
