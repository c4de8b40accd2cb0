//! `postmortem suggest`: its outputs, and its guarantee checked by adding
//! each suggested observation to the report and analysing again: on the
//! paper's example (exact counts) and on a real crash (a C program built
//! with clang-14's coverage and crashed under gdb: the observation takes
//! the value the run had, and the labels stay sound against llvm-cov).
//!
//! The real-crash test needs clang-14, llvm-profdata-14, llvm-cov-14 and
//! gdb (it fails without them, like `e2e_soundness.rs`).

mod common;

use common::{active_frames, line_counts, require, sh, show, source_frames, Ran, Truth};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn pm(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let o = pm(dir, args);
    assert!(o.status.success(), "{args:?}: {}", show(&o));
    String::from_utf8(o.stdout).unwrap()
}

fn scratch(tag: &str) -> PathBuf {
    common::scratch(&format!("suggest-{tag}"))
}

/// main: line 1 entry, line 2 a branch to line 3 or line 4, both to line 5.
const DIAMOND: &str = r#"<graphml>
<key id="kind" for="node" attr.name="kind" attr.type="string"/>
<key id="lines" for="node" attr.name="lines" attr.type="string"/>
<key id="file" for="node" attr.name="file" attr.type="string"/>
<key id="procedure" for="node" attr.name="procedure" attr.type="string"/>
<graph id="CFG" edgedefault="directed">
<node id="n:1:1"><data key="kind">entry</data><data key="lines">( 1 )</data><data key="file">/t/d.c</data><data key="procedure">main</data></node>
<node id="n:1:2"><data key="kind">exit</data></node>
<node id="n:1:3"><data key="kind">expression</data><data key="lines">( 2 )</data></node>
<node id="n:1:4"><data key="kind">expression</data><data key="lines">( 3 )</data></node>
<node id="n:1:5"><data key="kind">expression</data><data key="lines">( 4 )</data></node>
<node id="n:1:6"><data key="kind">expression</data><data key="lines">( 5 )</data></node>
<edge source="n:1:1" target="n:1:3"/><edge source="n:1:3" target="n:1:4"/><edge source="n:1:3" target="n:1:5"/>
<edge source="n:1:4" target="n:1:6"/><edge source="n:1:5" target="n:1:6"/><edge source="n:1:6" target="n:1:2"/>
</graph></graphml>
"#;

#[test]
fn text_json_html_k_and_nothing_maybe() {
    let d = scratch("formats");
    std::fs::write(d.join("d.graphml"), DIAMOND).unwrap();
    std::fs::write(d.join("j.json"), r#"{"crash":["n:1:6"]}"#).unwrap();
    std::fs::write(d.join("a.json"), r#"{"crash":["n:1:4"]}"#).unwrap();
    let base = ["suggest", "--cfg", "d.graphml", "--report", "j.json"];
    // Text: a table of both branches, each deciding both lines either way.
    let text = ok(&d, &base);
    assert!(text.contains("2 Maybe lines"), "{text}");
    assert!(text.contains("exact top list"), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("/t/d.c:")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(
        rows[0].contains("/t/d.c:3") && rows[0].contains("main"),
        "{text}"
    );
    assert_eq!(
        rows[0].split_whitespace().rev().take(3).collect::<Vec<_>>(),
        ["2", "2", "2"],
        "{text}"
    );
    // JSON, -k 1.
    let v: Value = serde_json::from_str(&ok(
        &d,
        &[&base[..], &["-k", "1", "--format", "json"]].concat(),
    ))
    .unwrap();
    let s = v["suggestions"].as_array().unwrap();
    assert_eq!(s.len(), 1, "{v}");
    assert_eq!(
        (&s[0]["file"], &s[0]["line"], &s[0]["node"], &s[0]["worst"]),
        (&json!("/t/d.c"), &json!(3), &json!("n:1:4"), &json!(2))
    );
    assert_eq!(v["complete"], json!(true));
    // HTML: the analyze report with the section, the point linked.
    let out = ok(
        &d,
        &[&base[..], &["--format", "html", "-o", "html"]].concat(),
    );
    assert!(out.contains("index.html"), "{out}");
    let index = std::fs::read_to_string(d.join("html/index.html")).unwrap();
    assert!(index.contains("What to observe next"), "{index}");
    assert!(
        index.contains("#L3\">d.c:3</a>") || index.contains("#L3\">/t/d.c:3</a>"),
        "{index}"
    );
    // Nothing Maybe: says so.
    let text = ok(&d, &["suggest", "--cfg", "d.graphml", "--report", "a.json"]);
    assert!(
        text.contains("Nothing to suggest: no line is Maybe"),
        "{text}"
    );
    // A group: the main crash, the same again and one where nothing is
    // Maybe: worst cases add up (2 + 2 + 0).
    let v: Value = serde_json::from_str(&ok(
        &d,
        &[
            &base[..],
            &["--also", "j.json", "--also", "a.json", "--format", "json"],
        ]
        .concat(),
    ))
    .unwrap();
    assert_eq!(
        (&v["crashes"], &v["maybe_lines"]),
        (&json!(3), &json!(4)),
        "{v}"
    );
    assert_eq!(v["suggestions"][0]["worst"], json!(4), "{v}");
    // A limit: incomplete, and said.
    let text = ok(&d, &[&base[..], &["--max-analyses", "1"]].concat());
    assert!(text.contains("INCOMPLETE"), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Lines per label of an `analyze --format json` output: (file, line).
fn line_labels(v: &Value) -> BTreeMap<(String, u64), String> {
    let mut out = BTreeMap::new();
    for (file, labels) in v["lines"].as_object().unwrap() {
        for l in ["yes", "no", "maybe"] {
            for n in labels[l].as_array().unwrap() {
                out.insert((file.clone(), n.as_u64().unwrap()), l.to_string());
            }
        }
    }
    out
}

/// How many of `base`'s Maybe lines `after` decides.
fn decided(
    base: &BTreeMap<(String, u64), String>,
    after: &BTreeMap<(String, u64), String>,
) -> usize {
    base.iter()
        .filter(|(k, l)| *l == "maybe" && after.get(*k).is_some_and(|a| a != "maybe"))
        .count()
}

#[test]
fn guarantees_are_what_analyze_decides_with_the_observation_on_the_paper_example() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cfg = repo.join("examples/replace-v1/replace.graphml");
    let report = repo.join("examples/replace-v1/204-trace/data.json");
    let (cfg, report) = (cfg.to_str().unwrap(), report.to_str().unwrap());
    let d = scratch("replace");
    let base_json: Value = serde_json::from_str(&std::fs::read_to_string(report).unwrap()).unwrap();
    // Exact ranking; dominator bounds confirmed by re-running; bounds
    // alone (no analysis allowed: each count a proven lower bound).
    let methods: [(&str, &[&str]); 3] = [
        ("exact", &[]),
        ("bounds", &[]),
        ("bounds", &["--max-analyses", "0"]),
    ];
    // best: UTL's re-runs of the three points (six analyses) and no
    // confirmation: each count a bound proven by UTL.
    let utl_bounds: (&str, &[&str]) = ("bounds", &["--max-analyses", "6"]);
    let mut by_utl = 0;
    for (solver, (method, extra)) in ["utl", "fsa"]
        .into_iter()
        .flat_map(|s| methods.iter().map(move |m| (s, m)))
        .chain([("best", &utl_bounds)])
    {
        let mut args = vec![
            "suggest", "--cfg", cfg, "--report", report, "--solver", solver, "-k", "3", "--format",
            "json", "--method", method,
        ];
        args.extend_from_slice(extra);
        let v: Value = serde_json::from_str(&ok(&d, &args)).unwrap();
        let confirmed = extra.is_empty();
        assert_eq!(v["method"], json!(method), "{v}");
        assert_eq!(v["complete"], json!(confirmed), "{v}");
        let sug = v["suggestions"].as_array().unwrap();
        assert_eq!(sug.len(), 3, "{v}");
        let base: Value = serde_json::from_str(&ok(
            &d,
            &[
                "analyze", "--cfg", cfg, "--report", report, "--solver", solver, "--format", "json",
            ],
        ))
        .unwrap();
        let base = line_labels(&base);
        let mut last = usize::MAX;
        for s in sug {
            let node = s["node"].as_str().unwrap();
            let worst = s["worst"].as_u64().unwrap() as usize;
            assert!(worst <= last, "not in order: {v}");
            by_utl += usize::from(s["bound"] == json!("utl"));
            if solver != "best" {
                assert_ne!(s["bound"], json!("utl"), "{s}");
            }
            last = worst;
            for (side, key) in [("if_ran", "obsYes"), ("if_not", "obsNo")] {
                let mut r = base_json.clone();
                let m = r.as_object_mut().unwrap();
                let list = m.entry(key).or_insert(json!([]));
                list.as_array_mut().unwrap().push(if key == "obsYes" {
                    json!({"reliable": false, "entries": [[node]]})
                } else {
                    json!([node])
                });
                let p = d.join(format!("{solver}-{method}-{node}-{side}.json").replace(':', "_"));
                std::fs::write(&p, r.to_string()).unwrap();
                let after: Value = serde_json::from_str(&ok(
                    &d,
                    &[
                        "analyze",
                        "--cfg",
                        cfg,
                        "--report",
                        p.to_str().unwrap(),
                        "--solver",
                        solver,
                        "--format",
                        "json",
                    ],
                ))
                .unwrap();
                let real = decided(&base, &line_labels(&after));
                let shown = s[side].as_u64().unwrap() as usize;
                assert_eq!(s["exact"], json!(confirmed), "{s}");
                if confirmed {
                    assert_eq!(real, shown, "{solver} {method} {node} {side}: {s}");
                } else {
                    assert!(shown <= real, "{solver} {node} {side}: bound {s}");
                }
            }
        }
    }
    assert!(by_utl > 0, "no bound from UTL's re-runs");
    let _ = std::fs::remove_dir_all(&d);
}

fn e2e(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/e2e")
        .join(name)
}

/// A real crash: `loops 5 12` aborts in `check_row`. Every suggestion
/// whose line is its only node is observed with the value the run had
/// (llvm-cov), as a `ran` / `not_ran` line of a postmortem report beside
/// the backtrace; `analyze` then decides at least the guaranteed number of
/// the Maybe lines (exactly the count of that side) and every Yes and No
/// line agrees with the run.
#[test]
fn on_a_real_crash_the_true_observation_decides_the_guarantee_soundly() {
    for tool in ["clang-14", "gdb", "llvm-profdata-14", "llvm-cov-14"] {
        require(tool);
    }
    let d = scratch("real");
    for f in ["loops.c", "flush_profile.c"] {
        std::fs::copy(e2e(f), d.join(f)).unwrap();
    }
    sh(
        &d,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", "loops.c", "-o", "loops.bc"],
    );
    sh(
        &d,
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
    sh(
        &d,
        "clang-14",
        &[
            "-g",
            "-O0",
            "-fprofile-instr-generate",
            "-fcoverage-mapping",
            "loops.c",
            "flush_profile.o",
            "-o",
            "loops",
        ],
    );
    let profraw = d.join("prog.profraw");
    let gdb = Command::new("gdb")
        .current_dir(&d)
        .env("LLVM_PROFILE_FILE", &profraw)
        .args([
            "-nx",
            "-batch",
            "-iex",
            "set debuginfod enabled off",
            "-ex",
            "run 5 12 > out.log",
            "-ex",
            "bt",
            "-ex",
            "continue",
            "./loops",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let bt =
        String::from_utf8_lossy(&gdb.stdout).to_string() + &String::from_utf8_lossy(&gdb.stderr);
    std::fs::write(d.join("bt.txt"), &bt).unwrap();
    let frames: Vec<_> = source_frames(&bt)
        .into_iter()
        .filter(|f| f.file_name() == "loops.c")
        .collect();
    assert_eq!(
        frames.first().map(|f| f.func.as_str()),
        Some("check_row"),
        "{bt}"
    );
    sh(
        &d,
        "llvm-profdata-14",
        &["merge", "-o", "prog.profdata", profraw.to_str().unwrap()],
    );
    let export = sh(
        &d,
        "llvm-cov-14",
        &[
            "export",
            "-format=text",
            "-instr-profile=prog.profdata",
            "./loops",
        ],
    );
    let export: Value = serde_json::from_slice(&export.stdout).unwrap();
    let cov = &export["data"][0];
    let file = cov["files"][0]["filename"].as_str().unwrap().to_string();
    let counts = line_counts(cov["files"][0]["segments"].as_array().unwrap());
    let active = active_frames(cov["functions"].as_array().unwrap(), &frames)
        .remove(&file)
        .unwrap_or_default();
    let source = std::fs::read_to_string(d.join("loops.c")).unwrap();
    let truth = Truth {
        counts,
        active,
        frame_lines: frames.iter().map(|f| f.line).collect(),
        brace_lines: source
            .lines()
            .enumerate()
            .filter(|(_, l)| l.trim() == "}")
            .map(|(i, _)| i as u64 + 1)
            .collect(),
    };
    let sound = |what: &str, labels: &BTreeMap<(String, u64), String>| {
        for ((_, line), l) in labels {
            let r = truth.ran(*line);
            assert!(
                !(l == "yes" && r == Ran::No || l == "no" && r == Ran::Yes),
                "{what}: line {line} is {l} but the run says {r:?}"
            );
        }
    };
    let mut checked = 0;
    for solver in ["utl", "best"] {
        let input = [
            "--cfg",
            "loops.bc",
            "--backtrace",
            "bt.txt",
            "--solver",
            solver,
        ];
        let v: Value = serde_json::from_str(&ok(
            &d,
            &[&["suggest"][..], &input, &["--format", "json"]].concat(),
        ))
        .unwrap();
        assert_eq!(v["complete"], json!(true), "{v}");
        let base: Value = serde_json::from_str(&ok(
            &d,
            &[&["analyze"][..], &input, &["--format", "json"]].concat(),
        ))
        .unwrap();
        let base = line_labels(&base);
        sound(solver, &base);
        let sug = v["suggestions"].as_array().unwrap();
        assert!(!sug.is_empty(), "{solver}: nothing suggested: {v}");
        for s in sug {
            let line = s["line"].as_u64().unwrap();
            if s["line_nodes"] != json!(1) {
                continue;
            }
            let (key, side) = match truth.ran(line) {
                Ran::Yes => ("ran", "if_ran"),
                Ran::No => ("not_ran", "if_not"),
                _ => continue,
            };
            let obs = json!({ key: [{"file": s["file"], "line": line}] });
            let p = d.join(format!("obs-{solver}-{line}.json"));
            std::fs::write(&p, obs.to_string()).unwrap();
            let after: Value = serde_json::from_str(&ok(
                &d,
                &[
                    &["analyze"][..],
                    &input,
                    &["--report", p.to_str().unwrap(), "--format", "json"],
                ]
                .concat(),
            ))
            .unwrap();
            let after = line_labels(&after);
            let what = format!("{solver} {key} line {line}");
            sound(&what, &after);
            let n = decided(&base, &after);
            assert!(
                n >= s["worst"].as_u64().unwrap() as usize,
                "{what}: {n} lines decided: {s}"
            );
            assert_eq!(n, s[side].as_u64().unwrap() as usize, "{what}: {s}");
            checked += 1;
        }
    }
    assert!(checked >= 2, "too few suggestions checked: {checked}");
    eprintln!("{checked} suggestions checked against the run");
    let _ = std::fs::remove_dir_all(&d);
}
