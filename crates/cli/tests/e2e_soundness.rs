//! End-to-end soundness on real crashes: for each small C program of
//! `tests/data/e2e/` (loops, recursion, function pointers, early returns,
//! switch), compile it with clang-14's source coverage, run it under gdb
//! to the crash its input leads to, and check every Yes and No line
//! postmortem derives from the backtrace (and the log) against the lines
//! that really ran.
//!
//! One execution gives everything: `gdb -batch -ex 'run ARGS > out.log'
//! -ex bt -ex continue ./prog` stops at the fatal signal (the backtrace),
//! and `continue` delivers the signal to the handler of
//! `flush_profile.c`, which writes the coverage profile (the clang runtime
//! writes it only at a normal exit) and exits. That file is compiled
//! without coverage and is not part of the graph, which is built from the
//! program's own IR (`clang-14 -g -O0 -emit-llvm -c`).
//!
//! **The truth** is llvm-cov's line counts (checked against `llvm-cov
//! show`), read with care for the frames still on the stack at the crash:
//! see `common/mod.rs`.
//!
//! Checked for utl and fsa, with the backtrace alone and with the
//! backtrace plus the log (the program's standard output): no Yes line
//! did not run, no No line ran, and there are Yes and No lines, and some
//! of each are actually confirmed by the truth. The FSA result must also
//! be at least as precise as UTL's (`--compare fsa,utl --expect gt`).
//!
//! Needs clang-14, llvm-profdata-14, llvm-cov-14 and gdb: without them
//! the tests fail, they do not skip.

mod common;

use common::{active_frames, line_counts, require, sh, show, shown_counts, source_frames};
use common::{Frame, Ran, Truth};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/e2e")
        .join(name)
}

/// The program frames of `bt` (gdb `bt` output): those in the source file
/// `file`, innermost first.
fn program_frames(bt: &str, file: &str) -> Vec<Frame> {
    source_frames(bt)
        .into_iter()
        .filter(|f| f.file_name() == file)
        .collect()
}

/// A program of `tests/data/e2e`, the input that crashes it, and what the
/// crash is.
struct Case {
    name: &'static str,
    args: &'static [&'static str],
    /// The innermost program frame's function.
    crash_in: &'static str,
    /// How many program frames the backtrace has.
    depth: usize,
    /// The outermost program frame's function.
    outermost: &'static str,
    /// C files linked in but compiled without coverage and left out of
    /// the graph: code outside the program, like a library.
    outside: &'static [&'static str],
    /// Extra link flags.
    link: &'static [&'static str],
    /// The source's extension: `c`, or `cpp` for C++ (built with clang++).
    ext: &'static str,
    /// Whether the backtrace alone must give No lines that are confirmed
    /// (false where the crash leaves nothing provably unexecuted, e.g.
    /// in an exit handler, after everything else).
    confirms_no: bool,
    /// Lines (inclusive ranges) whose llvm-cov counts are wrong, left
    /// unchecked: clang derives the count of an `else` from the counts of
    /// the `if` and the `then` (`else = if - then`), which a second return
    /// of `setjmp` makes wrong (the `then` is not entered again but the
    /// `else` runs): llvm-cov says 0 for an `else` that ran.
    miscounted: &'static [(u64, u64)],
    /// A warning the analyses may print (a substring of it; "" for none).
    warns: &'static str,
}

const CASE: Case = Case {
    name: "",
    args: &[],
    crash_in: "",
    depth: 0,
    outermost: "main",
    outside: &[],
    link: &[],
    ext: "c",
    confirms_no: true,
    miscounted: &[],
    warns: "",
};

/// Compiles, crashes and checks one program.
fn check(case: &Case) {
    for tool in ["clang-14", "gdb", "llvm-profdata-14", "llvm-cov-14"] {
        require(tool);
    }
    let dir = common::scratch(&format!("e2e-soundness-{}", case.name));
    let src = format!("{}.{}", case.name, case.ext);
    let cc = if case.ext == "cpp" {
        "clang++-14"
    } else {
        "clang-14"
    };
    std::fs::copy(data(&src), dir.join(&src)).unwrap();
    std::fs::copy(data("flush_profile.c"), dir.join("flush_profile.c")).unwrap();
    let mut outside_objs = vec!["flush_profile.o".to_string()];
    for c in case.outside {
        std::fs::copy(data(c), dir.join(c)).unwrap();
        let o = c.replace(".c", ".o");
        sh(&dir, "clang-14", &["-g", "-O0", "-c", c, "-o", &o]);
        outside_objs.push(o);
    }
    let outside_objs: Vec<&str> = outside_objs.iter().map(|s| s.as_str()).collect();

    // Build: the IR for the graph, the program with coverage.
    let bc = format!("{}.bc", case.name);
    sh(
        &dir,
        cc,
        &["-g", "-O0", "-emit-llvm", "-c", &src, "-o", &bc],
    );
    sh(
        &dir,
        "clang-14",
        &[
            "-g",
            "-O0",
            "-c",
            "flush_profile.c",
            "-o",
            "flush_profile.o",
        ],
    );
    let cov_flags = [
        "-g",
        "-O0",
        "-fprofile-instr-generate",
        "-fcoverage-mapping",
    ];
    sh(
        &dir,
        cc,
        &[
            &cov_flags[..],
            &[src.as_str()],
            &outside_objs,
            case.link,
            &["-o", case.name],
        ]
        .concat(),
    );

    // Run to the crash under gdb: backtrace, log and profile of one run.
    let quoted: Vec<String> = case.args.iter().map(|a| format!("'{a}'")).collect();
    let run = format!("run {} > out.log", quoted.join(" "));
    let profraw = dir.join("prog.profraw");
    let gdb = Command::new("gdb")
        .current_dir(&dir)
        .env("LLVM_PROFILE_FILE", &profraw)
        .args([
            "-nx",
            "-batch",
            "-iex",
            "set debuginfod enabled off",
            "-ex",
            "handle SIGUSR1 SIGUSR2 SIGALRM nostop noprint pass",
            "-ex",
            &run,
            "-ex",
            "bt",
            "-ex",
            "continue",
        ])
        .arg(format!("./{}", case.name))
        .stdin(Stdio::null())
        .output()
        .expect("run gdb");
    let bt =
        String::from_utf8_lossy(&gdb.stdout).to_string() + &String::from_utf8_lossy(&gdb.stderr);
    std::fs::write(dir.join("bt.txt"), &bt).unwrap();
    let frames = program_frames(&bt, &src);
    assert_eq!(
        frames.len(),
        case.depth,
        "{}: unexpected backtrace:\n{bt}",
        case.name
    );
    assert_eq!(
        frames[0].func, case.crash_in,
        "{}: crashed elsewhere:\n{bt}",
        case.name
    );
    assert_eq!(frames.last().unwrap().func, case.outermost, "{bt}");
    assert!(
        profraw.exists(),
        "{}: no profile written at the crash (gdb: {bt})",
        case.name
    );

    // The truth: llvm-cov line counts.
    sh(
        &dir,
        "llvm-profdata-14",
        &["merge", "-o", "prog.profdata", profraw.to_str().unwrap()],
    );
    let bin = format!("./{}", case.name);
    let export = sh(
        &dir,
        "llvm-cov-14",
        &[
            "export",
            "-format=text",
            "-instr-profile=prog.profdata",
            &bin,
        ],
    );
    let export: Value = serde_json::from_slice(&export.stdout).unwrap();
    let cov = &export["data"][0];
    let files = cov["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{}: coverage of several files", case.name);
    let cov_file = files[0]["filename"].as_str().unwrap().to_string();
    assert!(cov_file.ends_with(&format!("/{src}")), "{cov_file}");
    let counts = line_counts(files[0]["segments"].as_array().unwrap());
    let shown = sh(
        &dir,
        "llvm-cov-14",
        &["show", "-instr-profile=prog.profdata", &bin, &src],
    );
    let shown = shown_counts(&String::from_utf8_lossy(&shown.stdout));
    let computed: BTreeMap<u64, u64> = counts
        .iter()
        .filter(|(_, c)| **c < 1000)
        .map(|(l, c)| (*l, *c))
        .collect();
    assert_eq!(
        computed, shown,
        "{}: line counts from the export differ from llvm-cov show",
        case.name
    );

    let active = active_frames(cov["functions"].as_array().unwrap(), &frames)
        .remove(&cov_file)
        .unwrap_or_default();
    let frame_lines: BTreeSet<u64> = frames.iter().map(|f| f.line).collect();
    for l in &frame_lines {
        assert!(
            counts.get(l).map(|c| *c > 0).unwrap_or(false),
            "{}: frame line {l} has no count",
            case.name
        );
    }
    let source = std::fs::read_to_string(dir.join(&src)).unwrap();
    let brace_lines = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == "}")
        .map(|(i, _)| i as u64 + 1)
        .collect();
    let truth = Truth {
        counts,
        active,
        frame_lines,
        brace_lines,
    };

    // The analyses.
    let pm = env!("CARGO_BIN_EXE_postmortem");
    let mut failure: Vec<(String, Vec<&str>)> = vec![
        (bc.clone(), vec!["--backtrace", "bt.txt"]),
        (
            bc.clone(),
            vec!["--backtrace", "bt.txt", "--log", "out.log"],
        ),
    ];
    // The same crash from a core dump of a SanitizerCoverage build (func
    // and bb flags, see `sancov_core`).
    for mode in ["func", "bb"] {
        let (cfg, mut args) = sancov_core(&dir, case, &src, cc, &outside_objs[1..], mode);
        failure.push((cfg.clone(), args.clone()));
        args.extend(["--log", "out.log"]);
        failure.push((cfg, args));
    }
    let log = std::fs::read_to_string(dir.join("out.log")).unwrap();
    assert!(
        !log.trim().is_empty(),
        "{}: the program printed nothing before its crash",
        case.name
    );
    let mut summary = Vec::new();
    for (bc, inputs) in &failure {
        for solver in ["utl", "fsa", "cs", "best", "best --exact"] {
            let what = format!("{} {} --solver {solver}", case.name, inputs.join(" "));
            let o = Command::new(pm)
                .current_dir(&dir)
                .args(["analyze", "--cfg", bc, "--format", "json", "--solver"])
                .args(solver.split(' '))
                .args(inputs)
                .output()
                .unwrap();
            assert!(o.status.success(), "{what}: {}", show(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            // The one warning expected everywhere: coverage flags of a
            // core with several threads, of which only the clear ones are
            // used; and the case's own.
            assert!(
                err.lines().all(|l| !l.contains("warning")
                    || l.contains("threads: the")
                    || (solver.contains("--exact") && l.contains("closure stopped"))
                    || (!case.warns.is_empty() && l.contains(case.warns))),
                "{what}: {err}"
            );
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            let lines = v["lines"].as_object().unwrap();
            assert_eq!(
                lines.len(),
                1,
                "{what}: {:?}",
                lines.keys().collect::<Vec<_>>()
            );
            let (file, labels) = lines.iter().next().unwrap();
            assert_eq!(
                std::fs::canonicalize(file).unwrap(),
                std::fs::canonicalize(&cov_file).unwrap(),
                "{what}: the graph's file is not llvm-cov's"
            );
            let get = |k: &str| -> Vec<u64> {
                labels[k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect()
            };
            let (yes, no) = (get("yes"), get("no"));
            let (mut yes_ok, mut no_ok, mut unknown, mut unmapped) = (0, 0, 0, 0);
            let ran = |l: u64| {
                if case.miscounted.iter().any(|&(a, b)| (a..=b).contains(&l)) {
                    Ran::Unknown
                } else {
                    truth.ran(l)
                }
            };
            for &l in &yes {
                match ran(l) {
                    Ran::No => panic!(
                        "{what}: line {l} is Yes but did not run ({:?})\n{bt}",
                        truth.counts.get(&l)
                    ),
                    Ran::Yes => yes_ok += 1,
                    Ran::Unknown => unknown += 1,
                    Ran::Unmapped => unmapped += 1,
                }
            }
            for &l in &no {
                match ran(l) {
                    Ran::Yes => panic!(
                        "{what}: line {l} is No but ran ({:?}, {} active frames)\n{bt}",
                        truth.counts.get(&l),
                        truth.active.get(&l).unwrap_or(&0)
                    ),
                    Ran::No => no_ok += 1,
                    Ran::Unknown => unknown += 1,
                    Ran::Unmapped => unmapped += 1,
                }
            }
            // Something is learned, and confirmed.
            assert!(
                yes_ok > 0 && (no_ok > 0 || !case.confirms_no),
                "{what}: Yes lines {yes:?} ({yes_ok} confirmed), No lines {no:?} ({no_ok} confirmed)"
            );
            let maybe = get("maybe").len();
            summary.push(format!(
                "{what}: {} yes ({yes_ok} confirmed), {} no ({no_ok} confirmed), {} maybe ({:.0}% of lines decided); {unknown} unknown, {unmapped} unmapped",
                yes.len(),
                no.len(),
                maybe,
                100.0 * (yes.len() + no.len()) as f64 / (yes.len() + no.len() + maybe).max(1) as f64
            ));
        }
        for pair in ["fsa,utl", "cs,fsa", "best,cs"] {
            let o = Command::new(pm)
                .current_dir(&dir)
                .args(["analyze", "--cfg", bc, "--compare", pair, "--expect", "gt"])
                .args(inputs)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{} {inputs:?}: {pair}: the first is less precise than the second: {}",
                case.name,
                show(&o)
            );
        }
    }
    eprintln!("{}", summary.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn loops_abort_inside_a_do_while() {
    check(&Case {
        name: "loops",
        args: &["5", "12"],
        crash_in: "check_row",
        depth: 2,
        ..CASE
    });
}

#[test]
fn recursion_divides_by_zero_four_calls_deep() {
    check(&Case {
        name: "recursion",
        args: &["+ 1 * 2 / 6 - 3 3"],
        crash_in: "apply",
        depth: 8,
        ..CASE
    });
}

#[test]
fn function_pointers_crash_in_a_command_called_through_the_table() {
    check(&Case {
        name: "fnptr",
        args: &["sort", "sum", "last"],
        crash_in: "cmd_last",
        depth: 3,
        ..CASE
    });
}

#[test]
fn early_returns_then_a_failed_assert() {
    check(&Case {
        name: "early",
        args: &["7:alice:42", "3:bob:-1", "x", "9:carol:250"],
        crash_in: "store",
        depth: 2,
        ..CASE
    });
}

#[test]
fn switch_falls_through_and_dereferences_an_empty_stack() {
    check(&Case {
        name: "switch",
        args: &["12+3*p.d"],
        crash_in: "step",
        depth: 3,
        ..CASE
    });
}

#[test]
fn longjmp_errors_caught_by_a_setjmp_in_a_protected_call() {
    check(&Case {
        name: "longjmp",
        args: &["12", "3x4", "56", "y", "7"],
        crash_in: "finish",
        depth: 2,
        // protected_eval's `else` after the setjmp.
        miscounted: &[(42, 45)],
        ..CASE
    });
}

#[test]
fn signal_handlers_run_by_raise_and_leaving_by_siglongjmp() {
    check(&Case {
        name: "sighandler",
        args: &["4", "9", "2"],
        crash_in: "summarize",
        depth: 2,
        // The handler's siglongjmp makes all of main after the sigsetjmp
        // code a handler may run: nothing after it is provably unexecuted.
        confirms_no: false,
        ..CASE
    });
}

#[test]
fn callbacks_kept_in_a_table_by_a_library_outside_the_graph() {
    check(&Case {
        name: "callbacks",
        args: &["b", "a", "c"],
        crash_in: "finish",
        depth: 2,
        outside: &["callbacks_lib.c"],
        ..CASE
    });
}

#[test]
fn recursion_through_a_library_frame_the_backtrace_cannot_place() {
    check(&Case {
        name: "reentry",
        args: &["3"],
        crash_in: "walk",
        depth: 5,
        outside: &["reentry_lib.c"],
        warns: "matches no function or file of the program (library code?)",
        // What did not run (main's last lines) is in main's active frame,
        // which the truth leaves unconfirmed.
        confirms_no: false,
        ..CASE
    });
}

#[test]
fn constructors_that_ran_before_main() {
    check(&Case {
        name: "ctors",
        args: &["2", "5", "0", "7"],
        crash_in: "main",
        depth: 1,
        ..CASE
    });
}

#[test]
fn a_crash_in_an_atexit_handler_after_main_returned() {
    check(&Case {
        name: "atexit",
        args: &["3", "4"],
        crash_in: "report",
        depth: 1,
        outermost: "report",
        // Only the handler's frame is on the stack: anything may have run
        // before it.
        confirms_no: false,
        ..CASE
    });
}

#[test]
fn threads_whose_lines_ran_on_no_path_of_the_crashing_thread() {
    check(&Case {
        name: "threads",
        args: &["3", "5"],
        crash_in: "check_totals",
        depth: 2,
        link: &["-pthread"],
        ..CASE
    });
}

#[test]
fn a_crash_in_a_thread_while_main_ran_on() {
    check(&Case {
        name: "thread_crash",
        args: &["7"],
        crash_in: "ratio",
        depth: 2,
        outermost: "worker",
        link: &["-pthread"],
        // Any line of main may have run concurrently: nothing provably
        // did not.
        confirms_no: false,
        ..CASE
    });
}

#[test]
fn cpp_exceptions_thrown_through_frames_without_a_try() {
    check(&Case {
        name: "exceptions",
        args: &["5", "0", "4"],
        crash_in: "finish",
        depth: 2,
        ext: "cpp",
        ..CASE
    });
}

/// Builds `src` with `-fsanitize-coverage=MODE,inline-bool-flag,pc-table`
/// (the IR for the graph, and the binary from that IR, linked with the
/// sancov callbacks of `tests/data/sancov/sancov_stub.c` and the case's
/// objects outside the graph), runs it with the case's input under gdb to
/// the crash and writes a core there with `generate-core-file` (not the
/// kernel's core_pattern, which CI does not control). Returns the graph
/// and the `--core`/`--binary` arguments.
fn sancov_core(
    dir: &Path,
    case: &Case,
    src: &str,
    cc: &str,
    outside: &[&str],
    mode: &str,
) -> (String, Vec<&'static str>) {
    let stub = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sancov/sancov_stub.c");
    std::fs::copy(&stub, dir.join("sancov_stub.c")).unwrap();
    sh(
        dir,
        "clang-14",
        &["-g", "-O0", "-c", "sancov_stub.c", "-o", "sancov_stub.o"],
    );
    let bc = format!("{}-{mode}.bc", case.name);
    let bin = format!("{}-{mode}", case.name);
    let cov = format!("-fsanitize-coverage={mode},inline-bool-flag,pc-table");
    sh(
        dir,
        cc,
        &["-g", "-O0", &cov, "-emit-llvm", "-c", src, "-o", &bc],
    );
    sh(
        dir,
        cc,
        &[
            &["-g", "-O0", bc.as_str(), "sancov_stub.o"][..],
            outside,
            case.link,
            &["-o", bin.as_str()],
        ]
        .concat(),
    );
    let quoted: Vec<String> = case.args.iter().map(|a| format!("'{a}'")).collect();
    let core = format!("core-{mode}");
    let gdb = Command::new("gdb")
        .current_dir(dir)
        .args([
            "-nx",
            "-batch",
            "-iex",
            "set debuginfod enabled off",
            "-ex",
            "handle SIGUSR1 SIGUSR2 SIGALRM nostop noprint pass",
            "-ex",
            &format!("run {} > /dev/null", quoted.join(" ")),
            "-ex",
            &format!("generate-core-file {core}"),
        ])
        .arg(format!("./{bin}"))
        .stdin(Stdio::null())
        .output()
        .expect("run gdb");
    assert!(
        dir.join(&core).exists(),
        "{}: gdb wrote no core: {}",
        case.name,
        show(&gdb)
    );
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    (bc, vec!["--core", leak(core), "--binary", leak(bin)])
}

#[test]
fn line_counts_follow_llvm_cov() {
    // Segments [line, col, count, has_count, region_entry, gap].
    let segs: Vec<Value> = serde_json::from_str(
        "[[1,10,5,true,true,false],[2,3,2,true,true,false],[2,9,5,true,false,false],\
          [3,1,0,true,true,true],[4,1,7,true,true,false],[5,1,0,false,true,false],[6,1,0,false,false,false]]",
    )
    .unwrap();
    let c = line_counts(&segs);
    let get = |l: u64| c.get(&l).copied();
    assert_eq!(get(1), Some(5));
    assert_eq!(get(2), Some(5)); // max of the wrapped count and the regions starting on it
    assert_eq!(get(3), Some(5)); // a gap region does not count, the wrapped one does
    assert_eq!(get(4), Some(7));
    assert_eq!(get(5), None); // a skipped region
    assert_eq!(get(6), None);
}
