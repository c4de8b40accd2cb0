#!/usr/bin/env bash
# From a real crash to an annotated source: compiles figure1.c, runs it to
# its crash (stdout is the log, gdb gives the backtrace), and asks
# postmortem what ran. Everything happens in a scratch directory: $OUT if
# set, else a new temporary directory, whose name is printed at the end.
#
#   examples/figure1/run.sh                 # from anywhere
#   POSTMORTEM=path/to/postmortem OUT=/tmp/f1 examples/figure1/run.sh
#
# postmortem is $POSTMORTEM, else the one on PATH, else built with cargo
# from this checkout. Needs clang-14 and gdb. crates/cli/tests/e2e.rs runs
# this script and checks the files it writes:
#
#   figure1.bc figure1   the LLVM IR (the graph) and the program
#   out.log              what the program printed before it crashed
#   bt.txt               gdb's backtrace of the crash
#   analysis.txt         analyze --solver fsa (text)
#   analysis-fsa.json    analyze --solver fsa --format json
#   analysis-utl.json    analyze (utl) --format json
#   compare.txt          analyze --compare fsa,utl --expect gt
#   annotate.txt         the source, every line marked Yes / No / Maybe
#   figure1.lcov         the same as an LCOV tracefile
#   report/index.html    the HTML report (one page per source file)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
args=(5) # COUNT=5 and no NAME: C prints "Processed 5 items", bar crashes

for tool in clang-14 gdb; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "run.sh: $tool is required but not installed" >&2
    exit 1
  fi
done

if [[ -n "${POSTMORTEM:-}" ]]; then
  pm=("$POSTMORTEM")
elif command -v postmortem >/dev/null 2>&1; then
  pm=(postmortem)
else
  pm=(cargo run --quiet --release -p postmortem --manifest-path "$here/../../Cargo.toml" --)
fi

out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/figure1.XXXXXX")}
mkdir -p "$out"
cp "$here/figure1.c" "$out/"
cd "$out"

# 1. Build: the IR for postmortem, the program to crash.
clang-14 -g -O0 -emit-llvm -c figure1.c -o figure1.bc
clang-14 -g -O0 figure1.c -o figure1

# 2. Crash it: its standard output is the log ...
status=0
./figure1 "${args[@]}" >out.log 2>/dev/null || status=$?
if [[ $status -lt 128 ]]; then
  echo "run.sh: ./figure1 ${args[*]} exited with $status instead of crashing" >&2
  exit 1
fi
# ... and gdb, running it again on the same input, gives the backtrace.
gdb -batch -ex run -ex bt --args ./figure1 "${args[@]}" >bt.txt 2>&1 </dev/null || true
if ! grep -q '^#0 ' bt.txt; then
  echo "run.sh: gdb printed no backtrace (can it trace processes here?):" >&2
  cat bt.txt >&2
  exit 1
fi

# 3. What ran? The log line matches two printf calls, so it needs --solver
#    fsa; utl drops that "one of these" observation and lists it as weakened.
fail=(--cfg figure1.bc --backtrace bt.txt --log out.log)
"${pm[@]}" analyze "${fail[@]}" --solver fsa >analysis.txt
"${pm[@]}" analyze "${fail[@]}" --solver fsa --format json >analysis-fsa.json
"${pm[@]}" analyze "${fail[@]}" --solver utl --format json >analysis-utl.json
"${pm[@]}" analyze "${fail[@]}" --compare fsa,utl --expect gt >compare.txt
"${pm[@]}" analyze "${fail[@]}" --solver fsa --format annotate >annotate.txt
"${pm[@]}" analyze "${fail[@]}" --solver fsa --format lcov >figure1.lcov
"${pm[@]}" analyze "${fail[@]}" --solver fsa --format html -o report >/dev/null

cat annotate.txt
echo
echo "run.sh: results in $out (open $out/report/index.html)"
