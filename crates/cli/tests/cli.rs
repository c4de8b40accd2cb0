//! End-to-end tests of the `postmortem` binary: every shared failure, exit
//! codes, queries, impossible reports, bad input.

mod common;
use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_postmortem"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example_cfg() -> PathBuf {
    repo().join("examples/replace-v1/replace.graphml")
}

fn example_report() -> PathBuf {
    repo().join("examples/replace-v1/204-trace/data.json")
}

fn shared_data() -> PathBuf {
    let p = repo().join("../shared/data/pldi2017");
    assert!(
        p.is_dir(),
        "the shared failure data is missing at {} (CI always has it)",
        p.display()
    );
    p
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run postmortem")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// Every `(graph, report)` pair of the shared data.
fn shared_failures() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![shared_data()];
    while let Some(d) = stack.pop() {
        let entries: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let graph = entries
            .iter()
            .find(|p| p.extension().is_some_and(|x| x == "graphml"))
            .cloned();
        for p in entries {
            if p.is_dir() {
                match &graph {
                    Some(g) if p.join("data.json").is_file() => {
                        out.push((g.clone(), p.join("data.json")))
                    }
                    _ => stack.push(p),
                }
            }
        }
    }
    out.sort();
    out
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn singles(v: Option<&Value>) -> Vec<String> {
    // A list of node-id lists: the members of one-node lists.
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_array())
                .filter(|s| s.len() == 1)
                .map(|s| s[0].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_shared_failure_satisfies_the_invariants() {
    let fails = shared_failures();
    assert_eq!(
        fails.len(),
        98,
        "expected the 98 failures of the PLDI 2017 data"
    );
    let mut graphs: std::collections::HashMap<PathBuf, (HashSet<String>, String)> =
        Default::default();
    let mut maybe_total = 0;
    for (g, r) in &fails {
        let (nodes, start) = graphs
            .entry(g.clone())
            .or_insert_with(|| {
                let icfg = postmortem_formats::graphml::read_graphml_path(g).unwrap();
                (
                    icfg.nodes().map(|n| icfg.ext_id(n).to_string()).collect(),
                    icfg.ext_id(icfg.start()).to_string(),
                )
            })
            .clone();
        let report: Value = serde_json::from_str(&std::fs::read_to_string(r).unwrap()).unwrap();
        let mut per_mode = Vec::new();
        for stack_only in [false, true] {
            let mut cmd = bin();
            cmd.args(["analyze", "--format", "json", "--cfg"])
                .arg(g)
                .arg("--report")
                .arg(r);
            if stack_only {
                cmd.arg("--stack-only");
            }
            let o = run(&mut cmd);
            assert!(
                o.status.success(),
                "{} stack_only={stack_only}: {}",
                r.display(),
                stderr(&o)
            );
            let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
            let yes: HashSet<String> = ids(&v["nodes"]["yes"]).into_iter().collect();
            let no: HashSet<String> = ids(&v["nodes"]["no"]).into_iter().collect();
            let maybe: HashSet<String> = ids(&v["nodes"]["maybe"]).into_iter().collect();
            maybe_total += maybe.len();
            // Every CFG node in exactly one set.
            assert_eq!(
                yes.len() + no.len() + maybe.len(),
                nodes.len(),
                "{}",
                r.display()
            );
            let all: HashSet<String> = yes.iter().chain(&no).chain(&maybe).cloned().collect();
            assert_eq!(all, nodes, "{}", r.display());
            assert!(yes.contains(&start), "{}: start not Yes", r.display());
            let crash = ids(&report["crash"]);
            if crash.len() == 1 {
                assert!(yes.contains(&crash[0]), "{}: crash not Yes", r.display());
            } else {
                assert!(
                    crash.iter().any(|c| !no.contains(c)),
                    "{}: every crash candidate No",
                    r.display()
                );
            }
            for f in report["stack"].as_array().into_iter().flatten() {
                for part in ["call", "entry"] {
                    let s = ids(&f[part]);
                    if s.len() == 1 {
                        assert!(
                            yes.contains(&s[0]),
                            "{}: stack node {} not Yes",
                            r.display(),
                            s[0]
                        );
                    }
                }
            }
            if !stack_only {
                for n in singles(report.get("obsNo")) {
                    assert!(no.contains(&n), "{}: obsNo node {n} not No", r.display());
                }
                for t in report["obsYes"].as_array().into_iter().flatten() {
                    for n in singles(t.get("entries")) {
                        assert!(yes.contains(&n), "{}: obsYes node {n} not Yes", r.display());
                    }
                }
            }
            // Lines: every file's lists are disjoint.
            for (file, l) in v["lines"].as_object().unwrap() {
                let mut seen = HashSet::new();
                for k in ["yes", "no", "maybe"] {
                    for x in l[k].as_array().unwrap() {
                        assert!(
                            seen.insert(x.as_u64().unwrap()),
                            "{file}: line {x} in two lists"
                        );
                    }
                }
            }
            per_mode.push((yes, no));
        }
        // More constraints never make the answer less precise.
        let (full, so) = (&per_mode[0], &per_mode[1]);
        assert!(
            so.0.is_subset(&full.0),
            "{}: stack-only Yes not within full Yes",
            r.display()
        );
        assert!(
            so.1.is_subset(&full.1),
            "{}: stack-only No not within full No",
            r.display()
        );
    }
    assert!(maybe_total > 0, "no Maybe at all: suspicious");
}

#[test]
fn the_readme_example_runs_and_prints_a_summary() {
    let o = run(bin()
        .arg("analyze")
        .arg("--cfg")
        .arg(example_cfg())
        .arg("--report")
        .arg(example_report()));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in ["nodes", "yes", "no", "maybe", "replace.c", "recovery"] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

#[test]
fn queries_agree_with_bulk_recovery() {
    // Queries are exact in the context-sensitive semantics; so is bulk
    // recovery with --exact.
    let o = run(bin()
        .args(["analyze", "--exact", "--format", "json", "--cfg"])
        .arg(example_cfg())
        .arg("--report")
        .arg(example_report()));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    for (list, run_answer, skip_answer) in [
        ("yes", "possible", "impossible"),
        ("no", "impossible", "possible"),
        ("maybe", "possible", "possible"),
    ] {
        // A few nodes from each list.
        for id in ids(&v["nodes"][list]).into_iter().step_by(97).take(4) {
            for (flag, want) in [("--may-run", run_answer), ("--may-skip", skip_answer)] {
                let o = run(bin()
                    .arg("query")
                    .arg("--cfg")
                    .arg(example_cfg())
                    .arg("--report")
                    .arg(example_report())
                    .args([flag, &id]));
                assert!(o.status.success(), "{}", stderr(&o));
                assert_eq!(
                    stdout(&o).lines().next(),
                    Some(want),
                    "{flag} {id} ({list})"
                );
            }
        }
    }
}

#[test]
fn query_json_has_the_answer() {
    let o = run(bin()
        .arg("query")
        .arg("--cfg")
        .arg(example_cfg())
        .arg("--report")
        .arg(example_report())
        .args(["--may-run", "n:-21:81", "--format", "json"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["answer"], "possible");
}

fn temp(name: &str, text: &str) -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| common::scratch("cli-test"));
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn an_impossible_report_exits_3_and_names_the_culprit() {
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(example_report()).unwrap()).unwrap();
    // Claim the crash node never ran: impossible, and the culprit is that obsNo entry.
    let crash = report["crash"][0].clone();
    let obs_no = report["obsNo"].as_array_mut().unwrap();
    obs_no.push(Value::Array(vec![crash]));
    let k = obs_no.len() - 1;
    let p = temp("impossible.json", &report.to_string());
    let o = run(bin()
        .arg("analyze")
        .arg("--cfg")
        .arg(example_cfg())
        .arg("--report")
        .arg(&p));
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(&format!("obsNo[{k}]")), "{err}");
    assert!(err.contains("not a crash"), "{err}");
    // In program terms: the function (and file and line, where the graph
    // has them) of the constraint's nodes.
    assert!(
        err.contains(&format!("obsNo[{k}] (did not run: `")),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // The query command says impossible and exits 3 too.
    let o = run(bin()
        .arg("query")
        .arg("--cfg")
        .arg(example_cfg())
        .arg("--report")
        .arg(&p)
        .args(["--may-run", "n:-21:81"]));
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(stdout(&o).lines().next(), Some("impossible"));
}

#[test]
fn bad_inputs_exit_2_with_one_clear_line() {
    let bad_graph = temp("bad.graphml", "<graphml><graph><node id=\"a\"");
    let bad_report = temp("bad.json", "{\"crash\": 5}");
    let empty = temp("empty.json", "");
    let cases: Vec<Vec<std::ffi::OsString>> = vec![
        vec![
            "analyze".into(),
            "--cfg".into(),
            bad_graph.clone().into(),
            "--report".into(),
            example_report().into(),
        ],
        vec![
            "analyze".into(),
            "--cfg".into(),
            example_cfg().into(),
            "--report".into(),
            bad_report.clone().into(),
        ],
        vec![
            "analyze".into(),
            "--cfg".into(),
            example_cfg().into(),
            "--report".into(),
            empty.clone().into(),
        ],
        vec![
            "analyze".into(),
            "--cfg".into(),
            "/nonexistent/x.graphml".into(),
            "--report".into(),
            example_report().into(),
        ],
        vec![
            "query".into(),
            "--cfg".into(),
            example_cfg().into(),
            "--report".into(),
            example_report().into(),
            "--may-run".into(),
            "n:nope".into(),
        ],
        vec![
            "cfg".into(),
            "stats".into(),
            "--cfg".into(),
            bad_graph.clone().into(),
        ],
    ];
    for args in cases {
        let o = run(bin().args(&args));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("postmortem: "), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn cfg_stats_counts_the_graph() {
    let o = run(bin()
        .args(["cfg", "stats", "--format", "json", "--cfg"])
        .arg(example_cfg()));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let g = postmortem_formats::graphml::read_graphml_path(&example_cfg()).unwrap();
    assert_eq!(v["nodes"].as_u64().unwrap() as usize, g.num_nodes());
    assert_eq!(
        v["functions"].as_u64().unwrap() as usize,
        g.functions().len()
    );
    assert!(v["call_sites"].as_u64().unwrap() > 0);
}

#[test]
fn fsa_equals_utl_on_every_shared_failure() {
    for (g, r) in shared_failures() {
        for stack_only in [false, true] {
            let mut cmd = bin();
            cmd.args(["analyze", "--compare", "utl,fsa", "--expect", "eq", "--cfg"])
                .arg(&g)
                .arg("--report")
                .arg(&r);
            if stack_only {
                cmd.arg("--stack-only");
            }
            let o = run(&mut cmd);
            assert!(
                o.status.success(),
                "{} stack_only={stack_only}: {}{}",
                r.display(),
                stdout(&o),
                stderr(&o)
            );
            assert!(stdout(&o).contains("ok: utl eq fsa"), "{}", stdout(&o));
        }
    }
}

#[test]
fn compare_reports_a_violation_with_exit_4() {
    // "At least one of {x, start} did not run", with x a Maybe node: the
    // start surely ran, so x did not. FSA knows it; UTL must drop the
    // ambiguous set. So fsa is strictly more precise than utl here. (Pick
    // an x whose product stays small: see the FSA limits in the README.)
    let o = run(bin()
        .args(["analyze", "--format", "json", "--cfg"])
        .arg(example_cfg())
        .arg("--report")
        .arg(example_report()));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let g = postmortem_formats::graphml::read_graphml_path(&example_cfg()).unwrap();
    let start = g.ext_id(g.start()).to_string();
    let base: Value =
        serde_json::from_str(&std::fs::read_to_string(example_report()).unwrap()).unwrap();
    let mut chosen = None;
    for x in ids(&v["nodes"]["maybe"]).into_iter().step_by(7) {
        let mut report = base.clone();
        report["obsNo"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!([x, start]));
        let p = temp("ambiguous.json", &report.to_string());
        let o = run(bin()
            .args([
                "analyze",
                "--solver",
                "fsa",
                "--max-states",
                "200000",
                "--format",
                "json",
                "--cfg",
            ])
            .arg(example_cfg())
            .arg("--report")
            .arg(&p));
        let f: Value = serde_json::from_str(&stdout(&o)).unwrap();
        if ids(&f["nodes"]["no"]).contains(&x) {
            chosen = Some((x, p));
            break;
        }
    }
    let (x, p) = chosen.expect("some Maybe node becomes No under fsa");
    let o = run(bin()
        .args(["analyze", "--compare", "fsa,utl", "--expect", "gt", "--cfg"])
        .arg(example_cfg())
        .arg("--report")
        .arg(&p));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(bin()
        .args(["analyze", "--compare", "utl,fsa", "--expect", "eq", "--cfg"])
        .arg(example_cfg())
        .arg("--report")
        .arg(&p));
    assert!(
        stderr(&o).contains(&x) || stderr(&o).contains("first differing node"),
        "{}",
        stderr(&o)
    );
    assert_eq!(o.status.code(), Some(4), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("first differing node"),
        "{}",
        stderr(&o)
    );
    let o = run(bin()
        .args(["analyze", "--compare", "utl,fsa", "--expect", "gt", "--cfg"])
        .arg(example_cfg())
        .arg("--report")
        .arg(&p));
    assert_eq!(o.status.code(), Some(4));
    // And the fsa labels say x did not run.
    let o = run(bin()
        .args(["analyze", "--solver", "fsa", "--format", "json", "--cfg"])
        .arg(example_cfg())
        .arg("--report")
        .arg(&p));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(ids(&v["nodes"]["no"]).contains(&x));
    let o = run(bin()
        .args(["analyze", "--compare", "utl", "--cfg"])
        .arg(example_cfg())
        .arg("--report")
        .arg(&p));
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn fsa_limits_degrade_soundly_and_say_so() {
    // An ambiguous obsNo next to the crash makes the giant component active:
    // with a tiny state limit the exact product gives up and the coarse tier
    // answers (the pure UTL fallback is tested in core).
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(example_report()).unwrap()).unwrap();
    let crash = report["crash"][0].clone();
    let no = report["obsNo"][0][0].clone();
    report["obsNo"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!([no, crash]));
    let p = temp("limited.json", &report.to_string());
    let o = run(bin()
        .args([
            "analyze",
            "--solver",
            "fsa",
            "--max-states",
            "50",
            "--format",
            "json",
            "--cfg",
        ])
        .arg(example_cfg())
        .arg("--report")
        .arg(&p));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let weakened = v["weakened"].to_string();
    assert!(
        weakened.contains("gave up") && weakened.contains("coarse tier"),
        "{weakened}"
    );
    // Never less precise than UTL (which is sound for the full report).
    let o = run(bin()
        .args(["analyze", "--solver", "utl", "--format", "json", "--cfg"])
        .arg(example_cfg())
        .arg("--report")
        .arg(&p));
    let u: Value = serde_json::from_str(&stdout(&o)).unwrap();
    for list in ["yes", "no"] {
        let mine: HashSet<String> = ids(&v["nodes"][list]).into_iter().collect();
        assert!(
            ids(&u["nodes"][list]).iter().all(|x| mine.contains(x)),
            "utl {list} not kept"
        );
    }

    // Single queries say that they gave up instead of guessing
    let o = run(bin()
        .args([
            "query",
            "--solver",
            "fsa",
            "--max-states",
            "5",
            "--regex",
            ".* call:getline .*",
            "--cfg",
        ])
        .arg(example_cfg())
        .arg("--report")
        .arg(&p));
    // (`unknown`, and why: utl cannot ask a regular query.)
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).starts_with("unknown\n"), "{}", stdout(&o));
    assert!(stdout(&o).contains("gave up"), "{}", stdout(&o));
}

#[test]
fn query_language_examples_work_with_witness_and_explanation() {
    let e = |args: &[&str]| {
        let o = run(bin()
            .arg("query")
            .arg("--cfg")
            .arg(example_cfg())
            .arg("--report")
            .arg(example_report())
            .args(args));
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        serde_json::from_str::<Value>(&stdout(&o)).unwrap()
    };
    // main surely ran: "not ran(fn:main)" is impossible, explained by the query alone.
    let v = e(&["--solver", "fsa", "--format", "json", "not ran(fn:main)"]);
    assert_eq!(v["answer"], "impossible");
    let ex: Vec<String> = v["explanation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["constraint"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ex, vec!["query".to_string()]);
    // A possible formula has a witness that starts at main's entry and ends at the crash.
    let v = e(&[
        "--solver",
        "fsa",
        "--format",
        "json",
        "ran(fn:getpat) then ran(fn:makepat)",
    ]);
    assert_eq!(v["answer"], "possible");
    let w = ids(&v["witness"]);
    let g = postmortem_formats::graphml::read_graphml_path(&example_cfg()).unwrap();
    assert_eq!(w.first().map(String::as_str), Some(g.ext_id(g.start())));
    assert_eq!(w.last().map(String::as_str), Some("n:-21:81"));
    for p in w.windows(2) {
        let (a, b) = (g.lookup(&p[0]).unwrap(), g.lookup(&p[1]).unwrap());
        assert!(
            g.succs(a).any(|(x, _)| x == b),
            "{} -> {} is not an edge",
            p[0],
            p[1]
        );
    }
    // Regexes and bad queries.
    let v = e(&[
        "--solver",
        "fsa",
        "--format",
        "json",
        "--regex",
        ".* call:getline (!call:makepat)* call:getline .*",
    ]);
    assert!(v["answer"] == "possible" || v["answer"] == "impossible");
    let o = run(bin()
        .arg("query")
        .arg("--cfg")
        .arg(example_cfg())
        .arg("--report")
        .arg(example_report())
        .arg("ran(fn:nosuch)"));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nosuch"), "{}", stderr(&o));
    let o = run(bin()
        .arg("query")
        .arg("--cfg")
        .arg(example_cfg())
        .arg("--report")
        .arg(example_report())
        .args(["--solver", "utl", "not ran(fn:main)"]));
    assert_eq!(
        o.status.code(),
        Some(2),
        "utl refuses regular queries: {}",
        stderr(&o)
    );
    // The default solver (best) answers them.
    let o = run(bin()
        .arg("query")
        .arg("--cfg")
        .arg(example_cfg())
        .arg("--report")
        .arg(example_report())
        .args(["--format", "json", "not ran(fn:main)"]));
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["solver"], "best", "{v}");
    assert_eq!(v["answer"], "impossible", "main surely ran: {v}");
}

/// `bench --precision` on print_tokens: the context-sensitive solver
/// decides what the paper's s-VPA solver did with the stack only (20% of
/// basic blocks, Figure 12), UTL with the full report what the paper's UTL
/// did (63%, Figure 14), and cs beats utl and fsa in both columns.
#[test]
fn precision_bench_matches_the_paper_on_print_tokens() {
    let dir = std::env::temp_dir().join(format!("pm-precision-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(shared_data().join("print_tokens"), dir.join("print_tokens"))
        .unwrap();
    let o = run(bin().args(["bench", "--precision", "--data"]).arg(&dir));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let row = out
        .lines()
        .find(|l| l.starts_with("| print_tokens |"))
        .unwrap_or_else(|| panic!("{out}"));
    // | app | failures | utl | fsa | cs | best | ...; each "stack \| full".
    let cells: Vec<&str> = row.split(" | ").collect();
    let pair = |i: usize| -> (f64, f64) {
        let (a, b) = cells[i]
            .split_once(" \\| ")
            .unwrap_or_else(|| panic!("{row}"));
        (a.trim().parse().unwrap(), b.trim().parse().unwrap())
    };
    let (utl, fsa, cs, best, exact) = (pair(2), pair(3), pair(4), pair(5), pair(6));
    assert!((cs.0 - 20.0).abs() < 2.0, "cs stack only {}: {row}", cs.0);
    assert!((utl.1 - 63.0).abs() < 2.0, "utl full {}: {row}", utl.1);
    assert!(cs.0 > fsa.0 && cs.1 > fsa.1 && fsa.0 >= utl.0, "{row}");
    assert!(best.0 >= cs.0 && best.1 >= cs.1, "{row}");
    // With the observations, the bulk pass makes the stack count (before
    // it, cs decided 74.7% of the full reports, 11.6 points over fsa).
    assert!(cs.1 > fsa.1 + 20.0, "{row}");
    // The exact closure: never less, and nearly nothing more.
    assert!(exact.0 >= cs.0 && exact.1 >= cs.1, "{row}");
    assert!(exact.1 - cs.1 < 1.0, "{row}");
}

/// On the full report of the bundled failure (29 single-node
/// observations, 21 ambiguous obsNo sets), `query --solver cs` answers in
/// the context-sensitive semantics, with valid matched witnesses, agrees
/// with the bulk labels, and decides some nodes that FSA leaves Maybe. It
/// used to exceed its budget and fall back to FSA on every query.
#[test]
fn cs_queries_on_the_full_example_report_stay_context_sensitive() {
    use postmortem_core::cs::{valid_path, Cs};
    use postmortem_core::fsa::Fsa;
    use postmortem_core::{Answer, Label, Query, Solver};
    let g = postmortem_formats::graphml::read_graphml_path(&example_cfg()).unwrap();
    let r = postmortem_formats::report_json::read_report_path(&example_report(), &g).unwrap();
    let fsa = Fsa::default().recover(&g, &r).unwrap().labels;
    let cs: Cs<Fsa> = Cs::default();
    let bulk = cs.recover(&g, &r).unwrap().labels;
    let maybe: Vec<usize> = (0..fsa.len()).filter(|&v| fsa[v] == Label::Maybe).collect();
    assert!(maybe.len() > 500, "{}", maybe.len());
    let mut stricter = 0;
    for &v in maybe.iter().step_by(25) {
        let n = postmortem_core::NodeId::new(v);
        for (q, runs) in [(Query::MayRun(n), true), (Query::MaySkip(n), false)] {
            let a = cs.check(&g, &r, Some(&q)).unwrap();
            assert!(a.weakened.is_empty(), "{q:?}: {:?}", a.weakened);
            match a.answer {
                Answer::Possible => {
                    let w = a.witness.expect("a witness");
                    assert!(valid_path(&g, &r, &w), "{q:?}");
                    assert_eq!(w.contains(&n), runs, "{q:?}");
                    let no = if runs { Label::No } else { Label::Yes };
                    assert_ne!(bulk[v], no, "{q:?} possible, bulk says {:?}", bulk[v]);
                }
                Answer::Impossible => stricter += 1,
            }
        }
    }
    assert!(stricter > 0, "no node decided by cs queries alone");
}

/// `cs` decides far more of the bundled failure than `fsa` (the bulk
/// pass), and `analyze --exact` (the closure's elimination searches, an
/// independent method) agrees with every label and finds nothing more
/// to decide: on this report the bulk pass is exact.
#[test]
fn exact_analysis_agrees_with_the_bulk_pass() {
    let labels = |extra: &[&str]| {
        let o = run(bin()
            .arg("analyze")
            .arg("--cfg")
            .arg(example_cfg())
            .arg("--report")
            .arg(example_report())
            .args(["--format", "json"])
            .args(extra));
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<Value>(&stdout(&o)).unwrap()
    };
    let fsa = labels(&["--solver", "fsa"]);
    let (plain, exact) = (
        labels(&["--solver", "cs"]),
        labels(&["--solver", "cs", "--exact"]),
    );
    assert_eq!(
        exact["weakened"].as_array().map(Vec::len),
        Some(0),
        "{}",
        exact["weakened"]
    );
    let set = |v: &Value, k: &str| -> HashSet<String> { ids(&v["nodes"][k]).into_iter().collect() };
    for k in ["yes", "no"] {
        assert!(set(&fsa, k).is_subset(&set(&plain, k)), "{k}");
        assert!(set(&plain, k).is_subset(&set(&exact, k)), "{k}");
    }
    assert_eq!(set(&exact, "maybe"), set(&plain, "maybe"));
    assert!(
        set(&plain, "maybe").len() + 300 < set(&fsa, "maybe").len(),
        "{} vs {} Maybe",
        set(&plain, "maybe").len(),
        set(&fsa, "maybe").len()
    );
    // A small budget: the closure stops, says so, and what it decided is
    // what the full closure decides.
    let small = labels(&["--solver", "cs", "--exact", "--max-states", "30000"]);
    let how = small["weakened"].to_string();
    assert!(how.contains("closure stopped"), "{how}");
    for k in ["yes", "no"] {
        assert!(set(&small, k).is_subset(&set(&exact, k)), "{k}");
    }
}

/// A file given in another file's slot: one line naming what it looks
/// like and the option it belongs to (issue 37).
#[test]
fn files_in_the_wrong_slot_say_what_they_look_like_and_where_they_go() {
    let analyze = |args: &[&std::ffi::OsStr]| run(bin().arg("analyze").args(args));
    let os = |p: &std::path::Path| p.as_os_str().to_owned();
    let cfg = os(&example_cfg());
    let report = os(&example_report());
    // gdb's output, starting with its `[New LWP ...]` line.
    let bt = temp(
        "slot-bt.txt",
        "[New LWP 4242]\n[Thread debugging using libthread_db enabled]\n#0  main () at replace.c:3\n",
    );
    // An ELF core's header (e_type 4) and the postmortem binary itself.
    let mut core = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x04\0".to_vec();
    core.resize(64, 0);
    let core_path = std::env::temp_dir().join(format!("pm-slot-core-{}", std::process::id()));
    std::fs::write(&core_path, &core).unwrap();
    let elf = PathBuf::from(env!("CARGO_BIN_EXE_postmortem"));
    let c_src = temp(
        "slot.c",
        "#include <stdio.h>\nint main(void) { return 0; }\n",
    );
    let cases: Vec<(Vec<std::ffi::OsString>, &str)> = vec![
        (
            vec!["--cfg".into(), cfg.clone(), "--report".into(), os(&bt)],
            "--backtrace",
        ),
        (
            vec![
                "--cfg".into(),
                cfg.clone(),
                "--report".into(),
                os(&core_path),
            ],
            "--core",
        ),
        (
            vec!["--cfg".into(), cfg.clone(), "--report".into(), os(&elf)],
            "--binary",
        ),
        (
            vec!["--cfg".into(), os(&elf), "--report".into(), report.clone()],
            "--binary",
        ),
        (
            vec![
                "--cfg".into(),
                os(&c_src),
                "--report".into(),
                report.clone(),
            ],
            "C source",
        ),
    ];
    for (args, says) in cases {
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let o = analyze(&refs);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("looks like") && err.contains(says),
            "{args:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    // A backtrace given as the log: analysed, with a warning that says so.
    let o = analyze(&[
        "--cfg".as_ref(),
        &cfg,
        "--report".as_ref(),
        &report,
        "--log".as_ref(),
        bt.as_os_str(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("looks like a backtrace"), "{err}");
    // A core given as the log: refused, naming its option.
    let o = analyze(&[
        "--cfg".as_ref(),
        &cfg,
        "--report".as_ref(),
        &report,
        "--log".as_ref(),
        core_path.as_os_str(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not a log") && err.contains("--core"), "{err}");
    let _ = std::fs::remove_file(core_path);
}
