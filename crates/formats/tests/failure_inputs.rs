//! Backtraces, hand-written reports and logs on realistic samples
//! (`tests/data/`, mostly real tool output), mapped onto a graph shaped
//! like the demo program `crates/cli/tests/data/demo/crash.c`; and
//! properties: no parser panics on any input, every format string turns
//! into a regex that matches what printf prints.

use postmortem_core::locate::{Action, PathMap, Problem};
use postmortem_core::{Frame, FuncId, Icfg, IcfgBuilder, NodeId, NodeKind, NodeSet, NodeSpec};
use postmortem_formats::any_report::{read_any_report_str, ReportKind};
use postmortem_formats::backtrace::{locator, parse_backtrace, Backtrace, BacktraceFormat};
use postmortem_formats::logs::{format_regex, LogConfig, LogMatcher};
use postmortem_formats::pmreport::parse_pmreport;
use proptest::prelude::*;
use std::path::PathBuf;

fn data(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn parse(name: &str) -> Backtrace {
    parse_backtrace(&data(name), name).unwrap_or_else(|e| panic!("{e}"))
}

/// (function, file, line, column, runtime) of every frame.
type Row<'a> = (&'a str, Option<&'a str>, Option<u32>, Option<u32>, bool);

fn rows(bt: &Backtrace) -> Vec<Row<'_>> {
    bt.frames
        .iter()
        .map(|f| {
            (
                f.function.as_deref().unwrap_or("??"),
                f.file.as_deref(),
                f.line,
                f.column,
                f.runtime,
            )
        })
        .collect()
}

#[test]
fn gdb_segv() {
    let bt = parse("gdb-segv.txt");
    assert_eq!(bt.format, BacktraceFormat::Gdb);
    assert_eq!(
        rows(&bt),
        vec![
            ("crash", Some("crash.c"), Some(16), None, false),
            ("report", Some("crash.c"), Some(21), None, false),
            ("main", Some("crash.c"), Some(34), None, false),
        ]
    );
    assert!(bt.notes.is_empty());
}

#[test]
fn gdb_abort_flags_the_runtime_frames() {
    let bt = parse("gdb-abort.txt");
    let names: Vec<(&str, bool)> = bt
        .frames
        .iter()
        .map(|f| (f.function.as_deref().unwrap(), f.runtime))
        .collect();
    assert_eq!(
        names,
        vec![
            ("__pthread_kill_implementation", true),
            ("__pthread_kill_internal", true),
            ("__GI_raise", true),
            ("__GI_abort", true),
            ("__assert_fail_base", true),
            ("__GI___assert_fail", true),
            ("check", false),
            ("main", false),
        ]
    );
    assert_eq!(bt.program_frames().count(), 2);
}

#[test]
fn gdb_library_crash_and_signal_handler() {
    let bt = parse("gdb-strlen.txt");
    assert_eq!(
        rows(&bt)[0],
        (
            "__strlen_evex",
            Some("../sysdeps/x86_64/multiarch/strlen-evex.S"),
            Some(79),
            None,
            false
        )
    );
    let bt = parse("gdb-handler.txt");
    let names: Vec<&str> = bt
        .frames
        .iter()
        .map(|f| f.function.as_deref().unwrap())
        .collect();
    assert_eq!(names, vec!["__strlen_evex", "measure", "main"]);
    assert_eq!(bt.frames[0].index, Some(6));
    assert_eq!(bt.notes.len(), 1);
    assert!(
        bt.notes[0].contains("5 frames ran in a signal handler")
            && bt.notes[0].contains("`on_segv`"),
        "{}",
        bt.notes[0]
    );
}

#[test]
fn gdb_threads_take_the_one_that_received_the_signal() {
    let bt = parse("gdb-threads.txt");
    assert_eq!(
        rows(&bt),
        vec![
            ("worker", Some("thr.c"), Some(10), None, false),
            (
                "start_thread",
                Some("./nptl/pthread_create.c"),
                Some(442),
                None,
                true
            ),
            (
                "clone3",
                Some("../sysdeps/unix/sysv/linux/x86_64/clone3.S"),
                Some(81),
                None,
                true
            ),
        ]
    );
    assert_eq!(
        bt.notes,
        vec!["1 other thread stack left out: thread 2 crashed".to_string()]
    );
}

#[test]
fn lldb_segv_takes_the_bt_not_the_stop_report() {
    let bt = parse("lldb-segv.txt");
    assert_eq!(bt.format, BacktraceFormat::Lldb);
    let r = rows(&bt);
    assert_eq!(r.len(), 6);
    assert_eq!(r[0], ("crash", Some("crash.c"), Some(16), Some(10), false));
    assert_eq!(r[1], ("report", Some("crash.c"), Some(21), Some(9), false));
    assert_eq!(r[2], ("main", Some("crash.c"), Some(34), Some(5), false));
    assert_eq!(
        r[3],
        (
            "__libc_start_call_main",
            Some("libc_start_call_main.h"),
            Some(58),
            Some(16),
            true
        )
    );
    assert_eq!(r[5], ("_start", None, None, None, true));
    assert_eq!(bt.frames[3].module.as_deref(), Some("libc.so.6"));
}

#[test]
fn lldb_macos_cpp() {
    let bt = parse("lldb-macos-cpp.txt");
    let r = rows(&bt);
    assert_eq!(
        r[0],
        ("Shape::area", Some("shapes.cpp"), Some(14), Some(12), false)
    );
    assert_eq!(
        r[1],
        ("sum_areas", Some("shapes.cpp"), Some(22), Some(17), false)
    );
    assert_eq!(
        r[2],
        ("total", Some("shapes.cpp"), Some(29), Some(10), false)
    );
    assert_eq!(r[4], ("start", None, None, None, true));
    assert_eq!(r.len(), 5, "thread #2 is left out");
}

#[test]
fn asan_segv() {
    let bt = parse("asan-segv.txt");
    assert_eq!(bt.format, BacktraceFormat::Sanitizer);
    let r = rows(&bt);
    assert_eq!(
        r[0],
        (
            "crash",
            Some("/build/demo/crash.c"),
            Some(16),
            Some(10),
            false
        )
    );
    assert_eq!(
        r[2],
        (
            "main",
            Some("/build/demo/crash.c"),
            Some(34),
            Some(5),
            false
        )
    );
    assert_eq!(
        r[3],
        (
            "__libc_start_call_main",
            Some("csu/../sysdeps/nptl/libc_start_call_main.h"),
            Some(58),
            Some(16),
            true
        )
    );
    assert_eq!(r[5], ("_start", None, None, None, true));
    assert_eq!(
        bt.frames[5].module.as_deref(),
        Some("/build/demo/crash-asan")
    );
}

#[test]
fn asan_cpp_takes_the_first_stack() {
    let bt = parse("asan-heap-overflow-cpp.txt");
    let r = rows(&bt);
    assert_eq!(r.len(), 6);
    assert_eq!(
        r[0],
        (
            "Buffer::at(unsigned long) const",
            Some("/home/ci/build/src/buffer.cpp"),
            Some(18),
            Some(12),
            false
        )
    );
    assert_eq!(r[1].0, "checksum(Buffer const&)");
    assert!(bt.notes[0].contains("1 later stack"), "{:?}", bt.notes);
}

#[test]
fn ubsan_with_and_without_a_stack() {
    let bt = parse("ubsan-overflow.txt");
    assert_eq!(
        rows(&bt)[0],
        ("scale", Some("/build/demo/ub.c"), Some(5), Some(14), false)
    );
    assert_eq!(
        rows(&bt)[1],
        ("main", Some("/build/demo/ub.c"), Some(10), Some(20), false)
    );
    let bt = parse("ubsan-nostack.txt");
    assert_eq!(
        rows(&bt),
        vec![("??", Some("ub.c"), Some(5), Some(14), false)]
    );
    assert_eq!(bt.notes.len(), 1);
}

#[test]
fn rust_panics_short_full_and_without_backtrace() {
    let bt = parse("rust-panic.txt");
    assert_eq!(bt.format, BacktraceFormat::RustPanic);
    let program: Vec<Row<'_>> = rows(&bt).into_iter().filter(|r| !r.4).collect();
    assert_eq!(
        program,
        vec![
            ("main::compute", Some("./src/main.rs"), Some(2), Some(5), false),
            ("main::main", Some("./src/main.rs"), Some(8), Some(20), false),
            (
                "core::ops::function::FnOnce::call_once",
                Some("/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs"),
                Some(250),
                Some(5),
                false
            ),
        ]
    );
    assert!(bt.frames[0].runtime, "__rustc::rust_begin_unwind");
    let full = parse("rust-panic-full.txt");
    let program: Vec<&str> = full
        .program_frames()
        .map(|f| f.function.as_deref().unwrap())
        .collect();
    assert_eq!(
        program,
        vec![
            "main::compute::hfcf28907d4b20338",
            "main::main::h8da7fa642d137fc6",
            "core::ops::function::FnOnce::call_once::h1c9976113389c974"
        ]
    );
    assert_eq!(full.frames.len(), 37);
    let none = parse("rust-panic-nobt.txt");
    assert_eq!(
        rows(&none),
        vec![("??", Some("src/main.rs"), Some(2), Some(5), false)]
    );
}

/// The demo program `crash.c`: `main` calls `parse` (32:13), `report`
/// (34:5); `report` calls `crash` (21:9) or printf (23:9); `crash` calls
/// fprintf (15:5) and writes through NULL on line 16 (two nodes).
struct Demo {
    g: Icfg,
    main34: NodeId,
    report21: NodeId,
    crash16: [NodeId; 2],
    crash15: NodeId,
    report_entry: NodeId,
    crash_entry: NodeId,
}

fn demo() -> Demo {
    let mut b = IcfgBuilder::new();
    let file = "/build/demo/crash.c";
    let funcs: Vec<FuncId> = ["main", "parse", "report", "crash"]
        .iter()
        .map(|n| b.function(n))
        .collect();
    for &f in &funcs {
        b.set_function_file(f, file);
    }
    let [main, parse, report, crash] = funcs[..] else {
        unreachable!()
    };
    let mut k = 0;
    let mut node = |b: &mut IcfgBuilder, kind: NodeKind, f: FuncId, line: u32, col: u32| {
        k += 1;
        let id = format!("n{k}");
        let n = b
            .add_node(NodeSpec {
                ext_id: &id,
                kind,
                func: f,
                label: &id,
                lines: &[line],
            })
            .unwrap();
        b.set_column(n, col);
        n
    };
    use NodeKind::*;
    let me = node(&mut b, Entry, main, 26, 0);
    let m27 = node(&mut b, CallSite, main, 27, 5);
    let m32 = node(&mut b, CallSite, main, 32, 13);
    let m33 = node(&mut b, CallSite, main, 33, 5);
    let main34 = node(&mut b, CallSite, main, 34, 5);
    let m35 = node(&mut b, CallSite, main, 35, 5);
    let mx = node(&mut b, Exit, main, 37, 0);
    let pe = node(&mut b, Entry, parse, 4, 0);
    let px = node(&mut b, Exit, parse, 11, 0);
    let report_entry = node(&mut b, Entry, report, 19, 0);
    let r20 = node(&mut b, Statement, report, 20, 9);
    let report21 = node(&mut b, CallSite, report, 21, 9);
    let r23 = node(&mut b, CallSite, report, 23, 9);
    let rx = node(&mut b, Exit, report, 24, 0);
    let crash_entry = node(&mut b, Entry, crash, 13, 0);
    let crash15 = node(&mut b, CallSite, crash, 15, 5);
    let c16a = node(&mut b, Statement, crash, 16, 5);
    let c16b = node(&mut b, Statement, crash, 16, 10);
    let cx = node(&mut b, Exit, crash, 17, 0);
    for (a, c) in [
        (me, m27),
        (m27, m32),
        (m32, m33),
        (m33, main34),
        (main34, m35),
        (m35, mx),
        (pe, px),
        (report_entry, r20),
        (r20, report21),
        (r20, r23),
        (report21, rx),
        (r23, rx),
        (crash_entry, crash15),
        (crash15, c16a),
        (c16a, c16b),
        (c16b, cx),
    ] {
        b.add_flow_edge(a, c);
    }
    b.add_call_edge(m32, pe);
    b.add_call_edge(main34, report_entry);
    b.add_call_edge(report21, crash_entry);
    for (site, name, fmt) in [
        (m27, "fprintf", "starting with %d args\n"),
        (m33, "fprintf", "parsed %d\n"),
        (m35, "puts", "done"),
        (r23, "printf", "small: %d\n"),
        (crash15, "fprintf", "about to crash: %s\n"),
    ] {
        b.add_external_callee(site);
        b.add_external_callee_name(site, name);
        b.add_string_arg(site, fmt);
    }
    Demo {
        g: b.build().unwrap(),
        main34,
        report21,
        crash16: [c16a, c16b],
        crash15,
        report_entry,
        crash_entry,
    }
}

fn expected_stack(d: &Demo) -> Vec<Frame> {
    vec![
        Frame {
            call: NodeSet::one(d.main34),
            entry: NodeSet::one(d.report_entry),
        },
        Frame {
            call: NodeSet::one(d.report21),
            entry: NodeSet::one(d.crash_entry),
        },
    ]
}

#[test]
fn every_demo_backtrace_maps_to_the_same_stack() {
    let d = demo();
    let loc = locator(&d.g, PathMap::new());
    for name in ["gdb-segv.txt", "lldb-segv.txt", "asan-segv.txt"] {
        let l = loc.locate_stack(&parse(name).source_frames());
        assert!(l.warnings.is_empty(), "{name}: {:?}", l.warnings);
        assert_eq!(l.report.stack, expected_stack(&d), "{name}");
        // The crash line has two nodes: an ambiguous crash set, no guess.
        assert_eq!(l.report.crash, NodeSet::new(d.crash16.to_vec()), "{name}");
    }
}

#[test]
fn a_wrong_line_widens_and_warns() {
    let d = demo();
    let loc = locator(&d.g, PathMap::new());
    let text = data("gdb-segv.txt").replace("at crash.c:21", "at crash.c:99");
    let l = loc.locate_stack(
        &parse_backtrace(&text, "edited.txt")
            .unwrap()
            .source_frames(),
    );
    // report has one call site that may call crash: the frame survives.
    assert_eq!(l.report.stack, expected_stack(&d));
    assert_eq!(l.warnings.len(), 1);
    assert_eq!(l.warnings[0].problem, Problem::NoNodeOnLine(99));
    assert_eq!(
        l.warnings[0].action,
        Action::CallAnywhereInFunction { count: 1 }
    );
    assert!(
        l.warnings[0]
            .to_string()
            .starts_with("frame #1 `report` (crash.c:99)"),
        "{}",
        l.warnings[0]
    );
}

#[test]
fn an_unknown_middle_frame_drops_two_frames_with_a_warning() {
    let d = demo();
    let loc = locator(&d.g, PathMap::new());
    let text = data("gdb-segv.txt").replace(
        "in report (n=7) at crash.c:21",
        "in dispatch (n=7) at other.c:5",
    );
    let l = loc.locate_stack(
        &parse_backtrace(&text, "edited.txt")
            .unwrap()
            .source_frames(),
    );
    assert!(l.report.stack.is_empty());
    assert_eq!(l.report.crash, NodeSet::new(d.crash16.to_vec()));
    assert_eq!(l.warnings.len(), 1);
    assert_eq!(l.warnings[0].action, Action::FramesDropped { count: 2 });
    assert!(
        l.warnings[0].to_string().contains("`dispatch`"),
        "{}",
        l.warnings[0]
    );
}

#[test]
fn a_handwritten_report_and_a_log() {
    let d = demo();
    let text = r#"{
        "stack": [{"function": "main", "file": "crash.c", "line": 34},
                  {"function": "report", "line": 21, "column": 9},
                  {"file": "/build/demo/crash.c", "line": 16}],
        "ran": [{"call": "fprintf"}],
        "not_ran": [{"function": "parse"}],
        "log": ["starting with 2 args", "parsed 7", "about to crash: big"]
    }"#;
    let cfg = LogConfig::default();
    let (kind, m) = read_any_report_str(text, "r.json", &d.g, &PathMap::new(), &cfg).unwrap();
    assert_eq!(kind, ReportKind::Postmortem);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    assert_eq!(m.report.stack, expected_stack(&d));
    assert_eq!(m.report.crash, NodeSet::new(d.crash16.to_vec()));
    assert_eq!(m.report.obs_yes.len(), 2);
    assert_eq!(
        m.report.obs_yes[0].entries[0].nodes().len(),
        3,
        "three fprintf calls"
    );
    let log = &m.report.obs_yes[1];
    assert_eq!(log.entries.len(), 3);
    assert_eq!(log.entries[2], NodeSet::one(d.crash15));
    assert_eq!(m.report.obs_no.len(), 1);
    assert!(parse_pmreport(text, "r.json").is_ok());
}

/// `failure::assemble` combines every input as its doc says: the
/// report's observations, the backtrace's crash and stack (with its gaps,
/// which the context-sensitive solver needs), the log's trace last; and
/// tells every warning and log match on the way.
#[test]
fn assemble_combines_report_backtrace_and_log() {
    use postmortem_formats::failure::{
        assemble, AssembleError, Diagnostic, FailureFiles, FailureOptions,
    };
    let d = demo();
    let dir = std::env::temp_dir().join(format!("pm-assemble-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("r.json");
    std::fs::write(
        &report,
        r#"{"stack": [{"file": "/build/demo/crash.c", "line": 16}],
            "ran": [{"call": "fprintf"}], "not_ran": [{"function": "parse"}],
            "log": ["starting with 2 args"]}"#,
    )
    .unwrap();
    // A middle frame the graph does not have: frames are dropped, and the
    // stack has a gap.
    let bt_text = data("gdb-segv.txt").replace(
        "in report (n=7) at crash.c:21",
        "in dispatch (n=7) at other.c:5",
    );
    let bt = dir.join("bt.txt");
    std::fs::write(&bt, &bt_text).unwrap();
    let log = dir.join("out.log");
    std::fs::write(&log, "parsed 7\nabout to crash: big\n").unwrap();
    let files = FailureFiles {
        report: Some(&report),
        backtrace: Some(&bt),
        log: Some(&log),
        ..FailureFiles::default()
    };
    let found = assemble(&d.g, None, None, &files, &FailureOptions::default()).unwrap();
    let warnings: Vec<&String> = found
        .diagnostics
        .iter()
        .filter_map(|d| match d {
            Diagnostic::Warning(w) => Some(w),
            Diagnostic::Note(_) => None,
        })
        .collect();
    let logs: Vec<(String, usize)> = found
        .logs
        .iter()
        .map(|(source, m)| (source.clone(), m.lines.len()))
        .collect();
    let r = &found.report;
    let located = locator(&d.g, PathMap::new())
        .locate_stack(&parse_backtrace(&bt_text, "bt.txt").unwrap().source_frames());
    assert!(!located.report.stack_gaps.is_empty());
    assert_eq!(r.stack, located.report.stack);
    assert_eq!(r.stack_gaps, located.report.stack_gaps);
    assert_eq!(r.crash, NodeSet::new(d.crash16.to_vec()));
    assert_eq!(r.obs_yes.len(), 3, "ran, the report's log, the log file");
    assert_eq!(r.obs_yes[2].entries.len(), 2);
    assert_eq!(r.obs_yes[2].entries[1], NodeSet::one(d.crash15));
    assert_eq!(r.obs_no.len(), 1);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("replaced by those of the backtrace")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("`dispatch`")),
        "{warnings:?}"
    );
    assert_eq!(logs.len(), 2, "{logs:?}");
    assert_eq!(logs[1], (log.display().to_string(), 2));

    // Stack only: the observations go.
    let opts = FailureOptions {
        stack_only: true,
        ..FailureOptions::default()
    };
    let r = assemble(&d.g, None, None, &files, &opts).unwrap().report;
    assert!(r.obs_yes.is_empty() && r.obs_no.is_empty());
    assert_eq!(r.stack_gaps, located.report.stack_gaps);

    // Bad inputs are errors that name them.
    let missing = dir.join("missing.txt");
    let e = assemble(
        &d.g,
        None,
        None,
        &FailureFiles {
            backtrace: Some(&missing),
            ..FailureFiles::default()
        },
        &FailureOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, AssembleError::Input(m) if m.contains("missing.txt")),
        "{e}"
    );
    let e = assemble(
        &d.g,
        None,
        None,
        &FailureFiles {
            core: Some(&bt),
            ..FailureFiles::default()
        },
        &FailureOptions::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&e, AssembleError::Input(m) if m.contains("--binary")),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_demo_log_is_one_trace() {
    let d = demo();
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/data/demo/crash.stderr.log"),
    )
    .unwrap();
    let m = LogMatcher::new(&d.g, &LogConfig::default()).match_text(&text);
    let t = m.trace.unwrap();
    assert_eq!(t.entries.len(), 3);
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    assert_eq!(t.entries[2], NodeSet::one(d.crash15));
}

// ---------------------------------------------------------------- properties

/// What a C printf prints for one piece of a format, and the piece.
fn piece() -> impl Strategy<Value = (String, String)> {
    let lit = "[a-zA-Z0-9 .,:;=()\\[\\]{}*+?|^$\\\\-]{1,8}".prop_map(|s: String| (s.clone(), s));
    prop_oneof![
        lit,
        any::<i32>().prop_map(|v| ("%d".into(), v.to_string())),
        any::<i64>().prop_map(|v| ("%ld".into(), v.to_string())),
        any::<u32>().prop_map(|v| ("%u".into(), v.to_string())),
        any::<u32>().prop_map(|v| ("%x".into(), format!("{v:x}"))),
        any::<u32>().prop_map(|v| (
            "%#X".into(),
            if v == 0 {
                "0".into()
            } else {
                format!("0X{v:X}")
            }
        )),
        any::<u16>().prop_map(|v| ("%o".into(), format!("{v:o}"))),
        (0i32..100000, 1usize..10).prop_map(|(v, w)| (format!("%{w}d"), format!("{v:>w$}"))),
        (0i32..100000, 1usize..10).prop_map(|(v, w)| (format!("%-{w}d"), format!("{v:<w$}"))),
        (0i32..1000, 1usize..8).prop_map(|(v, w)| (format!("%0{w}d"), format!("{v:0w$}"))),
        any::<i16>().prop_map(|v| ("%+d".into(), format!("{v:+}"))),
        "[ -~]{0,12}".prop_map(|s: String| ("%s".into(), s)),
        ("[ -~]{0,12}", 1usize..16)
            .prop_map(|(s, w): (String, usize)| (format!("%-{w}s"), format!("{s:<w$}"))),
        "[ -~]{0,12}".prop_map(|s: String| ("%.3s".into(), s.chars().take(3).collect())),
        (-1.0e6f64..1.0e6).prop_map(|v| ("%f".into(), format!("{v:.6}"))),
        (-1.0e6f64..1.0e6).prop_map(|v| ("%.2f".into(), format!("{v:.2}"))),
        (-1.0e6f64..1.0e6).prop_map(|v| ("%e".into(), c_exp(v))),
        proptest::char::range(' ', '~').prop_map(|c| ("%c".into(), c.to_string())),
        any::<u32>().prop_map(|v| ("%p".into(), format!("0x{v:x}"))),
        Just(("%%".to_string(), "%".to_string())),
    ]
}

/// C's `%e`: one digit, six decimals, a signed exponent of at least two digits.
fn c_exp(v: f64) -> String {
    let s = format!("{v:.6e}");
    let (m, e) = s.split_once('e').unwrap();
    let e: i32 = e.parse().unwrap();
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

fn mutate(text: &str, cuts: &[(usize, u8)]) -> String {
    let mut b = text.as_bytes().to_vec();
    for &(at, byte) in cuts {
        if b.is_empty() {
            break;
        }
        let i = at % b.len();
        match byte % 4 {
            0 => {
                b.remove(i);
            }
            1 => b.insert(i, byte),
            2 => b.truncate(i),
            _ => {
                let j = (i + byte as usize) % b.len();
                b.swap(i, j);
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

const SAMPLES: [&str; 14] = [
    "gdb-segv.txt",
    "gdb-abort.txt",
    "gdb-strlen.txt",
    "gdb-handler.txt",
    "gdb-threads.txt",
    "lldb-segv.txt",
    "lldb-macos-cpp.txt",
    "asan-segv.txt",
    "asan-heap-overflow-cpp.txt",
    "ubsan-overflow.txt",
    "ubsan-nostack.txt",
    "rust-panic.txt",
    "rust-panic-full.txt",
    "rust-panic-nobt.txt",
];

fn check_backtrace(text: &str) {
    match parse_backtrace(text, "p.txt") {
        Ok(bt) => {
            assert!(!bt.frames.is_empty());
            // And mapping it never panics and stays inside the graph.
            let d = demo();
            let l = locator(&d.g, PathMap::new()).locate_stack(&bt.source_frames());
            assert!(l
                .report
                .mentioned_nodes()
                .all(|n| n.index() < d.g.num_nodes()));
        }
        Err(e) => {
            let m = e.to_string();
            assert!(m.starts_with("p.txt: ") && !m.contains('\n'), "{m:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn printf_output_matches_its_format(pieces in prop::collection::vec(piece(), 0..8)) {
        let format: String = pieces.iter().map(|p| p.0.as_str()).collect();
        let printed: String = pieces.iter().map(|p| p.1.as_str()).collect();
        let re = regex::Regex::new(&format!("^{}$", format_regex(&format))).unwrap();
        prop_assert!(re.is_match(&printed), "format {:?} printed {:?} regex {}", format, printed, re);
    }

    #[test]
    fn any_format_string_gives_a_valid_regex(format in "\\PC{0,40}") {
        prop_assert!(regex::Regex::new(&format_regex(&format)).is_ok());
    }

    #[test]
    fn any_text_is_a_backtrace_or_an_error(text in "\\PC{0,400}") {
        check_backtrace(&text);
    }

    #[test]
    fn frame_like_lines_never_panic(lines in prop::collection::vec(prop_oneof![
        "#[0-9]{1,3}  0x[0-9a-f]{1,16} in [a-z_:<>()]{0,12} \\([a-z=0-9, \"()]{0,20}\\) at [a-z./]{0,10}:[0-9]{0,4}",
        "#[0-9]{1,3} 0x[0-9a-f]{1,12} in [a-z_:]{0,8} [/a-z.]{0,10}:[0-9]{0,3}:[0-9]{0,3}",
        "#[0-9] 0x[0-9a-f]{1,8} \\([/a-z.+0-9x]{0,20}\\)",
        "\\*? ?frame #[0-9]{1,2}: 0x[0-9a-f]{1,16} [a-z.]{0,6}`[a-z_:()= \\[\\]]{0,20}( at [a-z.]{0,6}:[0-9]{0,3}:[0-9]{0,3})?",
        "\\*? ?thread #[0-9]{1,2}[, a-z=']{0,20}",
        "Thread [0-9] \\(Thread 0x[0-9a-f]{1,8} \\(LWP [0-9]{1,5}\\)\\):",
        "Thread [0-9] \"x\" received signal SIGSEGV",
        " {0,4}[0-9]{1,2}: [a-z_:<>\\[\\]0-9]{0,20}",
        " {0,12}at [./a-z]{0,12}:[0-9]{0,3}:[0-9]{0,3}",
        "thread '[a-z]{0,5}' (\\([0-9]{1,5}\\) )?panicked at [a-z/.]{0,10}:[0-9]{0,3}:[0-9]{0,3}:?",
        "[a-z.]{0,6}:[0-9]{1,3}:[0-9]{1,3}: runtime error: [a-z ]{0,10}",
        "==[0-9]{1,5}==ERROR: [A-Za-z]{0,16}Sanitizer: [a-z-]{0,10}",
        "stack backtrace:",
        "<signal handler called>",
        "\\PC{0,30}",
    ], 0..14)) {
        check_backtrace(&lines.join("\n"));
    }

    #[test]
    fn mutated_samples_never_panic(which in 0usize..SAMPLES.len(), cuts in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6)) {
        check_backtrace(&mutate(&data(SAMPLES[which]), &cuts));
    }

    #[test]
    fn mutated_reports_never_panic(cuts in prop::collection::vec((any::<usize>(), any::<u8>()), 1..6)) {
        let text = r#"{"stack": [{"function": "main", "file": "crash.c", "line": 34, "column": 5}, {"file": "crash.c", "line": 16}],
            "ran": [{"function": "parse"}, {"file": "crash.c", "line": 27}, {"call": "fprintf"}],
            "not_ran": [{"call": "puts"}], "log": ["parsed 7", "about to crash: big"]}"#;
        let mutated = mutate(text, &cuts);
        let d = demo();
        match read_any_report_str(&mutated, "m.json", &d.g, &PathMap::new(), &LogConfig::default()) {
            Ok((_, m)) => prop_assert!(m.report.mentioned_nodes().all(|n| n.index() < d.g.num_nodes())),
            Err(e) => {
                let s = e.to_string();
                prop_assert!(s.starts_with("m.json: ") && !s.contains('\n'), "{:?}", s);
            }
        }
    }

    #[test]
    fn any_log_line_is_matched_without_panic(lines in prop::collection::vec("\\PC{0,30}", 0..8)) {
        let d = demo();
        let m = LogMatcher::new(&d.g, &LogConfig::default()).match_lines(lines.iter().map(String::as_str));
        prop_assert_eq!(m.lines.len(), lines.len());
    }
}
