#!/usr/bin/env bash
# What the cases of variables whose value is not known add (issue 36,
# item 3: path sensitivity from the program's own branch tests; see
# crates/formats/src/correlate.rs), over the real-program harness's
# crashes: each plain `-O0 -g` crash of target/realprogs/*/runs/*/ (made
# by scripts/real-programs.sh) is analysed from gdb's backtrace
# (bt-plain.txt) and from its plain core, with --no-correlations and
# with --correlations, from a cached graph, whole process, one after the
# other. The Markdown table gives the lines decided (Yes or No, over
# every line of the program) each way, and wall time and peak memory.
# Needs a release build (`cargo build --release -p postmortem`). Extra
# arguments go to every analysis.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pm="$root/target/release/postmortem"
[ -x "$pm" ] || { echo "build first: cargo build --release -p postmortem" >&2; exit 2; }
export POSTMORTEM_LLVM="${POSTMORTEM_LLVM:-$root/target/release/postmortem-llvm}"
shopt -s nullglob
runs=("$root"/target/realprogs/*/runs/*/)
[ ${#runs[@]} -gt 0 ] || { echo "no harness runs: run scripts/real-programs.sh first" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for run in "${runs[@]}"; do
  run=${run%/}
  prog=$(basename "$(dirname "$(dirname "$run")")")
  build="$root/target/realprogs/$prog/sancov-plain"
  [ -f "$build/prog.bc" ] && [ -x "$build/prog" ] || continue
  graph="$dir/$prog.pmcfg"
  [ -f "$graph" ] || "$pm" cfg build "$build/prog.bc" -o "$graph" > /dev/null 2>&1
  for input in backtrace core; do
    case $input in
      backtrace) [ -f "$run/bt-plain.txt" ] || continue; what=(--backtrace "$run/bt-plain.txt") ;;
      core) [ -f "$run/core-plain" ] || continue; what=(--core "$run/core-plain" --binary "$build/prog") ;;
    esac
    name="$prog $(basename "$run") $input"
    for how in without with; do
      case $how in
        without) extra=(--no-correlations) ;;
        with) extra=(--correlations) ;;
      esac
      out="$dir/$(echo "$name" | tr ' ' _).$how"
      /usr/bin/time -f "%e %M" -o "$out.time" "$pm" analyze --cfg "$graph" "${what[@]}" \
        --format json "${extra[@]}" "$@" > "$out.json" 2> /dev/null || true
      echo "$name" > "$out.name"
    done
  done
done
python3 - "$dir" <<'PY'
import glob, json, os, sys
d = sys.argv[1]
print("| crash, input | lines decided without | with the cases | gained | variables staged (used) | time, peak without | with |")
print("|---|---|---|---|---|---|---|")
tot = {"without": 0, "with": 0, "lines": 0}
for n in sorted(glob.glob(os.path.join(d, "*.without.name"))):
    stem = n[: -len(".without.name")]
    def load(how):
        t, kb = open(f"{stem}.{how}.time").read().split()[-2:]
        try:
            j = json.load(open(f"{stem}.{how}.json"))
        except Exception:
            return float(t), int(kb) / 1024, None, None, {}
        dec = sum(len(f["yes"]) + len(f["no"]) for f in j["lines"].values())
        all_ = sum(len(f["yes"]) + len(f["no"]) + len(f["maybe"]) for f in j["lines"].values())
        return float(t), int(kb) / 1024, dec, all_, j.get("solver_stats", {})
    a, b = load("without"), load("with")
    name = open(n).read().strip()
    if a[2] is None or b[2] is None:
        print(f"| {name} | failed | | | | | |")
        continue
    tot["without"] += a[2]; tot["with"] += b[2]; tot["lines"] += a[3]
    st = b[4]
    print(f"| {name} | {a[2]} of {a[3]} | {b[2]} | {b[2] - a[2]:+d} | {st.get('cases_staged', 0)} ({st.get('cases_used', 0)}) "
          f"| {a[0]:.2f} s, {a[1]:.0f} MiB | {b[0]:.2f} s, {b[1]:.0f} MiB |")
if tot["lines"]:
    print(f"\nlines decided: {tot['without']} -> {tot['with']} of {tot['lines']} "
          f"({100 * tot['without'] / tot['lines']:.1f}% -> {100 * tot['with'] / tot['lines']:.1f}%)")
PY
