#!/usr/bin/env bash
# What the evidence stages (values read from the core, stack residue)
# cost and decide, over the real-program harness's cores (issue 35,
# part 4): each core of target/realprogs/*/runs/*/ (made by
# scripts/real-programs.sh) is analysed three ways from a cached graph,
# whole process, one after the other on this machine:
#   base     --no-values --no-residue
#   default  what `analyze --core` does
#   all      --value-budget 0 (every value staged, no time budget)
# and the Markdown table gives wall time and peak memory of each, the
# default's ratios to the base, and how many of the labels that values
# and residue decide (all minus base) the default keeps.
# Needs a release build (`cargo build --release -p postmortem`) and the
# harness's cores (REALPROGS=bzip2 REALPROGS_POINTS=3
# scripts/real-programs.sh makes bzip2's plain, function-flag, block-flag
# and -O2 cores). Extra arguments go to every analysis.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pm="$root/target/release/postmortem"
[ -x "$pm" ] || { echo "build first: cargo build --release -p postmortem" >&2; exit 2; }
export POSTMORTEM_LLVM="${POSTMORTEM_LLVM:-$root/target/release/postmortem-llvm}"
shopt -s nullglob
cores=("$root"/target/realprogs/*/runs/*/core-*)
[ ${#cores[@]} -gt 0 ] || { echo "no harness cores: run scripts/real-programs.sh first" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for core in "${cores[@]}"; do
  mode=${core##*/core-}
  run=$(dirname "$core")
  prog=$(basename "$(dirname "$(dirname "$run")")")
  build="$root/target/realprogs/$prog/sancov-$mode"
  [ -f "$build/prog.bc" ] && [ -x "$build/prog" ] || continue
  graph="$dir/$prog-$mode.pmcfg"
  [ -f "$graph" ] || "$pm" cfg build "$build/prog.bc" -o "$graph" > /dev/null 2>&1
  name="$prog $(basename "$run") $mode"
  for how in base default all; do
    case $how in
      base) extra=(--no-values --no-residue) ;;
      default) extra=() ;;
      all) extra=(--value-budget 0) ;;
    esac
    out="$dir/$(echo "$name" | tr ' ' _).$how"
    /usr/bin/time -f "%e %M" -o "$out.time" "$pm" analyze --cfg "$graph" --core "$core" \
      --binary "$build/prog" --format json "${extra[@]}" "$@" > "$out.json" 2> /dev/null || true
    echo "$name" > "$out.name"
  done
done
python3 - "$dir" <<'EOF'
import glob, json, os, sys
d = sys.argv[1]
print("| core | base: time, peak | default: time, peak | ratio time, peak | every value: time | labels from evidence kept by default |")
print("|---|---|---|---|---|---|")
rt, rm, kept_all, gained_all = [], [], 0, 0
for n in sorted(glob.glob(os.path.join(d, "*.base.name"))):
    stem = n[: -len(".base.name")]
    def load(how):
        t, kb = open(f"{stem}.{how}.time").read().split()[-2:]
        try:
            c = json.load(open(f"{stem}.{how}.json"))["counts"]
            decided = c["yes"] + c["no"]
        except Exception:
            decided = None
        return float(t), int(kb) / 1024, decided
    b, de, a = load("base"), load("default"), load("all")
    if None in (b[2], de[2], a[2]):
        print(f"| {open(n).read().strip()} | failed | | | | |")
        continue
    gain, kept = a[2] - b[2], de[2] - b[2]
    kept_all += kept; gained_all += gain
    rt.append(de[0] / max(b[0], 0.01)); rm.append(de[1] / b[1])
    share = f"{kept} of {gain} ({100 * kept / gain:.0f}%)" if gain else f"{kept} of 0"
    print(f"| {open(n).read().strip()} | {b[0]:.2f} s, {b[1]:.0f} MiB | {de[0]:.2f} s, {de[1]:.0f} MiB "
          f"| {rt[-1]:.1f}x, {rm[-1]:.1f}x | {a[0]:.2f} s | {share} |")
if rt:
    g = lambda xs: __import__("math").prod(xs) ** (1 / len(xs))
    print(f"\n{len(rt)} cores; default over base, geometric mean: {g(rt):.1f}x time, {g(rm):.1f}x peak; "
          f"labels from evidence kept: {kept_all} of {gained_all}"
          + (f" ({100 * kept_all / gained_all:.1f}%)" if gained_all else ""))
EOF
