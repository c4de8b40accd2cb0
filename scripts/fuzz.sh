#!/bin/sh
# Runs every cargo-fuzz target (or the ones named) for SECONDS each, one
# after the other, at low priority, keeping each corpus under
# fuzz/corpus/<target> (committed). A crash stops that target only: it is
# saved under fuzz/artifacts/<target>/ and listed at the end.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      # default: 60 s each
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# Logs: fuzz/logs/<target>.log (not committed); the last line of each
# run ("Done N runs in S second(s)") is printed.
set -u
secs=${1:-60}
[ $# -gt 0 ] && shift
cd "$(dirname "$0")/../fuzz" || exit 2
targets=${*:-$(cargo +nightly fuzz list)}
mkdir -p logs
# Inputs larger than this are not useful for the readers (and slow).
max_len() {
    case $1 in
        graphml | pmcfg) echo 16384 ;;
        native) echo 65536 ;;
        solvers) echo 16 ;;
        *) echo 4096 ;;
    esac
}
failed=""
for t in $targets; do
    mkdir -p "corpus/$t"
    seeds=""
    [ -d "seeds/$t" ] && seeds="seeds/$t"
    dict=""
    [ -f "$t.dict" ] && dict="-dict=$t.dict"
    echo "== $t: ${secs}s" >&2
    # shellcheck disable=SC2086
    if ! nice -n 19 cargo +nightly fuzz run "$t" "corpus/$t" $seeds -- \
        -max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=20 \
        -rss_limit_mb=3072 -print_final_stats=1 $dict >"logs/$t.log" 2>&1; then
        failed="$failed $t"
    fi
    grep -E "^Done|^stat::number_of_executed_units|^stat::new_units_added|crash-|timeout-|oom-" "logs/$t.log" | sed "s/^/  $t: /" >&2
done
if [ -n "$failed" ]; then
    echo "fuzz: failures in:$failed (see fuzz/artifacts/ and fuzz/logs/)" >&2
    exit 1
fi
