//! The README's recipes followed to the letter on a real crash of
//! `tests/data/demo/crash.c`: a core written by the crash (gdb's
//! `generate-core-file` at the fault), its backtrace taken with the
//! README's own `gdb -batch -ex bt ./prog core > bt.txt`, and the HTML
//! report of the analysis. Needs clang-14 and gdb (fails, never skips,
//! without them; see .ci/run).

mod common;

use common::{chromium, require, sh, show};
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
        let dir = common::scratch("readme-recipe");
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
        let first: String = help.lines().take(40).collect::<Vec<_>>().join("\n");
        for jargon in ["obsYes", "UTL", "utl", "bulk pass", "ICFG"] {
            assert!(!first.contains(jargon), "{jargon:?} in:\n{first}");
        }
    }
}

#[test]
fn the_html_report_opens_in_a_browser_at_the_crash() {
    let dir = crashed();
    let html = dir.join("html");
    let o = postmortem(
        dir,
        &[
            "analyze",
            "--cfg",
            "prog.bc",
            "--backtrace",
            "bt.txt",
            "--format",
            "html",
            "-o",
            "html",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let png = dir.join("index.png");
    let dom = chromium(&html.join("index.html"), &png);
    // The crash first: the headline and frame #0, linked to the line.
    assert!(
        dom.contains("<h1>Crash in <code class=\"fn\">crash</code> at <a href=\"file-0.html#L16\">crash.c:16</a></h1>"),
        "{dom}"
    );
    for frame in [
        "<span class=\"badge crash\">#0 crash</span> <code class=\"fn\">crash</code> at <a href=\"file-0.html#L16\">crash.c:16</a>",
        "<span class=\"badge\">#1 call</span> <code class=\"fn\">report</code> at <a href=\"file-0.html#L21\">crash.c:21</a>, calling <code class=\"fn\">crash</code>",
        "<span class=\"badge\">#2 call</span> <code class=\"fn\">main</code> at <a href=\"file-0.html#L34\">crash.c:34</a>, calling <code class=\"fn\">report</code>",
    ] {
        assert!(dom.contains(frame), "no {frame:?} in {dom}");
    }
    // The witness is there, folded, without the runtime.
    // With the source line each frame stopped on.
    assert!(dom.contains("<pre>p[0] = 'x';</pre>"), "{dom}");
    assert!(dom.contains("<summary>An example path ("), "{dom}");
    assert!(!dom.contains("external code"), "{dom}");
    let shot = std::fs::read(&png).unwrap();
    assert!(shot.starts_with(b"\x89PNG"), "no screenshot");
    // The source page, at the crash line: the source text, the Global
    // label and the crash frame's Local label in the gutter.
    let page_png = dir.join("file.png");
    let page = chromium(&html.join("file-0.html"), &page_png);
    assert!(
        page.contains("<tr id=\"L16\" class=\"y\"><td class=\"n\"><a href=\"#L16\">16</a></td><td class=\"g\" title=\"Yes (ran on every execution that fits the failure data), forced by this: the crash in crash at crash.c:16\">Yes</td>"),
        "{page}"
    );
    assert!(page.contains("p[0] = 'x';"), "{page}");
    assert!(
        page.contains("<span class=\"badge crash\">#0 crash</span>"),
        "{page}"
    );
    assert!(
        page.contains("<a href=\"index.html#frame0\">#0</a> <code class=\"fn\">crash</code>"),
        "{page}"
    );
    assert!(page.contains("<td class=\"l y\">Yes</td>"), "{page}");
    // For the README's picture: PM_SCREENSHOT=docs/html-report.png.
    if let Some(to) = std::env::var_os("PM_SCREENSHOT") {
        std::fs::copy(
            &png,
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(to),
        )
        .unwrap();
    }
}

/// The README's main command, as a fresh clone has it: the `cargo build`
/// before the `&&` names a package whose manifest builds both executables
/// (`postmortem` and the front-end `postmortem-llvm`, with no required
/// features), and the command after it, run with the executable that
/// `cargo test` built, succeeds from the repository root. Also `cargo
/// install --path DIR`, which the README gives for the `PATH`, installs
/// both (the same package).
#[test]
fn the_readme_main_command_builds_both_executables_and_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let main = readme
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cargo build") && l.contains("&&"))
        .expect("README has no `cargo build ... && ...` main command");
    let (build, rest) = main.split_once("&&").unwrap();
    let words: Vec<&str> = build.split_whitespace().collect();
    let pkg = words
        .iter()
        .position(|w| *w == "-p" || *w == "--package")
        .map(|i| words[i + 1])
        .expect("the main command's cargo build names no package");
    let release = words.contains(&"--release");
    let install = readme
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cargo install --path"))
        .expect("README has no `cargo install --path` line");
    let install_dir = install.split_whitespace().nth(3).unwrap();

    let o = Command::new(env!("CARGO"))
        .current_dir(&root)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let meta: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let package = |pred: &dyn Fn(&serde_json::Value) -> bool| {
        meta["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| pred(p))
            .cloned()
    };
    let p = package(&|p| p["name"] == pkg).unwrap_or_else(|| panic!("no package {pkg}"));
    let installed = package(&|p| {
        Path::new(p["manifest_path"].as_str().unwrap()).parent()
            == Some(&root.join(install_dir).canonicalize().unwrap())
    })
    .unwrap_or_else(|| panic!("`{install}`: no package in {install_dir}"));
    assert_eq!(
        installed["name"], p["name"],
        "`{install}` installs another package"
    );
    let bins: Vec<&str> = p["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .filter(|t| {
            t["required-features"]
                .as_array()
                .is_none_or(|f| f.is_empty())
        })
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for exe in ["postmortem", "postmortem-llvm"] {
        assert!(
            bins.contains(&exe),
            "`{build}` does not build {exe}: {bins:?}"
        );
    }

    // The command after `&&`: `target/release/postmortem ARGS`.
    let mut words = rest.split_whitespace();
    let exe = words.next().unwrap();
    let profile = if release { "release" } else { "debug" };
    assert_eq!(exe, format!("target/{profile}/postmortem"), "{main}");
    let args: Vec<&str> = words.collect();
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(&root)
        .args(&args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{main}: {}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("ran on every execution"),
        "{main}: {}",
        show(&o)
    );
}
