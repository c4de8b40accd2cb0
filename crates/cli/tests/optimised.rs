//! Cores of optimised builds (`-O2 -g`, issue 20): the graph is the
//! optimised IR (`clang -O2 -emit-llvm`), the binary is compiled from that
//! very IR with the middle-end off (as the real-program harness builds
//! its `-O2` programs). Such a binary has no frame pointers: its stack is
//! unwound by its call frame information, and a sibling call (`return
//! f(x);` compiled as a jump) hides its caller's frame, which must leave a
//! gap in the stack, never a wrong pending call. Code the optimiser
//! hoisted keeps the line it came from, and an inlined copy may keep no
//! instruction of a statement that its function's own body has: neither
//! may give a wrong Yes or No. Truth: the programs are deterministic, so
//! which lines ran is known from their input.

mod common;

use common::{require, sh, show};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn scratch(tag: &str) -> PathBuf {
    common::scratch(&format!("optimised-{tag}"))
}

/// Builds `src` of `tests/data/optimised/` at `-O2 -g` into `dir` (IR, and
/// a binary from that IR), runs it under gdb until it crashes, and writes
/// the core `core` and gdb's backtrace `bt.txt`.
fn crash_optimised(dir: &Path, src: &str) {
    crash_at(dir, src, "-O2");
}

/// [`crash_optimised`] at optimisation level `opt` (`-O0`, `-O2`).
fn crash_at(dir: &Path, src: &str, opt: &str) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/optimised");
    std::fs::copy(data.join(src), dir.join(src)).unwrap();
    sh(
        dir,
        "clang-14",
        &["-g", opt, "-emit-llvm", "-c", src, "-o", "prog.bc"],
    );
    sh(
        dir,
        "clang-14",
        &[
            "-g",
            opt,
            "-Xclang",
            "-disable-llvm-passes",
            "prog.bc",
            "-o",
            "prog",
        ],
    );
    let o = Command::new("gdb")
        .current_dir(dir)
        .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
        .args(["-ex", "run > /dev/null", "-ex", "bt"])
        .args(["-ex", "generate-core-file core"])
        .arg("./prog")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(dir.join("core").exists(), "no core: {}", show(&o));
    std::fs::write(dir.join("bt.txt"), &o.stdout).unwrap();
}

/// `analyze --format json` of the core with `extra` options; (JSON,
/// stderr).
fn analyze(dir: &Path, extra: &[&str]) -> (Value, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args(["analyze", "--cfg", "prog.bc", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    (
        serde_json::from_slice(&o.stdout).unwrap(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The lines of `file` with label `l` ("yes", "no", "maybe").
fn lines(v: &Value, file: &str, l: &str) -> Vec<u64> {
    let files = v["lines"].as_object().unwrap();
    let (_, f) = files
        .iter()
        .find(|(k, _)| k.ends_with(file))
        .unwrap_or_else(|| panic!("no {file} in {files:?}"));
    f[l].as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// sibling.c crashes in `leaf`, called by `mid`'s sibling call (a jump),
/// called by `main` on a line that also calls `leaf` directly. The core's
/// stack is `leaf` over `main`: read as "main's pending call is its direct
/// call of leaf", `mid` would never have run. Each solver's labels must be
/// sound, with and without the variables' values, and the stack must be
/// used (the crash line is Yes, the line after main's call is No).
#[test]
fn an_optimised_core_is_unwound_and_a_sibling_call_leaves_a_gap() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = scratch("sibling");
    crash_optimised(&dir, "sibling.c");
    let bt = std::fs::read_to_string(dir.join("bt.txt")).unwrap();
    assert!(
        bt.contains("leaf") && !bt.contains(" mid ("),
        "mid is not a sibling call in this build:\n{bt}"
    );
    let ran = [8, 10, 15, 16, 18, 19];
    let not_ran = [9, 20, 21];
    for solver in ["utl", "fsa", "cs", "best"] {
        for values in [true, false] {
            let mut args = vec!["--core", "core", "--binary", "prog", "--solver", solver];
            if !values {
                args.push("--no-values");
            }
            let what = format!("--solver {solver}, values {values}");
            let (v, err) = analyze(&dir, &args);
            assert!(
                !err.contains("crash stack is not used"),
                "{what}: the stack was not unwound:\n{err}"
            );
            // The frames whose values were left out, and why.
            if values {
                assert!(
                    err.contains(
                        "local variables not read: `leaf` (the crash frame) and the frames below it on the stack: `leaf` has no frame pointer (optimised code"
                    ),
                    "{what}: {err}"
                );
            }
            let (yes, no) = (lines(&v, "sibling.c", "yes"), lines(&v, "sibling.c", "no"));
            for l in &no {
                assert!(!ran.contains(l), "{what}: line {l} ran but is No");
            }
            for l in &yes {
                assert!(
                    !not_ran.contains(l),
                    "{what}: line {l} did not run but is Yes"
                );
            }
            assert!(
                yes.contains(&10),
                "{what}: the crash line is not Yes: {yes:?}"
            );
            if solver == "cs" || solver == "best" {
                // main's call is pending: what follows it did not run.
                assert!(no.contains(&20), "{what}: line 20 is not No: {no:?}");
            }
        }
    }
}

/// The same crash of sibling.c read from gdb's backtrace alone (no
/// binary: nothing tells where a sibling call hid a frame but the graph's
/// `tail` markers). `leaf` over `main`, where main's line also calls
/// `mid`, which tail-calls `leaf`: the stack must leave a gap after main's
/// frame, so that no solver says mid's lines did not run. An `-O0` build
/// of the same program (no `tail` marker, mid's frame on the stack) keeps
/// its precise labels.
#[test]
fn a_backtrace_of_an_optimised_build_leaves_a_gap_where_sibling_calls_may_hide_frames() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let ran = [8, 10, 13, 15, 16, 18, 19];
    let not_ran = [9, 14, 20, 21];
    for opt in ["-O2", "-O0"] {
        let dir = scratch(&format!("sibling-bt{opt}"));
        crash_at(&dir, "sibling.c", opt);
        let bt = std::fs::read_to_string(dir.join("bt.txt")).unwrap();
        let mid_shown = bt.contains(" mid (");
        assert_eq!(
            mid_shown,
            opt == "-O0",
            "{opt}: mid's frame is (not) on the stack:\n{bt}"
        );
        for solver in ["utl", "fsa", "cs", "best"] {
            let what = format!("{opt} --backtrace, --solver {solver}");
            let (v, err) = analyze(&dir, &["--backtrace", "bt.txt", "--solver", solver]);
            assert!(
                !err.contains("crash stack is not used"),
                "{what}: the stack was not used:\n{err}"
            );
            // The output says where the gap was assumed: after main's
            // frame, before `leaf`, sibling calls only; none at -O0.
            let gaps = v["stack_gaps"].as_array().unwrap();
            if opt == "-O2" {
                assert!(
                    gaps.iter()
                        .any(|g| g["inner"] == "leaf" && g["sibling_calls_only"] == true),
                    "{what}: {gaps:?}"
                );
            } else {
                assert!(gaps.is_empty(), "{what}: {gaps:?}");
            }
            let (yes, no) = (lines(&v, "sibling.c", "yes"), lines(&v, "sibling.c", "no"));
            for l in &no {
                assert!(!ran.contains(l), "{what}: line {l} ran but is No");
            }
            for l in &yes {
                assert!(
                    !not_ran.contains(l),
                    "{what}: line {l} did not run but is Yes"
                );
            }
            assert!(
                yes.contains(&10),
                "{what}: the crash line is not Yes: {yes:?}"
            );
            if solver == "cs" || solver == "best" {
                // main's call is pending: what follows it did not run.
                assert!(no.contains(&20), "{what}: line 20 is not No: {no:?}");
                if opt == "-O0" {
                    // mid's frame is on the stack: its call line ran, and
                    // main's direct call of leaf (line 19) is not taken
                    // for the pending one.
                    assert!(yes.contains(&16), "{what}: line 16 is not Yes: {yes:?}");
                }
            }
        }
    }
}

/// Analyses the `-O2` core of `src` with every solver, with and without
/// values, and checks each Yes and No line of `src` against the lines
/// that ran and did not run; returns the `cs` analysis (with values).
fn check_sound(src: &str, ran: &[u64], not_ran: &[u64]) -> Value {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = scratch(src.trim_end_matches(".c"));
    crash_optimised(&dir, src);
    let mut cs = Value::Null;
    for solver in ["utl", "fsa", "cs", "best"] {
        for values in [true, false] {
            let mut args = vec!["--core", "core", "--binary", "prog", "--solver", solver];
            if !values {
                args.push("--no-values");
            }
            let what = format!("{src}: --solver {solver}, values {values}");
            let (v, err) = analyze(&dir, &args);
            assert!(
                !err.contains("crash stack is not used"),
                "{what}: the stack was not unwound:\n{err}"
            );
            for l in lines(&v, src, "no") {
                assert!(!ran.contains(&l), "{what}: line {l} ran but is No");
            }
            for l in lines(&v, src, "yes") {
                assert!(
                    !not_ran.contains(&l),
                    "{what}: line {l} did not run but is Yes"
                );
            }
            if solver == "cs" && values {
                cs = v;
            }
        }
    }
    cs
}

/// hoisted.c: `isempty` (line 13) is inlined into `handle`'s loop and
/// never runs, but the optimiser hoists the address of `s->len` into
/// `handle`'s entry block with line 13's location: the entry block ran,
/// line 13 did not. (Found in bzip2: `isempty_RL`, bzlib.c:141.)
#[test]
fn hoisted_code_does_not_make_its_line_yes() {
    let v = check_sound(
        "hoisted.c",
        &[18, 20, 25, 26, 27, 28, 32],
        &[13, 14, 15, 21, 22, 23, 30],
    );
    // The stack and the crash are used: the crash line ran, main's line
    // after its pending call did not.
    assert!(
        lines(&v, "hoisted.c", "yes").contains(&32),
        "{}",
        v["lines"]
    );
    assert!(lines(&v, "hoisted.c", "no").contains(&36), "{}", v["lines"]);
}

/// inlined.c: `make` is inlined into `main`, and its out-of-line body
/// (kept: its address is taken) never runs; in the inlined copy `return
/// p;` (line 13) and the declaration line leave no instruction of their
/// own, so only the body's never-run nodes carry them. (Found in lz4:
/// `LZ4F_createCompressionContext_advanced`, lz4frame.c:599 and 606.)
#[test]
fn lines_of_an_inlined_copy_are_not_no() {
    let v = check_sound("inlined.c", &[7, 8, 9, 11, 12, 13, 16, 17, 18, 19], &[10]);
    assert!(
        lines(&v, "inlined.c", "yes").contains(&12),
        "{}",
        v["lines"]
    );
}

/// inl_main.c and inl_kv.c: the graph is the IR before inlining (`-O1
/// -Xclang -disable-llvm-passes`: no `optnone`, no `noinline`), the binary
/// optimises it at `-O2`, inlining `kv_find` into `cmd_incr` into `main`.
/// The core's one physical frame is `main` with that inline chain; the
/// graph calls both, so both are frames of their own (merged into `main`,
/// the crash at `inl_kv.c:6` would be a line of another file). And a
/// backtrace frame whose file is not its function's (`cmd_incr` at
/// `inl_kv.c:13`) is never placed on that line of its function's file.
#[test]
fn inlined_calls_the_graph_makes_are_frames_and_other_files_never_lines() {
    for t in ["clang-14", "llvm-link-14", "gdb"] {
        require(t);
    }
    let dir = scratch("inlined-calls");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/optimised");
    for f in ["inl_kv.h", "inl_kv.c", "inl_main.c"] {
        std::fs::copy(data.join(f), dir.join(f)).unwrap();
    }
    for f in ["inl_kv", "inl_main"] {
        let (src, bc) = (format!("{f}.c"), format!("{f}.bc"));
        sh(
            &dir,
            "clang-14",
            &[
                "-g",
                "-O1",
                "-Xclang",
                "-disable-llvm-passes",
                "-emit-llvm",
                "-c",
                &src,
                "-o",
                &bc,
            ],
        );
    }
    sh(
        &dir,
        "llvm-link-14",
        &["inl_kv.bc", "inl_main.bc", "-o", "prog.bc"],
    );
    sh(&dir, "clang-14", &["-g", "-O2", "prog.bc", "-o", "prog"]);
    let o = common::gdb(
        &dir,
        "./prog",
        &["run > /dev/null", "bt", "generate-core-file core"],
    );
    let bt = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        dir.join("core").exists() && bt.contains("kv_find") && bt.contains("cmd_incr"),
        "{}",
        show(&o)
    );
    let frames: Vec<&str> = bt.lines().filter(|l| l.starts_with('#')).collect();
    // gdb prints an address on physical frames only.
    assert!(
        frames.len() == 3
            && frames[0].starts_with("#0  0x")
            && !frames[1].contains(" in ")
            && !frames[2].contains(" in "),
        "kv_find and cmd_incr are not inlined into main in this build:\n{bt}"
    );
    std::fs::write(dir.join("bt.txt"), &bt).unwrap();
    // What ran: main.c 19 (the call), 10 (the call); kv.c 5 and 6 (the
    // crash). What did not: main.c 11-14, 20; kv.c 7, 9.
    let check = |args: &[&str]| {
        let (v, _) = analyze(&dir, args);
        let what = args.join(" ");
        let (kv_yes, kv_no) = (lines(&v, "inl_kv.c", "yes"), lines(&v, "inl_kv.c", "no"));
        let (m_yes, m_no) = (
            lines(&v, "inl_main.c", "yes"),
            lines(&v, "inl_main.c", "no"),
        );
        for l in [5, 6] {
            assert!(kv_yes.contains(&l), "{what}: inl_kv.c:{l} is not Yes");
        }
        for l in [10, 19] {
            assert!(m_yes.contains(&l), "{what}: inl_main.c:{l} is not Yes");
        }
        for l in [7, 9] {
            assert!(!kv_yes.contains(&l), "{what}: inl_kv.c:{l} is Yes");
        }
        for l in [11, 12, 13, 14, 20] {
            assert!(!m_yes.contains(&l), "{what}: inl_main.c:{l} is Yes");
        }
        for l in [5, 6] {
            assert!(!kv_no.contains(&l), "{what}: inl_kv.c:{l} is No");
        }
        for l in [10, 19] {
            assert!(!m_no.contains(&l), "{what}: inl_main.c:{l} is No");
        }
    };
    check(&["--core", "core", "--binary", "prog"]);
    check(&["--backtrace", "bt.txt"]);
    // A frame of `cmd_incr` at a line of another file: line 13 of
    // inl_main.c (`e->val++`, which did not run) must not be its place.
    let edited = "#0  cmd_incr (key=0x1) at inl_kv.c:13\n#1  0x0000555555555200 in main (argc=1, argv=0x2) at inl_main.c:19\n";
    std::fs::write(dir.join("other-file.txt"), edited).unwrap();
    let (v, err) = analyze(&dir, &["--backtrace", "other-file.txt"]);
    let yes = lines(&v, "inl_main.c", "yes");
    assert!(!yes.contains(&13), "inl_main.c:13 is Yes: {yes:?}\n{err}");
    assert!(
        err.contains("not in its function's file"),
        "no warning about the other file:\n{err}"
    );
}

/// The binary's line table as `llvm-dwarfdump-14 --debug-line` prints
/// it: the lines of `file` with a row.
fn rows_of(dir: &Path, file: &str) -> std::collections::BTreeSet<u64> {
    let o = Command::new("llvm-dwarfdump-14")
        .current_dir(dir)
        .args(["--debug-line", "prog"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let mut names = std::collections::HashMap::new();
    let mut index = 0u64;
    let mut rows = std::collections::BTreeSet::new();
    for l in text.lines() {
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("file_names[") {
            index = rest.split(']').next().unwrap().trim().parse().unwrap();
        } else if let Some(name) = t.strip_prefix("name: \"") {
            names.insert(index, name.trim_end_matches('"').to_string());
        } else if t.starts_with("0x") {
            // Address, line, column, file, ...
            let w: Vec<&str> = t.split_whitespace().collect();
            let (Ok(line), Ok(f)) = (w[1].parse::<u64>(), w[3].parse::<u64>()) else {
                continue;
            };
            if names.get(&f).is_some_and(|n| n.ends_with(file)) {
                rows.insert(line);
            }
        }
    }
    rows
}

/// Issue 39: `-O2` labels say where the optimiser moved a line and which
/// lines have no code in the binary. notes.c's `int writing = 0;` has its
/// only instruction in the loop's exit (its value is chosen there), so
/// it is not Yes although the loop ran: the note says it was moved to
/// the `return`. Every line said to have no code has no row in the
/// binary's line table (llvm-dwarfdump the referee), and no line with a
/// row is said to have none. The `-O0` build of the same program has no
/// moved line.
#[test]
fn optimised_labels_say_where_code_was_moved_and_which_lines_have_none() {
    for t in ["clang-14", "gdb", "llvm-dwarfdump-14"] {
        require(t);
    }
    let dir = scratch("notes");
    crash_optimised(&dir, "notes.c");
    let src = std::fs::read_to_string(dir.join("notes.c")).unwrap();
    let line_of = |text: &str| 1 + src.lines().position(|l| l.contains(text)).unwrap() as u64;
    let (decl, ret) = (line_of("int writing = 0;"), line_of("return writing * 10"));
    let (v, err) = analyze(&dir, &["--core", "core", "--binary", "prog"]);
    let (_, f) = v["lines"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.ends_with("notes.c"))
        .unwrap();
    let moved: Vec<(u64, Option<u64>)> = f["moved"]
        .as_array()
        .unwrap_or_else(|| panic!("no moved lines: {f}\n{err}"))
        .iter()
        .map(|m| (m["line"].as_u64().unwrap(), m["to"].as_u64()))
        .collect();
    assert!(moved.contains(&(decl, Some(ret))), "{moved:?}");
    let no_code: Vec<u64> = f["no_code"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let rows = rows_of(&dir, "notes.c");
    assert!(!rows.is_empty());
    for l in &no_code {
        assert!(!rows.contains(l), "line {l} has a row: {rows:?}");
    }
    assert!(no_code.contains(&decl), "{no_code:?}");
    for k in ["yes", "no", "maybe"] {
        for l in lines(&v, "notes.c", k) {
            assert!(
                !(rows.contains(&l) && no_code.contains(&l)),
                "line {l} ({k}) has a row and no code"
            );
        }
    }
    // The text and the annotated source say it beside the line.
    let run = |format: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
            .current_dir(&dir)
            .args(["analyze", "--cfg", "prog.bc", "--format", format])
            .args(["--core", "core", "--binary", "prog"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let text = run("text");
    assert!(
        text.contains(&format!("moved by the optimiser: {decl} (to line {ret})")),
        "{text}"
    );
    let annotated = run("annotate");
    let row = annotated
        .lines()
        .find(|l| l.contains("int writing = 0;"))
        .unwrap();
    assert!(
        row.ends_with(&format!(
            "<- no code in the binary; moved by the optimiser to line {ret}"
        )),
        "{row}"
    );
    // -O0: nothing moved.
    let dir0 = scratch("notes-o0");
    crash_at(&dir0, "notes.c", "-O0");
    let (v0, _) = analyze(&dir0, &["--core", "core", "--binary", "prog"]);
    for (_, f) in v0["lines"].as_object().unwrap() {
        assert!(f.get("moved").is_none(), "{f}");
    }
}

/// Issue 39, part 1: the stack of a deep `-O2` recursion through
/// functions inlined into each other (deep.c: a recursive-descent parser
/// whose `term` and `factor` are inlined into `expr`; gdb's `bt` has 183
/// frames, 121 of them inlined) from the core and from gdb's backtrace,
/// under an address-space limit, with and without `--max-memory`: every
/// run ends with an answer (exit 0: never an abort, never a hang), and
/// the answer is sound and uses the stack: the division that faulted
/// (its line) ran, `main`'s lines after the parse did not, and the call
/// of `expr` in `factor`, pending in every frame, ran: each frame's
/// inline chain names the copy of that call (`expr` holds four, one per
/// way `term` and `factor` were inlined into it).
#[test]
fn a_deep_optimised_recursion_is_analysed_within_the_limits() {
    for t in ["clang-14", "gdb", "prlimit"] {
        require(t);
    }
    let dir = scratch("deep");
    crash_optimised(&dir, "deep.c");
    let bt = std::fs::read_to_string(dir.join("bt.txt")).unwrap();
    let frames = bt.lines().filter(|l| l.starts_with('#')).count();
    assert!(frames > 150, "{frames} frames:\n{bt}");
    let src = std::fs::read_to_string(dir.join("deep.c")).unwrap();
    let line_of = |text: &str| 1 + src.lines().position(|l| l.contains(text)).unwrap() as u64;
    let (crash, call, after) = (
        line_of("v / w"),
        line_of("int v = expr();"),
        line_of("printf(\"%d (depth"),
    );
    for input in [
        &["--core", "core", "--binary", "prog"][..],
        &["--backtrace", "bt.txt"][..],
    ] {
        for budget in [&[][..], &["--max-memory", "1000000000"][..]] {
            let o = Command::new("prlimit")
                .current_dir(&dir)
                .arg("--as=8000000000")
                .arg(env!("CARGO_BIN_EXE_postmortem"))
                .args(["analyze", "--cfg", "prog.bc", "--format", "json"])
                .args(["--timeout", "120"])
                .args(input)
                .args(budget)
                .output()
                .unwrap();
            let what = format!("{input:?} {budget:?}");
            assert!(o.status.success(), "{what}: {}", show(&o));
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            let (yes, no) = (lines(&v, "deep.c", "yes"), lines(&v, "deep.c", "no"));
            assert!(
                yes.contains(&crash),
                "{what}: crash line {crash} not Yes: {yes:?}"
            );
            assert!(yes.contains(&call), "{what}: line {call} not Yes: {yes:?}");
            assert!(no.contains(&after), "{what}: line {after} not No: {no:?}");
            // No expr call returned (the innermost one faulted), and no
            // expression had a `+` or `-`; everything on the way down ran.
            for l in [
                line_of("if (*p == ')')"),
                line_of("depth--;"),
                line_of("int w = term();"),
                line_of("v = op == '+'"),
                after,
            ] {
                assert!(!yes.contains(&l), "{what}: line {l} Yes");
            }
            for l in [
                line_of("v = v * 10"),
                line_of("depth++;"),
                line_of("int v = factor();"),
                line_of("int w = factor();"),
                line_of("p = s;"),
                crash,
                call,
            ] {
                assert!(!no.contains(&l), "{what}: line {l} No");
            }
        }
    }
}
