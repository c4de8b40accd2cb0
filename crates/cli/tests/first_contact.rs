//! Issue 21, "First contact": what a first-time user passes by mistake.
//! Devices and pipes as inputs (every input read is bounded), limits
//! given as 0, NaN, negative or infinite values, an output directory that
//! cannot be written, and logs that lost their last lines to buffering.
//!
//! Every run has a deadline (the process is killed past it, so a hang is
//! a failure, not a stuck test) and, where `/usr/bin/time` exists, a
//! memory ceiling.

mod common;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example_cfg() -> PathBuf {
    repo().join("examples/replace-v1/replace.graphml")
}

fn example_report() -> PathBuf {
    repo().join("examples/replace-v1/204-trace/data.json")
}

/// A fresh scratch directory of this test process.
fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("first-contact-{name}"))
}

/// A FIFO at `dir/name`.
fn fifo(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    let ok = Command::new("mkfifo")
        .arg(&p)
        .status()
        .expect("run mkfifo")
        .success();
    assert!(ok, "mkfifo {}", p.display());
    p
}

/// What a run gave.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    /// Peak RSS in KiB (None without /usr/bin/time).
    peak_kib: Option<u64>,
}

impl Run {
    fn show(&self) -> String {
        format!(
            "exit {:?} in {:?}, peak {:?} KiB\nstdout:\n{}\nstderr:\n{}",
            self.code, self.elapsed, self.peak_kib, self.stdout, self.stderr
        )
    }

    /// The `postmortem:` lines of stderr that are neither notes nor
    /// warnings.
    fn errors(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| {
                !l.starts_with("postmortem: note:") && !l.starts_with("postmortem: warning:")
            })
            .collect()
    }
}

const DEADLINE: Duration = Duration::from_secs(2);
/// A refused input's peak: the inputs are cut at 64 MiB; reading one that
/// far grows the buffer by doubling, and mimalloc (unlike glibc's
/// `mremap`) copies on growth, so up to about twice the limit is resident
/// for a moment, plus the process (154 MiB measured for an endless FIFO).
/// An unbounded read would go far past it.
const MAX_KIB: u64 = 192 * 1024;

fn time_exe() -> Option<&'static str> {
    let t = "/usr/bin/time";
    Path::new(t).exists().then_some(t)
}

/// Runs `postmortem ARGS` in its own process group, under `/usr/bin/time`
/// when there is one; past `DEADLINE` the group is killed and the run
/// fails.
fn run(args: &[&std::ffi::OsStr]) -> Run {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = scratch(&format!("time{n}"));
    let rss_file = dir.join("rss");
    let mut cmd = match time_exe() {
        Some(t) => {
            let mut c = Command::new(t);
            c.arg("-f").arg("%M").arg("-o").arg(&rss_file);
            c.arg(env!("CARGO_BIN_EXE_postmortem"));
            c
        }
        None => Command::new(env!("CARGO_BIN_EXE_postmortem")),
    };
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let t = Instant::now();
    let mut child = cmd.spawn().expect("run postmortem");
    // Read the pipes on threads so that a chatty child cannot block.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut out, &mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t.elapsed() > DEADLINE {
            // The whole group: /usr/bin/time and postmortem.
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg("--")
                .arg(format!("-{}", child.id()))
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = t.elapsed();
    let stdout = out.join().unwrap();
    let stderr = err.join().unwrap();
    let (code, stderr) = match status {
        None => (None, stderr),
        Some(s) => match time_exe() {
            // /usr/bin/time adds a line on a non-zero exit.
            Some(_) => (
                s.code(),
                stderr
                    .lines()
                    .filter(|l| !l.starts_with("Command exited with non-zero status"))
                    .map(|l| format!("{l}\n"))
                    .collect(),
            ),
            None => (s.code(), stderr),
        },
    };
    let peak_kib = std::fs::read_to_string(&rss_file)
        .ok()
        .and_then(|s| s.lines().last()?.trim().parse().ok());
    let _ = std::fs::remove_dir_all(&dir);
    let r = Run {
        code,
        stdout,
        stderr,
        elapsed,
        peak_kib,
    };
    assert!(
        r.code.is_some(),
        "postmortem {args:?} did not finish within {DEADLINE:?}: {}",
        r.show()
    );
    r
}

fn os<S: AsRef<std::ffi::OsStr> + ?Sized>(s: &S) -> &std::ffi::OsStr {
    s.as_ref()
}

/// The run failed with exit 2, one error line naming `file`, in time and
/// memory.
fn assert_refused(r: &Run, file: &Path, what: &str) {
    let shown = file.display().to_string();
    assert_eq!(r.code, Some(2), "{what}: {}", r.show());
    let errors = r.errors();
    assert_eq!(errors.len(), 1, "{what}: one error line: {}", r.show());
    assert!(
        errors[0].starts_with("postmortem: ") && errors[0].contains(&shown),
        "{what}: the error names {shown}: {}",
        r.show()
    );
    assert!(r.elapsed < DEADLINE, "{what}: {}", r.show());
    if let Some(k) = r.peak_kib {
        assert!(k < MAX_KIB, "{what}: peak {k} KiB: {}", r.show());
    } else {
        assert!(time_exe().is_none(), "{what}: no peak RSS measured");
    }
}

/// A thread that writes to the FIFO `path` without end, until the reader
/// goes away; [`Writer::finish`] ends it even if nobody ever read.
struct Writer {
    path: PathBuf,
    thread: std::thread::JoinHandle<u64>,
}

impl Writer {
    fn start(path: &Path) -> Writer {
        let p = path.to_path_buf();
        let thread = std::thread::spawn(move || {
            use std::io::Write;
            // Blocks until a reader opens the FIFO.
            let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
            let chunk = vec![b'x'; 1 << 16];
            let mut written = 0u64;
            while f.write_all(&chunk).is_ok() {
                written += chunk.len() as u64;
            }
            written
        });
        Writer {
            path: path.to_path_buf(),
            thread,
        }
    }

    /// Ends the writer: opening the FIFO for reading (without blocking)
    /// and closing it releases a writer still waiting for a reader.
    fn finish(self) -> u64 {
        const O_NONBLOCK: i32 = 0o4000;
        let _ = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(O_NONBLOCK)
            .open(&self.path);
        self.thread.join().unwrap()
    }
}

/// The instrumented build of `tests/data/sancov/crash.c` as bitcode (its
/// graph has a coverage flag map), built once with clang-14.
fn sancov_bc() -> &'static Path {
    static BC: OnceLock<PathBuf> = OnceLock::new();
    BC.get_or_init(|| {
        let dir = scratch("sancov");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sancov/crash.c");
        let bc = dir.join("crash-bb.bc");
        let o = Command::new("clang-14")
            .args([
                "-g",
                "-O0",
                "-fsanitize-coverage=bb,inline-bool-flag,pc-table",
            ])
            .args(["-emit-llvm", "-c"])
            .arg(&src)
            .arg("-o")
            .arg(&bc)
            .output()
            .expect("clang-14 is needed (see .ci/run)");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        bc
    })
}

/// The arguments that put `file` in the input slot `opt`, with what that
/// option needs besides.
fn with_input(opt: &str, file: &Path) -> Vec<std::ffi::OsString> {
    let cfg = example_cfg();
    let report = example_report();
    let mut a: Vec<std::ffi::OsString> = vec!["analyze".into()];
    let mut push = |x: &[&std::ffi::OsStr]| a.extend(x.iter().map(|s| s.to_os_string()));
    match opt {
        "--cfg" => push(&[
            os("--cfg"),
            file.as_os_str(),
            os("--report"),
            report.as_os_str(),
        ]),
        "--report" | "--backtrace" => {
            push(&[os("--cfg"), cfg.as_os_str(), os(opt), file.as_os_str()])
        }
        "--log" => push(&[
            os("--cfg"),
            cfg.as_os_str(),
            os("--report"),
            report.as_os_str(),
            os("--log"),
            file.as_os_str(),
        ]),
        "--sancov-flags" => push(&[
            os("--cfg"),
            sancov_bc().as_os_str(),
            os("--sancov-flags"),
            file.as_os_str(),
        ]),
        // The binary is checked first: a real ELF file.
        "--core" => push(&[
            os("--cfg"),
            cfg.as_os_str(),
            os("--binary"),
            os("/bin/sh"),
            os("--core"),
            file.as_os_str(),
        ]),
        "--binary" => push(&[
            os("--cfg"),
            cfg.as_os_str(),
            os("--core"),
            report.as_os_str(),
            os("--binary"),
            file.as_os_str(),
        ]),
        _ => unreachable!("{opt}"),
    }
    a
}

fn run_with(opt: &str, file: &Path) -> Run {
    let args = with_input(opt, file);
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_os_str()).collect();
    run(&args)
}

const ALL_INPUTS: [&str; 7] = [
    "--cfg",
    "--report",
    "--backtrace",
    "--log",
    "--sancov-flags",
    "--core",
    "--binary",
];

#[test]
fn a_device_as_any_input_is_refused_at_once() {
    for opt in ALL_INPUTS {
        for dev in ["/dev/zero", "/dev/urandom"] {
            let r = run_with(opt, Path::new(dev));
            assert_refused(&r, Path::new(dev), &format!("{opt} {dev}"));
        }
    }
}

#[test]
fn a_fifo_nobody_writes_to_does_not_hang() {
    let dir = scratch("fifo-silent");
    for opt in ALL_INPUTS {
        let p = fifo(&dir, &format!("silent{}", opt.trim_start_matches('-')));
        let r = run_with(opt, &p);
        if opt == "--log" {
            // An empty log is no error (see the log warnings below).
            assert_eq!(r.code, Some(0), "{opt}: {}", r.show());
            assert!(r.elapsed < DEADLINE, "{opt}: {}", r.show());
        } else {
            // Mapped and sized inputs must be regular files; an empty
            // report, backtrace or flag dump is malformed.
            assert_refused(&r, &p, opt);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_endless_fifo_is_cut_at_the_limit() {
    let dir = scratch("fifo-endless");
    for opt in ["--report", "--backtrace", "--log", "--sancov-flags"] {
        let p = fifo(&dir, &format!("endless{}", opt.trim_start_matches('-')));
        if opt == "--sancov-flags" {
            sancov_bc(); // built before the writer starts
        }
        let w = Writer::start(&p);
        let r = run_with(opt, &p);
        let written = w.finish();
        assert_refused(&r, &p, opt);
        assert!(written > 0, "{opt}: the writer wrote nothing");
        let want = if opt == "--sancov-flags" {
            "the most a dump of this graph's coverage flags"
        } else {
            "--max-input-size"
        };
        assert!(r.stderr.contains(want), "{opt}: {}", r.show());
    }
    // The limit can be lowered (and raised).
    let p = fifo(&dir, "endless-small");
    let w = Writer::start(&p);
    let cfg = example_cfg();
    let r = run(&[
        os("analyze"),
        os("--cfg"),
        cfg.as_os_str(),
        os("--backtrace"),
        p.as_os_str(),
        os("--max-input-size"),
        os("1M"),
    ]);
    w.finish();
    assert_refused(&r, &p, "--max-input-size 1M");
    assert!(r.stderr.contains("gave more than 1 MiB"), "{}", r.show());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_regular_file_over_the_limit_is_refused_before_reading() {
    let dir = scratch("big");
    let big = dir.join("big.log");
    std::fs::write(&big, vec![b'x'; 3 << 20]).unwrap();
    let cfg = example_cfg();
    let report = example_report();
    let base = [
        os("analyze"),
        os("--cfg"),
        cfg.as_os_str(),
        os("--report"),
        report.as_os_str(),
        os("--log"),
        big.as_os_str(),
    ];
    let mut args = base.to_vec();
    args.extend([os("--max-input-size"), os("2M")]);
    let r = run(&args);
    assert_refused(&r, &big, "--max-input-size 2M");
    assert!(
        r.stderr
            .contains("(3145728 bytes), more than the 2 MiB a log may have"),
        "{}",
        r.show()
    );
    // --max-memory bounds reading too (the default input limit is the
    // lesser of 64 MiB and it).
    let mut args = base.to_vec();
    args.extend([os("--max-memory"), os("1M")]);
    let r = run(&args);
    assert_refused(&r, &big, "--max-memory 1M");
    // Raised: read.
    let mut args = base.to_vec();
    args.extend([os("--max-input-size"), os("4M")]);
    let r = run(&args);
    assert_eq!(r.code, Some(0), "{}", r.show());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gzip_graphml_is_bounded_after_decompression() {
    let dir = scratch("gz");
    let gz = dir.join("replace.graphml.gz");
    let o = Command::new("gzip")
        .arg("-c")
        .arg(example_cfg())
        .output()
        .expect("gzip");
    assert!(o.status.success());
    std::fs::write(&gz, &o.stdout).unwrap();
    let plain = std::fs::metadata(example_cfg()).unwrap().len();
    let packed = o.stdout.len() as u64;
    assert!(packed * 2 < plain, "{packed} {plain}");
    // A budget the compressed file fits in, the graph does not.
    let budget = format!("{}", (packed + plain) / 2);
    let report = example_report();
    let r = run(&[
        os("analyze"),
        os("--cfg"),
        gz.as_os_str(),
        os("--report"),
        report.as_os_str(),
        os("--max-memory"),
        os(&budget),
    ]);
    assert_refused(&r, &gz, "gzip over --max-memory");
    assert!(r.stderr.contains("--max-memory"), "{}", r.show());
    // With the default budget it loads.
    let r = run(&[
        os("analyze"),
        os("--cfg"),
        gz.as_os_str(),
        os("--report"),
        report.as_os_str(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.show());
    let _ = std::fs::remove_dir_all(&dir);
}

// --- limits given as 0, NaN, negative, infinite -------------------------

fn analyze_json(extra: &[&str]) -> Run {
    let cfg = example_cfg();
    let report = example_report();
    let mut args = vec![
        os("analyze"),
        os("--cfg"),
        cfg.as_os_str(),
        os("--report"),
        report.as_os_str(),
        os("--format"),
        os("json"),
    ];
    args.extend(extra.iter().map(os));
    run(&args)
}

/// The node ids labelled `label` in a JSON analysis.
fn nodes(r: &Run, label: &str) -> std::collections::BTreeSet<String> {
    let v: serde_json::Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.show()));
    v["nodes"][label]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

/// A bad value: exit 2, clap's error naming the option and the value,
/// with our message.
fn assert_bad_value(opt: &str, value: &str, says: &str) {
    let r = analyze_json(&[opt, value]);
    assert_eq!(r.code, Some(2), "{opt} {value}: {}", r.show());
    let first = r.stderr.lines().next().unwrap_or("");
    assert!(
        first.contains(&format!("'{value}'")) && first.contains(opt) && first.contains(says),
        "{opt} {value}: {}",
        r.show()
    );
    assert!(r.stdout.is_empty(), "{opt} {value}: {}", r.show());
}

/// Labels under a limit are sound: every Yes and No is one of the labels
/// without it.
fn assert_coarsening(limited: &Run, full: &Run, what: &str) {
    assert_eq!(limited.code, Some(0), "{what}: {}", limited.show());
    for label in ["yes", "no"] {
        let (l, f) = (nodes(limited, label), nodes(full, label));
        assert!(
            l.is_subset(&f),
            "{what}: {label} {:?}",
            l.difference(&f).collect::<Vec<_>>()
        );
    }
}

#[test]
fn value_budget_values() {
    for v in ["NaN", "-1", "-0.5", "inf", "1e400", "soon"] {
        assert_bad_value("--value-budget", v, "not a factor");
    }
    for v in ["0", "0.25", "2"] {
        let run = analyze_json(&["--value-budget", v]);
        assert_eq!(run.code, Some(0), "--value-budget {v}: {}", run.show());
    }
}

#[test]
fn timeout_values() {
    for (v, says) in [
        ("NaN", "NaN is not a number of seconds"),
        ("nan", "NaN is not a number of seconds"),
        ("-1", "-1 is negative"),
        ("-0.5", "-0.5 is negative"),
        ("-inf", "-inf is negative"),
        ("inf", "more than the longest limit"),
        ("infinity", "more than the longest limit"),
        ("1e400", "more than the longest limit"),
        ("1e10", "more than the longest limit"),
        ("soon", "not a number of seconds"),
    ] {
        assert_bad_value("--timeout", v, says);
    }
    let full = analyze_json(&[]);
    assert_eq!(full.code, Some(0), "{}", full.show());
    // 0: no search time at all. Sound, and coarser on this report (the
    // cs refinement is skipped, with a weakening).
    let zero = analyze_json(&["--timeout", "0"]);
    assert_coarsening(&zero, &full, "--timeout 0");
    assert!(
        nodes(&zero, "yes").len() < nodes(&full, "yes").len(),
        "--timeout 0 searched: {}",
        zero.show()
    );
    assert!(zero.stdout.contains("time limit"), "{}", zero.show());
    // A normal value: the same labels as without.
    let normal = analyze_json(&["--timeout", "60"]);
    assert_coarsening(&normal, &full, "--timeout 60");
    assert_eq!(nodes(&normal, "yes"), nodes(&full, "yes"));
    assert_eq!(nodes(&normal, "no"), nodes(&full, "no"));
    let frac = analyze_json(&["--timeout", "2.5"]);
    assert_eq!(frac.code, Some(0), "{}", frac.show());
}

#[test]
fn max_states_values() {
    for v in ["NaN", "-1", "inf", "1e400", "2.5", "-inf"] {
        assert_bad_value("--max-states", v, "not a number of states");
    }
    let full = analyze_json(&[]);
    // 0: no product at all; sound.
    let zero = analyze_json(&["--max-states", "0"]);
    assert_coarsening(&zero, &full, "--max-states 0");
    let normal = analyze_json(&["--max-states", "100000"]);
    assert_coarsening(&normal, &full, "--max-states 100000");
}

#[test]
fn max_memory_and_input_size_values() {
    for opt in ["--max-memory", "--max-input-size"] {
        for v in ["0", "NaN", "-1", "inf", "1e400", "0.5", "-inf", "3Q"] {
            let says = if v == "3Q" {
                "unknown size suffix"
            } else {
                "not a positive size"
            };
            assert_bad_value(opt, v, says);
        }
        let normal = analyze_json(&[opt, "512M"]);
        assert_eq!(normal.code, Some(0), "{opt} 512M: {}", normal.show());
    }
}

#[test]
fn help_says_what_the_timeout_applies_to() {
    let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .args(["analyze", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("The time the whole run may take")
            && help.contains("a deadline every search of the run shares"),
        "{help}"
    );
    assert!(help.contains("--max-input-size"), "{help}");
}

// --- an output directory that cannot be written -------------------------

#[test]
fn an_output_directory_that_cannot_be_written_is_bad_usage() {
    let dir = scratch("out");
    let file = dir.join("somefile");
    std::fs::write(&file, "x").unwrap();
    let readonly = dir.join("readonly");
    std::fs::create_dir_all(&readonly).unwrap();
    let mut perms = std::fs::metadata(&readonly).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o555);
    std::fs::set_permissions(&readonly, perms).unwrap();
    // root may write anywhere: then only the other two are bad.
    let root_writes = std::fs::write(readonly.join("probe"), "x").is_ok();
    let mut bad = vec![
        (PathBuf::from("/proc/version"), "File exists"),
        (file.join("sub"), "Not a directory"),
        (PathBuf::from("/proc/version/sub"), "Not a directory"),
    ];
    if !root_writes {
        bad.push((readonly.clone(), "Permission denied"));
    }
    let cfg = example_cfg();
    let report = example_report();
    for (out, os_error) in &bad {
        let r = run(&[
            os("analyze"),
            os("--cfg"),
            cfg.as_os_str(),
            os("--report"),
            report.as_os_str(),
            os("--format"),
            os("html"),
            os("-o"),
            out.as_os_str(),
        ]);
        assert_refused(&r, out, &format!("-o {}", out.display()));
        assert!(
            r.stderr.contains(os_error),
            "-o {}: {}",
            out.display(),
            r.show()
        );
        assert!(!r.stderr.contains("internal error"), "{}", r.show());
    }
    // A directory that can be created: written, with no probe left.
    let good = dir.join("new/html");
    let r = run(&[
        os("analyze"),
        os("--cfg"),
        cfg.as_os_str(),
        os("--report"),
        report.as_os_str(),
        os("--format"),
        os("html"),
        os("-o"),
        good.as_os_str(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.show());
    assert!(good.join("index.html").is_file());
    let left: Vec<_> = std::fs::read_dir(&good)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(".postmortem-probe")
        })
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let mut perms = std::fs::metadata(&readonly).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&readonly, perms).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

// --- logs that lost their last lines to buffering ------------------------

#[test]
fn an_empty_or_unterminated_log_is_warned_about() {
    let dir = scratch("logs");
    let cfg = example_cfg();
    let report = example_report();
    let cases = [
        ("empty.log", "", Some("the log is empty")),
        (
            "cut.log",
            "some line\nanother li",
            Some("does not end with a newline"),
        ),
        ("whole.log", "some line\n", None),
    ];
    for (name, text, warning) in cases {
        let log = dir.join(name);
        std::fs::write(&log, text).unwrap();
        for format in ["text", "json"] {
            let r = run(&[
                os("analyze"),
                os("--cfg"),
                cfg.as_os_str(),
                os("--report"),
                report.as_os_str(),
                os("--log"),
                log.as_os_str(),
                os("--format"),
                os(format),
            ]);
            assert_eq!(r.code, Some(0), "{name}: {}", r.show());
            let warned: Vec<&str> = r
                .stderr
                .lines()
                .filter(|l| l.contains("stdbuf -oL"))
                .collect();
            match warning {
                Some(w) => {
                    assert_eq!(warned.len(), 1, "{name}: {}", r.show());
                    let l = warned[0];
                    assert!(l.starts_with("postmortem: warning: "), "{l}");
                    assert!(
                        l.contains(&log.display().to_string()) && l.contains(w),
                        "{l}"
                    );
                }
                None => assert!(warned.is_empty(), "{name}: {}", r.show()),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// --- a file in the wrong slot ------------------------------------------

fn analyze_with(extra: &[&std::ffi::OsStr]) -> Run {
    let mut args = vec![os("analyze")];
    args.extend_from_slice(extra);
    run(&args)
}

fn assert_hint(r: &Run, file: &Path, looks: &str, option: &str) {
    assert_refused(r, file, looks);
    let e = r.errors()[0];
    assert!(
        e.contains(looks) && e.contains(option),
        "{looks} / {option}: {}",
        r.show()
    );
}

#[test]
fn a_file_in_the_wrong_slot_says_what_it_looks_like() {
    let dir = scratch("slots");
    let cfg = example_cfg();
    let report = example_report();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    // A gdb backtrace as --report.
    let bt = data.join("sentry/recursion-bt.txt");
    let r = analyze_with(&[os("--cfg"), cfg.as_os_str(), os("--report"), bt.as_os_str()]);
    assert_hint(&r, &bt, "looks like a backtrace", "--backtrace");
    // A log as --report.
    let log = data.join("demo/crash.stderr.log");
    let r = analyze_with(&[
        os("--cfg"),
        cfg.as_os_str(),
        os("--report"),
        log.as_os_str(),
    ]);
    assert_hint(&r, &log, "plain text, not JSON", "--log");
    // A Sentry event and a grissom report as --backtrace.
    let event = data.join("sentry/recursion-event.json");
    let r = analyze_with(&[
        os("--cfg"),
        cfg.as_os_str(),
        os("--backtrace"),
        event.as_os_str(),
    ]);
    assert_hint(&r, &event, "this is a Sentry event", "--report");
    let r = analyze_with(&[
        os("--cfg"),
        cfg.as_os_str(),
        os("--backtrace"),
        report.as_os_str(),
    ]);
    assert_hint(&r, &report, "this is a JSON failure report", "--report");
    // Graph caches cut short: a plain one and one with a flag map (the
    // front-end's format, which said "truncated front-end output").
    let plain = dir.join("replace.pmcfg");
    let flags = dir.join("crash-bb.pmcfg");
    for (input, cache) in [(cfg.as_path(), &plain), (sancov_bc(), &flags)] {
        let o = Command::new(env!("CARGO_BIN_EXE_postmortem"))
            .args(["cfg", "build"])
            .arg(input)
            .arg("-o")
            .arg(cache)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let bytes = std::fs::read(cache).unwrap();
        let cut = dir.join(format!(
            "cut-{}",
            cache.file_name().unwrap().to_string_lossy()
        ));
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let r = analyze_with(&[
            os("--cfg"),
            cut.as_os_str(),
            os("--backtrace"),
            bt.as_os_str(),
        ]);
        assert_hint(&r, &cut, "cut short or corrupt", "postmortem cfg build");
        assert!(!r.stderr.contains("front-end output"), "{}", r.show());
        // Written by an older postmortem: the version after the graph's
        // magic (in a flag cache, the graph follows the front-end header).
        let mut old = bytes.clone();
        let at = old
            .windows(6)
            .position(|w| w == b"PMCFG\0")
            .expect("a graph cache inside")
            + 6;
        let v = u16::from_le_bytes([old[at], old[at + 1]]);
        old[at..at + 2].copy_from_slice(&(v - 1).to_le_bytes());
        let stale = dir.join(format!(
            "old-{}",
            cache.file_name().unwrap().to_string_lossy()
        ));
        std::fs::write(&stale, &old).unwrap();
        let r = analyze_with(&[
            os("--cfg"),
            stale.as_os_str(),
            os("--backtrace"),
            bt.as_os_str(),
        ]);
        assert_hint(
            &r,
            &stale,
            "another version of postmortem",
            "postmortem cfg build",
        );
        assert!(!r.stderr.contains("corrupt"), "{}", r.show());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `query --format json` on the bundled example with `extra` options.
fn query_json(question: &[&str], extra: &[&str]) -> (Run, serde_json::Value) {
    let cfg = example_cfg();
    let report = example_report();
    let mut args = vec![
        os("query"),
        os("--cfg"),
        cfg.as_os_str(),
        os("--report"),
        report.as_os_str(),
        os("--format"),
        os("json"),
    ];
    args.extend(question.iter().map(os));
    args.extend(extra.iter().map(os));
    let r = run(&args);
    let v = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.show()));
    (r, v)
}

/// A query whose search hits a limit is not an internal error: it is
/// answered by utl (whose `impossible` is sound; the limit listed among
/// the weakenings) or, for a question utl cannot ask, `unknown` with the
/// reason; exit 0 either way. A degraded `impossible` is one the unlimited
/// search also gives.
#[test]
fn a_query_at_a_limit_degrades_to_a_sound_answer() {
    let ids: Vec<String> = nodes(&analyze_json(&["--solver", "utl"]), "maybe")
        .into_iter()
        .chain(nodes(&analyze_json(&["--solver", "utl"]), "no"))
        .step_by(7)
        .take(12)
        .collect();
    assert!(ids.len() >= 6, "too few nodes to ask about: {ids:?}");
    let mut limited_seen = 0;
    for id in &ids {
        for (q, solver) in [
            ("--may-run", "fsa"),
            ("--may-skip", "fsa"),
            ("--may-run", "cs"),
        ] {
            let (r, v) = query_json(&[q, id], &["--solver", solver, "--max-states", "2"]);
            assert_eq!(r.code, Some(0), "{q} {id} {solver}: {}", r.show());
            let answer = v["answer"].as_str().unwrap();
            assert!(
                answer == "possible" || answer == "impossible",
                "{}",
                r.show()
            );
            let weakened = v["weakened"].to_string();
            if weakened.contains("gave up") || weakened.contains("exceeds") {
                limited_seen += 1;
            }
            let (full, fv) = query_json(&[q, id], &["--solver", solver]);
            assert_eq!(full.code, Some(0), "{}", full.show());
            if answer == "impossible" {
                assert_eq!(
                    fv["answer"],
                    "impossible",
                    "{q} {id} {solver}: {}",
                    r.show()
                );
            }
        }
    }
    assert!(limited_seen > 0, "no query reached the limit");
    // A regular query utl cannot ask: no answer, and why.
    let (r, v) = query_json(
        &["--regex", ".* call:getline .*"],
        &["--solver", "fsa", "--max-states", "2"],
    );
    assert_eq!(r.code, Some(0), "{}", r.show());
    assert_eq!(v["answer"], "unknown", "{}", r.show());
    assert!(
        v["gave_up"].as_str().unwrap_or("").contains("--max-states"),
        "{}",
        r.show()
    );
    assert!(v.get("witness").is_none(), "{}", r.show());
}
