//! Path sensitivity from the program's own branches (issue 36, item 3):
//! a variable whose value the report does not give, tested by two
//! branches with nothing that writes it between, goes the same way at
//! both. From gdb's backtrace of a real crash (no values at all), the
//! tests of `mode` and `level` before the crash's block are decided by
//! the tests that led to it; `step`, written between its two tests, is
//! not. Truth: the program is deterministic, run as `prog 2`.

mod common;

use common::{require, sh, show};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The line of `file` whose text contains `needle`.
fn line_of(file: &Path, needle: &str) -> u64 {
    let text = std::fs::read_to_string(file).unwrap();
    let i = text.lines().position(|l| l.contains(needle)).unwrap();
    i as u64 + 1
}

/// The label of `line` of `mode.c` ("yes", "no" or "maybe").
fn label(v: &Value, line: u64) -> &'static str {
    let files = v["lines"].as_object().unwrap();
    let (_, f) = files.iter().find(|(k, _)| k.ends_with("mode.c")).unwrap();
    for l in ["yes", "no", "maybe"] {
        if f[l]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x.as_u64() == Some(line))
        {
            return l;
        }
    }
    panic!("line {line} has no label")
}

/// `analyze` of gdb's backtrace, or with `extra` naming a core, of both.
fn analyze(dir: &Path, extra: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args([
            "analyze",
            "--cfg",
            "prog.bc",
            "--format",
            "json",
            // Every stage run, whatever the machine's load.
            "--value-budget",
            "0",
        ])
        .args(["--backtrace", "bt.txt"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    // Said on stderr when the cases are on.
    let said = String::from_utf8_lossy(&o.stderr).contains("split into the cases");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        said,
        v["solver_stats"].get("cases").is_some(),
        "{}",
        show(&o)
    );
    v
}

#[test]
fn a_variable_tested_twice_goes_the_same_way() {
    require("clang-14");
    require("gdb");
    let dir = common::scratch("correlations-mode");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/correlations/mode.c");
    std::fs::copy(&src, dir.join("mode.c")).unwrap();
    sh(
        &dir,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", "mode.c", "-o", "prog.bc"],
    );
    sh(&dir, "clang-14", &["-g", "-O0", "prog.bc", "-o", "prog"]);
    let o = common::gdb(
        &dir,
        "./prog",
        &["run 2 > /dev/null", "bt", "generate-core-file core"],
    );
    let bt = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(bt.contains("in work"), "{}", show(&o));
    std::fs::write(dir.join("bt.txt"), &bt).unwrap();
    let f = dir.join("mode.c");
    let setup = line_of(&f, "setup();");
    let other = line_of(&f, "other();");
    let deep = line_of(&f, "puts(\"deep\")");
    let step = line_of(&f, "puts(\"step\")");
    // By default from a backtrace; `--correlations` says the same.
    let with = analyze(&dir, &[]);
    assert_eq!(analyze(&dir, &["--correlations"])["lines"], with["lines"]);
    let without = analyze(&dir, &["--no-correlations"]);
    // The tests that led to the crash decide the earlier ones.
    assert_eq!(label(&with, setup), "yes");
    assert_eq!(label(&with, other), "no");
    assert_eq!(label(&with, deep), "yes");
    assert!(
        with["solver_stats"]["cases_used"].as_u64().unwrap() >= 2,
        "{}",
        with["solver_stats"]
    );
    // Without the cases the backtrace alone leaves them open.
    for l in [setup, other, deep] {
        assert_eq!(label(&without, l), "maybe", "line {l}");
    }
    // `step` was written between its tests: its first test stays open
    // (it went the other way: `puts("step")` did not run).
    assert_eq!(label(&with, step), "maybe");
    // From a core, whose values decide what the cases would, only when
    // asked for.
    let core = ["--core", "core", "--binary", "prog"];
    let plain = analyze(&dir, &core);
    assert!(
        plain["solver_stats"].get("cases").is_none(),
        "{}",
        plain["solver_stats"]
    );
    let asked = analyze(&dir, &[&core[..], &["--correlations"]].concat());
    assert!(
        asked["solver_stats"]["cases"].as_u64().unwrap() >= 1,
        "{}",
        asked["solver_stats"]
    );
    // Sound against the run: every decided line agrees with what ran.
    let truth_no = [other, step];
    for (l, want) in [(setup, "yes"), (deep, "yes"), (other, "no"), (step, "no")] {
        let got = label(&with, l);
        assert!(
            got == "maybe" || got == want,
            "line {l}: {got}, ran: {}",
            !truth_no.contains(&l)
        );
    }
}
