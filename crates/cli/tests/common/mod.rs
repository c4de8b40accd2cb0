//! What the soundness tests against real runs share (`e2e_soundness.rs`
//! on small programs, `real_programs.rs` on real ones): running tools,
//! reading gdb backtraces, and the line truth of a crashed run from
//! llvm-cov.
//!
//! **The truth.** `llvm-profdata-14 merge` + `llvm-cov-14 export
//! -format=text` give coverage segments; line counts are computed from
//! them exactly as `llvm-cov show` does ([`line_counts`]). One subtlety of
//! a crashed run: a coverage region is counted when it is entered, and the
//! counts of regions that follow are derived by counter arithmetic as if
//! every function had carried on to its end. A function still on the stack
//! at the crash therefore looks as if it had also run the rest of its
//! current region and what follows it, at most once per active frame of
//! that function (every counter that is subtracted is a real one, so
//! counts are never too low). So for a line of function `f` with llvm-cov
//! count `c` and `k` frames of `f` in the backtrace ([`Truth::ran`]):
//!
//! * `c == 0`: it did not run (the check for Yes lines);
//! * `c > k`, or the line is a frame's line: it ran (the check for No
//!   lines);
//! * `0 < c <= k` otherwise: unknown, not checked.

// Each test file uses its own part of this module.
#![allow(dead_code)]

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::{Command, Output, Stdio};

pub fn show(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs a command in `dir`; it must succeed.
pub fn sh(dir: &Path, program: &str, args: &[&str]) -> Output {
    let o = Command::new(program)
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (is it installed? see .ci/run): {e}"));
    assert!(
        o.status.success(),
        "{program} {args:?} failed: {}",
        show(&o)
    );
    o
}

pub fn require(tool: &str) {
    // `--help`: llvm-profdata-14 --version exits 1.
    let ok = Command::new(tool)
        .arg("--help")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(ok, "{tool} is required by the end-to-end soundness tests but cannot be run (install it; see .ci/run)");
}

/// A frame of a gdb backtrace that has a source location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub func: String,
    /// The path as gdb prints it.
    pub file: String,
    pub line: u64,
    /// The pc, when gdb prints it (not for frame #0 at a line start).
    pub pc: Option<String>,
}

impl Frame {
    pub fn file_name(&self) -> &str {
        Path::new(&self.file)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
    }
}

/// The frames of `bt` (gdb `bt` output) that have a source location,
/// innermost first.
pub fn source_frames(bt: &str) -> Vec<Frame> {
    let mut frames = Vec::new();
    for l in bt.lines() {
        let Some(rest) = l.strip_prefix('#') else {
            continue;
        };
        let Some((_, rest)) = rest.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        let (pc, rest) = if rest.starts_with("0x") {
            match rest.split_once(" in ") {
                Some((pc, rest)) => (Some(pc.to_string()), rest),
                None => continue,
            }
        } else {
            (None, rest)
        };
        let func = function_name(rest);
        let Some((_, at)) = rest.rsplit_once(" at ") else {
            continue;
        };
        let Some((path, line)) = at.trim().rsplit_once(':') else {
            continue;
        };
        let Ok(line) = line.parse() else {
            continue;
        };
        frames.push(Frame {
            func: func.trim().to_string(),
            file: path.to_string(),
            line,
            pc,
        });
    }
    frames
}

/// The function's name at the start of a gdb frame's text (`NAME (ARGS)
/// at ...`): up to the first ` (` outside template arguments (a C++
/// name's `std::function<bool (int)>` has one inside); `operator<<` and
/// the like are not template brackets.
fn function_name(rest: &str) -> &str {
    let b = rest.as_bytes();
    let (mut depth, mut i) = (0usize, 0);
    while i < b.len() {
        if rest[i..].starts_with("operator") {
            i += "operator".len();
            while i < b.len() && b"<>=!+-*/%&|^~[]()".contains(&b[i]) {
                i += 1;
            }
            continue;
        }
        match b[i] {
            b'<' => depth += 1,
            b'>' => depth = depth.saturating_sub(1),
            b' ' if depth == 0 && b.get(i + 1) == Some(&b'(') => return &rest[..i],
            _ => {}
        }
        i += 1;
    }
    rest
}

/// Line counts from the segments of one file of `llvm-cov export`, as
/// llvm-cov's `LineCoverageStats` computes them: the count of the segment
/// wrapping into the line, raised to the largest count of a region that
/// starts on the line. Only mapped lines are in the map: lines a region
/// covers, unless a skipped region starts them.
pub fn line_counts(segments: &[Value]) -> BTreeMap<u64, u64> {
    struct Seg {
        line: u64,
        count: u64,
        has_count: bool,
        entry: bool,
        gap: bool,
    }
    let segs: Vec<Seg> = segments
        .iter()
        .map(|s| Seg {
            line: s[0].as_u64().unwrap(),
            count: s[2].as_u64().unwrap(),
            has_count: s[3].as_bool().unwrap(),
            entry: s[4].as_bool().unwrap(),
            gap: s[5].as_bool().unwrap(),
        })
        .collect();
    let last = segs.iter().map(|s| s.line).max().unwrap_or(0);
    let mut out = BTreeMap::new();
    let mut wrapped: Option<&Seg> = None;
    let mut i = 0;
    for line in 1..=last {
        let start = i;
        while i < segs.len() && segs[i].line == line {
            i += 1;
        }
        let on_line = &segs[start..i];
        let starts_region = |s: &&Seg| !s.gap && s.has_count && s.entry;
        let regions = on_line.iter().filter(starts_region).count();
        let skipped = on_line
            .first()
            .map(|s| !s.has_count && s.entry)
            .unwrap_or(false);
        let mapped = !skipped && (wrapped.map(|w| w.has_count).unwrap_or(false) || regions > 0);
        if mapped {
            let mut count = wrapped.map(|w| w.count).unwrap_or(0);
            for s in on_line.iter().filter(starts_region) {
                count = count.max(s.count);
            }
            out.insert(line, count);
        }
        if let Some(s) = on_line.last() {
            wrapped = Some(s);
        }
    }
    out
}

/// Line counts as `llvm-cov show` prints them (`  LINE|  COUNT|source`);
/// counts it abbreviates (`1.2k`) are left out.
pub fn shown_counts(text: &str) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    for l in text.lines() {
        let mut parts = l.splitn(3, '|');
        let (Some(line), Some(count)) = (parts.next(), parts.next()) else {
            continue;
        };
        let (Ok(line), count) = (line.trim().parse::<u64>(), count.trim()) else {
            continue;
        };
        if count.is_empty() {
            continue;
        }
        if let Ok(n) = count.parse() {
            out.insert(line, n);
        } else {
            assert!(
                count.ends_with(['k', 'M', 'G']),
                "llvm-cov show count {count:?} in {l:?}"
            );
        }
    }
    out
}

/// For each file (by file name) and line, how many frames of `frames` are
/// active in the function that spans the line: from the `functions` of an
/// `llvm-cov export`. A frame is matched to the function whose code spans
/// its line in the frame's file.
pub fn active_frames(functions: &[Value], frames: &[Frame]) -> HashMap<String, BTreeMap<u64, u64>> {
    let mut out: HashMap<String, BTreeMap<u64, u64>> = HashMap::new();
    for func in functions {
        let Some(own_file) = func["filenames"][0].as_str() else {
            continue;
        };
        let own_name = Path::new(own_file)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        let code: Vec<&Vec<Value>> = func["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap())
            .filter(|r| r[5] == 0 && r[7] == 0) // in the function's own file; code regions
            .collect();
        let (Some(first), Some(last)) = (
            code.iter().map(|r| r[0].as_u64().unwrap()).min(),
            code.iter().map(|r| r[2].as_u64().unwrap()).max(),
        ) else {
            continue;
        };
        // A frame belongs to the function whose code spans its line in its
        // file (names would need demangling for C++).
        let k = frames
            .iter()
            .filter(|f| f.file_name() == own_name && (first..=last).contains(&f.line))
            .count() as u64;
        if k == 0 {
            continue;
        }
        let lines = out.entry(own_file.to_string()).or_default();
        for line in first..=last {
            *lines.entry(line).or_insert(0) += k;
        }
    }
    out
}

/// What really ran, per line of one source file.
#[derive(Default)]
pub struct Truth {
    pub counts: BTreeMap<u64, u64>,
    /// For each line, how many active frames its function had at the crash.
    pub active: BTreeMap<u64, u64>,
    pub frame_lines: BTreeSet<u64>,
    /// Lines holding only `}`: llvm-cov gives them the count of the
    /// region they close, but their own code (the branch at the end of a
    /// loop body, say) is skipped by a `continue`, so a count > 0 does
    /// not show that they ran. Coverage flags tell these apart. (Callers
    /// that judge such lines otherwise leave this empty.)
    pub brace_lines: BTreeSet<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ran {
    Yes,
    No,
    Unknown,
    Unmapped,
}

impl Truth {
    pub fn ran(&self, line: u64) -> Ran {
        let Some(c) = self.counts.get(&line) else {
            return if self.frame_lines.contains(&line) {
                Ran::Yes
            } else {
                Ran::Unmapped
            };
        };
        let k = self.active.get(&line).copied().unwrap_or(0);
        if self.frame_lines.contains(&line) {
            Ran::Yes
        } else if self.brace_lines.contains(&line) && *c > 0 {
            Ran::Unknown
        } else if *c > k {
            Ran::Yes
        } else if *c == 0 {
            Ran::No
        } else {
            Ran::Unknown
        }
    }
}

/// A fresh scratch directory of this test process: `pm-NAME-PID` in the
/// system's temporary directory, emptied. The directories of the same
/// name that earlier test processes left (their process gone) are
/// removed first, so that repeated runs do not pile up (a whole run of
/// the suite leaves about 300 MB of programs and cores).
pub fn scratch(name: &str) -> std::path::PathBuf {
    let tmp = std::env::temp_dir();
    let me = std::process::id();
    let prefix = format!("pm-{name}-");
    if let Ok(dir) = std::fs::read_dir(&tmp) {
        for e in dir.flatten() {
            let file = e.file_name();
            let pid = file
                .to_str()
                .and_then(|f| f.strip_prefix(&prefix))
                .and_then(|p| p.parse::<u32>().ok());
            if let Some(pid) = pid {
                if pid != me && !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
    }
    let d = tmp.join(format!("{prefix}{me}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// gdb in batch mode on `prog` in `dir` (no init files, no debuginfod,
/// standard input closed), running each of `commands` (`-ex`) in order.
pub fn gdb(dir: &Path, prog: &str, commands: &[&str]) -> Output {
    let mut cmd = Command::new("gdb");
    cmd.current_dir(dir)
        .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"]);
    for c in commands {
        cmd.args(["-ex", c]);
    }
    cmd.arg(prog).stdin(Stdio::null()).output().unwrap()
}

/// Runs headless Chromium on `page`: its DOM after loading, and a
/// screenshot at `png` (as root it needs `--no-sandbox`).
pub fn chromium(page: &Path, png: &Path) -> String {
    // A profile of its own: tests of one process may run it at once.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let profile = std::env::temp_dir().join(format!("pm-chromium-{}-{run}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    std::fs::create_dir_all(&profile).unwrap();
    let o = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1000,700",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run chromium (apt-get install chromium; see .ci/run): {e}")
        });
    let _ = std::fs::remove_dir_all(&profile);
    assert!(o.status.success(), "chromium: {}", show(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}
