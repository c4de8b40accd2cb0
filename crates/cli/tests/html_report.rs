//! The HTML report of a real crash read in headless Chromium (issue 37):
//! the values read from the core beside each frame and on the lines that
//! name them (`e = 0x0` on the crash line), each log line beside the print
//! statement it was matched to, and the example path folded, said to be
//! one path the control flow allows. The program
//! (`tests/data/html/kv.c`) looks up a missing key: `find` returns NULL
//! and `lookup` reads through it; it logs to stderr. Needs clang-14, gdb
//! and chromium (fails, never skips, without them; see .ci/run).

mod common;

use common::{chromium, require, sh, show};
use std::path::Path;
use std::process::Command;

/// The line of `int len = (int)strlen(e->key);` (the crash) in kv.c, of
/// `int n = lookup(&a, key);` (frame #1), and of the two `fprintf` calls
/// that print the log.
const CRASH_LINE: u32 = 23;
const CALL_LINE: u32 = 37;
const INSERTED_LINE: u32 = 31;
const LOOKING_LINE: u32 = 36;

/// The `<tr>` of line `line` on a file page.
fn row(page: &str, line: u32) -> &str {
    let from = page
        .find(&format!("<tr id=\"L{line}\""))
        .unwrap_or_else(|| panic!("no line {line} in {page}"));
    let to = from + page[from..].find("</tr>").unwrap();
    &page[from..to]
}

/// Text without its tags (what a reader sees of it).
fn text(html: &str) -> String {
    let mut out = String::new();
    let mut tag = false;
    for c in html.chars() {
        match c {
            '<' => tag = true,
            '>' => tag = false,
            c if !tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&amp;", "&")
}

#[test]
fn values_and_log_lines_are_on_the_page_in_a_browser() {
    for t in ["clang-14", "gdb", "chromium"] {
        require(t);
    }
    let dir = common::scratch("html-report");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/html/kv.c");
    std::fs::copy(&src, dir.join("kv.c")).unwrap();
    sh(
        &dir,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", "kv.c", "-o", "prog.bc"],
    );
    sh(&dir, "clang-14", &["-g", "-O0", "prog.bc", "-o", "prog"]);
    let o = common::gdb(
        &dir,
        "./prog",
        &["run b 2> out.log > /dev/null", "generate-core-file core"],
    );
    assert!(dir.join("core").exists(), "no core: {}", show(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("out.log")).unwrap(),
        "inserted a\nlooking up b\n"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(&dir)
        .args([
            "analyze", "--cfg", "prog.bc", "--core", "core", "--binary", "prog", "--log",
            "out.log", "--format", "html", "-o", "html",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let html = dir.join("html");
    let index = chromium(&html.join("index.html"), &dir.join("index.png"));
    // The stack: each frame with its locals' values from the core.
    let frame = |k: usize| {
        let from = index
            .find(&format!("<li id=\"frame{k}\">"))
            .unwrap_or_else(|| panic!("no frame {k} in {index}"));
        let to = from + index[from..].find("</li>").unwrap();
        text(&index[from..to])
    };
    let (f0, f1) = (frame(0), frame(1));
    assert!(f0.starts_with("#0 crash lookup at kv.c:23"), "{f0}");
    assert!(
        f0.contains("in the core: ") && f0.contains("e = 0x0"),
        "{f0}"
    );
    assert!(!f0.contains("argc"), "{f0}");
    assert!(f1.contains("#1 call main at kv.c:37"), "{f1}");
    assert!(f1.contains("argc = 2"), "{f1}");
    // The log, each line with the statement that printed it.
    assert!(index.contains("<h2 id=\"log\">Log</h2>"), "{index}");
    for (line, at) in [
        ("inserted a", INSERTED_LINE),
        ("looking up b", LOOKING_LINE),
    ] {
        let want = format!(
            "<td><code>{line}</code></td><td><code class=\"fn\">main</code> at <a href=\"file-0.html#L{at}\">kv.c:{at}</a></td>"
        );
        assert!(index.contains(&want), "no {want:?} in {index}");
    }
    // The example path: folded (no `open`), and said to be one path the
    // control flow allows, not what the data did.
    assert!(
        index.contains("<details>\n<summary>An example path ("),
        "{index}"
    );
    assert!(!index.contains("<details open"), "{index}");
    assert!(
        index.contains("<b>not necessarily what the program did</b>"),
        "{index}"
    );
    // The global's value is listed with every value, folded.
    assert!(
        index.contains("<tr><td><code>inserted</code></td><td><code>1</code></td><td>global</td><td>used</td></tr>"),
        "{index}"
    );
    // The source page: the values on the crash line, which names `e`; the
    // pending call's line; the log lines beside their fprintf.
    let page = chromium(&html.join("file-0.html"), &dir.join("file.png"));
    let crash = text(row(&page, CRASH_LINE));
    assert!(
        crash.contains("strlen(e->key);") && crash.contains("#0 e = 0x0"),
        "{crash}"
    );
    assert!(!crash.contains("argc"), "{crash}");
    let call = text(row(&page, CALL_LINE));
    assert!(call.contains("#1 key = 0x"), "{call}");
    // `n` is stored by this very line, after the call returns.
    assert!(
        call.contains("#1 n = ") && call.contains("(before this line's store?)"),
        "{call}"
    );
    assert!(
        row(&page, INSERTED_LINE).contains("<span class=\"log\" title=\"log line 1, printed by the statement on this line\">log 1: inserted a</span>"),
        "{page}"
    );
    assert!(
        text(row(&page, LOOKING_LINE)).contains("log 2: looking up b"),
        "{page}"
    );
    // Nowhere else.
    assert_eq!(page.matches("log 1: inserted a").count(), 1, "{page}");
    assert_eq!(page.matches("log 2: looking up b").count(), 1, "{page}");
}
