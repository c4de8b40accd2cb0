//! Shapes of real programs that the small crash of `sancov.rs` does not
//! have (issue 21), each on a program built at test time in a temp dir,
//! crashed under gdb, its core written by `generate-core-file`:
//!
//! * C++ with an inline function in a header used by two translation
//!   units, linked with `llvm-link-14`: the pc table has the slots of the
//!   dropped `linkonce_odr` copy, never relocated (the constant 1 in the
//!   binary and in the core). The core must be accepted, and the labels
//!   are checked against llvm-cov's truth (`common/mod.rs`) of the same
//!   run of a coverage build.
//!
//! * Direct recursion (`sancov/recurse.c`, five activations of one
//!   function, crashing in the innermost): the recursive frames return
//!   to the same call site, so their addresses are equal, yet none is
//!   inlined into another. From the core, from gdb's backtrace and from
//!   an AddressSanitizer report, the report's stack has all five.
//!
//! * The opening `{` of a function whose entry ran is Yes in coverage
//!   builds (the entry block's flag check carries the function's scope
//!   line).
//!
//! * A run stopped on a `for (;;) {` line (`sancov/spin.c`, SIGALRM in
//!   an endless loop): the line has no statement, only the loop's
//!   branch, and the crash is that branch, not anywhere in the function.
//!
//! Needs clang-14, clang++-14, llvm-link-14, llvm-profdata-14,
//! llvm-cov-14 and gdb: without them the tests fail, they do not skip.

mod common;

use common::{active_frames, line_counts, require, sh, show, source_frames};
use common::{Ran, Truth};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

fn fresh_dir(name: &str) -> PathBuf {
    common::scratch(&format!("sancov-real-{name}"))
}

/// Runs `bin` with `args` under gdb to its crash and writes `core` there;
/// returns gdb's output (with `extra` commands' output, such as `bt`).
fn crash_with_core(dir: &Path, bin: &str, args: &str, core: &str, extra: &[&str]) -> String {
    let mut cmd = Command::new("gdb");
    cmd.current_dir(dir).args([
        "-nx",
        "-batch",
        "-iex",
        "set debuginfod enabled off",
        "-ex",
        &format!("run {args} > /dev/null"),
        "-ex",
        &format!("generate-core-file {core}"),
    ]);
    for e in extra {
        cmd.args(["-ex", e]);
    }
    let o = cmd
        .arg(format!("./{bin}"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(dir.join(core).exists(), "no core: {}", show(&o));
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// The line truth of one crashing run of the coverage build `bin`
/// (`-fprofile-instr-generate -fcoverage-mapping`, linked with
/// `e2e/flush_profile.c`), per source file name: llvm-cov's counts, read
/// with the frames of the run's gdb backtrace (see `common/mod.rs`).
fn coverage_truth(dir: &Path, bin: &str, args: &str) -> HashMap<String, Truth> {
    let profraw = dir.join(format!("{bin}.profraw"));
    let o = Command::new("gdb")
        .current_dir(dir)
        .env("LLVM_PROFILE_FILE", &profraw)
        .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
        .args(["-ex", &format!("run {args} > /dev/null")])
        .args(["-ex", "bt", "-ex", "continue"])
        .arg(format!("./{bin}"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let bt = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(profraw.exists(), "no profile: {}", show(&o));
    let profdata = format!("{bin}.profdata");
    sh(
        dir,
        "llvm-profdata-14",
        &["merge", "-o", &profdata, profraw.to_str().unwrap()],
    );
    let export = sh(
        dir,
        "llvm-cov-14",
        &[
            "export",
            "-format=text",
            &format!("-instr-profile={profdata}"),
            &format!("./{bin}"),
        ],
    );
    let export: Value = serde_json::from_slice(&export.stdout).unwrap();
    let cov = &export["data"][0];
    let frames = source_frames(&bt);
    assert!(!frames.is_empty(), "no frames:\n{bt}");
    let mut active = active_frames(cov["functions"].as_array().unwrap(), &frames);
    let mut out = HashMap::new();
    for f in cov["files"].as_array().unwrap() {
        let path = f["filename"].as_str().unwrap();
        let name = file_name(path);
        let counts = line_counts(f["segments"].as_array().unwrap());
        let frame_lines: BTreeSet<u64> = frames
            .iter()
            .filter(|fr| fr.file_name() == name)
            .map(|fr| fr.line)
            .collect();
        let source = std::fs::read_to_string(path).unwrap();
        let brace_lines = source
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim() == "}")
            .map(|(i, _)| i as u64 + 1)
            .collect();
        out.insert(
            name.clone(),
            Truth {
                counts,
                active: active.remove(path).unwrap_or_default(),
                frame_lines,
                brace_lines,
            },
        );
    }
    out
}

fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// `analyze --format json` in `dir`; it must succeed.
fn analyze(dir: &Path, args: &[&str]) -> (Value, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args(["analyze", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{args:?}: {}", show(&o));
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (serde_json::from_slice(&o.stdout).unwrap(), err)
}

/// The lines labelled `k` (yes, no, maybe) per source file name.
fn labels(v: &Value, k: &str) -> HashMap<String, Vec<u64>> {
    v["lines"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(f, l)| {
            (
                file_name(f),
                l[k].as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect(),
            )
        })
        .collect()
}

/// Every Yes and No line against the truth: no Yes line did not run, no
/// No line ran. Returns (confirmed Yes, confirmed No).
fn check_sound(v: &Value, truth: &HashMap<String, Truth>, what: &str) -> (usize, usize) {
    let (mut yes_ok, mut no_ok) = (0, 0);
    for (file, lines) in labels(v, "yes") {
        let t = truth
            .get(&file)
            .unwrap_or_else(|| panic!("{what}: no truth for {file}"));
        for l in lines {
            match t.ran(l) {
                Ran::No => panic!("{what}: {file}:{l} is Yes but did not run"),
                Ran::Yes => yes_ok += 1,
                _ => {}
            }
        }
    }
    for (file, lines) in labels(v, "no") {
        let t = truth
            .get(&file)
            .unwrap_or_else(|| panic!("{what}: no truth for {file}"));
        for l in lines {
            match t.ran(l) {
                Ran::Yes => panic!("{what}: {file}:{l} is No but ran"),
                Ran::No => no_ok += 1,
                _ => {}
            }
        }
    }
    (yes_ok, no_ok)
}

fn line_of(path: &Path, text: &str) -> u64 {
    let src = std::fs::read_to_string(path).unwrap();
    src.lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("{text:?} not in {}", path.display())) as u64
        + 1
}

#[test]
fn linkonce_odr_copies_leave_unrelocated_pc_slots_that_are_not_evidence() {
    for tool in [
        "clang-14",
        "clang++-14",
        "llvm-link-14",
        "llvm-profdata-14",
        "llvm-cov-14",
        "gdb",
    ] {
        require(tool);
    }
    let dir = fresh_dir("linkonce");
    for f in ["util.h", "left.cpp", "right.cpp"] {
        std::fs::copy(data(&format!("sancov/linked/{f}")), dir.join(f)).unwrap();
    }
    std::fs::copy(data("sancov/sancov_stub.c"), dir.join("sancov_stub.c")).unwrap();
    std::fs::copy(data("e2e/flush_profile.c"), dir.join("flush_profile.c")).unwrap();
    sh(
        &dir,
        "clang-14",
        &["-g", "-O0", "-c", "sancov_stub.c", "-o", "sancov_stub.o"],
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
    let cov = "-fsanitize-coverage=bb,inline-bool-flag,pc-table";
    for tu in ["left", "right"] {
        sh(
            &dir,
            "clang++-14",
            &[
                "-g",
                "-O0",
                cov,
                "-emit-llvm",
                "-c",
                &format!("{tu}.cpp"),
                "-o",
                &format!("{tu}.bc"),
            ],
        );
    }
    sh(
        &dir,
        "llvm-link-14",
        &["left.bc", "right.bc", "-o", "prog.bc"],
    );
    sh(
        &dir,
        "clang++-14",
        &["-g", "-O0", "prog.bc", "sancov_stub.o", "-o", "prog"],
    );
    crash_with_core(&dir, "prog", "7", "core", &[]);
    sh(
        &dir,
        "clang++-14",
        &[
            "-g",
            "-O0",
            "-fprofile-instr-generate",
            "-fcoverage-mapping",
            "left.cpp",
            "right.cpp",
            "flush_profile.o",
            "-o",
            "prog-cov",
        ],
    );
    let truth = coverage_truth(&dir, "prog-cov", "7");
    for solver in ["utl", "fsa", "cs", "best"] {
        let what = format!("--solver {solver}");
        let (v, err) = analyze(
            &dir,
            &[
                "--cfg", "prog.bc", "--core", "core", "--binary", "prog", "--solver", solver,
            ],
        );
        // The flags are used, but not those of the dropped copy's blocks.
        assert!(err.contains("coverage flags set"), "{what}: {err}");
        assert!(err.contains("never relocated"), "{what}: {err}");
        assert!(!err.contains("warning"), "{what}: {err}");
        let (yes_ok, no_ok) = check_sound(&v, &truth, &what);
        assert!(
            yes_ok > 0 && no_ok > 0,
            "{what}: {yes_ok} yes, {no_ok} no confirmed"
        );
        let yes = labels(&v, "yes");
        let no = labels(&v, "no");
        // The header's function ran (through both copies' callers), and
        // its flags tell which arms.
        let h = dir.join("util.h");
        assert!(
            yes["util.h"].contains(&line_of(&h, "return x * 2;")),
            "{what}: {yes:?}"
        );
        assert!(
            no["util.h"].contains(&line_of(&h, "return 100;")),
            "{what}: {no:?}"
        );
        let r = dir.join("right.cpp");
        assert!(no["right.cpp"].contains(&line_of(&r, "return left(x) * right(x);")));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The frames of the report's stack whose callee is `func`.
fn frames_into(g: &postmortem_core::Icfg, r: &postmortem_core::Report, func: &str) -> usize {
    let f = g.function_by_name(func).unwrap();
    r.stack
        .iter()
        .filter(|fr| fr.entry.nodes().iter().any(|&n| g.func_of(n) == f))
        .count()
}

/// Builds `sancov/recurse.c` once: `recurse-MODE.bc` and `recurse-MODE`
/// (MODE `func` and `bb`), their cores `core-MODE` of `recurse-MODE 4`
/// and gdb backtraces `bt-MODE.txt`, and `asan.txt`, the
/// AddressSanitizer report of the same crash.
fn recurse() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        for tool in ["clang-14", "gdb"] {
            require(tool);
        }
        let dir = fresh_dir("recurse");
        std::fs::copy(data("sancov/recurse.c"), dir.join("recurse.c")).unwrap();
        std::fs::copy(data("sancov/sancov_stub.c"), dir.join("sancov_stub.c")).unwrap();
        sh(
            &dir,
            "clang-14",
            &[
                "-g",
                "-O0",
                "-fsanitize=address",
                "recurse.c",
                "-o",
                "recurse-asan",
            ],
        );
        let o = Command::new(dir.join("recurse-asan"))
            .current_dir(&dir)
            .arg("4")
            .env("ASAN_OPTIONS", "detect_leaks=0")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let asan = String::from_utf8_lossy(&o.stderr).to_string();
        assert!(asan.contains("AddressSanitizer"), "{}", show(&o));
        std::fs::write(dir.join("asan.txt"), &asan).unwrap();
        for mode in ["func", "bb"] {
            let cov = format!("-fsanitize-coverage={mode},inline-bool-flag,pc-table");
            let (bc, bin) = (format!("recurse-{mode}.bc"), format!("recurse-{mode}"));
            sh(
                &dir,
                "clang-14",
                &[
                    "-g",
                    "-O0",
                    &cov,
                    "-emit-llvm",
                    "-c",
                    "recurse.c",
                    "-o",
                    &bc,
                ],
            );
            sh(
                &dir,
                "clang-14",
                &["-g", "-O0", &bc, "sancov_stub.c", "-o", &bin],
            );
            let out = crash_with_core(&dir, &bin, "4", &format!("core-{mode}"), &["bt"]);
            std::fs::write(dir.join(format!("bt-{mode}.txt")), &out).unwrap();
        }
        dir
    })
}

#[test]
fn direct_recursion_keeps_every_activation() {
    use postmortem_formats::failure::{assemble, FailureFiles, FailureOptions};
    let dir = recurse();
    let asan = dir.join("asan.txt");
    for mode in ["func", "bb"] {
        let loaded = postmortem_llvm::load_path(&dir.join(format!("recurse-{mode}.bc"))).unwrap();
        let g = &loaded.icfg;
        let (core, bin, bt) = (
            dir.join(format!("core-{mode}")),
            dir.join(format!("recurse-{mode}")),
            dir.join(format!("bt-{mode}.txt")),
        );
        let inputs = [
            (
                "core",
                FailureFiles {
                    core: Some(&core),
                    binary: Some(&bin),
                    ..FailureFiles::default()
                },
            ),
            (
                "gdb backtrace",
                FailureFiles {
                    backtrace: Some(&bt),
                    ..FailureFiles::default()
                },
            ),
            (
                "ASan report",
                FailureFiles {
                    backtrace: Some(&asan),
                    ..FailureFiles::default()
                },
            ),
        ];
        for (what, files) in inputs {
            let found = assemble(
                g,
                loaded.sancov.as_ref(),
                loaded.vars.as_ref(),
                &files,
                &FailureOptions::default(),
            )
            .unwrap_or_else(|e| panic!("{mode} {what}: {e}"));
            let warnings: Vec<_> = found
                .diagnostics
                .iter()
                .filter(|d| matches!(d, postmortem_formats::failure::Diagnostic::Warning(_)))
                .collect();
            let r = found.report.clone();
            // main's call and four recursive calls, each into depth_sum.
            assert_eq!(
                frames_into(g, &r, "depth_sum"),
                5,
                "{mode} {what}: not the five activations: {:?}\n{warnings:?}",
                r.stack
            );
            assert_eq!(r.stack.len(), 5, "{mode} {what}");
            assert!(warnings.is_empty(), "{mode} {what}: {warnings:?}");
        }
        // The analysis of the core is sound: the line that never ran is No,
        // the recursive call's line Yes.
        let src = dir.join("recurse.c");
        for solver in ["utl", "fsa", "cs"] {
            let (v, err) = analyze(
                dir,
                &[
                    "--cfg",
                    &format!("recurse-{mode}.bc"),
                    "--core",
                    &format!("core-{mode}"),
                    "--binary",
                    &format!("recurse-{mode}"),
                    "--solver",
                    solver,
                ],
            );
            assert!(!err.contains("warning"), "{mode} {solver}: {err}");
            let yes = &labels(&v, "yes")["recurse.c"];
            let no = &labels(&v, "no")["recurse.c"];
            assert!(
                yes.contains(&line_of(&src, "int r = depth_sum(")),
                "{yes:?}"
            );
            assert!(no.contains(&line_of(&src, "return r + n;")), "{no:?}");
        }
    }
}

/// The opening `{` of a function holds only the entry block's flag check,
/// which carries the function's scope line: Yes when the function surely
/// ran, No when it surely did not.
#[test]
fn the_opening_brace_of_a_function_that_ran_is_yes() {
    let dir = recurse();
    let src = dir.join("recurse.c");
    // The `{` lines: the line after each function's declarator.
    let brace_of = |decl: &str| line_of(&src, decl) + 1;
    let (rec, main, unused) = (
        brace_of("static int depth_sum("),
        brace_of("int main("),
        brace_of("static int unused("),
    );
    for mode in ["func", "bb"] {
        for solver in ["utl", "fsa", "cs"] {
            let (v, err) = analyze(
                dir,
                &[
                    "--cfg",
                    &format!("recurse-{mode}.bc"),
                    "--core",
                    &format!("core-{mode}"),
                    "--binary",
                    &format!("recurse-{mode}"),
                    "--solver",
                    solver,
                ],
            );
            assert!(!err.contains("warning"), "{mode} {solver}: {err}");
            let yes = &labels(&v, "yes")["recurse.c"];
            let no = &labels(&v, "no")["recurse.c"];
            assert!(
                yes.contains(&rec) && yes.contains(&main),
                "{mode} {solver}: the opening braces {rec}, {main} are not Yes: {yes:?}"
            );
            assert!(no.contains(&unused), "{mode} {solver}: {no:?}");
        }
    }
}

#[test]
fn a_crash_on_a_for_ever_line_is_at_the_loop_branch() {
    for tool in ["clang-14", "gdb"] {
        require(tool);
    }
    let dir = fresh_dir("spin");
    std::fs::copy(data("sancov/spin.c"), dir.join("spin.c")).unwrap();
    std::fs::copy(data("sancov/sancov_stub.c"), dir.join("sancov_stub.c")).unwrap();
    let src = dir.join("spin.c");
    let cov = "-fsanitize-coverage=bb,inline-bool-flag,pc-table";
    for (bc, bin, extra) in [
        ("spin.bc", "spin", &[][..]),
        ("spin-bb.bc", "spin-bb", &[cov][..]),
    ] {
        sh(
            &dir,
            "clang-14",
            &[
                &["-g", "-O0"],
                extra,
                &["-emit-llvm", "-c", "spin.c", "-o", bc],
            ]
            .concat(),
        );
        sh(
            &dir,
            "clang-14",
            &["-g", "-O0", bc, "sancov_stub.c", "-o", bin],
        );
        // SIGALRM stops it in the loop (gdb passes it silently by default).
        let o = Command::new("gdb")
            .current_dir(&dir)
            .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
            .args(["-ex", "handle SIGALRM stop print nopass"])
            .args(["-ex", "run > /dev/null", "-ex", "bt"])
            .args(["-ex", &format!("generate-core-file core-{bin}")])
            .arg(format!("./{bin}"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let bt = String::from_utf8_lossy(&o.stdout).to_string();
        let for_line = line_of(&src, "for (;;) {");
        assert!(
            bt.contains(&format!("in spin (n=1) at spin.c:{for_line}")),
            "{}",
            show(&o)
        );
        std::fs::write(dir.join(format!("bt-{bin}.txt")), &bt).unwrap();
        let core = format!("core-{bin}");
        let bt = format!("bt-{bin}.txt");
        let inputs: [&[&str]; 2] = [&["--backtrace", &bt], &["--core", &core, "--binary", bin]];
        for input in inputs {
            for solver in ["utl", "fsa", "cs"] {
                let mut args = vec!["--cfg", bc, "--solver", solver];
                args.extend(input);
                let (v, err) = analyze(&dir, &args);
                let what = format!("{args:?}");
                assert!(!err.contains("no statement"), "{what}: {err}");
                assert!(
                    err.lines()
                        .all(|l| !l.contains("warning") || l.contains("no coverage flags")),
                    "{what}: {err}"
                );
                let yes = &labels(&v, "yes")["spin.c"];
                let no = &labels(&v, "no")["spin.c"];
                // The crash is past the test before the loop, and main's
                // return never ran.
                assert!(
                    yes.contains(&line_of(&src, "if (n > 0)")),
                    "{what}: {yes:?}"
                );
                assert!(no.contains(&line_of(&src, "return 0;")), "{what}: {no:?}");
                // The loop's line is borrowed code only: never Yes.
                assert!(!yes.contains(&for_line), "{what}: {yes:?}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A run stopped on the first line of a condition that goes on over
/// lines (`sancov/cond.c`, bzip2's `cleanUpAndFail`), before its first
/// comparison: the condition's last branch has the first line's location
/// too, but the crash is not that branch, and the continuation lines did
/// not run. From gdb's backtrace and from cores of a plain and a `bb`
/// build (whose flags for those blocks are clear: the report must stay
/// possible), with every solver.
#[test]
fn a_crash_on_a_conditions_first_line_runs_none_of_the_rest() {
    for tool in ["clang-14", "gdb"] {
        require(tool);
    }
    let dir = fresh_dir("cond");
    std::fs::copy(data("sancov/cond.c"), dir.join("cond.c")).unwrap();
    std::fs::copy(data("sancov/sancov_stub.c"), dir.join("sancov_stub.c")).unwrap();
    let src = dir.join("cond.c");
    let first = line_of(&src, "if (mode == 3");
    let rest = [
        line_of(&src, "&& op != 3"),
        line_of(&src, "&& del) {"),
        line_of(&src, "printf(\"removing"),
    ];
    let cov = "-fsanitize-coverage=bb,inline-bool-flag,pc-table";
    for (bc, bin, extra) in [
        ("cond.bc", "cond", &[][..]),
        ("cond-bb.bc", "cond-bb", &[cov][..]),
    ] {
        sh(
            &dir,
            "clang-14",
            &[
                &["-g", "-O0"],
                extra,
                &["-emit-llvm", "-c", "cond.c", "-o", bc],
            ]
            .concat(),
        );
        sh(
            &dir,
            "clang-14",
            &["-g", "-O0", bc, "sancov_stub.c", "-o", bin],
        );
        let o = common::gdb(
            &dir,
            &format!("./{bin}"),
            &[
                &format!("break cond.c:{first}"),
                "run > /dev/null",
                "bt",
                &format!("generate-core-file core-{bin}"),
            ],
        );
        let bt = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            bt.contains(&format!("fail (code=2) at cond.c:{first}")),
            "{}",
            show(&o)
        );
        std::fs::write(dir.join(format!("bt-{bin}.txt")), &bt).unwrap();
        let core = format!("core-{bin}");
        let bt = format!("bt-{bin}.txt");
        let inputs: [&[&str]; 2] = [&["--backtrace", &bt], &["--core", &core, "--binary", bin]];
        for input in inputs {
            for solver in ["utl", "fsa", "cs", "best"] {
                let mut args = vec!["--cfg", bc, "--solver", solver];
                args.extend(input);
                let (v, _) = analyze(&dir, &args);
                let what = format!("{args:?}");
                let yes = &labels(&v, "yes")["cond.c"];
                assert!(yes.contains(&first), "{what}: {yes:?}");
                for l in rest {
                    assert!(!yes.contains(&l), "{what}: line {l} did not run: {yes:?}");
                }
                // Frames numbered from the crash as gdb numbers them.
                let from_crash: Vec<(String, u64)> = v["frames"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| {
                        (
                            f["function"].as_str().unwrap().to_string(),
                            f["from_crash"].as_u64().unwrap(),
                        )
                    })
                    .collect();
                assert!(
                    from_crash.contains(&("fail".into(), 0))
                        && from_crash.contains(&("main".into(), 1)),
                    "{what}: {from_crash:?}"
                );
                // Local labels of the crash frame too.
                for f in v["frames"].as_array().unwrap() {
                    if f["function"] == "fail" {
                        let local: Vec<u64> = f["lines"]["yes"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_u64().unwrap())
                            .collect();
                        for l in rest {
                            assert!(!local.contains(&l), "{what}: Local {l}: {local:?}");
                        }
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
