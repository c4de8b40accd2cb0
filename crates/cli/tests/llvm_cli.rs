//! The binary on LLVM IR and on graph caches: `cfg stats` of a `.ll`,
//! `cfg build` to a `.pmcfg` that gives the same graph, and a corrupt or
//! truncated cache rejected with exit code 2 and one clear line.

mod common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_postmortem"))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../llvm/tests/data")
        .join(name)
}

fn scratch(tag: &str) -> PathBuf {
    common::scratch(&format!("llvm-cli-{tag}"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run postmortem")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// `cfg stats --format json` without the timing and allocation figures.
fn counts(cfg: &Path) -> Value {
    let o = run(&[
        "cfg",
        "stats",
        "--cfg",
        cfg.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(
        o.status.success(),
        "cfg stats {}: {}",
        cfg.display(),
        stderr(&o)
    );
    let mut v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let m = v.as_object_mut().unwrap();
    m.remove("parse_ms");
    m.remove("heap_bytes");
    v
}

#[test]
fn cfg_stats_reads_llvm_ir_and_notes_the_front_ends_diagnostics() {
    let ll = fixture("indirect.ll");
    let o = run(&["cfg", "stats", "--cfg", ll.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.lines()
            // 39 of the program, and 11 of the external code an unresolved
            // indirect call may run (entry, dispatch, exit and a call to
            // each of the 8 address-taken functions).
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["nodes", "50"]),
        "{out}"
    );
    assert!(out.contains("start       main:entry"), "{out}");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("postmortem: note: llvm front-end: 10 functions, 50 nodes"),
        "{err}"
    );
    assert!(err.contains("2 of 3 indirect calls resolved"), "{err}");
}

#[test]
fn cfg_build_writes_a_cache_with_the_same_graph() {
    let dir = scratch("build");
    for name in ["calls.ll", "indirect.ll", "external.ll", "invoke.ll"] {
        let ll = fixture(name);
        let cache = dir.join(name.replace(".ll", ".pmcfg"));
        let o = run(&[
            "cfg",
            "build",
            ll.to_str().unwrap(),
            "-o",
            cache.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).starts_with(&format!("wrote {}:", cache.display()))
        );
        assert_eq!(counts(&ll), counts(&cache), "{name}");
        // A cache loads without the front-end: no note.
        let o = run(&["cfg", "stats", "--cfg", cache.to_str().unwrap()]);
        assert_eq!(stderr(&o), "");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn analyze_takes_llvm_ir_and_caches_alike() {
    let dir = scratch("analyze");
    let ll = fixture("calls.ll");
    let cache = dir.join("calls.pmcfg");
    assert!(run(&[
        "cfg",
        "build",
        ll.to_str().unwrap(),
        "-o",
        cache.to_str().unwrap()
    ])
    .status
    .success());
    let report = dir.join("report.json");
    std::fs::write(&report, r#"{"crash": ["f:12:3"]}"#).unwrap();
    let labels = |cfg: &Path| {
        let o = run(&[
            "analyze",
            "--cfg",
            cfg.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["nodes"].clone(), v["lines"].clone())
    };
    let (nodes, lines) = labels(&ll);
    assert_eq!((nodes.clone(), lines.clone()), labels(&cache));
    // The crash is in f: its first call surely ran, the second may have.
    let ids = |k: &str| -> Vec<String> {
        nodes[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert!(ids("yes").contains(&"main:4:3".to_string()), "{nodes}");
    assert!(ids("maybe").contains(&"main:4:10".to_string()), "{nodes}");
    assert!(ids("no").contains(&"main:exit".to_string()), "{nodes}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_corrupt_or_truncated_cache_exits_2_with_one_clear_line() {
    let dir = scratch("corrupt");
    let cache = dir.join("calls.pmcfg");
    assert!(run(&[
        "cfg",
        "build",
        fixture("calls.ll").to_str().unwrap(),
        "-o",
        cache.to_str().unwrap()
    ])
    .status
    .success());
    let good = std::fs::read(&cache).unwrap();

    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x10;
    let bad = dir.join("flipped.pmcfg");
    std::fs::write(&bad, &flipped).unwrap();
    let o = run(&["cfg", "stats", "--cfg", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "postmortem: {}: corrupt graph cache: checksum mismatch: ",
            bad.display()
        )) && err.contains("postmortem cfg build"),
        "{err}"
    );

    let cut = dir.join("cut.pmcfg");
    std::fs::write(&cut, &good[..good.len() - 5]).unwrap();
    let o = run(&["cfg", "stats", "--cfg", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "postmortem: {}: truncated graph cache",
            cut.display()
        )),
        "{err}"
    );

    // Not a cache at all, but named like one.
    let junk = dir.join("junk.pmcfg");
    std::fs::write(&junk, "<graphml/>").unwrap();
    let o = run(&["cfg", "stats", "--cfg", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "postmortem: {}: not a postmortem graph cache (bad magic bytes)\n",
            junk.display()
        )
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn malformed_llvm_ir_exits_2_with_one_line() {
    let dir = scratch("badir");
    let bad = dir.join("bad.ll");
    std::fs::write(&bad, "define i32 @main() {\n  ret i32 %undefined\n}\n").unwrap();
    let o = run(&["cfg", "stats", "--cfg", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "postmortem: {}: not LLVM 14 IR or bitcode",
            bad.display()
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
