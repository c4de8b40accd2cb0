#!/usr/bin/env bash
# The `postmortem batch` benchmark (issue 22): N crashes of one build of
# SQLite (the real-program harness's program and workload), the graph
# built once into a cache, then the batch timed with --jobs 1 and 2 and
# with N/4 crashes, printing wall time, crashes per second, peak RSS
# (/usr/bin/time -v) and the batch's overhead over the analyses (wall
# time over the sum of each crash's own report + recovery time, per job,
# minus 1: everything else counts as overhead, the Local labels and the
# JSON document included), with where it goes: the Local labels, building
# the JSON document (line labels included), serialising and writing the
# lines (summed over crashes), and the rest (graph load, coordination).
#
# The crashes are gdb backtraces at POINTS breakpoint hits of the
# workload (functions from rare to hot, at several hit counts), reused
# round-robin: every crash is analysed from scratch, so throughput does
# not depend on how many are distinct. MODE=core: gdb's cores at the same
# points instead (with the binary: build id checked, the stack unwound
# from the core, variables' values read), the issue's "cores of an
# SQLite-sized program".
#
#   [MODE=core] scripts/batch-bench.sh [N] [POSTMORTEM]
#
# N: crashes (default 1000). POSTMORTEM: the binary (default: a release
# build, made by cargo). Needs clang-14, llvm-link-14, gdb, python3 and
# the libsqlite3-sys sources fetched by realprogs/Cargo.toml
# (`cargo fetch --manifest-path realprogs/Cargo.toml`). Work files go to
# target/batch-bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
PM=${2:-}
MODE=${MODE:-backtrace}
# Work files of a mode: manifests, cache and outputs (core- in core mode).
P=; [ "$MODE" = core ] && P=core-
if [ -z "$PM" ]; then
    cargo build --release -p postmortem >&2
    PM=$PWD/target/release/postmortem
fi
W=$PWD/target/batch-bench
mkdir -p "$W"
SRC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/libsqlite3-sys-*/sqlite3 | head -1)
if [ ! -f "$W/sqlite.bc" ]; then
    cp "$SRC/sqlite3.c" "$SRC/sqlite3.h" realprogs/drivers/sqlite_main.c "$W/"
    (cd "$W" && for f in sqlite3.c sqlite_main.c; do
        clang-14 -g -O0 -emit-llvm -c -I. -DSQLITE_THREADSAFE=0 \
            -DSQLITE_OMIT_LOAD_EXTENSION -DSQLITE_OMIT_RANDOMNESS "$f" -o "${f%.c}.bc"
    done
    llvm-link-14 sqlite3.bc sqlite_main.bc -o sqlite.bc
    clang-14 -g -O0 sqlite.bc -o sqlite -lm)
fi
cp realprogs/inputs/workload.sql "$W/"
# Crash points: (function, hit).
POINTS="sqlite3ErrorMsg:1 sqlite3HaltConstraint:2 jsonObjectFunc:1 print_row:2
sqlite3VdbeExec:5 sqlite3VdbeExec:40 sqlite3Malloc:100 sqlite3Malloc:500
sqlite3_step:3 sqlite3_step:30 sqlite3RunParser:4 sqlite3RunParser:20
sqlite3BtreeInsert:3 sqlite3BtreeInsert:50 sqlite3ExprCodeTarget:10
sqlite3ExprCodeTarget:30 sqlite3Select:2 sqlite3Select:12 yy_reduce:50
yy_reduce:900"
mkdir -p "$W/bt" "$W/cores"
i=0
for p in $POINTS; do
    f=${p%%:*}
    hit=${p##*:}
    out="$W/bt/p$i.txt"
    if [ ! -s "$out" ]; then
        (cd "$W" && gdb -nx -batch -iex 'set debuginfod enabled off' \
            -ex "break $f" -ex "ignore 1 $((hit - 1))" \
            -ex 'run workload.sql > /dev/null' -ex bt ./sqlite > "$out" 2>/dev/null) || true
    fi
    core="$W/cores/p$i"
    if [ "$MODE" = core ] && [ ! -s "$core" ]; then
        (cd "$W" && gdb -nx -batch -iex 'set debuginfod enabled off' \
            -ex "break $f" -ex "ignore 1 $((hit - 1))" \
            -ex 'run workload.sql > /dev/null' -ex "generate-core-file $core" ./sqlite \
            > /dev/null 2>&1) || true
    fi
    if grep -q "^#0 " "$out" && { [ "$MODE" != core ] || [ -s "$core" ]; }; then
        i=$((i + 1))
    else
        rm -f "$out" "$core"
    fi
done
echo "crash points: $i" >&2
python3 - "$W" "$N" "$i" "$MODE" "$P" <<'EOF'
import sys
w, n, k, mode, p = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
for name, m in (("all", n), ("quarter", max(1, n // 4))):
    with open(f"{w}/{p}{name}.jsonl", "w") as f:
        for c in range(m):
            if mode == "core":
                f.write(f'{{"id": "c{c:05}", "core": "cores/p{c % k}", "binary": "sqlite"}}\n')
            else:
                f.write(f'{{"id": "c{c:05}", "backtrace": "bt/p{c % k}.txt"}}\n')
EOF
rm -rf "$W/${P}cache"
echo "building the graph into the cache ..." >&2
/usr/bin/time -f "graph build: %e s, peak %M KiB" "$PM" batch "$W/${P}quarter.jsonl" --shard 0/100000 \
    --cfg "$W/sqlite.bc" --cache "$W/${P}cache" -o /dev/null
run() { # name manifest jobs
    /usr/bin/time -v "$PM" batch "$W/$P$2.jsonl" --cfg "$W/sqlite.bc" --cache "$W/${P}cache" \
        --jobs "$3" --no-nodes -o "$W/$1.out" 2> "$W/$1.err"
    python3 - "$W" "$1" "$3" <<'EOF'
import json, re, sys
w, name, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
err = open(f"{w}/{name}.err").read()
wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", err)
h, m, s = wall.groups()
wall = int(h or 0) * 3600 + int(m) * 60 + float(s)
cpu = sum(float(re.search(rf"{k} time \(seconds\): ([\d.]+)", err).group(1)) for k in ("User", "System"))
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
ok = failed = 0
work = local = js = 0.0
for l in open(f"{w}/{name}.out"):
    v = json.loads(l)
    if "group" in v:
        continue
    if v["status"] == "ok":
        ok += 1
        t = v["timings_ms"]
        work += (t["parse_report"] + t["recover"]) / 1000
        local += t.get("local", 0) / 1000
        js += t.get("json", 0) / 1000
    else:
        failed += 1
over = wall / (work / jobs) - 1 if work else float("nan")
print(f"{name:<10} crashes {ok + failed:>5} (failed {failed})  jobs {jobs}  wall {wall:7.1f} s  "
      f"{(ok + failed) / wall:6.2f} crashes/s  cpu {cpu:7.1f} s  peak RSS {rss / 1024:6.1f} MiB  "
      f"analyses {work:7.1f} s  overhead {100 * over:5.1f}%")
ser = re.search(r"serialising lines ([\d.]+) s, waiting for the output ([\d.]+) s, writing lines and groups ([\d.]+) s", err)
ser, wait, write = (float(x) for x in ser.groups()) if ser else (0.0, 0.0, 0.0)
rest = wall * jobs - work - local - js - ser - wait - write
print(f"{'':<10} overhead per job, in % of the analyses: Local labels {100 * local / work:.2f}, "
      f"JSON document {100 * js / work:.2f}, serialising {100 * ser / work:.2f}, "
      f"waiting for the output {100 * wait / work:.2f}, writing {100 * write / work:.2f}, "
      f"rest {100 * rest / work:.2f}")
EOF
}
run "${P}j1" all 1
run "${P}j2" all 2
run "${P}q1" quarter 1
