//! What killed the process, from the core (issue 36, step 1): the
//! signal and its code, the faulting instruction with the registers of
//! its operand, and the crash frame's variables that held the bad value.
//! A NULL `e` in `e->val` and a division by a zero `b`, each from a gdb
//! core of a real build, checked against what the program did. Needs
//! clang-14 and gdb (.ci/run installs them).

mod common;
use common::{gdb, require, scratch, sh, show};
use serde_json::Value;
use std::process::Command;

const SRC: &str = include_str!("data/fault/lookup.c");

#[test]
fn the_core_names_the_signal_the_instruction_and_the_bad_value() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = scratch("fault");
    std::fs::write(dir.join("lookup.c"), SRC).unwrap();
    sh(
        &dir,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", "lookup.c", "-o", "prog.bc"],
    );
    sh(&dir, "clang-14", &["-g", "-O0", "prog.bc", "-o", "prog"]);
    for (run, core) in [
        ("run > /dev/null", "core-null"),
        ("run d > /dev/null", "core-div"),
    ] {
        let o = gdb(
            &dir,
            "./prog",
            &[run, &format!("generate-core-file {core}")],
        );
        assert!(dir.join(core).exists(), "{}", show(&o));
    }
    let analyze = |core: &str, format: &str| {
        Command::new(env!("CARGO_BIN_EXE_postmortem"))
            .current_dir(&dir)
            .args([
                "analyze", "--cfg", "prog.bc", "--binary", "prog", "--core", core,
            ])
            .args(["--format", format])
            .output()
            .unwrap()
    };
    // `get("zz")`: `e` is NULL, `e->val` reads 8 bytes past it.
    let o = analyze("core-null", "json");
    assert!(o.status.success(), "{}", show(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v["fault"];
    assert_eq!(f["signal"], "SIGSEGV", "{f}");
    assert_eq!(f["reason"], "address not mapped", "{f}");
    assert_eq!(f["address"], 8, "{f}");
    assert_eq!(f["instruction"]["write"], false, "{f}");
    let regs = f["instruction"]["registers"].as_array().unwrap();
    assert!(regs.iter().any(|r| r[1] == 0), "{f}");
    let suspects: Vec<&str> = f["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        suspects.iter().any(|s| s.starts_with("`e` = 0x0")),
        "{suspects:?}"
    );
    let text = analyze("core-null", "text");
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(
        out.contains("crash:  SIGSEGV (address not mapped) reading 0x8"),
        "{out}"
    );
    // `ratio(10, 0)`: the divisor, read from memory, is `b`.
    let o = analyze("core-div", "json");
    assert!(o.status.success(), "{}", show(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v["fault"];
    assert_eq!(f["signal"], "SIGFPE", "{f}");
    assert_eq!(f["reason"], "integer division by zero", "{f}");
    assert_eq!(f["instruction"]["divisor"], 0, "{f}");
    assert!(
        f["suspects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("`b` = 0 ")),
        "{f}"
    );
    // The HTML index says it above the stack.
    let html = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(&dir)
        .args([
            "analyze",
            "--cfg",
            "prog.bc",
            "--binary",
            "prog",
            "--core",
            "core-null",
        ])
        .args(["--format", "html", "-o", "page"])
        .output()
        .unwrap();
    assert!(html.status.success(), "{}", show(&html));
    let index = std::fs::read_to_string(dir.join("page/index.html")).unwrap();
    assert!(index.contains("<b>Crash:</b> SIGSEGV"), "no crash line");
}
