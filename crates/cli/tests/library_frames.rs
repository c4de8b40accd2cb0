//! Crash stacks that pass through the C library (issue 35, part 3): a
//! crash inside a callback that `qsort` or `bsearch` called. The library
//! has no frame pointers; its frames are unwound with its call frame
//! information (the mapped file, build id checked), and the stack goes on
//! in the program as gdb's does. Before, the walk stopped at the first
//! library frame and the analysis had no stack below the callback.
//!
//! Needs clang-14 and gdb: without them the tests fail, they do not skip.

mod common;

use common::{require, sh, show, source_frames};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn line_of(src: &Path, text: &str) -> u64 {
    let s = std::fs::read_to_string(src).unwrap();
    1 + s
        .lines()
        .position(|l| l.contains(text))
        .unwrap_or_else(|| panic!("{text:?} not in {}", src.display())) as u64
}

/// A scratch directory `name` with `tests/data/library/FILE` built at
/// `-O0` into `prog.bc` and, from it, `prog`.
fn build(name: &str, file: &str) -> std::path::PathBuf {
    let dir = common::scratch(name);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/library");
    std::fs::copy(data.join(file), dir.join(file)).unwrap();
    sh(
        &dir,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", file, "-o", "prog.bc"],
    );
    sh(&dir, "clang-14", &["-g", "-O0", "prog.bc", "-o", "prog"]);
    dir
}

/// `analyze --core CORE` of `prog` in `dir`, JSON; it must succeed.
fn analyze_core(dir: &Path, core: &str) -> (std::process::Output, Value) {
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args(["analyze", "--cfg", "prog.bc", "--format", "json"])
        .args(["--core", core, "--binary", "prog"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let v = serde_json::from_slice(&o.stdout).unwrap();
    (o, v)
}

/// The functions of the JSON's `frames`, outermost first.
fn functions(v: &Value) -> Vec<&str> {
    v["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["function"].as_str().unwrap())
        .collect()
}

fn labels(v: &Value, k: &str) -> Vec<u64> {
    let files = v["lines"].as_object().unwrap();
    let (_, f) = files
        .iter()
        .find(|(p, _)| p.ends_with("callbacks.c") || p.ends_with("signal.c"))
        .unwrap();
    f[k].as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn a_crash_in_a_library_callback_is_unwound_to_main() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = build("library-frames", "callbacks.c");
    let src = dir.join("callbacks.c");
    for (mode, caller, call) in [
        ("qsort", "sort_items", "qsort(v, n"),
        ("bsearch", "find_item", "bsearch(&want"),
    ] {
        let core = format!("core-{mode}");
        let o = common::gdb(
            &dir,
            "./prog",
            &[
                &format!("run {mode} > /dev/null"),
                "bt",
                &format!("generate-core-file {core}"),
            ],
        );
        let bt = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(dir.join(&core).exists(), "no core: {}", show(&o));
        // gdb's program frames, innermost first.
        let want: Vec<String> = source_frames(&bt)
            .into_iter()
            .filter(|f| f.file.ends_with("callbacks.c"))
            .map(|f| f.func)
            .collect();
        assert_eq!(want, ["by_key", caller, "main"], "{bt}");
        let (o, v) = analyze_core(&dir, &core);
        // The stack below the callback: main and the caller, as gdb.
        let frames = functions(&v);
        assert!(
            frames.contains(&"main") && frames.contains(&caller),
            "{mode}: frames {frames:?}\n{}",
            show(&o)
        );
        // The library call is pending: its line ran, the next did not.
        let (yes, no) = (labels(&v, "yes"), labels(&v, "no"));
        let at = line_of(&src, call);
        assert!(yes.contains(&at), "{mode}: line {at} not Yes: {yes:?}");
        assert!(
            no.contains(&(at + 1)),
            "{mode}: line {} not No: {no:?}",
            at + 1
        );
        assert!(
            !yes.contains(&line_of(&src, "printf(\"done")),
            "{mode}: main's last lines are Yes"
        );
    }
}

/// A crash inside a signal handler: the core's stack goes through the
/// kernel's signal frame (`__restore_rt`, a signal frame by the C
/// library's call frame information) to where the signal arrived, as
/// gdb's `<signal handler called>`: the handler's frame is left out (the
/// graph cannot model the delivery, as for backtraces), the interrupted
/// frame is at its pc, and the frames below it are the program's.
#[test]
fn a_crash_in_a_signal_handler_is_unwound_to_where_the_signal_arrived() {
    for t in ["clang-14", "gdb"] {
        require(t);
    }
    let dir = build("signal-frames", "signal.c");
    let o = common::gdb(
        &dir,
        "./prog",
        &[
            "handle SIGALRM nostop noprint pass",
            "run > /dev/null",
            "bt",
            "generate-core-file core",
        ],
    );
    let bt = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(bt.contains("<signal handler called>"), "{}", show(&o));
    let want: Vec<String> = source_frames(&bt).into_iter().map(|f| f.func).collect();
    assert_eq!(want, ["on_alarm", "wait_for_alarm", "main"], "{bt}");
    let (o, v) = analyze_core(&dir, "core");
    let frames = functions(&v);
    assert_eq!(frames, ["main", "wait_for_alarm"], "{}", show(&o));
    let src = dir.join("signal.c");
    let (yes, no) = (labels(&v, "yes"), labels(&v, "no"));
    // The signal arrived in the loop: the timer was set, the loop ran,
    // what follows it and main's last lines did not.
    for l in [line_of(&src, "setitimer("), line_of(&src, "spins++")] {
        assert!(yes.contains(&l), "line {l} not Yes: {yes:?}");
    }
    for l in [
        line_of(&src, "printf(\"woke"),
        line_of(&src, "printf(\"done"),
    ] {
        assert!(no.contains(&l), "line {l} not No: {no:?}");
    }
}

/// The libraries of the crashed process's path, as `ldd` finds them for
/// `prog` in `dir`: (file name, path) of libc and of the dynamic loader.
fn libraries(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let o = Command::new("ldd")
        .arg("prog")
        .current_dir(dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let path_of = |name: &str| {
        text.lines()
            .find(|l| l.contains(name))
            .and_then(|l| l.split_whitespace().find(|w| w.starts_with('/')))
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| panic!("no {name} in ldd's output: {text}"))
    };
    (path_of("libc.so"), path_of("ld-linux"))
}

/// A core from another machine: its libraries are read under `--sysroot`
/// (by file name), never from this machine's paths, and their build ids
/// are checked. Without the library the stack ends at the callback, with
/// a warning that names the library and says why.
#[test]
fn a_sysroot_holds_the_libraries_of_a_core_from_another_machine() {
    for t in ["clang-14", "gdb", "ldd"] {
        require(t);
    }
    let dir = build("library-sysroot", "callbacks.c");
    let o = common::gdb(
        &dir,
        "./prog",
        &["run qsort > /dev/null", "generate-core-file core"],
    );
    assert!(dir.join("core").exists(), "no core: {}", show(&o));
    let (libc, loader) = libraries(&dir);
    let with_root = |root: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
            .current_dir(&dir)
            .args(["analyze", "--cfg", "prog.bc", "--format", "json"])
            .args(["--core", "core", "--binary", "prog", "--sysroot", root])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let frames: Vec<String> = functions(&v).into_iter().map(String::from).collect();
        (String::from_utf8_lossy(&o.stderr).to_string(), frames)
    };
    // The right libc, under its file name.
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::copy(&libc, dir.join("root/libc.so.6")).unwrap();
    let (err, frames) = with_root("root");
    assert!(
        frames.contains(&"main".into()) && frames.contains(&"sort_items".into()),
        "frames {frames:?}\n{err}"
    );
    assert!(!err.contains("the stack ends"), "{err}");
    // Nothing there: the stack ends at the callback, and says why.
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let (err, frames) = with_root("empty");
    assert!(!frames.contains(&"main".into()), "frames {frames:?}\n{err}");
    assert!(
        err.contains("the stack ends at `by_key`")
            && err.contains("libc.so.6")
            && err.contains("not under the sysroot"),
        "{err}"
    );
    // Another library under libc's name: its build id is not the core's.
    std::fs::create_dir_all(dir.join("wrong")).unwrap();
    std::fs::copy(&loader, dir.join("wrong/libc.so.6")).unwrap();
    let (err, frames) = with_root("wrong");
    assert!(!frames.contains(&"main".into()), "frames {frames:?}\n{err}");
    assert!(err.contains("build id differs"), "{err}");
}
