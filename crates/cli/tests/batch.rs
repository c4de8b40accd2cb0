//! `postmortem batch` (issue 22): one line per crash, failed crashes
//! failing alone, labels equal to `analyze`'s, groups recomputed here
//! from the crash lines, shards whose union is the whole batch, and a
//! graph cache built once, shared by processes started together, and
//! usable after a writer died mid-write.
//!
//! One program (`tests/data/batch/crashes.c`) crashes under gdb three
//! ways: kinds 1 and 2 in `crash_here` called from `handle` (one
//! signature) on two paths (`step_a` or `step_b`), kind 3 from `other`.

mod common;

use common::{require, sh, show};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The line of `step_a(kind);` and of `step_b(kind);` in crashes.c.
const STEP_A_LINE: u64 = 24;
const STEP_B_LINE: u64 = 27;

fn scratch(tag: &str) -> PathBuf {
    common::scratch(&format!("batch-{tag}"))
}

/// Builds the program and its crashes once: prog.bc, prog, core1-3,
/// bt1.txt, garbage.core and the manifest `crashes.jsonl`.
fn fixture() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        for t in ["clang-14", "gdb"] {
            require(t);
        }
        let dir = scratch("fixture");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/batch/crashes.c");
        std::fs::copy(src, dir.join("crashes.c")).unwrap();
        sh(
            &dir,
            "clang-14",
            &[
                "-g",
                "-O0",
                "-emit-llvm",
                "-c",
                "crashes.c",
                "-o",
                "prog.bc",
            ],
        );
        sh(&dir, "clang-14", &["-g", "-O0", "prog.bc", "-o", "prog"]);
        for kind in 1..=3 {
            let o = Command::new("gdb")
                .current_dir(&dir)
                .args([
                    "-nx",
                    "-batch",
                    "-iex",
                    "set debuginfod enabled off",
                    "-ex",
                    &format!("run {kind} > /dev/null"),
                    "-ex",
                    "bt",
                    "-ex",
                    &format!("generate-core-file core{kind}"),
                    "./prog",
                ])
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(dir.join(format!("core{kind}")).exists(), "{}", show(&o));
            if kind == 1 {
                std::fs::write(dir.join("bt1.txt"), &o.stdout).unwrap();
            }
        }
        std::fs::write(dir.join("garbage.core"), b"\x7fELF this is no core at all").unwrap();
        std::fs::write(
            dir.join("crashes.jsonl"),
            r#"{"id": "k1", "core": "core1"}
{"id": "k2", "cfg": "prog.bc", "binary": "prog", "core": "core2"}
{"id": "k3", "core": "core3"}
{"id": "k1bt", "backtrace": "bt1.txt"}
{"id": "missing", "core": "no-such-core"}
{"id": "garbage", "core": "garbage.core"}
this line is not JSON
"#,
        )
        .unwrap();
        dir
    })
}

const OK: [&str; 4] = ["k1", "k2", "k3", "k1bt"];
const FAILED: [&str; 3] = ["missing", "garbage", "line 7"];

fn postmortem(dir: &Path, args: &[&str]) -> Output {
    // Every value staged (no time budget): batch's labels are compared
    // with analyze's, which must not depend on the machine's load.
    let budget: &[&str] = match args.first() {
        Some(&"analyze") | Some(&"batch") => &["--value-budget", "0"],
        _ => &[],
    };
    Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args(args)
        .args(budget)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `batch crashes.jsonl --cfg prog.bc --binary prog` with `extra`
/// options: (crash lines by id, group lines, stderr).
fn batch(extra: &[&str]) -> (BTreeMap<String, Value>, Vec<Value>, String) {
    let dir = fixture();
    let mut args = vec![
        "batch",
        "crashes.jsonl",
        "--cfg",
        "prog.bc",
        "--binary",
        "prog",
    ];
    args.extend(extra);
    let o = postmortem(dir, &args);
    assert!(o.status.success(), "{}", show(&o));
    let (crashes, groups) = parse_lines(&o.stdout);
    (
        crashes,
        groups,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn parse_lines(out: &[u8]) -> (BTreeMap<String, Value>, Vec<Value>) {
    let mut crashes = BTreeMap::new();
    let mut groups = Vec::new();
    let mut seen_group = false;
    for l in String::from_utf8_lossy(out).lines() {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        if v.get("group").is_some() {
            seen_group = true;
            groups.push(v);
        } else {
            assert!(!seen_group, "a crash line after the group lines");
            let id = v["id"].as_str().unwrap().to_string();
            assert!(
                crashes.insert(id.clone(), v).is_none(),
                "two lines for {id}"
            );
        }
    }
    (crashes, groups)
}

/// A crash line without what may differ between runs.
fn normal(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("timings_ms");
        m.remove("cache");
        // The solver's phase times (`fsa_bulk_ms`, ...).
        if let Some(s) = m.get_mut("solver_stats").and_then(Value::as_object_mut) {
            s.retain(|k, _| !k.ends_with("_ms"));
        }
    }
    v
}

fn line_set(c: &BTreeMap<String, Value>) -> BTreeSet<String> {
    c.values().map(|v| normal(v).to_string()).collect()
}

/// The groups as this test computes them from crash lines: per (graph,
/// signature) of ok crashes, at least two: the lines Yes in all, No in
/// all, and Yes in some and No in others.
fn recompute_groups(c: &BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    let mut by: BTreeMap<(String, String), Vec<&Value>> = BTreeMap::new();
    for v in c.values().filter(|v| v["status"] == "ok") {
        by.entry((
            v["graph"].as_str().unwrap().into(),
            v["signature"].as_str().unwrap().into(),
        ))
        .or_default()
        .push(v);
    }
    let mut out = BTreeMap::new();
    for ((_, sig), vs) in by.into_iter().filter(|(_, vs)| vs.len() >= 2) {
        let label = |v: &Value, file: &str, line: u64, l: &str| {
            v["lines"][file][l]
                .as_array()
                .unwrap()
                .contains(&Value::from(line))
        };
        let mut all: BTreeSet<(String, u64)> = BTreeSet::new();
        for v in &vs {
            for (f, ls) in v["lines"].as_object().unwrap() {
                for l in ["yes", "no", "maybe"] {
                    for x in ls[l].as_array().unwrap() {
                        all.insert((f.clone(), x.as_u64().unwrap()));
                    }
                }
            }
        }
        let (mut yes, mut no, mut differ) = (BTreeSet::new(), BTreeSet::new(), BTreeMap::new());
        for (f, line) in all {
            let ys: BTreeSet<&str> = vs
                .iter()
                .filter(|v| label(v, &f, line, "yes"))
                .map(|v| v["id"].as_str().unwrap())
                .collect();
            let ns: BTreeSet<&str> = vs
                .iter()
                .filter(|v| label(v, &f, line, "no"))
                .map(|v| v["id"].as_str().unwrap())
                .collect();
            if ys.len() == vs.len() {
                yes.insert((f, line));
            } else if ns.len() == vs.len() {
                no.insert((f, line));
            } else if !ys.is_empty() && !ns.is_empty() {
                differ.insert((f, line), (ys, ns));
            }
        }
        out.insert(
            sig,
            serde_json::json!({"yes": format!("{yes:?}"), "no": format!("{no:?}"), "differ": format!("{differ:?}")}),
        );
    }
    out
}

/// A group line in the shape of [`recompute_groups`].
fn as_recomputed(g: &Value) -> Value {
    let pairs = |k: &str| -> BTreeSet<(String, u64)> {
        let mut s = BTreeSet::new();
        for (f, ls) in g[k].as_object().unwrap() {
            for l in ls.as_array().unwrap() {
                s.insert((f.clone(), l.as_u64().unwrap()));
            }
        }
        s
    };
    let mut differ = BTreeMap::new();
    for (f, rows) in g["differ"].as_object().unwrap() {
        for r in rows.as_array().unwrap() {
            let ids = |k: &str| -> BTreeSet<&str> {
                r[k].as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap())
                    .collect()
            };
            differ.insert(
                (f.clone(), r["line"].as_u64().unwrap()),
                (ids("yes"), ids("no")),
            );
        }
    }
    serde_json::json!({"yes": format!("{:?}", pairs("yes")), "no": format!("{:?}", pairs("no")), "differ": format!("{differ:?}")})
}

#[test]
fn one_line_per_crash_failures_alone_labels_as_analyze_groups_as_recomputed() {
    let (crashes, groups, err) = batch(&["--jobs", "2"]);
    let ids: BTreeSet<&str> = crashes.keys().map(|s| s.as_str()).collect();
    let want: BTreeSet<&str> = OK.iter().chain(&FAILED).copied().collect();
    assert_eq!(ids, want, "{err}");
    for id in FAILED {
        let v = &crashes[id];
        assert_eq!(v["status"], "failed", "{v}");
        assert!(!v["error"].as_str().unwrap().is_empty(), "{v}");
    }
    assert!(
        crashes["missing"]["error"]
            .as_str()
            .unwrap()
            .contains("no-such-core"),
        "{}",
        crashes["missing"]
    );
    // Each ok crash: the labels `analyze --format json` gives.
    let dir = fixture();
    for (id, input) in [
        ("k1", ["--core", "core1"]),
        ("k2", ["--core", "core2"]),
        ("k3", ["--core", "core3"]),
        ("k1bt", ["--backtrace", "bt1.txt"]),
    ] {
        let v = &crashes[id];
        assert_eq!(v["status"], "ok", "{v}");
        let mut args = vec![
            "analyze", "--cfg", "prog.bc", "--binary", "prog", "--format", "json",
        ];
        args.extend(input);
        let o = postmortem(dir, &args);
        assert!(o.status.success(), "{}", show(&o));
        let a: Value = serde_json::from_slice(&o.stdout).unwrap();
        for k in [
            "counts",
            "nodes",
            "lines",
            "values",
            "frames",
            "weakened",
            "undecided",
            "solver",
        ] {
            assert_eq!(v[k], a[k], "{id}: {k} differs from analyze");
        }
        assert!(v["counts"]["yes"].as_u64().unwrap() > 0, "{id}: {v}");
    }
    // Signatures: k1, k2 and k1bt are one group; k3 another.
    let sig = |id: &str| crashes[id]["signature"].as_str().unwrap().to_string();
    assert_eq!(sig("k1"), "crash_here | handle | main");
    assert_eq!(sig("k1"), sig("k2"));
    assert_eq!(sig("k1"), sig("k1bt"));
    assert_eq!(sig("k3"), "crash_here | other | main");
    // Groups: as recomputed here, and the paths part at step_a / step_b.
    let mine = recompute_groups(&crashes);
    assert_eq!(groups.len(), mine.len(), "{groups:?}");
    for g in &groups {
        let s = g["group"].as_str().unwrap();
        assert_eq!(as_recomputed(g), mine[s], "group {s}");
    }
    let g = groups
        .iter()
        .find(|g| g["group"] == "crash_here | handle | main")
        .expect("the handle group");
    let rows = g["differ"]["crashes.c"]
        .as_array()
        .or_else(|| {
            g["differ"]
                .as_object()
                .unwrap()
                .iter()
                .find(|(k, _)| k.ends_with("crashes.c"))
                .and_then(|(_, v)| v.as_array())
        })
        .expect("lines that differ in crashes.c");
    let row = |line: u64| {
        rows.iter()
            .find(|r| r["line"] == line)
            .unwrap_or_else(|| panic!("line {line} not among the lines that differ: {rows:?}"))
    };
    assert_eq!(row(STEP_A_LINE)["no"], serde_json::json!(["k2"]));
    assert_eq!(row(STEP_B_LINE)["yes"], serde_json::json!(["k2"]));
    let a_yes: BTreeSet<&str> = row(STEP_A_LINE)["yes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(a_yes, ["k1", "k1bt"].into_iter().collect());
}

#[test]
fn a_crash_over_a_limit_is_a_failed_line() {
    // The backtrace (gdb's whole output) is over 100 bytes; cores are
    // not bounded by --max-input-size.
    let (c, _, _) = batch(&["--max-input-size", "100"]);
    assert_eq!(c["k1bt"]["status"], "failed", "{}", c["k1bt"]);
    assert!(
        c["k1bt"]["error"]
            .as_str()
            .unwrap()
            .contains("--max-input-size"),
        "{}",
        c["k1bt"]
    );
    for id in ["k1", "k2", "k3"] {
        assert_eq!(c[id]["status"], "ok", "{}", c[id]);
    }
}

#[test]
fn shards_together_are_the_whole_batch() {
    let (whole, whole_groups, _) = batch(&["--jobs", "1"]);
    let dir = fixture();
    let mut union = BTreeMap::new();
    let mut files = Vec::new();
    for i in 0..3 {
        let out = format!("shard-{i}.jsonl");
        let shard = format!("{i}/3");
        let (part, _, _) = batch(&["--shard", &shard, "-o", &out]);
        assert!(part.is_empty(), "-o: nothing on stdout");
        let (part, _) = parse_lines(&std::fs::read(dir.join(&out)).unwrap());
        for (k, v) in part {
            assert!(union.insert(k.clone(), v).is_none(), "{k} in two shards");
        }
        files.push(out);
    }
    assert_eq!(line_set(&union), line_set(&whole));
    // The groups of all shards, from their outputs.
    let mut args = vec!["batch", "--groups-from"];
    args.extend(files.iter().map(|s| s.as_str()));
    let o = postmortem(dir, &args);
    assert!(o.status.success(), "{}", show(&o));
    let (none, groups) = parse_lines(&o.stdout);
    assert!(none.is_empty());
    let key = |gs: &[Value]| -> BTreeSet<String> {
        gs.iter()
            .map(|g| {
                let mut g = g.clone();
                let mut c: Vec<String> = g["crashes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect();
                c.sort();
                g["crashes"] = serde_json::json!(c);
                g["differ"] = as_recomputed(&g)["differ"].clone();
                g.to_string()
            })
            .collect()
    };
    assert_eq!(key(&groups), key(&whole_groups));
}

fn cache_states(c: &BTreeMap<String, Value>) -> BTreeSet<String> {
    c.values()
        .filter(|v| v["status"] == "ok")
        .map(|v| v["cache"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_cache_is_built_once_then_hit() {
    let cache = scratch("cache-once");
    let c = cache.to_str().unwrap();
    let (first, _, err) = batch(&["--cache", c]);
    assert!(err.contains("1 built, 0 cache hits"), "{err}");
    assert_eq!(cache_states(&first), ["built".to_string()].into());
    let (second, _, err) = batch(&["--cache", c]);
    assert!(err.contains("0 built, 1 cache hits"), "{err}");
    assert_eq!(cache_states(&second), ["hit".to_string()].into());
    assert_eq!(line_set(&first), line_set(&second));
    let files: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
    assert_eq!(files.len(), 1, "one graph, no temporary file left");
}

#[test]
fn processes_share_a_cache_and_survive_a_writer_killed_mid_write() {
    let dir = fixture();
    let cache = scratch("cache-shared");
    let c = cache.to_str().unwrap();
    let args = [
        "batch",
        "crashes.jsonl",
        "--cfg",
        "prog.bc",
        "--binary",
        "prog",
        "--cache",
        c,
    ];
    // Two processes at once on an empty cache.
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_postmortem"))
            .current_dir(dir)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{}", show(&a));
    assert!(b.status.success(), "{}", show(&b));
    let (ca, _) = parse_lines(&a.stdout);
    let (cb, _) = parse_lines(&b.stdout);
    assert_eq!(line_set(&ca), line_set(&cb));
    assert_eq!(ca.len(), 7);
    let graphs: Vec<PathBuf> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(graphs.len(), 1, "{graphs:?}");
    let good = std::fs::read(&graphs[0]).unwrap();

    // A writer killed mid-write: its temporary file is left, and (worse
    // than a rename allows, as after a torn copy) half a graph file.
    let name = graphs[0].file_name().unwrap().to_str().unwrap().to_string();
    std::fs::write(
        cache.join(format!(".{name}.99999.0.tmp")),
        &good[..good.len() / 3],
    )
    .unwrap();
    std::fs::write(&graphs[0], &good[..good.len() / 2]).unwrap();
    let (again, _, err) = batch(&["--cache", c]);
    assert!(err.contains("building it again"), "{err}");
    assert_eq!(cache_states(&again), ["built".to_string()].into());
    assert_eq!(line_set(&again), line_set(&ca));
    let (hit, _, _) = batch(&["--cache", c]);
    assert_eq!(cache_states(&hit), ["hit".to_string()].into());

    // A process killed (SIGKILL) at some point of its run: the cache is
    // still usable afterwards.
    let killed = scratch("cache-killed");
    let k = killed.to_str().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args([
            "batch",
            "crashes.jsonl",
            "--cfg",
            "prog.bc",
            "--binary",
            "prog",
            "--cache",
            k,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(150));
    let _ = child.kill();
    let _ = child.wait();
    let (after, _, err) = batch(&["--cache", k]);
    assert_eq!(line_set(&after), line_set(&ca), "{err}");
}

#[test]
fn a_directory_of_crashes_and_html_group_pages() {
    let dir = fixture();
    let crashes = scratch("dir");
    for (sub, files) in [
        ("a", vec![("backtrace.txt", "bt1.txt")]),
        ("b", vec![("backtrace.txt", "bt1.txt")]),
        ("c", vec![]),
    ] {
        std::fs::create_dir_all(crashes.join(sub)).unwrap();
        for (to, from) in files {
            std::fs::copy(dir.join(from), crashes.join(sub).join(to)).unwrap();
        }
    }
    std::fs::write(
        crashes.join("notes.txt"),
        "files beside the crash directories are ignored",
    )
    .unwrap();
    // d: kind 2 (the group's other path); e: kind 3, alone in its group.
    for (sub, core) in [("d", "core2"), ("e", "core3")] {
        std::fs::create_dir_all(crashes.join(sub)).unwrap();
        std::fs::write(
            crashes.join(sub).join("crash.json"),
            format!(
                r#"{{"core": "{}"}}"#,
                dir.join(core).display().to_string().replace('\\', "\\\\")
            ),
        )
        .unwrap();
    }
    let html = scratch("dir-html");
    let o = postmortem(
        dir,
        &[
            "batch",
            crashes.to_str().unwrap(),
            "--cfg",
            "prog.bc",
            "--binary",
            "prog",
            "--format",
            "html",
            "-o",
            html.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", show(&o));
    let (c, _) = parse_lines(&std::fs::read(html.join("crashes.jsonl")).unwrap());
    for id in ["a", "b", "d", "e"] {
        assert_eq!(c[id]["status"], "ok", "{}", c[id]);
    }
    assert_eq!(c["c"]["status"], "failed");
    let (_, groups) = parse_lines(&std::fs::read(html.join("groups.jsonl")).unwrap());
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(groups[0]["crashes"].as_array().unwrap().len(), 3);
    let index = std::fs::read_to_string(html.join("index.html")).unwrap();
    assert!(index.contains("crash_here | handle | main"), "{index}");
    // The crash alone in its group is on the index too.
    assert!(
        index.contains("<tr><td>e</td><td>crash_here | other | main</td>"),
        "{index}"
    );
    let page = std::fs::read_to_string(html.join("group-0.html")).unwrap();
    assert!(page.contains("Lines that differ"), "{page}");
    // Where the group's crashes part ways, with the source text: a and b
    // (kind 1) ran `step_a`, d (kind 2) did not.
    assert!(
        page.contains(&format!(
            "<td class=\"num\">{STEP_A_LINE}</td><td class=\"s\">step_a(kind);</td><td class=\"y\">a, b</td><td class=\"no\">d</td>"
        )),
        "{page}"
    );
}

/// `--no-nodes` lines are the full lines without their `nodes` lists
/// (which it never builds), and the batch's own per-crash timings are
/// there.
#[test]
fn no_nodes_lines_are_the_full_lines_without_nodes() {
    let (full, _, _) = batch(&["--jobs", "1", "--no-groups"]);
    let (lean, _, _) = batch(&["--jobs", "1", "--no-groups", "--no-nodes"]);
    assert_eq!(
        full.keys().collect::<Vec<_>>(),
        lean.keys().collect::<Vec<_>>()
    );
    let mut ok = 0;
    for (id, v) in &full {
        let mut want = normal(v);
        if let Some(m) = want.as_object_mut() {
            m.remove("nodes");
            for f in m
                .get_mut("frames")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                f.as_object_mut().unwrap().remove("nodes");
            }
        }
        assert_eq!(normal(&lean[id]), want, "{id}");
        if v["status"] == "ok" {
            ok += 1;
            assert!(
                v["nodes"]["yes"].as_array().is_some_and(|a| !a.is_empty()),
                "{id}: no node lists in the full line"
            );
            assert!(
                v["frames"][0]["nodes"].is_object(),
                "{id}: no node lists in the full line's frames"
            );
            for k in ["parse_report", "recover", "json"] {
                assert!(
                    lean[id]["timings_ms"][k].as_f64().is_some(),
                    "{id}: no timings_ms.{k}"
                );
            }
        }
    }
    assert!(ok >= 4, "{ok} ok crashes");
}

/// `--group-by blame`: two crashes of one bug with different stacks
/// (`value_of` under `by_name`, and `doubled`; `tests/data/batch/
/// blame.c`) are one group, blamed on `lookup`'s `return NULL;`; grouped
/// by stack they are two.
#[test]
fn crashes_of_one_bug_with_different_stacks_group_by_blame() {
    let dir = scratch("blame");
    let src = include_str!("data/batch/blame.c");
    std::fs::write(dir.join("blame.c"), src).unwrap();
    sh(
        &dir,
        "clang-14",
        &["-g", "-O0", "-emit-llvm", "-c", "blame.c", "-o", "prog.bc"],
    );
    sh(&dir, "clang-14", &["-g", "-O0", "prog.bc", "-o", "prog"]);
    for (run, core) in [
        ("run > /dev/null", "core-a"),
        ("run x > /dev/null", "core-b"),
    ] {
        let o = Command::new("gdb")
            .current_dir(&dir)
            .args(["-nx", "-batch", "-iex", "set debuginfod enabled off"])
            .args([
                "-ex",
                run,
                "-ex",
                &format!("generate-core-file {core}"),
                "./prog",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(dir.join(core).exists(), "{}", show(&o));
    }
    std::fs::write(
        dir.join("crashes.jsonl"),
        "{\"id\": \"a\", \"core\": \"core-a\"}\n{\"id\": \"b\", \"core\": \"core-b\"}\n",
    )
    .unwrap();
    let line = 1 + src
        .lines()
        .position(|l| l.trim() == "return NULL;")
        .unwrap();
    let run = |by: &str| {
        let o = postmortem(
            &dir,
            &[
                "batch",
                "crashes.jsonl",
                "--cfg",
                "prog.bc",
                "--binary",
                "prog",
                "--group-by",
                by,
            ],
        );
        assert!(o.status.success(), "{}", show(&o));
        parse_lines(&o.stdout)
    };
    let (crashes, groups) = run("blame");
    let blame = format!("the return at blame.c:{line} in `lookup`");
    for id in ["a", "b"] {
        assert_eq!(
            crashes[id]["blame"],
            blame.as_str(),
            "{id}: {}",
            crashes[id]
        );
        assert_eq!(crashes[id]["signature"], format!("blame: {blame}"), "{id}");
        assert!(crashes[id]["fault"]["causes"].is_array(), "{id}");
    }
    assert_eq!(groups.len(), 1, "{groups:?}");
    let mut ids: Vec<&str> = groups[0]["crashes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["a", "b"], "{groups:?}");
    // By the blamed function: one group too, named by the function.
    let (crashes, groups) = run("blame-function");
    assert_eq!(
        crashes["a"]["signature"], "blame: `lookup`",
        "{}",
        crashes["a"]
    );
    assert_eq!(crashes["a"]["blame"], blame.as_str());
    assert_eq!(groups.len(), 1, "{groups:?}");
    // By stack: two signatures, no group of two.
    let (crashes, groups) = run("stack");
    assert_ne!(crashes["a"]["signature"], crashes["b"]["signature"]);
    assert!(crashes["a"].get("blame").is_none());
    assert!(groups.is_empty(), "{groups:?}");
}
