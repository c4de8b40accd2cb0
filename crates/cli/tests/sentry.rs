//! `--report` with a Sentry event (`crates/formats/src/sentry.rs`): a
//! native Sentry event of the `recursion` e2e program's crash (SIGFPE four
//! calls deep; written by hand from the real gdb backtrace of that crash,
//! `data/sentry/recursion-bt.txt`, with libc start-up frames `in_app:
//! false` and the program's `depth N` lines as breadcrumbs) gives the same
//! labels as `--backtrace recursion-bt.txt --log recursion.log`; malformed
//! events are one error line and exit 2. Needs clang-14.

mod common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

fn data(f: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(f)
}

/// The graph of `e2e/recursion.c`, built once.
fn graph() -> &'static Path {
    static BC: OnceLock<PathBuf> = OnceLock::new();
    BC.get_or_init(|| {
        let dir = common::scratch("sentry");
        std::fs::copy(data("e2e/recursion.c"), dir.join("recursion.c")).unwrap();
        let o = Command::new("clang-14")
            .current_dir(&dir)
            .args([
                "-g",
                "-O0",
                "-emit-llvm",
                "-c",
                "recursion.c",
                "-o",
                "recursion.bc",
            ])
            .output()
            .expect("clang-14 is required");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        dir.join("recursion.bc")
    })
}

fn pm(args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .args([
            "analyze",
            "--format",
            "json",
            "--cfg",
            graph().to_str().unwrap(),
        ])
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    o
}

fn lines(args: &[&str]) -> Value {
    let o = pm(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["lines"].clone()
}

#[test]
fn a_sentry_event_labels_like_its_backtrace_and_log() {
    let event = data("sentry/recursion-event.json");
    let bt = data("sentry/recursion-bt.txt");
    let log = data("sentry/recursion.log");
    let (event, bt, log) = (
        event.to_str().unwrap(),
        bt.to_str().unwrap(),
        log.to_str().unwrap(),
    );
    for solver in ["utl", "fsa"] {
        let from_event = lines(&["--solver", solver, "--report", event]);
        let from_bt = lines(&["--solver", solver, "--backtrace", bt, "--log", log]);
        assert_eq!(
            from_event, from_bt,
            "{solver}: the event and its backtrace + log differ"
        );
        // Both parts of the event count: without the log, or without the
        // stack, the labels differ.
        let bt_only = lines(&["--solver", solver, "--backtrace", bt]);
        assert_ne!(
            from_event, bt_only,
            "{solver}: the breadcrumbs changed nothing"
        );
        let text = std::fs::read_to_string(event).unwrap();
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v["exception"]["values"][0]["stacktrace"]["frames"]
            .as_array_mut()
            .unwrap()
            .truncate(4); // up to main only: the crash is main's call
        let dir = graph().parent().unwrap();
        let short = dir.join(format!("short-{solver}.json"));
        std::fs::write(&short, v.to_string()).unwrap();
        assert_ne!(
            lines(&["--solver", solver, "--report", short.to_str().unwrap()]),
            from_event,
            "{solver}: the stack changed nothing"
        );
    }
}

#[test]
fn malformed_sentry_events_are_one_line_and_exit_2() {
    let frame = r#"{"function":"apply","filename":"recursion.c","lineno":39}"#;
    let cases: Vec<(String, &str)> = vec![
        (r#"{"exception": 3}"#.into(), "$.exception"),
        (r#"{"exception": {"values": {}}}"#.into(), "$.exception.values"),
        (r#"{"exception": {"values": []}}"#.into(), "no exception has stacktrace frames"),
        (r#"{"exception": {"values": [{"stacktrace": {"frames": []}}]}}"#.into(), "no exception has stacktrace frames"),
        (r#"{"exception": {"values": [{"stacktrace": {}}]}}"#.into(), "stacktrace.frames"),
        (r#"{"exception": {"values": [7]}}"#.into(), "$.exception.values[0]"),
        (r#"{"exception": {"values": [{"stacktrace": {"frames": [1]}}]}}"#.into(), "frames[0]"),
        (r#"{"exception": {"values": [{"stacktrace": {"frames": [{"function": 5}]}}]}}"#.into(), "frames[0].function"),
        (r#"{"exception": {"values": [{"stacktrace": {"frames": [{"function": "f", "lineno": 0}]}}]}}"#.into(), "frames[0].lineno"),
        (r#"{"exception": {"values": [{"stacktrace": {"frames": [{"function": "f", "lineno": -3}]}}]}}"#.into(), "frames[0].lineno"),
        (r#"{"exception": {"values": [{"stacktrace": {"frames": [{"function": "f", "colno": 3}]}}]}}"#.into(), "frames[0].colno"),
        (r#"{"exception": {"values": [{"stacktrace": {"frames": [{"function": "f", "in_app": "yes"}]}}]}}"#.into(), "frames[0].in_app"),
        (r#"{"exception": {"values": [{"stacktrace": {"frames": [{"function": "f", "instruction_addr": "main+3"}]}}]}}"#.into(), "instruction_addr"),
        (format!(r#"{{"exception": {{"values": [{{"stacktrace": {{"frames": [{frame}]}}}}]}}, "breadcrumbs": 3}}"#), "$.breadcrumbs"),
        (format!(r#"{{"exception": {{"values": [{{"stacktrace": {{"frames": [{frame}]}}}}]}}, "breadcrumbs": {{"values": [{{"message": 1}}]}}}}"#), "$.breadcrumbs.values[0].message"),
        (r#"{"exception": {"values": [{"stacktrace": {"frames": [{"function": "f", "lineno": 99999999999}]}}]}}"#.into(), "frames[0].lineno"),
    ];
    let dir = graph().parent().unwrap();
    for (i, (json, expect)) in cases.iter().enumerate() {
        let f = dir.join(format!("bad-{i}.json"));
        std::fs::write(&f, json).unwrap();
        let o = pm(&["--report", f.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        let errors: Vec<&str> = err
            .lines()
            .filter(|l| {
                !l.starts_with("postmortem: note:") && !l.starts_with("postmortem: warning:")
            })
            .collect();
        assert_eq!(o.status.code(), Some(2), "{json}: {err}");
        assert!(
            errors.len() == 1 && errors[0].contains(expect),
            "{json}: expected one error line naming {expect}, got: {err}"
        );
    }
    // A good event still works from the same directory.
    let f = dir.join("good.json");
    std::fs::write(
        &f,
        format!(r#"{{"exception": {{"values": [{{"stacktrace": {{"frames": [{frame}]}}}}]}}}}"#),
    )
    .unwrap();
    assert!(pm(&["--report", f.to_str().unwrap()]).status.success());
}

#[test]
fn frames_listed_crash_first_are_named_in_the_impossible_message() {
    // The same event with its frames reversed (crash first), as some
    // exporters write them.
    let mut v: Value = serde_json::from_str(
        &std::fs::read_to_string(data("sentry/recursion-event.json")).unwrap(),
    )
    .unwrap();
    let frames = v["exception"]["values"][0]["stacktrace"]["frames"]
        .as_array_mut()
        .unwrap();
    frames.reverse();
    let dir = graph().parent().unwrap();
    let reversed = dir.join("reversed-event.json");
    std::fs::write(&reversed, serde_json::to_vec(&v).unwrap()).unwrap();
    let o = pm(&["--report", reversed.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let last = err.lines().last().unwrap();
    assert!(
        last.contains("is not a crash this program can have"),
        "{err}"
    );
    assert!(last.contains("look listed crash first"), "{err}");
    assert!(
        last.contains("jq '.exception.values[].stacktrace.frames |= reverse'"),
        "{err}"
    );
    // A query says it too.
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .args(["query", "--cfg", graph().to_str().unwrap(), "--report"])
        .arg(&reversed)
        .arg("ran(fn:main)")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("look listed crash first"), "{err}");
    // The event in Sentry's order says nothing of the kind.
    let o = pm(&[
        "--report",
        data("sentry/recursion-event.json").to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("crash first"));
}
