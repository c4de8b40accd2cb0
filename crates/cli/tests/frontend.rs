//! The LLVM front-end as its own executable: `postmortem` does not link
//! libLLVM (so GraphML and cache input start fast), IR input goes through
//! `postmortem-llvm` (the `llvm_cli` tests cover what it reads), and a
//! missing, failing or wrong front-end is one error line with exit code 2.

use object::elf;
use object::read::elf::{ElfFile64, FileHeader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `DT_NEEDED` entries of an ELF executable.
fn needed(exe: &str) -> Vec<String> {
    let data = std::fs::read(exe).unwrap();
    let file = ElfFile64::<object::Endianness>::parse(&*data).expect("an ELF64 executable");
    let endian = file.endian();
    let table = file
        .elf_header()
        .sections(endian, &*data)
        .unwrap()
        .dynamic_table(endian, &*data)
        .unwrap();
    table
        .iter()
        .filter(|d| d.tag == elf::DT_NEEDED)
        .map(|d| String::from_utf8_lossy(table.string(d).unwrap()).into_owned())
        .collect()
}

#[test]
fn postmortem_does_not_link_libllvm_and_the_front_end_does() {
    let main = needed(env!("CARGO_BIN_EXE_postmortem"));
    assert!(
        main.iter().any(|n| n.starts_with("libc.so")),
        "the dynamic section was not read: {main:?}"
    );
    assert!(
        !main.iter().any(|n| n.to_lowercase().contains("llvm")),
        "postmortem links LLVM: {main:?}"
    );
    // The check itself sees libLLVM where it is.
    let fe = needed(env!("CARGO_BIN_EXE_postmortem-llvm"));
    assert!(
        fe.iter().any(|n| n.starts_with("libLLVM")),
        "postmortem-llvm does not link libLLVM: {fe:?}"
    );
}

fn ir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/demo/crash.ll")
}

fn stats_with(frontend: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_postmortem"));
    c.args(["cfg", "stats", "--cfg", ir().to_str().unwrap()]);
    if let Some(f) = frontend {
        c.env("POSTMORTEM_LLVM", f);
    }
    c.output().unwrap()
}

fn one_error_line(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("postmortem: "), "{err}");
    assert!(o.stdout.is_empty());
    err
}

#[test]
fn ir_input_goes_through_the_front_end_found_next_to_postmortem() {
    let o = stats_with(None);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("postmortem: note: llvm front-end:"), "{err}");
    // The same through the environment variable.
    let o = stats_with(Some(env!("CARGO_BIN_EXE_postmortem-llvm")));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_missing_front_end_is_one_error_line() {
    let err = one_error_line(&stats_with(Some("/nonexistent/postmortem-llvm")));
    assert!(
        err.contains("crash.ll: cannot run the LLVM front-end /nonexistent/postmortem-llvm"),
        "{err}"
    );
    assert!(err.contains("POSTMORTEM_LLVM"), "{err}");
    // The exact command that builds the front-end next to this
    // postmortem (a debug build under `cargo test`): `cargo run` builds
    // only the binary it runs, the first cause of this error.
    let build = if cfg!(debug_assertions) {
        "run `cargo build -p postmortem` in postmortem's source tree"
    } else {
        "run `cargo build --release -p postmortem` in postmortem's source tree"
    };
    assert!(err.contains(build), "{err}");
}

#[test]
fn a_failing_or_wrong_front_end_is_one_error_line() {
    let err = one_error_line(&stats_with(Some("false")));
    assert!(err.contains("the LLVM front-end false failed"), "{err}");
    // Output that is not the front-end's.
    let err = one_error_line(&stats_with(Some("echo")));
    assert!(
        err.contains("not the output of this version of postmortem-llvm"),
        "{err}"
    );
}

#[test]
fn the_front_end_alone_reports_bad_input_in_one_line() {
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem-llvm"))
        .arg("/nonexistent.ll")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim(),
        "postmortem-llvm: /nonexistent.ll: cannot read: No such file or directory (os error 2)"
    );
}
