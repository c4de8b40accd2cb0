#!/usr/bin/env bash
# The real-program soundness harness (issue 8, item 2), whole: builds Lua,
# bzip2, PCRE2, SQLite, lz4 and zstd (multi-threaded) with clang-14 (sources fetched from
# crates.io through realprogs/Cargo.toml) and nlohmann/json (C++, from
# Debian's nlohmann-json3-dev) with clang++-14 (builds cached in
# target/realprogs/), crashes each at its crash points under gdb, checks
# every Yes/No label of postmortem against llvm-cov, and prints the
# figures table (Markdown) and every unsound label.
# Needs clang-14 (and clang++-14), nlohmann-json3-dev, llvm-14
# (llvm-link, llvm-profdata, llvm-cov) and gdb (.ci/run installs them). The crashes and reports of each run are kept in
# target/realprogs/NAME/runs/. REALPROGS=NAME,... picks programs,
# REALPROGS_POINTS=N the crash points of each, REALPROGS_ARGS="--opt ..."
# adds options to every analysis (one that is off by default, checked
# against the same truth).
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --release -p postmortem --test real_programs -- --ignored --nocapture "$@"
