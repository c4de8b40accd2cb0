#!/usr/bin/env bash
# Reading values from a large core: builds a small C program that fills
# SIZE_MB (default 100) of heap, crashes it under gdb (a core of about
# SIZE_MB), and times `postmortem analyze --core` from a cached graph:
# the core read with every frame's variables and the globals
# (timings_ms.parse_report), the recovery, the whole process (time, peak
# memory). Needs clang-14, gdb and a release build
# (`cargo build --release -p postmortem`).
set -euo pipefail
SIZE_MB=${1:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
pm="$root/target/release/postmortem"
[ -x "$pm" ] || { echo "build first: cargo build --release -p postmortem" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/big.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int stage = 0;
static long total;
struct cfg { int mode; int level; };
static void fail(char *p, int depth) {
    int local_depth = depth;
    if (depth > 0) { stage = 3; fail(p, depth - 1); return; }
    p[0] = local_depth; /* p is NULL */
}
int main(int argc, char **argv) {
    struct cfg c = {1, 2};
    size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 100;
    char *buf = malloc(mb << 20);
    memset(buf, 7, mb << 20);
    stage = 1;
    for (size_t i = 0; i < (mb << 20); i += 4096) total += buf[i];
    if (c.mode == 1) { stage = 2; c.level = 5; }
    printf("%ld\n", total);
    fail(NULL, 1);
    return 0;
}
EOF
cd "$dir"
clang-14 -g -O0 -emit-llvm -c big.c -o big.bc
clang-14 -g -O0 big.bc -o big
gdb -nx -batch -iex "set debuginfod enabled off" -ex "run $SIZE_MB > /dev/null" \
    -ex "generate-core-file core" ./big > /dev/null 2>&1
"$pm" cfg build big.bc -o big.pmcfg > /dev/null 2>&1
/usr/bin/time -f "%e %M" -o time.txt "$pm" analyze --cfg big.pmcfg --core core --binary big \
    --format json > out.json 2> /dev/null
python3 - "$(stat -c %s core)" "$(cat time.txt)" <<'EOF'
import json, sys
v = json.load(open("out.json"))
t = v["timings_ms"]
secs, kb = sys.argv[2].split()
used = sum(1 for x in v.get("values", []) if x.get("unused") is None)
print("| core | read core + values | recover | whole process | peak memory | variables read (used) |")
print("|---|---|---|---|---|---|")
print(f"| {int(sys.argv[1]) / 2**20:.0f} MB | {t['parse_report']:.1f} ms | {t['recover']:.1f} ms "
      f"| {float(secs):.2f} s | {int(kb) / 1024:.0f} MB | {len(v.get('values', []))} ({used}) |")
EOF
