//! The README's recipes followed to the letter on a real crash of
//! `tests/data/demo/crash.c`: a core written by the crash (gdb's
//! `generate-core-file` at the fault), its backtrace taken with the
//! README's own `gdb -batch -ex bt ./prog core > bt.txt`, and the HTML
//! report of the analysis. Needs clang-14 and gdb (fails, never skips,
//! without them; see .ci/run).

mod common;

use common::{require, sh, show};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// Builds `prog.bc` and `prog` from the demo and crashes `prog` (`prog
/// 9`: `report(9)` calls `crash`, which writes through NULL), writing
/// `core`; then writes `bt.txt` as the README says. Once per test process.
fn crashed() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        require("clang-14");
        require("gdb");
        let dir = std::env::temp_dir().join(format!("pm-readme-recipe-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/demo/crash.c");
        std::fs::copy(&src, dir.join("crash.c")).unwrap();
        sh(
            &dir,
            "clang-14",
            &["-g", "-O0", "-emit-llvm", "-c", "crash.c", "-o", "prog.bc"],
        );
        sh(&dir, "clang-14", &["-g", "-O0", "prog.bc", "-o", "prog"]);
        let o = Command::new("gdb")
            .current_dir(&dir)
            .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
            .args([
                "-ex",
                "run 9 > /dev/null 2>&1",
                "-ex",
                "generate-core-file core",
            ])
            .arg("./prog")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(dir.join("core").exists(), "no core: {}", show(&o));
        // The README's command (with gdb's init files and debuginfod off,
        // so that the machine's configuration does not change the text).
        let o = Command::new("gdb")
            .current_dir(&dir)
            .args(["-nx", "-iex", "set debuginfod enabled off"])
            .args(["-batch", "-ex", "bt", "./prog", "core"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        std::fs::write(dir.join("bt.txt"), &o.stdout).unwrap();
        dir
    })
}

fn postmortem(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn the_readme_backtrace_of_a_core_gives_no_warning() {
    let dir = crashed();
    let bt = std::fs::read_to_string(dir.join("bt.txt")).unwrap();
    // gdb prints the stop location (`#0 ... crash (...) at crash.c:16`)
    // when it loads the core, then the `bt`: two `#0` lines, the case
    // this test is about.
    let zeros = bt.lines().filter(|l| l.starts_with("#0 ")).count();
    assert_eq!(zeros, 2, "{bt}");
    let o = postmortem(
        dir,
        &["analyze", "--cfg", "prog.bc", "--backtrace", "bt.txt"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !err.contains("postmortem: warning:"),
        "the README's recipe warns:\n{err}\n{bt}"
    );
    assert!(!err.contains("earlier backtrace"), "{err}");
    // The stack is the bt's: crash <- report <- main, so `crash`'s
    // write is Yes.
    let json = postmortem(
        dir,
        &[
            "analyze",
            "--cfg",
            "prog.bc",
            "--backtrace",
            "bt.txt",
            "--format",
            "json",
        ],
    );
    assert_eq!(json.status.code(), Some(0), "{}", show(&json));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let yes = &v["lines"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.ends_with("crash.c"))
        .expect("crash.c labelled")
        .1["yes"];
    assert!(yes.as_array().unwrap().iter().any(|l| l == 16), "{yes}");
}

#[test]
fn help_analyze_defines_the_labels_and_gives_examples_and_exit_codes() {
    for args in [&["help", "analyze"][..], &["analyze", "--help"][..]] {
        let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", show(&o));
        let help = String::from_utf8_lossy(&o.stdout);
        for want in [
            "Yes    it surely ran",
            "No     it surely did not run",
            "Maybe  not decided",
            "postmortem analyze --cfg prog.bc --core core --binary prog",
            "postmortem analyze --cfg prog.bc --backtrace bt.txt --log prog.log",
            "ulimit -c unlimited",
            "coredumpctl dump PROG -o core",
            "generate-core-file",
            "POSTMORTEM_LLVM",
            "--max-states N",
            "--timeout SECONDS",
            "--max-memory BYTES",
            "--max-input-size BYTES",
            "Exit codes:",
            "  2  bad usage",
            "  3  the failure data is impossible for this program",
            "  4  --compare",
        ] {
            assert!(help.contains(want), "{args:?}: no {want:?} in:\n{help}");
        }
        // The first screen speaks the developer's language, not the paper's.
        let first: String = help.lines().take(30).collect::<Vec<_>>().join("\n");
        for jargon in ["obsYes", "UTL", "utl", "bulk pass", "ICFG"] {
            assert!(!first.contains(jargon), "{jargon:?} in:\n{first}");
        }
    }
}
