//! `--log-stream` on a real C program (issue 37): a key-value store logs
//! to stderr and prints one computed string to stdout with
//! `printf("%s\n", key)`, a format that fits every line. Taken as stderr,
//! the log is matched only to the calls that write there and decides
//! more; taken as stdout it is impossible; its `-O2` graph, where two
//! `fprintf` calls became one whose format is a `phi` of both strings,
//! matches every line. Needs clang-14 and gdb (.ci/run installs them).

mod common;
use common::{gdb, scratch, sh, show};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

const SRC: &str = include_str!("data/logs/kv.c");

fn pm(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Line labels of kv.c from `analyze --format json`.
fn labels(o: &Output) -> BTreeMap<u64, String> {
    assert_eq!(o.status.code(), Some(0), "{}", show(o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut out = BTreeMap::new();
    for (file, l) in v["lines"].as_object().unwrap() {
        if !file.ends_with("kv.c") {
            continue;
        }
        for label in ["yes", "no"] {
            for n in l[label].as_array().unwrap() {
                out.insert(n.as_u64().unwrap(), label.to_string());
            }
        }
    }
    out
}

#[test]
fn a_log_taken_as_one_stream_matches_only_its_calls() {
    let dir = scratch("log-streams");
    std::fs::write(dir.join("kv.c"), SRC).unwrap();
    sh(
        &dir,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", "kv.c", "-o", "kv.bc"],
    );
    sh(&dir, "clang-14", &["-g", "-O0", "kv.bc", "-o", "kv"]);
    sh(
        &dir,
        "clang-14",
        &["-g", "-O2", "-emit-llvm", "-c", "kv.c", "-o", "kv2.bc"],
    );
    // +a 1 +b 2 +a 3 ?a - ?zz -: `get("zz")` reads through NULL.
    let run = "run +a 1 +b 2 +a 3 ?a - ?zz - 2> err.txt > /dev/null";
    let bt = gdb(&dir, "./kv", &[run, "bt"]);
    std::fs::write(dir.join("bt.txt"), &bt.stdout).unwrap();
    let err = std::fs::read_to_string(dir.join("err.txt")).unwrap();
    assert!(err.contains("updated a") && err.contains("got 3"), "{err}");
    let analyze = |graph: &str, stream: &str| {
        pm(
            &dir,
            &[
                "analyze",
                "--cfg",
                graph,
                "--backtrace",
                "bt.txt",
                "--log",
                "err.txt",
                "--log-stream",
                stream,
                "--format",
                "json",
            ],
        )
    };
    let (any_out, stderr_out) = (analyze("kv.bc", "any"), analyze("kv.bc", "stderr"));
    // The JSON says how much the log told: taken as any stream, every
    // line may be `printf("%s\n")`'s too.
    let summary = |o: &Output| {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["logs"][0]["summary"].clone()
    };
    let (sa, se) = (summary(&any_out), summary(&stderr_out));
    assert_eq!(
        (sa["lines"].as_u64(), se["in_trace"].as_u64()),
        (Some(4), Some(4)),
        "{sa} {se}"
    );
    assert_eq!(sa["ambiguous"].as_u64(), Some(4), "{sa}");
    assert_eq!(se["ambiguous"].as_u64(), Some(0), "{se}");
    assert_eq!(se["other_streams"].as_u64(), Some(1), "{se}");
    // How many nodes each log decided: the count of decided nodes with
    // the log less the count without it (an analysis without --log).
    let decided = |o: &Output| {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["counts"]["yes"].as_u64().unwrap() + v["counts"]["no"].as_u64().unwrap()
    };
    let bare = pm(
        &dir,
        &[
            "analyze",
            "--cfg",
            "kv.bc",
            "--backtrace",
            "bt.txt",
            "--format",
            "json",
        ],
    );
    assert!(bare.status.success(), "{}", show(&bare));
    let by_log = |o: &Output| {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["logs_decided"].as_u64()
    };
    for o in [&any_out, &stderr_out] {
        assert_eq!(by_log(o), Some(decided(o) - decided(&bare)));
    }
    assert!(by_log(&stderr_out) > by_log(&any_out));
    let text = pm(
        &dir,
        &[
            "analyze",
            "--cfg",
            "kv.bc",
            "--backtrace",
            "bt.txt",
            "--log",
            "err.txt",
        ],
    );
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains("  log:    any stream: 4 of 4 lines in the trace; 4 of them match more than one call site") && text.contains(&format!("; it decided {} nodes", by_log(&any_out).unwrap())),
        "{text}"
    );
    let any = labels(&any_out);
    let stderr = labels(&stderr_out);
    // Both sound: what printed ran (lines 16, 21: updated, inserted;
    // 32: got), what never ran in this run is never Yes (33: bad op).
    for l in [&any, &stderr] {
        for line in [16, 21, 32] {
            assert_ne!(
                l.get(&line).map(String::as_str),
                Some("no"),
                "line {line}: {l:?}"
            );
        }
        assert_ne!(l.get(&33).map(String::as_str), Some("yes"), "{l:?}");
    }
    for (line, label) in &any {
        assert_eq!(
            stderr.get(line),
            Some(label),
            "line {line} decided differently"
        );
    }
    assert!(
        stderr.len() > any.len(),
        "stderr decides {} lines, any stream {}",
        stderr.len(),
        any.len()
    );
    // Taken as standard output, every line is `printf("%s\n", k)` of
    // `get` (line 26): `put`'s prints (line 21) are no longer known to
    // have run, as they are from stderr.
    let stdout = labels(&analyze("kv.bc", "stdout"));
    assert_eq!(
        stdout.get(&26).map(String::as_str),
        Some("yes"),
        "{stdout:?}"
    );
    assert_eq!(
        stderr.get(&21).map(String::as_str),
        Some("yes"),
        "{stderr:?}"
    );
    assert_ne!(
        stdout.get(&21).map(String::as_str),
        Some("yes"),
        "{stdout:?}"
    );
    // `suggest` says, for a print among its points, why the log did not
    // decide it: taken as any stream, `updated a` (line 16's `fprintf`)
    // may also be `get`'s `printf("%s\n")`.
    let sug = pm(
        &dir,
        &[
            "suggest",
            "--cfg",
            "kv.bc",
            "--backtrace",
            "bt.txt",
            "--log",
            "err.txt",
            "--log-stream",
            "any",
            "-k",
            "20",
            "--format",
            "json",
        ],
    );
    assert_eq!(sug.status.code(), Some(0), "{}", show(&sug));
    let v: Value = serde_json::from_slice(&sug.stdout).unwrap();
    let notes: Vec<&Value> = v["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["log"])
        .filter(|l| !l.is_null())
        .collect();
    assert!(
        notes.iter().any(|l| l["line"] == 16
            && l["why"]
                .as_str()
                .unwrap()
                .contains("other calls may have printed too")),
        "{v}"
    );
    // -O2: one `fprintf` of "inserted %s\n" or "updated %s\n".
    let o2 = analyze("kv2.bc", "stderr");
    let text = String::from_utf8_lossy(&o2.stderr);
    assert!(!text.contains("matches no format"), "{}", show(&o2));
    assert!(text.contains("4 of 4 lines in the trace"), "{}", show(&o2));
}
