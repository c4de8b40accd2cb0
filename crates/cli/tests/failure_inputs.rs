//! End-to-end tests of the failure inputs (`--backtrace`, `--log`,
//! postmortem's own `--report` JSON, `--path-map`, `--explain-log`) and
//! of the annotate / HTML / LCOV outputs, on real crashes of the demo
//! programs in `tests/data/demo/` (clang-14 IR, gdb / lldb / ASan output).

mod common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_postmortem"))
}

fn demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/demo")
        .join(name)
}

fn bt(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../formats/tests/data")
        .join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run postmortem")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
}

fn json(o: &Output) -> Value {
    ok(o);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

fn lines(v: &Value, file: &str, label: &str) -> Vec<u64> {
    v["lines"][file][label]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn temp(name: &str) -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let d = DIR.get_or_init(|| common::scratch("cli-inputs")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_file(&d);
    d
}

const CRASH_C: &str = "/build/demo/crash.c";

#[test]
fn gdb_lldb_and_asan_backtraces_of_one_crash_agree() {
    let ll = demo("crash.ll");
    let mut results = Vec::new();
    for b in ["gdb-segv.txt", "lldb-segv.txt", "asan-segv.txt"] {
        let o = run(&[
            "analyze",
            "--cfg",
            s(&ll),
            "--backtrace",
            s(&bt(b)),
            "--format",
            "json",
        ]);
        assert!(!stderr(&o).contains("warning"), "{b}: {}", stderr(&o));
        let v = json(&o);
        let yes = lines(&v, CRASH_C, "yes");
        for l in [15, 16, 20, 21, 32, 34] {
            assert!(yes.contains(&l), "{b}: line {l} should be Yes: {yes:?}");
        }
        let no = lines(&v, CRASH_C, "no");
        for l in [17, 23, 29, 35] {
            assert!(no.contains(&l), "{b}: line {l} should be No: {no:?}");
        }
        results.push(v["lines"].clone());
    }
    assert_eq!(results[0], results[1]);
    assert_eq!(results[1], results[2]);
}

#[test]
fn a_log_adds_an_ordered_trace_and_explains_itself() {
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("crash.ll")),
        "--backtrace",
        s(&bt("gdb-segv.txt")),
        "--log",
        s(&demo("crash.stderr.log")),
        "--explain-log",
    ]);
    ok(&o);
    let err = stderr(&o);
    assert!(
        err.contains("log line 3 \"about to crash: big\": trace element 2, one of 1 call site(s)"),
        "{err}"
    );
    assert!(
        err.contains("/build/demo/crash.c:33 [main:33:5] in main: fprintf(\"parsed %d\\n\")"),
        "{err}"
    );
    assert!(!err.contains("warning"), "{err}");
    let out = stdout(&o);
    assert!(
        out.contains("gdb-segv.txt + ") && out.contains("crash.stderr.log"),
        "{out}"
    );
}

#[test]
fn unmatched_log_lines_and_frames_are_warnings_not_errors() {
    let dir = temp("warn");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("log.txt");
    std::fs::write(&log, "starting with 2 args\nsomething else entirely\n").unwrap();
    let bt_text = std::fs::read_to_string(bt("gdb-segv.txt"))
        .unwrap()
        .replace(
            "in report (n=7) at crash.c:21",
            "in dispatch (n=7) at other.c:5",
        );
    let b = dir.join("bt.txt");
    std::fs::write(&b, bt_text).unwrap();
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("crash.ll")),
        "--backtrace",
        s(&b),
        "--log",
        s(&log),
    ]);
    ok(&o);
    let err = stderr(&o);
    assert!(
        err.contains("postmortem: warning: ")
            && err.contains("log line 2 \"something else entirely\" matches no format string"),
        "{err}"
    );
    assert!(
        err.contains("frame #1 `dispatch` (other.c:5) matches no function or file of the program"),
        "{err}"
    );
    assert!(
        err.contains("2 stack frames left out of the stack constraint"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_crash_inside_libc_is_placed_at_the_call() {
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("abrt.ll")),
        "--backtrace",
        s(&bt("gdb-strlen.txt")),
        "--format",
        "json",
    ]);
    let err = stderr(&o);
    assert!(
        err.contains("`__strlen_evex`")
            && err.contains("the crash is placed at the call in frame #1 `measure` (abrt.c:18)"),
        "{err}"
    );
    let v = json(&o);
    let yes = lines(&v, "/build/demo/abrt.c", "yes");
    assert!(yes.contains(&18) && yes.contains(&25), "{yes:?}");
    assert!(lines(&v, "/build/demo/abrt.c", "no").contains(&26));
    // The same fault under a SIGSEGV handler: the handler's frames go.
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("abrt.ll")),
        "--backtrace",
        s(&bt("gdb-handler.txt")),
        "--format",
        "json",
    ]);
    assert!(
        stderr(&o).contains("ran in a signal handler"),
        "{}",
        stderr(&o)
    );
    assert_eq!(json(&o)["lines"], v["lines"]);
    // An assertion failure: raise/abort/__assert_fail are runtime frames.
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("abrt.ll")),
        "--backtrace",
        s(&bt("gdb-abort.txt")),
        "--format",
        "json",
    ]);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let yes = lines(&json(&o), "/build/demo/abrt.c", "yes");
    assert!(yes.contains(&13) && yes.contains(&26), "{yes:?}");
}

#[test]
fn our_own_report_format() {
    let dir = temp("pmreport");
    std::fs::create_dir_all(&dir).unwrap();
    let r = dir.join("report.json");
    std::fs::write(
        &r,
        r#"{"stack": [{"function": "main", "file": "crash.c", "line": 34},
                      {"function": "report", "file": "crash.c", "line": 21},
                      {"function": "crash", "file": "crash.c", "line": 16}],
            "ran": [{"file": "crash.c", "line": 27}],
            "not_ran": [{"call": "puts"}, {"function": "no_such_function"}],
            "log": ["parsed 7"]}"#,
    )
    .unwrap();
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("crash.ll")),
        "--report",
        s(&r),
        "--format",
        "json",
    ]);
    let err = stderr(&o);
    assert!(
        err.contains("$.not_ran[1] function `no_such_function` matches nothing in the graph"),
        "{err}"
    );
    let v = json(&o);
    let no = lines(&v, CRASH_C, "no");
    assert!(no.contains(&29) && no.contains(&35), "{no:?}");
    assert!(lines(&v, CRASH_C, "yes").contains(&16));
    // A malformed one: exit 2, one line naming the file and the JSON path.
    std::fs::write(&r, r#"{"stack": [{"function": "main", "lne": 3}]}"#).unwrap();
    let o = run(&["analyze", "--cfg", s(&demo("crash.ll")), "--report", s(&r)]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("report.json: $.stack[0].lne: unknown field"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn queries_take_backtraces_too() {
    let o = run(&[
        "query",
        "--solver",
        "fsa",
        "--cfg",
        s(&demo("crash.ll")),
        "--backtrace",
        s(&bt("asan-segv.txt")),
        "not ran(fn:report)",
    ]);
    assert!(
        stdout(&o).starts_with("impossible"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    let o = run(&[
        "query",
        "--solver",
        "fsa",
        "--cfg",
        s(&demo("crash.ll")),
        "--backtrace",
        s(&bt("asan-segv.txt")),
        "not ran(call:puts)",
    ]);
    assert!(
        stdout(&o).starts_with("possible"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
}

#[test]
fn a_crash_in_runtime_code_is_the_call_into_it() {
    // The crash sets are narrowed to the calls of `__assert_fail` and
    // `strlen` (named in the IR's call notes): skipping them is impossible.
    for (b, callee) in [
        ("gdb-abort.txt", "__assert_fail"),
        ("gdb-strlen.txt", "strlen"),
        ("gdb-handler.txt", "strlen"),
    ] {
        let q = format!("not ran(call:{callee})");
        let o = run(&[
            "query",
            "--solver",
            "fsa",
            "--cfg",
            s(&demo("abrt.ll")),
            "--backtrace",
            s(&bt(b)),
            &q,
        ]);
        assert!(
            stdout(&o).starts_with("impossible"),
            "{b}: {}{}",
            stdout(&o),
            stderr(&o)
        );
    }
}

#[test]
fn annotate_reads_sources_through_the_path_map() {
    let map = format!("/build/demo={}", s(&demo("")).trim_end_matches('/'));
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("crash.ll")),
        "--backtrace",
        s(&bt("gdb-segv.txt")),
        "--format",
        "annotate",
        "--path-map",
        &map,
    ]);
    ok(&o);
    let out = stdout(&o);
    assert!(
        out.starts_with(
            "        -:        -:    0:Source:/build/demo/crash.c\n        -:        -:    0:Legend:Yes = "
        ),
        "{out}"
    );
    assert!(
        out.contains("      Yes:   #0 Yes:   16:    p[0] = 'x';\n       No:    #0 No:   17:}\n         :         :   18:\n"),
        "{out}"
    );
    assert!(
        out.contains("       No:    #2 No:   35:    puts(\"done\");\n"),
        "{out}"
    );
    assert!(
        stderr(&o).is_empty() || !stderr(&o).contains("warning"),
        "{}",
        stderr(&o)
    );
    // Without the map the source is not found: a warning, labelled lines only.
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("crash.ll")),
        "--backtrace",
        s(&bt("gdb-segv.txt")),
        "--format",
        "annotate",
    ]);
    ok(&o);
    assert!(
        stderr(&o).contains("postmortem: warning: source file /build/demo/crash.c cannot be read"),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).contains("      Yes:   #0 Yes:   16:\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn lcov_encodes_maybe_as_a_partial_line() {
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("crash.ll")),
        "--backtrace",
        s(&bt("gdb-segv.txt")),
        "--format",
        "lcov",
        "--path-map",
        "/build/demo=/src",
    ]);
    ok(&o);
    let out = stdout(&o);
    assert!(out.starts_with("TN:postmortem\nSF:/src/crash.c\n"), "{out}");
    assert!(
        out.contains("\nDA:16,1\n")
            && out.contains("\nDA:35,0\n")
            && out.ends_with("end_of_record\n"),
        "{out}"
    );
    for l in out.lines().filter_map(|l| l.strip_prefix("BRDA:")) {
        let line = l.split(',').next().unwrap();
        assert!(
            out.contains(&format!("\nDA:{line},1\n")),
            "a Maybe line is DA:{line},1: {out}"
        );
    }
}

#[test]
fn html_writes_a_linked_escaped_site() {
    let dir = temp("html");
    let map = format!("/build/demo={}", s(&demo("")).trim_end_matches('/'));
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("crash.ll")),
        "--backtrace",
        s(&bt("asan-segv.txt")),
        "--format",
        "html",
        "-o",
        s(&dir),
        "--path-map",
        &map,
    ]);
    ok(&o);
    assert!(
        stdout(&o).contains("index.html (1 file page)"),
        "{}",
        stdout(&o)
    );
    let index = std::fs::read_to_string(dir.join("index.html")).unwrap();
    // It starts from the crash, then the stack innermost first, each
    // frame linked to its line (paths relative to the sources' directory).
    assert!(
        index.contains("<h1>Crash in <code class=\"fn\">crash</code> at <a href=\"file-0.html#L16\">crash.c:16</a></h1>"),
        "{index}"
    );
    assert!(index.contains("<h2>Stack, innermost first"), "{index}");
    assert!(index.contains("<span class=\"badge\">#2 call</span> <code class=\"fn\">main</code> at <a href=\"file-0.html#L34\">crash.c:34</a>, calling <code class=\"fn\">report</code>"), "{index}");
    assert!(
        index.contains("<span class=\"badge crash\">#0 crash</span> <code class=\"fn\">crash</code> at <a href=\"file-0.html#L16\">"),
        "{index}"
    );
    // Every solver gives a witness now (utl too): an example path,
    // folded away until asked for.
    assert!(
        index.contains("<details>\n<summary>An example path ("),
        "{index}"
    );
    let page = std::fs::read_to_string(dir.join("file-0.html")).unwrap();
    assert!(page.contains("<tr id=\"L21\" class=\"y\">"), "{page}");
    assert!(page.contains("crash(&quot;big&quot;);"), "{page}");
    assert!(
        page.contains("<style>") && !page.contains("<script") && !page.contains("http"),
        "self-contained"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // html needs -o.
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("crash.ll")),
        "--backtrace",
        s(&bt("asan-segv.txt")),
        "--format",
        "html",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn usage_errors_exit_2() {
    let ll = demo("crash.ll");
    // Neither --report nor --backtrace.
    let o = run(&[
        "analyze",
        "--cfg",
        s(&ll),
        "--log",
        s(&demo("crash.stderr.log")),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A malformed path map.
    let o = run(&[
        "analyze",
        "--cfg",
        s(&ll),
        "--backtrace",
        s(&bt("gdb-segv.txt")),
        "--path-map",
        "nothing",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("FROM=TO"), "{}", stderr(&o));
    // Not a backtrace: one line naming the file.
    let o = run(&[
        "analyze",
        "--cfg",
        s(&ll),
        "--backtrace",
        s(&demo("crash.c")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("postmortem: ") && !l.starts_with("postmortem: note"))
            .count(),
        1,
        "{err}"
    );
    assert!(err.contains("crash.c: no stack frame found"), "{err}");
    // A missing log.
    let o = run(&[
        "analyze",
        "--cfg",
        s(&ll),
        "--backtrace",
        s(&bt("gdb-segv.txt")),
        "--log",
        "/nonexistent/log",
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn custom_logging_functions() {
    let o = run(&[
        "analyze",
        "--cfg",
        s(&demo("crash.ll")),
        "--backtrace",
        s(&bt("gdb-segv.txt")),
        "--log-function",
        "log_msg:2",
        "--log-function",
        "bad",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("NAME:ARG"), "{}", stderr(&o));
}
