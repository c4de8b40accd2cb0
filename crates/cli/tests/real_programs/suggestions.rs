//! The guarantee of `postmortem suggest` on the real programs' crashes
//! (issue 24's first test).
//!
//! At a crash point, for each solver, `suggest` (k = 10, the default
//! limits) on the gdb backtrace lists points with a guarantee: the Maybe
//! lines decided if the point is observed to have run (`if_ran`), if not
//! (`if_not`), each exact (re-run) or a proven lower bound (`>=N`). Each
//! point's real value is then taken from the run, as the harness settles
//! labels: gdb runs the coverage build to the crash point with a
//! breakpoint on every instruction of each suggested line ([`gdb_hits`]);
//! a line not hit did not run, so neither did the point (a node of it); a
//! line hit ran, and so did the point when it is the line's only node
//! (`line_nodes` 1; otherwise which of the line's nodes ran is unknown
//! and the suggestion is counted as not checkable). llvm-cov's count is
//! compared and a disagreement counted (gdb decides). The observation
//! (`obsYes` or `obsNo` of the point, a csi-grissom report beside the
//! backtrace) is added, `analyze` runs again with the same solver, and:
//! (a) the lines Maybe in the base analysis that the re-run decides must
//! be at least the guarantee of the side that held, and exactly it when
//! the count is exact (more is a violation too: the count was not what
//! `analyze` decides); (b) every Yes and
//! No line of the re-run must agree with the run ([`check_labels`], with
//! [`referee`] settling llvm-cov's errors).
//!
//! **Groups**: the program's crash points together (`suggest --also`,
//! `suggest_group`): each suggestion's point is observed with its real
//! value in every crash of the group and analysed there; the lines
//! decided, summed over the crashes, must reach the group's guarantee
//! (the sum of each crash's worst case; the sum of `if_ran` or `if_not`
//! when the point took the same value in every crash), and every label of
//! every re-run must be sound.
//!
//! The CI part checks the first crash point of each program with utl and
//! best (utl only on Lua), `suggest --budget 10`, and no group; the whole
//! harness every crash point with utl, fsa, cs and best and the default
//! limits, and the group with utl and best (`REALPROGS_SUGGEST_BUDGET=S`
//! sets the budget of both).

use super::{
    canonical, check_labels, describe, gdb_hits, referee, Built, Crash, Figures, Point, Program,
    Sources, Unsound,
};
use common::{show, Ran};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::common;

/// Set by the whole harness: every crash point, every solver, groups.
pub static ALL: AtomicBool = AtomicBool::new(false);

/// What the suggestion checks of one program found.
#[derive(Default)]
pub struct SuggestFigures {
    /// `suggest` runs: one per crash point and solver, and per group and
    /// solver.
    pub runs: usize,
    pub group_runs: usize,
    /// Suggestions listed.
    pub listed: usize,
    /// Listed, but the point's real value is unknown (a line of several
    /// nodes that ran, a line gdb cannot place): not checked.
    pub unknown: usize,
    /// Suggestions checked (the real observation added, analysed again;
    /// for a group, in every crash), and of them those whose guarantee
    /// held.
    pub checked: usize,
    pub held: usize,
    /// Checked exact counts; of those of single crashes, how many, and
    /// how many the re-run met exactly.
    pub exact: usize,
    pub exact_single: usize,
    pub exact_met: usize,
    /// Checked proven lower bounds (from UTL's re-runs, from dominators).
    pub utl_bounds: usize,
    pub dominator_bounds: usize,
    /// Lines decided beyond the guarantee, summed over the checks.
    pub surplus: usize,
    /// Observed points whose llvm-cov count disagrees with gdb.
    pub cov_disagreed: usize,
    /// Yes and No lines of the re-runs checked against the run.
    pub labels_checked: usize,
    /// Guarantees not met, exact counts not met exactly, observations the
    /// analysis found impossible.
    pub violations: Vec<String>,
    /// Unsound labels of the re-runs (after gdb's referee).
    pub unsound: Vec<Unsound>,
    /// `suggest`'s own time, summed, and the most of one run.
    pub suggest_seconds: f64,
    pub suggest_max: f64,
    /// The whole check's time.
    pub seconds: f64,
    /// Per crash point (index) and solver: the base line labels, for the
    /// group check.
    bases: HashMap<(usize, &'static str), Lines>,
}

/// Line labels of an `analyze --format json` output: (file, line) to
/// "yes", "no" or "maybe".
type Lines = BTreeMap<(String, u64), &'static str>;

fn line_labels(v: &Value) -> Lines {
    let mut out = BTreeMap::new();
    for (file, labels) in v["lines"].as_object().unwrap() {
        for l in ["yes", "no", "maybe"] {
            for n in labels[l].as_array().unwrap() {
                out.insert((file.clone(), n.as_u64().unwrap()), l);
            }
        }
    }
    out
}

/// How many of `base`'s Maybe lines `after` decides.
fn decided(base: &Lines, after: &Lines) -> usize {
    base.iter()
        .filter(|(k, l)| **l == "maybe" && after.get(*k).is_some_and(|a| *a != "maybe"))
        .count()
}

fn pm(dir: &Path, args: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_postmortem"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// `analyze --format json` of `inputs` with `solver`: Ok(the output), or
/// Err(the failure). Every evidence stage runs (`--value-budget 0`), as in
/// `suggest`'s own analyses: under the default time budget the stages of
/// a backtrace's branch correlations (`Report::cases`) ran or not with
/// the machine's load, and a base analysis that lost them (23 lines of
/// bzip2's `BZ2_decompress` crash, on a loaded machine) made every exact
/// count of that crash look exceeded.
fn analyze(dir: &Path, inputs: &[String], solver: &str) -> Result<Value, String> {
    let mut args: Vec<String> = [
        "analyze",
        "--format",
        "json",
        "--timeout",
        "60",
        "--value-budget",
        "0",
        "--solver",
    ]
    .map(String::from)
    .to_vec();
    args.extend(solver.split(' ').map(String::from));
    args.extend(inputs.iter().cloned());
    let o = pm(dir, &args);
    if !o.status.success() {
        return Err(show(&o));
    }
    let replaced = "the crash and stack of the report are replaced by those of the backtrace";
    assert!(
        !args.iter().any(|a| a == "--report")
            || String::from_utf8_lossy(&o.stderr).contains(replaced),
        "the backtrace did not replace the observation's placeholder crash: {}",
        show(&o)
    );
    Ok(serde_json::from_slice(&o.stdout).unwrap())
}

/// `suggest --format json` of `inputs` with `solver` (the default k and
/// limits, [`budget`] aside), timed.
fn suggest(dir: &Path, inputs: &[String], solver: &str, what: &str) -> (Value, f64) {
    let mut args: Vec<String> = ["suggest", "--format", "json", "--solver"]
        .map(String::from)
        .to_vec();
    args.extend(solver.split(' ').map(String::from));
    if let Some(b) = budget() {
        args.extend(["--budget".to_string(), b]);
    }
    args.extend(inputs.iter().cloned());
    let t = Instant::now();
    let o = pm(dir, &args);
    let secs = t.elapsed().as_secs_f64();
    assert!(o.status.success(), "{what}: suggest: {}", show(&o));
    std::fs::write(dir.join(format!("suggest-{solver}.out.json")), &o.stdout).unwrap();
    (serde_json::from_slice(&o.stdout).unwrap(), secs)
}

/// The inputs of the crash `c`: its graph and its gdb backtrace.
fn inputs(b: &Built, c: &Crash) -> Vec<String> {
    vec![
        "--cfg".into(),
        b.pmcfg.display().to_string(),
        "--backtrace".into(),
        c.dir.join("bt.txt").display().to_string(),
    ]
}

/// The (file, line) naming a suggestion's point.
fn place(s: &Value) -> (String, u64) {
    (
        s["file"].as_str().unwrap().to_string(),
        s["line"].as_u64().unwrap(),
    )
}

/// Whether the point of suggestion `s` ran before the crash, from gdb's
/// `hits` of its line (see the module doc); None if unknown. Counts
/// llvm-cov's disagreement with gdb into `sf`.
fn observed(
    s: &Value,
    hits: &HashMap<(String, u64), bool>,
    c: &Crash,
    sf: &mut SuggestFigures,
) -> Option<bool> {
    let (file, line) = place(s);
    let hit = *hits.get(&(file.clone(), line))?;
    let none = common::Truth::default();
    let cov = c
        .truth
        .truth
        .get(&canonical(&file))
        .unwrap_or(&none)
        .ran(line);
    if matches!((cov, hit), (Ran::Yes, false) | (Ran::No, true)) {
        sf.cov_disagreed += 1;
    }
    match (hit, s["line_nodes"].as_u64()) {
        (false, _) => Some(false),
        (true, Some(1)) => Some(true),
        _ => None,
    }
}

/// A csi-grissom report of one observation: `node` ran, or did not. The
/// format needs a crash: `node`, which the backtrace beside it replaces
/// (`analyze` says so; [`analyze`] checks it did).
fn observation(node: &str, ran: bool) -> Value {
    if ran {
        json!({"crash": [node], "obsYes": [{"reliable": false, "entries": [[node]]}]})
    } else {
        json!({"crash": [node], "obsNo": [[node]]})
    }
}

/// The kind of a suggestion's counts: "rerun" (exact), "utl" or
/// "dominators" (proven lower bounds).
fn kind(s: &Value) -> &str {
    s["bound"].as_str().unwrap_or("?")
}

/// The solvers of the per-point checks of crash point `index` of `p`:
/// in CI only the first point, with utl and best (utl only on Lua, where
/// best's ten re-runs alone take half a minute).
fn solvers(p: &Program, index: usize) -> &'static [&'static str] {
    if ALL.load(Ordering::Relaxed) {
        &["utl", "fsa", "cs", "best"]
    } else if index > 0 {
        &[]
    } else if p.name == "lua" {
        &["utl"]
    } else {
        &["utl", "best"]
    }
}

/// `suggest`'s `--budget`: the default (60 s) in the whole harness, 10 s
/// in CI; `REALPROGS_SUGGEST_BUDGET=S` sets it.
fn budget() -> Option<String> {
    std::env::var("REALPROGS_SUGGEST_BUDGET")
        .ok()
        .or_else(|| (!ALL.load(Ordering::Relaxed)).then(|| "10".to_string()))
}

/// The real observation of one suggestion added to crash `c`'s report and
/// analysed again: the lines of `base` decided, or None (a violation, in
/// `sf`). The re-run's labels are checked into `scratch` (as `solver` on
/// the gdb backtrace, at `what`).
#[allow(clippy::too_many_arguments)]
fn rerun(
    b: &Built,
    c: &Crash,
    solver: &'static str,
    node: &str,
    ran: bool,
    base: &Lines,
    what: &str,
    tag: &str,
    scratch: &mut Figures,
    src: &mut Sources,
    sf: &mut SuggestFigures,
) -> Option<usize> {
    let obs = c.dir.join(format!("suggest-{tag}.json"));
    std::fs::write(&obs, observation(node, ran).to_string()).unwrap();
    let mut args = inputs(b, c);
    args.extend(["--report".into(), obs.display().to_string()]);
    match analyze(&c.dir, &args, solver) {
        Ok(v) => {
            let before = scratch.checked;
            check_labels(
                &v,
                &c.truth,
                &[],
                solver,
                "gdb backtrace",
                &what,
                scratch,
                src,
            );
            sf.labels_checked += scratch.checked - before;
            Some(decided(base, &line_labels(&v)))
        }
        Err(e) => {
            let v = format!(
                "{what}: the real observation was refused: {}",
                e.lines().take(3).collect::<Vec<_>>().join(" / ")
            );
            eprintln!("VIOLATION {v}");
            sf.violations.push(v);
            None
        }
    }
}

/// Records whether `got` lines decided meet suggestion `s`'s guarantee on
/// `side` ("if_ran", "if_not" or "worst"); `single`: one crash, where an
/// exact count must be met exactly (a group's sums leave out the crashes
/// where one observation is impossible, and its worst case mixes sides).
fn judge(s: &Value, side: &str, got: usize, what: &str, single: bool, sf: &mut SuggestFigures) {
    let promised = s[side].as_u64().unwrap() as usize;
    sf.checked += 1;
    match kind(s) {
        "rerun" => sf.exact += 1,
        "utl" => sf.utl_bounds += 1,
        _ => sf.dominator_bounds += 1,
    }
    let mut violation = None;
    if got >= promised {
        sf.held += 1;
        sf.surplus += got - promised;
    } else {
        violation = Some(format!(
            "{what}: {got} lines decided, {side} promised {promised} ({})",
            kind(s)
        ));
    }
    if kind(s) == "rerun" && single {
        sf.exact_single += 1;
        if got == promised {
            sf.exact_met += 1;
        } else if got > promised {
            violation = Some(format!(
                "{what}: {got} lines decided, the exact {side} says {promised}"
            ));
        }
    }
    if let Some(v) = violation {
        eprintln!("VIOLATION {v}");
        sf.violations.push(v);
    }
}

/// The checks of crash point `index` (`point`, crash `c`) of `p`: see the
/// module doc.
pub fn check_point(
    p: &Program,
    b: &Built,
    index: usize,
    point: &Point,
    c: &Crash,
    fig: &mut Figures,
    src: &mut Sources,
) {
    let start = Instant::now();
    let solvers = solvers(p, index);
    let group = ALL.load(Ordering::Relaxed);
    let mut lists: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for &solver in solvers {
        let what = format!("{} {point}: suggest --solver {solver}", p.name);
        let base = line_labels(&analyze(&c.dir, &inputs(b, c), solver).expect(&what));
        let (v, secs) = suggest(&c.dir, &inputs(b, c), solver, &what);
        let sf = &mut fig.suggest;
        sf.runs += 1;
        sf.suggest_seconds += secs;
        sf.suggest_max = sf.suggest_max.max(secs);
        let list = v["suggestions"].as_array().unwrap().clone();
        sf.listed += list.len();
        eprintln!(
            "{}: {point}: suggest {solver}: {} points in {secs:.1} s ({})",
            p.name,
            list.len(),
            v["note"].as_str().unwrap_or("complete")
        );
        lists.push((solver, list));
        // Kept for the group check too.
        sf.bases.insert((index, solver), base);
    }
    if lists.iter().all(|l| l.1.is_empty()) {
        fig.suggest.seconds += start.elapsed().as_secs_f64();
        return;
    }
    let mut lines: Vec<(String, u64)> = lists.iter().flat_map(|l| l.1.iter().map(place)).collect();
    lines.sort();
    lines.dedup();
    let hits = gdb_hits(p, b, point, c, &b.bin, &lines, "suggest");
    let mut scratch = Figures::default();
    for (solver, list) in &lists {
        let base = fig.suggest.bases[&(index, *solver)].clone();
        for (i, s) in list.iter().enumerate() {
            let sf = &mut fig.suggest;
            let Some(ran) = observed(s, &hits, c, sf) else {
                sf.unknown += 1;
                continue;
            };
            let (file, line) = place(s);
            let what = format!(
                "{point}: {solver} suggestion #{} {file}:{line} ({}), observed {}",
                i + 1,
                kind(s),
                if ran { "ran" } else { "not run" }
            );
            let tag = format!("{solver}-{i}");
            let node = s["node"].as_str().unwrap();
            let Some(got) = rerun(
                b,
                c,
                solver,
                node,
                ran,
                &base,
                &what,
                &tag,
                &mut scratch,
                src,
                sf,
            ) else {
                sf.checked += 1;
                continue;
            };
            judge(
                s,
                if ran { "if_ran" } else { "if_not" },
                got,
                &what,
                true,
                sf,
            );
        }
    }
    referee(p, b, point, c, &mut scratch, 0);
    let sf = &mut fig.suggest;
    sf.unsound.extend(scratch.unsound);
    if !group {
        sf.bases.clear();
    }
    sf.seconds += start.elapsed().as_secs_f64();
}

/// The group check of `p`'s crash points `crashes` (see the module doc):
/// only in the whole harness, with utl and best.
pub fn check_group(
    p: &Program,
    b: &Built,
    crashes: &[(Point, Crash)],
    fig: &mut Figures,
    src: &mut Sources,
) {
    if !ALL.load(Ordering::Relaxed) || crashes.len() < 2 {
        return;
    }
    let start = Instant::now();
    let (first, rest) = crashes.split_first().unwrap();
    let mut args = inputs(b, &first.1);
    for (_, c) in rest {
        args.extend(["--also".into(), c.dir.join("bt.txt").display().to_string()]);
    }
    let mut lists: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for solver in ["utl", "best"] {
        let what = format!("{}: group of {} crashes, {solver}", p.name, crashes.len());
        let (v, secs) = suggest(&b.dir, &args, solver, &what);
        let sf = &mut fig.suggest;
        sf.group_runs += 1;
        sf.suggest_seconds += secs;
        sf.suggest_max = sf.suggest_max.max(secs);
        let list = v["suggestions"].as_array().unwrap().clone();
        sf.listed += list.len();
        eprintln!(
            "{what}: suggest: {} points in {secs:.1} s ({})",
            list.len(),
            v["note"].as_str().unwrap_or("complete")
        );
        lists.push((solver, list));
    }
    let mut lines: Vec<(String, u64)> = lists.iter().flat_map(|l| l.1.iter().map(place)).collect();
    lines.sort();
    lines.dedup();
    // Per crash: gdb's hits of the suggested lines, and the re-runs' labels
    // to referee.
    let hits: Vec<HashMap<(String, u64), bool>> = crashes
        .iter()
        .map(|(point, c)| gdb_hits(p, b, point, c, &b.bin, &lines, "suggest-group"))
        .collect();
    let mut scratch: Vec<Figures> = crashes.iter().map(|_| Figures::default()).collect();
    for (solver, list) in &lists {
        for (i, s) in list.iter().enumerate() {
            let (file, line) = place(s);
            let node = s["node"].as_str().unwrap();
            let seen: Vec<Option<bool>> = crashes
                .iter()
                .zip(&hits)
                .map(|((_, c), h)| observed(s, h, c, &mut fig.suggest))
                .collect();
            if seen.iter().any(Option::is_none) {
                fig.suggest.unknown += 1;
                continue;
            }
            let mut sum = Some(0);
            for (k, ((point, c), ran)) in crashes.iter().zip(&seen).enumerate() {
                let ran = ran.unwrap();
                let what = format!(
                    "{} group, {solver} suggestion #{} {file}:{line} ({}), in crash {point} observed {}",
                    p.name,
                    i + 1,
                    kind(s),
                    if ran { "ran" } else { "not run" }
                );
                let base = fig.suggest.bases[&(k, *solver)].clone();
                let tag = format!("group-{solver}-{i}");
                let got = rerun(
                    b,
                    c,
                    solver,
                    node,
                    ran,
                    &base,
                    &what,
                    &tag,
                    &mut scratch[k],
                    src,
                    &mut fig.suggest,
                );
                sum = sum.zip(got).map(|(a, g)| a + g);
            }
            let what = format!(
                "{} group, {solver} suggestion #{} {file}:{line} ({})",
                p.name,
                i + 1,
                kind(s)
            );
            let Some(sum) = sum else {
                fig.suggest.checked += 1;
                continue;
            };
            // The same value everywhere: that side's sum; else the sum of
            // the worst cases.
            let side = if seen.iter().all(|r| *r == Some(true)) {
                "if_ran"
            } else if seen.iter().all(|r| *r == Some(false)) {
                "if_not"
            } else {
                "worst"
            };
            judge(s, side, sum, &what, false, &mut fig.suggest);
        }
    }
    for ((point, c), mut sc) in crashes.iter().zip(scratch) {
        referee(p, b, point, c, &mut sc, 0);
        fig.suggest.unsound.extend(sc.unsound);
    }
    let sf = &mut fig.suggest;
    sf.bases.clear();
    sf.seconds += start.elapsed().as_secs_f64();
}

/// The suggestion checks of `results` as a Markdown table.
pub fn table(results: &[(&str, &Figures)]) -> String {
    let mut out = String::from(
        "| program | suggest runs (groups) | suggestions listed | checked (not checkable) | guarantees held | exact (single crash: met exactly) | bounds checked (utl, dominators) | lines beyond the guarantees | labels checked | unsound | violations | llvm-cov vs gdb on observed points | suggest time (most) | time |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (name, f) in results {
        let s = &f.suggest;
        if s.runs + s.group_runs == 0 {
            continue;
        }
        writeln!(
            out,
            "| {name} | {} ({}) | {} | {} ({}) | {} | {} ({} of {}) | {}, {} | {} | {} | {} | {} | {} disagreed | {:.0} s ({:.1} s) | {:.0} s |",
            s.runs,
            s.group_runs,
            s.listed,
            s.checked,
            s.unknown,
            s.held,
            s.exact,
            s.exact_met,
            s.exact_single,
            s.utl_bounds,
            s.dominator_bounds,
            s.surplus,
            s.labels_checked,
            s.unsound.len(),
            s.violations.len(),
            s.cov_disagreed,
            s.suggest_seconds,
            s.suggest_max,
            s.seconds
        )
        .unwrap();
    }
    out
}

/// Fails on any violation or unsound label of the suggestion checks, and
/// when a program's checks ran but checked nothing.
pub fn assert_held(results: &[(&str, &Figures)]) {
    let mut msg = String::new();
    for (name, f) in results {
        let s = &f.suggest;
        for v in &s.violations {
            writeln!(msg, "{name}: {v}").unwrap();
        }
        if !s.unsound.is_empty() {
            write!(
                msg,
                "{name}: unsound labels after a suggested observation:\n{}",
                describe(&s.unsound)
            )
            .unwrap();
        }
        if s.runs > 0 && s.listed > 0 && s.checked == 0 {
            writeln!(msg, "{name}: {} suggestions, none checkable", s.listed).unwrap();
        }
    }
    assert!(
        msg.is_empty(),
        "suggest's guarantees (issue 24) do not hold:\n{msg}"
    );
}
