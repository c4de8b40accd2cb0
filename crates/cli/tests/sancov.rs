//! `analyze --core/--binary` and `--sancov-flags` on real crashes of
//! `tests/data/sancov/crash.c` built with clang-14's
//! `-fsanitize-coverage=bb,inline-bool-flag,pc-table`, cores written by
//! gdb's `generate-core-file`; and every bad input: a core of another
//! binary, a truncated core, a binary without the sancov sections, a graph
//! without the flag map, flag dumps that do not fit or contradict the
//! graph. Needs clang-14 and gdb (fails, never skips, without them).

mod common;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

fn sh(dir: &Path, program: &str, args: &[&str]) -> Output {
    let o = Command::new(program)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (see .ci/run): {e}"));
    assert!(
        o.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Builds everything once: `crash-bb.bc` + `crash-bb` (the instrumented
/// build), `crash-func` (another instrumented binary), `crash-plain` (no
/// sancov), cores `core-segv`, `core-abort` of crash-bb, `core-func` of
/// crash-func and `core-plain` of crash-plain, the gdb backtraces `bt-segv.txt`, `bt-abort.txt`, the raw flags
/// `flags-segv.bin`, and `core-trunc` (half of core-segv).
fn setup() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = common::scratch("sancov");
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sancov");
        for f in ["crash.c", "sancov_stub.c", "threads.c"] {
            std::fs::copy(data.join(f), dir.join(f)).unwrap();
        }
        for mode in ["bb", "func"] {
            let cov = format!("-fsanitize-coverage={mode},inline-bool-flag,pc-table");
            let bc = format!("crash-{mode}.bc");
            sh(
                &dir,
                "clang-14",
                &["-g", "-O0", &cov, "-emit-llvm", "-c", "crash.c", "-o", &bc],
            );
            sh(
                &dir,
                "clang-14",
                &[
                    "-g",
                    "-O0",
                    &bc,
                    "sancov_stub.c",
                    "-o",
                    &format!("crash-{mode}"),
                ],
            );
        }
        sh(
            &dir,
            "clang-14",
            &["-g", "-O0", "crash.c", "-o", "crash-plain"],
        );
        let cov = "-fsanitize-coverage=bb,inline-bool-flag,pc-table";
        sh(
            &dir,
            "clang-14",
            &[
                "-g",
                "-O0",
                cov,
                "-emit-llvm",
                "-c",
                "threads.c",
                "-o",
                "threads.bc",
            ],
        );
        sh(
            &dir,
            "clang-14",
            &[
                "-g",
                "-O0",
                "threads.bc",
                "sancov_stub.c",
                "-o",
                "threads",
                "-lpthread",
            ],
        );
        let gdb = |bin: &str, args: &str, core: &str, extra: &[&str]| {
            let mut cmd = Command::new("gdb");
            cmd.current_dir(&dir).args([
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
            let o = cmd.arg(bin).stdin(Stdio::null()).output().unwrap();
            assert!(
                dir.join(core).exists(),
                "no core: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8_lossy(&o.stdout).to_string()
        };
        let bt = gdb(
            "./crash-bb",
            "segv 5",
            "core-segv",
            &[
                "bt",
                "dump binary memory flags-segv.bin &__start___sancov_bools &__stop___sancov_bools",
            ],
        );
        std::fs::write(dir.join("bt-segv.txt"), bt).unwrap();
        let bt = gdb("./crash-bb", "abort 20", "core-abort", &["bt"]);
        std::fs::write(dir.join("bt-abort.txt"), bt).unwrap();
        gdb("./crash-func", "segv 3", "core-func", &[]);
        gdb("./crash-plain", "segv 3", "core-plain", &[]);
        gdb("./threads", "", "core-threads", &[]);
        let core = std::fs::read(dir.join("core-segv")).unwrap();
        std::fs::write(dir.join("core-trunc"), &core[..core.len() / 2]).unwrap();
        sh(
            &dir,
            env!("CARGO_BIN_EXE_postmortem"),
            &["cfg", "build", "crash-bb.bc", "-o", "crash-bb.pmcfg"],
        );
        // A cache of a build without flags.
        sh(
            &dir,
            "clang-14",
            &[
                "-g",
                "-O0",
                "-emit-llvm",
                "-c",
                "crash.c",
                "-o",
                "crash-plain.bc",
            ],
        );
        sh(
            &dir,
            env!("CARGO_BIN_EXE_postmortem"),
            &["cfg", "build", "crash-plain.bc", "-o", "crash-plain.pmcfg"],
        );
        dir
    })
}

fn pm(args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(setup())
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    o
}

fn json(args: &[&str]) -> (Value, String) {
    let mut a = vec!["analyze", "--format", "json"];
    a.extend(args);
    let o = pm(&a);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(o.status.success(), "{args:?}: {err}");
    (serde_json::from_slice(&o.stdout).unwrap(), err)
}

fn lines(v: &Value, k: &str) -> Vec<u64> {
    let files = v["lines"].as_object().unwrap();
    assert_eq!(files.len(), 1);
    let (_, l) = files.iter().next().unwrap();
    l[k].as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn line_of(text: &str) -> u64 {
    let src = std::fs::read_to_string(setup().join("crash.c")).unwrap();
    src.lines().position(|l| l.contains(text)).unwrap() as u64 + 1
}

/// Exit code and the one-line message of a failing run.
fn fails(args: &[&str]) -> (i32, String) {
    let mut a = vec!["analyze"];
    a.extend(args);
    let o = pm(&a);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    let msg: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("postmortem: error") || !l.starts_with("postmortem: "))
        .collect();
    (o.status.code().unwrap_or(-1), msg.join("\n") + &err)
}

#[test]
fn core_alone_gives_the_stack_and_the_flags() {
    for solver in ["utl", "fsa", "best"] {
        let (v, err) = json(&[
            "--cfg",
            "crash-bb.bc",
            "--core",
            "core-segv",
            "--binary",
            "crash-bb",
            "--solver",
            solver,
        ]);
        assert!(!err.contains("warning"), "{err}");
        let (yes, no) = (lines(&v, "yes"), lines(&v, "no"));
        assert!(yes.contains(&line_of("return s + *p;")), "{yes:?}");
        assert!(yes.contains(&line_of("v = deep(NULL, n);")), "{yes:?}");
        // Ran: both arms of the loop body (i = 0 and i = 1..4); not: the
        // negative branch of cube, the abort path, never_called.
        assert!(yes.contains(&line_of("s += square(i);")));
        assert!(yes.contains(&line_of("s += cube(i);")));
        assert!(no.contains(&line_of("return -cube(-x);")), "{no:?}");
        assert!(no.contains(&line_of("never_called();")));
        assert!(no.contains(&line_of("fprintf(stderr, \"too big")));
        // The stack unwound from the core is the gdb backtrace's.
        let (w, _) = json(&[
            "--cfg",
            "crash-bb.bc",
            "--core",
            "core-segv",
            "--binary",
            "crash-bb",
            "--backtrace",
            "bt-segv.txt",
            "--solver",
            solver,
        ]);
        let stack = |v: &Value| -> Vec<String> {
            v["frames"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["function"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            stack(&v),
            stack(&w),
            "{solver}: core stack vs gdb backtrace"
        );
        // The labels agree; the core's pc (its column) may decide more: a
        // backtrace's crash line is any node of the line (the function's
        // exit too), the core's is the node of the faulting instruction.
        for (k, other) in [("yes", "no"), ("no", "yes")] {
            let w_k = w["nodes"][k].as_array().unwrap();
            for n in w_k {
                assert!(
                    v["nodes"][k].as_array().unwrap().contains(n),
                    "{solver}: {n} {k}"
                );
            }
            for n in v["nodes"][k].as_array().unwrap() {
                assert!(
                    !w["nodes"][other].as_array().unwrap().contains(n),
                    "{solver}: {n} {k} from the core, {other} from the backtrace"
                );
            }
        }
        // The raw flag dump gives the same as the core's flags.
        let (x, err) = json(&[
            "--cfg",
            "crash-bb.bc",
            "--sancov-flags",
            "flags-segv.bin",
            "--binary",
            "crash-bb",
            "--backtrace",
            "bt-segv.txt",
            "--solver",
            solver,
        ]);
        assert!(!err.contains("warning"), "{err}");
        // (with the same backtrace)
        assert_eq!(w["nodes"], x["nodes"], "{solver}: --sancov-flags vs --core");
        // The graph cache of the instrumented build keeps the flag map.
        let (c, err) = json(&[
            "--cfg",
            "crash-bb.pmcfg",
            "--core",
            "core-segv",
            "--binary",
            "crash-bb",
            "--solver",
            solver,
        ]);
        assert!(!err.contains("warning"), "{err}");
        assert_eq!(v["nodes"], c["nodes"], "{solver}: .pmcfg vs .bc");
    }
    // Without --binary, the order is not checked: a warning.
    let (_, err) = json(&[
        "--cfg",
        "crash-bb.bc",
        "--sancov-flags",
        "flags-segv.bin",
        "--backtrace",
        "bt-segv.txt",
    ]);
    assert!(err.contains("not checked"), "{err}");
}

#[test]
fn a_crash_inside_the_c_library_is_unwound_through_it() {
    let (v, err) = json(&[
        "--cfg",
        "crash-bb.bc",
        "--core",
        "core-abort",
        "--binary",
        "crash-bb",
    ]);
    assert!(!err.contains("warning"), "{err}");
    assert!(lines(&v, "yes").contains(&line_of("abort();")));
    assert!(lines(&v, "no").contains(&line_of("return -cube(-x);")));
    let (w, _) = json(&[
        "--cfg",
        "crash-bb.bc",
        "--core",
        "core-abort",
        "--binary",
        "crash-bb",
        "--backtrace",
        "bt-abort.txt",
    ]);
    assert_eq!(v["nodes"], w["nodes"], "core stack vs gdb backtrace");
}

/// The line of `threads.c` containing `text`.
fn threads_line(text: &str) -> u64 {
    let src = std::fs::read_to_string(setup().join("threads.c")).unwrap();
    src.lines().position(|l| l.contains(text)).unwrap() as u64 + 1
}

#[test]
fn with_several_threads_set_flags_are_yes_without_constraining_the_path() {
    // Truth: the worker ran its `else` branch and loops in sleep; main
    // started it, slept and crashed in boom.
    let mut ran: Vec<u64> = [
        "static void *worker",
        "if (a)",
        "mode = 2;",
        "for (;;)",
        "sleep(1);", // the worker's (the first)
        "static void boom",
        "int main",
        "pthread_create(",
        "boom(NULL);",
    ]
    .iter()
    .map(|t| threads_line(t))
    .collect();
    ran.push(threads_line("boom(NULL);") - 1); // main's sleep(1)
    let not_ran = [
        threads_line("mode = 1;"),
        threads_line("return NULL;"),
        threads_line("return 0;"),
    ];
    for solver in ["utl", "fsa", "cs", "best"] {
        let (v, err) = json(&[
            "--cfg",
            "threads.bc",
            "--core",
            "core-threads",
            "--binary",
            "threads",
            "--solver",
            solver,
        ]);
        assert!(err.contains("2 threads"), "{err}");
        assert!(err.contains("ran in some thread"), "{err}");
        assert_eq!(err.matches("warning").count(), 1, "{err}");
        let (yes, no) = (lines(&v, "yes"), lines(&v, "no"));
        for l in &no {
            assert!(!ran.contains(l), "{solver}: line {l} ran but is No");
        }
        for l in &yes {
            assert!(
                !not_ran.contains(l),
                "{solver}: line {l} did not run but is Yes"
            );
        }
        // The crashing thread's stack: main called boom.
        assert!(yes.contains(&threads_line("static void boom")), "{solver}");
        // The worker's set flags (its entry, its `else` block): that code
        // ran in some thread, and so did what led to it in the worker
        // (`if (a)`, which the solvers alone leave Maybe: it is off the
        // crashing path). The flag is the first thing of its block, and
        // a thread may stop anywhere, so `mode = 2` itself stays Maybe.
        for t in ["static void *worker", "if (a)"] {
            assert!(
                yes.contains(&threads_line(t)),
                "{solver}: `{t}` not Yes: {yes:?}"
            );
        }
        // Its clear flag: `mode = 1` ran in no thread.
        assert!(no.contains(&threads_line("mode = 1;")), "{solver}: {no:?}");
    }
}

#[test]
fn bad_inputs_are_one_line_and_exit_2_or_3() {
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--core",
                "core-func",
                "--binary",
                "crash-bb",
            ],
            2,
            "not of",
        ),
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--core",
                "core-trunc",
                "--binary",
                "crash-bb",
            ],
            2,
            "truncated",
        ),
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--core",
                "core-plain",
                "--binary",
                "crash-plain",
            ],
            2,
            "no __sancov_bools",
        ),
        (
            &[
                "--cfg",
                "crash-plain.pmcfg",
                "--core",
                "core-segv",
                "--binary",
                "crash-bb",
            ],
            2,
            "no coverage flag map",
        ),
        (
            &[
                "--cfg",
                "crash-func.bc",
                "--core",
                "core-segv",
                "--binary",
                "crash-bb",
            ],
            2,
            "coverage flags",
        ),
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--core",
                "crash-bb",
                "--binary",
                "crash-bb",
            ],
            2,
            "not a core",
        ),
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--sancov-flags",
                "crash.c",
                "--binary",
                "crash-bb",
            ],
            2,
            "coverage flags",
        ),
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--sancov-flags",
                "ones.bin",
                "--binary",
                "crash-bb",
            ],
            3,
            "unused_helper",
        ),
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--sancov-flags",
                "twos.bin",
                "--binary",
                "crash-bb",
            ],
            2,
            "0 or 1",
        ),
    ];
    let core = std::fs::read(setup().join("core-segv")).unwrap();
    std::fs::write(setup().join("core-head"), &core[..64]).unwrap();
    std::fs::write(setup().join("empty"), b"").unwrap();
    let hostile: &[(&[&str], &str)] = &[
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--core",
                "crash.c",
                "--binary",
                "crash-bb",
            ],
            "not a 64-bit ELF core",
        ),
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--core",
                "empty",
                "--binary",
                "crash-bb",
            ],
            "core",
        ),
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--core",
                "core-head",
                "--binary",
                "crash-bb",
            ],
            "core",
        ),
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--core",
                "core-segv",
                "--binary",
                "crash.c",
            ],
            "not an ELF binary",
        ),
        (
            &[
                "--cfg",
                "crash-bb.bc",
                "--core",
                "missing",
                "--binary",
                "crash-bb",
            ],
            "cannot read",
        ),
    ];
    for (args, needle) in hostile {
        let (c, msg) = fails(args);
        assert_eq!(c, 2, "{args:?}: {msg}");
        assert!(
            msg.contains(needle),
            "{args:?}: expected {needle:?} in {msg}"
        );
    }
    let n = std::fs::metadata(setup().join("flags-segv.bin"))
        .unwrap()
        .len() as usize;
    std::fs::write(setup().join("ones.bin"), vec![1u8; n]).unwrap();
    std::fs::write(setup().join("twos.bin"), vec![2u8; n]).unwrap();
    for (args, code, needle) in cases {
        let (c, msg) = fails(args);
        assert_eq!(c, *code, "{args:?}: {msg}");
        assert!(
            msg.contains(needle),
            "{args:?}: expected {needle:?} in {msg}"
        );
    }
}

/// `-O2` builds (with `-fno-omit-frame-pointer`), `func` and `bb`: the
/// flag-to-block map of the optimised IR is verified against the binary
/// (pc table and symbol table; a mismatch would be exit 2, which fails
/// here), and the labels agree with the flags of the run. llvm-cov's line
/// truth is unreliable at -O2, so the truth is the flags themselves,
/// dumped by gdb from the process (not read by postmortem's core reader),
/// mapped by the front-end's own map: the node a set flag says ran is
/// never No, the nodes a clear flag says did not run are never Yes. The
/// crash stack is unwound from the core as well.
#[test]
fn optimised_builds_map_their_flags_and_label_soundly() {
    let dir = setup().join("o2");
    std::fs::create_dir_all(&dir).unwrap();
    for mode in ["func", "bb"] {
        let cov = format!("-fsanitize-coverage={mode},inline-bool-flag,pc-table");
        let opt = ["-g", "-O2", "-fno-omit-frame-pointer"];
        let (bc, bin, core, flags) = (
            format!("crash-{mode}.bc"),
            format!("crash-{mode}"),
            format!("core-{mode}"),
            format!("flags-{mode}.bin"),
        );
        sh(
            &dir,
            "clang-14",
            &[
                &opt[..],
                &[&cov, "-emit-llvm", "-c", "../crash.c", "-o", &bc],
            ]
            .concat(),
        );
        sh(
            &dir,
            "clang-14",
            &[&opt[..], &[bc.as_str(), "../sancov_stub.c", "-o", &bin]].concat(),
        );
        let o = Command::new("gdb")
            .current_dir(&dir)
            .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
            .args(["-ex", "run abort 20 > /dev/null"])
            .args(["-ex", &format!("generate-core-file {core}")])
            .args([
                "-ex",
                &format!(
                    "dump binary memory {flags} &__start___sancov_bools &__stop___sancov_bools"
                ),
            ])
            .arg(format!("./{bin}"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(dir.join(&core).exists(), "no core: {}", show_o(&o));
        let bytes = std::fs::read(dir.join(&flags)).unwrap();
        let loaded = postmortem_llvm::load_path(&dir.join(&bc)).unwrap();
        let map = loaded.sancov.expect("the -O2 IR has its flag map");
        assert_eq!(map.flags.len(), bytes.len(), "{mode}: flag count");
        let g = &loaded.icfg;
        for solver in ["utl", "fsa"] {
            let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
                .current_dir(&dir)
                .args(["analyze", "--format", "json", "--solver", solver])
                .args(["--cfg", &bc, "--core", &core, "--binary", &bin])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{mode} {solver}: {}", show_o(&o));
            assert!(
                err.contains("coverage flags set"),
                "{mode}: flags not used: {err}"
            );
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            let ids = |k: &str| -> std::collections::HashSet<String> {
                v["nodes"][k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect()
            };
            let (yes, no) = (ids("yes"), ids("no"));
            let (mut set_checked, mut clear_checked) = (0, 0);
            for (i, (f, b)) in map.flags.iter().zip(&bytes).enumerate() {
                if *b == 1 {
                    if let Some(n) = f.ran {
                        let id = g.ext_id(n);
                        assert!(
                            !no.contains(id),
                            "{mode} {solver}: flag {i} set, but {id} is No"
                        );
                        // (The ids are the output's: some set flag's node is Yes.)
                        set_checked += usize::from(yes.contains(id));
                    }
                } else {
                    for &n in &f.not_ran {
                        let id = g.ext_id(n);
                        assert!(
                            !yes.contains(id),
                            "{mode} {solver}: flag {i} clear, but {id} is Yes"
                        );
                        clear_checked += 1;
                    }
                }
            }
            assert!(
                set_checked > 0 && clear_checked > 0,
                "{mode}: nothing checked"
            );
            // The flags decide something: some node is Yes and some No.
            assert!(
                !yes.is_empty() && !no.is_empty(),
                "{mode} {solver}: nothing decided"
            );
        }
    }
}

fn show_o(o: &Output) -> String {
    format!(
        "exit {:?}\n{}{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
