//! A core and binary of another build than the graph's are refused
//! (issue 35): a plain `-g` build has no coverage flag count to tell, so
//! the binary's DWARF line table is compared with the graph
//! (`formats::buildcheck`). A two-file program is built and crashed under
//! gdb; then `check.c` gets two lines at its top and only the binary
//! (and its core) is rebuilt: the old graph with the new core is exit 2,
//! naming the file, unless `--no-build-check` turns it into a warning.

mod common;

use common::{require, sh, show};
use std::path::Path;
use std::process::{Command, Output};

fn data(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/buildcheck")
        .join(name)
}

/// Builds `main.c` and `check.c` of `dir` into `NAME.bc` and the binary
/// `NAME` (from that IR), runs it under gdb until it crashes and writes
/// the core `NAME.core`.
fn build_and_crash(dir: &Path, name: &str) {
    for f in ["main", "check"] {
        sh(
            dir,
            "clang-14",
            &[
                "-g",
                "-O0",
                "-emit-llvm",
                "-c",
                &format!("{f}.c"),
                "-o",
                &format!("{f}.bc"),
            ],
        );
    }
    let bc = format!("{name}.bc");
    sh(dir, "llvm-link-14", &["main.bc", "check.bc", "-o", &bc]);
    sh(dir, "clang-14", &["-g", "-O0", &bc, "-o", name]);
    let core = format!("{name}.core");
    let o = common::gdb(
        dir,
        &format!("./{name}"),
        &["run > /dev/null", &format!("generate-core-file {core}")],
    );
    assert!(dir.join(&core).exists(), "no core: {}", show(&o));
}

fn analyze(dir: &Path, build: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args(["analyze", "--cfg", "prog.bc", "--core"])
        .arg(format!("{build}.core"))
        .args(["--binary", build])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_binary_of_another_build_is_refused() {
    for t in ["clang-14", "llvm-link-14", "gdb"] {
        require(t);
    }
    let dir = common::scratch("buildcheck");
    for f in ["main.c", "check.c"] {
        std::fs::copy(data(f), dir.join(f)).unwrap();
    }
    build_and_crash(&dir, "prog");

    // The graph's own build.
    let o = analyze(&dir, "prog", &[]);
    assert!(o.status.success(), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("the binary is the graph's build"), "{err}");

    // The source edited (two lines at the top of check.c), only the
    // binary and its core rebuilt.
    let src = std::fs::read_to_string(dir.join("check.c")).unwrap();
    std::fs::write(
        dir.join("check.c"),
        format!("/* edited */\n/* edited */\n{src}"),
    )
    .unwrap();
    build_and_crash(&dir, "edited");
    let o = analyze(&dir, "edited", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(o.stdout.is_empty(), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    let refused: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("postmortem: note: llvm front-end"))
        .collect();
    assert_eq!(refused.len(), 1, "{err}");
    let line = refused[0];
    assert!(
        line.starts_with("postmortem: edited: the binary is not of the graph's build: ")
            && line.contains(" source lines of ")
            && line.contains("check.c with code in the binary have no statement in the graph")
            && line.contains("(first: ")
            && line.contains("check.c:"),
        "{line}"
    );

    // The escape hatch: analysed, with the same words as a warning.
    let o = analyze(&dir, "edited", &["--no-build-check"]);
    assert!(o.status.success(), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.lines().any(|l| l
            .starts_with("postmortem: warning: edited: the binary is not of the graph's build")
            && l.contains("check.c")
            && l.contains("--no-build-check")),
        "{err}"
    );

    // Documented.
    for cmd in ["analyze", "query", "suggest", "batch"] {
        let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
            .args([cmd, "--help"])
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("--no-build-check"),
            "{cmd} --help: {}",
            show(&o)
        );
    }
}
