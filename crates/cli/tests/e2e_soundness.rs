//! End-to-end soundness on real crashes: for each small C program of
//! `tests/data/e2e/` (loops, recursion, function pointers, early returns,
//! switch), compile it with clang-14's source coverage, run it under gdb
//! to the crash its input leads to, and check every Yes and No line
//! postmortem derives from the backtrace (and the log) against the lines
//! that really ran.
//!
//! One execution gives everything: `gdb -batch -ex 'run ARGS > out.log'
//! -ex bt -ex continue ./prog` stops at the fatal signal (the backtrace),
//! and `continue` delivers the signal to the handler of
//! `flush_profile.c`, which writes the coverage profile (the clang runtime
//! writes it only at a normal exit) and exits. That file is compiled
//! without coverage and is not part of the graph, which is built from the
//! program's own IR (`clang-14 -g -O0 -emit-llvm -c`).
//!
//! **The truth.** `llvm-profdata-14 merge` + `llvm-cov-14 export
//! -format=text` give coverage segments; line counts are computed from
//! them exactly as `llvm-cov show` does (and checked against it). One
//! subtlety of a crashed run: a coverage region is counted when it is
//! entered, and the counts of regions that follow are derived by counter
//! arithmetic as if every function had carried on to its end. A function
//! still on the stack at the crash therefore looks as if it had also run
//! the rest of its current region and what follows it, at most once per
//! active frame of that function (every counter that is subtracted is a
//! real one, so counts are never too low). So for a line of function `f`
//! with llvm-cov count `c` and `k` frames of `f` in the backtrace:
//!
//! * `c == 0`: it did not run (the check for Yes lines);
//! * `c > k`, or the line is a frame's line: it ran (the check for No
//!   lines);
//! * `0 < c <= k` otherwise: unknown, not checked (counted and printed).
//!
//! Checked for utl and fsa, with the backtrace alone and with the
//! backtrace plus the log (the program's standard output): no Yes line
//! did not run, no No line ran, and there are Yes and No lines, and some
//! of each are actually confirmed by the truth. The FSA result must also
//! be at least as precise as UTL's (`--compare fsa,utl --expect gt`).
//!
//! Needs clang-14, llvm-profdata-14, llvm-cov-14 and gdb: without them
//! the tests fail, they do not skip.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/e2e")
        .join(name)
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs a command in `dir`; it must succeed.
fn sh(dir: &Path, program: &str, args: &[&str]) -> Output {
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

fn require(tool: &str) {
    // `--help`: llvm-profdata-14 --version exits 1.
    let ok = Command::new(tool)
        .arg("--help")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(ok, "{tool} is required by the end-to-end soundness tests but cannot be run (install it; see .ci/run)");
}

/// A program frame of a gdb backtrace: function and line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Frame {
    func: String,
    line: u64,
}

/// The frames of `bt` (gdb `bt` output) in the source file `file`,
/// innermost first.
fn program_frames(bt: &str, file: &str) -> Vec<Frame> {
    let mut frames = Vec::new();
    for l in bt.lines() {
        let Some(rest) = l.strip_prefix('#') else {
            continue;
        };
        let Some((_, rest)) = rest.split_once(' ') else {
            continue;
        };
        let rest = rest.trim_start();
        let rest = if rest.starts_with("0x") {
            rest.split_once(" in ").map(|x| x.1).unwrap_or("")
        } else {
            rest
        };
        let Some(func) = rest.split(" (").next() else {
            continue;
        };
        let Some((_, at)) = rest.rsplit_once(" at ") else {
            continue;
        };
        let Some((path, line)) = at.trim().rsplit_once(':') else {
            continue;
        };
        if Path::new(path).file_name().and_then(|n| n.to_str()) != Some(file) {
            continue;
        }
        frames.push(Frame {
            func: func.trim().to_string(),
            line: line.parse().unwrap(),
        });
    }
    frames
}

/// Line counts from the segments of one file of `llvm-cov export`, as
/// llvm-cov's `LineCoverageStats` computes them: the count of the segment
/// wrapping into the line, raised to the largest count of a region that
/// starts on the line. Only mapped lines are in the map: lines a region
/// covers, unless a skipped region starts them.
fn line_counts(segments: &[Value]) -> BTreeMap<u64, u64> {
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
fn shown_counts(text: &str) -> BTreeMap<u64, u64> {
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

/// What really ran, per line of the program's source.
struct Truth {
    counts: BTreeMap<u64, u64>,
    /// For each line, how many active frames its function had at the crash.
    active: BTreeMap<u64, u64>,
    frame_lines: BTreeSet<u64>,
    /// Lines holding only `}`: llvm-cov gives them the count of the
    /// region they close, but their own code (the branch at the end of a
    /// loop body, say) is skipped by a `continue`, so a count > 0 does
    /// not show that they ran. Coverage flags tell these apart.
    brace_lines: BTreeSet<u64>,
}

enum Ran {
    Yes,
    No,
    Unknown,
    Unmapped,
}

impl Truth {
    fn ran(&self, line: u64) -> Ran {
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

/// A program of `tests/data/e2e`, the input that crashes it, and what the
/// crash is.
struct Case {
    name: &'static str,
    args: &'static [&'static str],
    /// The innermost program frame's function.
    crash_in: &'static str,
    /// How many program frames the backtrace has.
    depth: usize,
}

/// Compiles, crashes and checks one program.
fn check(case: &Case) {
    for tool in ["clang-14", "gdb", "llvm-profdata-14", "llvm-cov-14"] {
        require(tool);
    }
    let dir = std::env::temp_dir().join(format!(
        "pm-e2e-soundness-{}-{}",
        case.name,
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = format!("{}.c", case.name);
    std::fs::copy(data(&src), dir.join(&src)).unwrap();
    std::fs::copy(data("flush_profile.c"), dir.join("flush_profile.c")).unwrap();

    // Build: the IR for the graph, the program with coverage.
    let bc = format!("{}.bc", case.name);
    sh(
        &dir,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", &src, "-o", &bc],
    );
    sh(
        &dir,
        "clang-14",
        &[
            "-g",
            "-O0",
            "-c",
            "flush_profile.c",
            "-o",
            "flush_profile.o",
        ],
    );
    let cov_flags = [
        "-g",
        "-O0",
        "-fprofile-instr-generate",
        "-fcoverage-mapping",
    ];
    sh(
        &dir,
        "clang-14",
        &[&cov_flags[..], &[&src, "flush_profile.o", "-o", case.name]].concat(),
    );

    // Run to the crash under gdb: backtrace, log and profile of one run.
    let quoted: Vec<String> = case.args.iter().map(|a| format!("'{a}'")).collect();
    let run = format!("run {} > out.log", quoted.join(" "));
    let profraw = dir.join("prog.profraw");
    let gdb = Command::new("gdb")
        .current_dir(&dir)
        .env("LLVM_PROFILE_FILE", &profraw)
        .args([
            "-nx",
            "-batch",
            "-iex",
            "set debuginfod enabled off",
            "-ex",
            &run,
            "-ex",
            "bt",
            "-ex",
            "continue",
        ])
        .arg(format!("./{}", case.name))
        .stdin(Stdio::null())
        .output()
        .expect("run gdb");
    let bt =
        String::from_utf8_lossy(&gdb.stdout).to_string() + &String::from_utf8_lossy(&gdb.stderr);
    std::fs::write(dir.join("bt.txt"), &bt).unwrap();
    let frames = program_frames(&bt, &src);
    assert_eq!(
        frames.len(),
        case.depth,
        "{}: unexpected backtrace:\n{bt}",
        case.name
    );
    assert_eq!(
        frames[0].func, case.crash_in,
        "{}: crashed elsewhere:\n{bt}",
        case.name
    );
    assert_eq!(frames.last().unwrap().func, "main", "{bt}");
    assert!(
        profraw.exists(),
        "{}: no profile written at the crash (gdb: {bt})",
        case.name
    );

    // The truth: llvm-cov line counts.
    sh(
        &dir,
        "llvm-profdata-14",
        &["merge", "-o", "prog.profdata", profraw.to_str().unwrap()],
    );
    let bin = format!("./{}", case.name);
    let export = sh(
        &dir,
        "llvm-cov-14",
        &[
            "export",
            "-format=text",
            "-instr-profile=prog.profdata",
            &bin,
        ],
    );
    let export: Value = serde_json::from_slice(&export.stdout).unwrap();
    let cov = &export["data"][0];
    let files = cov["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{}: coverage of several files", case.name);
    let cov_file = files[0]["filename"].as_str().unwrap().to_string();
    assert!(cov_file.ends_with(&format!("/{src}")), "{cov_file}");
    let counts = line_counts(files[0]["segments"].as_array().unwrap());
    let shown = sh(
        &dir,
        "llvm-cov-14",
        &["show", "-instr-profile=prog.profdata", &bin, &src],
    );
    let shown = shown_counts(&String::from_utf8_lossy(&shown.stdout));
    let computed: BTreeMap<u64, u64> = counts
        .iter()
        .filter(|(_, c)| **c < 1000)
        .map(|(l, c)| (*l, *c))
        .collect();
    assert_eq!(
        computed, shown,
        "{}: line counts from the export differ from llvm-cov show",
        case.name
    );

    let mut per_func: HashMap<&str, u64> = HashMap::new();
    for f in &frames {
        *per_func.entry(f.func.as_str()).or_default() += 1;
    }
    let mut active = BTreeMap::new();
    for func in cov["functions"].as_array().unwrap() {
        let name = func["name"].as_str().unwrap();
        let name = name.rsplit(':').next().unwrap(); // `file.c:f` for static functions
        let Some(&k) = per_func.get(name) else {
            continue;
        };
        let code: Vec<&Vec<Value>> = func["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap())
            .filter(|r| r[5] == 0 && r[7] == 0) // in the function's own file; code regions
            .collect();
        let first = code.iter().map(|r| r[0].as_u64().unwrap()).min().unwrap();
        let last = code.iter().map(|r| r[2].as_u64().unwrap()).max().unwrap();
        for line in first..=last {
            *active.entry(line).or_insert(0) += k;
        }
    }
    let frame_lines: BTreeSet<u64> = frames.iter().map(|f| f.line).collect();
    for l in &frame_lines {
        assert!(
            counts.get(l).map(|c| *c > 0).unwrap_or(false),
            "{}: frame line {l} has no count",
            case.name
        );
    }
    let source = std::fs::read_to_string(dir.join(&src)).unwrap();
    let brace_lines = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == "}")
        .map(|(i, _)| i as u64 + 1)
        .collect();
    let truth = Truth {
        counts,
        active,
        frame_lines,
        brace_lines,
    };

    // The analyses.
    let pm = env!("CARGO_BIN_EXE_postmortem");
    let mut failure: Vec<(String, Vec<&str>)> = vec![
        (bc.clone(), vec!["--backtrace", "bt.txt"]),
        (
            bc.clone(),
            vec!["--backtrace", "bt.txt", "--log", "out.log"],
        ),
    ];
    // The same crash from a core dump of a SanitizerCoverage build (func
    // and bb flags, see `sancov_core`).
    for mode in ["func", "bb"] {
        let (cfg, mut args) = sancov_core(&dir, case, &src, mode);
        failure.push((cfg.clone(), args.clone()));
        args.extend(["--log", "out.log"]);
        failure.push((cfg, args));
    }
    let log = std::fs::read_to_string(dir.join("out.log")).unwrap();
    assert!(
        !log.trim().is_empty(),
        "{}: the program printed nothing before its crash",
        case.name
    );
    let mut summary = Vec::new();
    for (bc, inputs) in &failure {
        for solver in ["utl", "fsa"] {
            let what = format!("{} {} --solver {solver}", case.name, inputs.join(" "));
            let o = Command::new(pm)
                .current_dir(&dir)
                .args([
                    "analyze", "--cfg", bc, "--format", "json", "--solver", solver,
                ])
                .args(inputs)
                .output()
                .unwrap();
            assert!(o.status.success(), "{what}: {}", show(&o));
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(!err.contains("warning"), "{what}: {err}");
            let v: Value = serde_json::from_slice(&o.stdout).unwrap();
            let lines = v["lines"].as_object().unwrap();
            assert_eq!(
                lines.len(),
                1,
                "{what}: {:?}",
                lines.keys().collect::<Vec<_>>()
            );
            let (file, labels) = lines.iter().next().unwrap();
            assert_eq!(
                std::fs::canonicalize(file).unwrap(),
                std::fs::canonicalize(&cov_file).unwrap(),
                "{what}: the graph's file is not llvm-cov's"
            );
            let get = |k: &str| -> Vec<u64> {
                labels[k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .collect()
            };
            let (yes, no) = (get("yes"), get("no"));
            let (mut yes_ok, mut no_ok, mut unknown, mut unmapped) = (0, 0, 0, 0);
            for &l in &yes {
                match truth.ran(l) {
                    Ran::No => panic!(
                        "{what}: line {l} is Yes but did not run ({:?})\n{bt}",
                        truth.counts.get(&l)
                    ),
                    Ran::Yes => yes_ok += 1,
                    Ran::Unknown => unknown += 1,
                    Ran::Unmapped => unmapped += 1,
                }
            }
            for &l in &no {
                match truth.ran(l) {
                    Ran::Yes => panic!(
                        "{what}: line {l} is No but ran ({:?}, {} active frames)\n{bt}",
                        truth.counts.get(&l),
                        truth.active.get(&l).unwrap_or(&0)
                    ),
                    Ran::No => no_ok += 1,
                    Ran::Unknown => unknown += 1,
                    Ran::Unmapped => unmapped += 1,
                }
            }
            // Something is learned, and confirmed.
            assert!(
                yes_ok > 0 && no_ok > 0,
                "{what}: Yes lines {yes:?} ({yes_ok} confirmed), No lines {no:?} ({no_ok} confirmed)"
            );
            let maybe = get("maybe").len();
            summary.push(format!(
                "{what}: {} yes ({yes_ok} confirmed), {} no ({no_ok} confirmed), {} maybe ({:.0}% of lines decided); {unknown} unknown, {unmapped} unmapped",
                yes.len(),
                no.len(),
                maybe,
                100.0 * (yes.len() + no.len()) as f64 / (yes.len() + no.len() + maybe).max(1) as f64
            ));
        }
        let o = Command::new(pm)
            .current_dir(&dir)
            .args([
                "analyze",
                "--cfg",
                bc,
                "--compare",
                "fsa,utl",
                "--expect",
                "gt",
            ])
            .args(inputs)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{} {inputs:?}: fsa is less precise than utl: {}",
            case.name,
            show(&o)
        );
    }
    eprintln!("{}", summary.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn loops_abort_inside_a_do_while() {
    check(&Case {
        name: "loops",
        args: &["5", "12"],
        crash_in: "check_row",
        depth: 2,
    });
}

#[test]
fn recursion_divides_by_zero_four_calls_deep() {
    check(&Case {
        name: "recursion",
        args: &["+ 1 * 2 / 6 - 3 3"],
        crash_in: "apply",
        depth: 8,
    });
}

#[test]
fn function_pointers_crash_in_a_command_called_through_the_table() {
    check(&Case {
        name: "fnptr",
        args: &["sort", "sum", "last"],
        crash_in: "cmd_last",
        depth: 3,
    });
}

#[test]
fn early_returns_then_a_failed_assert() {
    check(&Case {
        name: "early",
        args: &["7:alice:42", "3:bob:-1", "x", "9:carol:250"],
        crash_in: "store",
        depth: 2,
    });
}

#[test]
fn switch_falls_through_and_dereferences_an_empty_stack() {
    check(&Case {
        name: "switch",
        args: &["12+3*p.d"],
        crash_in: "step",
        depth: 3,
    });
}

/// Builds `src` with `-fsanitize-coverage=MODE,inline-bool-flag,pc-table`
/// (the IR for the graph, and the binary from that IR, linked with the
/// sancov callbacks of `tests/data/sancov/sancov_stub.c`), runs it with
/// the case's input under gdb to the crash and writes a core there with
/// `generate-core-file` (not the kernel's core_pattern, which CI does not
/// control). Returns the graph and the `--core`/`--binary` arguments.
fn sancov_core(dir: &Path, case: &Case, src: &str, mode: &str) -> (String, Vec<&'static str>) {
    let stub = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sancov/sancov_stub.c");
    std::fs::copy(&stub, dir.join("sancov_stub.c")).unwrap();
    let bc = format!("{}-{mode}.bc", case.name);
    let bin = format!("{}-{mode}", case.name);
    let cov = format!("-fsanitize-coverage={mode},inline-bool-flag,pc-table");
    sh(
        dir,
        "clang-14",
        &["-g", "-O0", &cov, "-emit-llvm", "-c", src, "-o", &bc],
    );
    sh(
        dir,
        "clang-14",
        &["-g", "-O0", &bc, "sancov_stub.c", "-o", &bin],
    );
    let quoted: Vec<String> = case.args.iter().map(|a| format!("'{a}'")).collect();
    let core = format!("core-{mode}");
    let gdb = Command::new("gdb")
        .current_dir(dir)
        .args([
            "-nx",
            "-batch",
            "-iex",
            "set debuginfod enabled off",
            "-ex",
            &format!("run {} > /dev/null", quoted.join(" ")),
            "-ex",
            &format!("generate-core-file {core}"),
        ])
        .arg(format!("./{bin}"))
        .stdin(Stdio::null())
        .output()
        .expect("run gdb");
    assert!(
        dir.join(&core).exists(),
        "{}: gdb wrote no core: {}",
        case.name,
        show(&gdb)
    );
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    (bc, vec!["--core", leak(core), "--binary", leak(bin)])
}

#[test]
fn line_counts_follow_llvm_cov() {
    // Segments [line, col, count, has_count, region_entry, gap].
    let segs: Vec<Value> = serde_json::from_str(
        "[[1,10,5,true,true,false],[2,3,2,true,true,false],[2,9,5,true,false,false],\
          [3,1,0,true,true,true],[4,1,7,true,true,false],[5,1,0,false,true,false],[6,1,0,false,false,false]]",
    )
    .unwrap();
    let c = line_counts(&segs);
    let get = |l: u64| c.get(&l).copied();
    assert_eq!(get(1), Some(5));
    assert_eq!(get(2), Some(5)); // max of the wrapped count and the regions starting on it
    assert_eq!(get(3), Some(5)); // a gap region does not count, the wrapped one does
    assert_eq!(get(4), Some(7));
    assert_eq!(get(5), None); // a skipped region
    assert_eq!(get(6), None);
}
