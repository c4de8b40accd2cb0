//! The injected-bug benchmark's representative part (issue 36): five of
//! bzip2's bugs (`realprogs/bugs/bzip2.json`) run through
//! `scripts/why-bench.py` with this build of postmortem, and `why` must
//! rank each root cause first: `bz-09` (a field cleared in another
//! function, read through another struct's pointer) and `bz-02` (a loop
//! bound that runs once more, a divisor of zero, read from its stack
//! slot); and among the first three: `bz-03` (an initialisation a wrong
//! condition skipped), `bz-08` (an assignment moved into a branch that
//! empty input does not take) and `bz-10` (an early return that leaves
//! an out-parameter unset). The whole benchmark
//! (32 bugs, bzip2, Lua and lz4) is `scripts/why-bench.py`. Needs
//! python3, clang-14, llvm-link-14 and gdb (.ci/run installs them) and
//! bzip2's sources from crates.io (realprogs/Cargo.toml).

mod common;
use common::{require, show};
use std::path::Path;
use std::process::Command;

#[test]
fn why_ranks_the_root_causes_of_injected_bzip2_bugs_first() {
    for t in ["python3", "clang-14", "llvm-link-14", "gdb"] {
        require(t);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // (bug, the worst rank its root cause may have)
    let ranks = [
        ("bz-09-next-in-cleared", 1),
        ("bz-02-npart-loop", 1),
        ("bz-03-bzfree-default", 3),
        ("bz-08-zbits-empty-input", 3),
        ("bz-10-unused-out-param", 3),
    ];
    let bugs: Vec<&str> = ranks.iter().map(|r| r.0).collect();
    let o = Command::new("python3")
        .current_dir(&root)
        .arg("scripts/why-bench.py")
        .args(["bzip2", "--bug", &bugs.join(",")])
        .env("PM", env!("CARGO_BIN_EXE_postmortem"))
        .env("POSTMORTEM_LLVM", env!("CARGO_BIN_EXE_postmortem-llvm"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    for (bug, worst) in ranks {
        let row = table
            .lines()
            .find(|l| l.contains(&format!("| {bug} |")))
            .unwrap_or_else(|| panic!("no row for {bug}: {table}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // | program | bug | kind | signal | root cause | rank | ...
        let rank: Option<usize> = cells[6].parse().ok();
        assert!(
            rank.is_some_and(|r| r <= worst),
            "{bug}: {row}\n{}",
            show(&o)
        );
    }
}
