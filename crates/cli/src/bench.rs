//! `postmortem bench` and `postmortem synth`: timing tables on the shared
//! failure data and on a synthetic gcc-sized program.

use crate::exit::Failure;
use crate::graph::load_graph;
use crate::inputs::load_report;
use clap::{Args, ValueEnum};
use postmortem_core::cs::Cs;
use postmortem_core::fsa::Fsa;
use postmortem_core::summary::Counts;
use postmortem_core::utl::Utl;
use postmortem_core::Solver;
use postmortem_testkit::synth::{self, SynthConfig};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
pub struct BenchArgs {
    /// Directory of the PLDI 2017 data (`<app>/<version>/<fault>/...`).
    #[arg(long, value_name = "DIR", default_value = "../shared/data/pldi2017")]
    data: PathBuf,
    /// Skip the shared data.
    #[arg(long)]
    no_shared: bool,
    /// Also generate, parse and analyse a synthetic program of this size.
    #[arg(long, value_enum)]
    synthetic: Option<Scale>,
    /// Also time FSA bulk recovery (column "fsa max ms").
    #[arg(long)]
    fsa: bool,
    /// Also time context-sensitive bulk recovery, with the full report
    /// and with the stack only (columns "cs max ms" and "cs stack ms", each
    /// with its ratio to UTL's worst).
    #[arg(long)]
    cs: bool,
    /// Instead of times: the share of nodes each solver decides (Yes or
    /// No), per app of the shared data, with the stack only and with the
    /// full report, next to the PLDI 2017 paper's figures.
    #[arg(long)]
    precision: bool,
    /// Runs per measurement; the minimum is reported.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// With --synthetic: run `postmortem analyze` on the synthetic program
    /// once per solver (utl, fsa, cs, best), each in its own process, and
    /// print its whole-process wall time, peak memory and the time of each
    /// phase (the JSON's `solver_stats` ending in `_ms`).
    #[arg(long)]
    solvers: bool,
}

#[derive(Args)]
pub struct SynthArgs {
    /// Output directory (created): program.graphml and report.json.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Size of the program.
    #[arg(long, value_enum, default_value_t = Scale::Gcc)]
    scale: Scale,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Copy, Clone, ValueEnum)]
pub enum Scale {
    /// About 2,300 functions, 140k blocks, 700k statement nodes, a
    /// 30-deep crash stack and 11k coverage observations.
    Gcc,
    /// The gcc-sized program with 100 ambiguous observations and a
    /// reliable trace of 50 calls.
    GccFsa,
    /// A few hundred nodes.
    Small,
    /// The coverage-like ambiguity mix (issue 9): 400 functions, ~110k
    /// nodes, 535 ambiguous obsNo sets of 2-3 call sites, 1,335 single
    /// obsNo, ambiguous obsYes elements, an ordered vector of ten two-node
    /// sets and a reliable trace of 16 calls.
    Coverage,
    /// The same mix at gcc size (2,300 functions).
    CoverageGcc,
}

fn config(scale: Scale, seed: u64) -> SynthConfig {
    match scale {
        Scale::Gcc => SynthConfig {
            seed,
            ..SynthConfig::gcc_like()
        },
        Scale::GccFsa => SynthConfig {
            seed,
            ..SynthConfig::gcc_fsa()
        },
        Scale::Small => SynthConfig::small(seed),
        Scale::Coverage => SynthConfig {
            seed,
            ..SynthConfig::coverage_mix(400.0 / 2300.0)
        },
        Scale::CoverageGcc => SynthConfig {
            seed,
            ..SynthConfig::coverage_mix(1.0)
        },
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn min_time<T>(repeat: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        let v = f();
        best = best.min(ms(t));
        last = Some(v);
    }
    (best, last.expect("at least one run"))
}

/// Peak resident memory of this process, in MiB (Linux only).
fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

pub fn synth(a: SynthArgs) -> Result<(), Failure> {
    std::fs::create_dir_all(&a.out)
        .map_err(|e| Failure::input(format!("{}: {e}", a.out.display())))?;
    let (g, r) = write_synth(&a.out, config(a.scale, a.seed))?;
    println!("wrote {} and {}", g.display(), r.display());
    Ok(())
}

fn write_synth(dir: &Path, cfg: SynthConfig) -> Result<(PathBuf, PathBuf), Failure> {
    let gp = dir.join("program.graphml");
    let rp = dir.join("report.json");
    let open = |p: &Path| {
        std::fs::File::create(p)
            .map(std::io::BufWriter::new)
            .map_err(|e| Failure::input(format!("{}: {e}", p.display())))
    };
    let (mut gw, mut rw) = (open(&gp)?, open(&rp)?);
    eprintln!(
        "postmortem: generating a synthetic program in {} ...",
        dir.display()
    );
    let t = Instant::now();
    let stats = synth::generate(&cfg, &mut gw, &mut rw)
        .map_err(|e| Failure::internal(format!("writing: {e}")))?;
    use std::io::Write;
    gw.flush()?;
    rw.flush()?;
    eprintln!(
        "postmortem: {} nodes, {} blocks, {} functions, {} call sites, stack {} deep, {} obsYes, {} obsNo ({:.0} ms)",
        stats.nodes, stats.blocks, stats.functions, stats.call_sites, stats.stack_depth, stats.obs_yes, stats.obs_no, ms(t)
    );
    Ok((gp, rp))
}

/// One failure: its report and graph.
struct Failing {
    graph: PathBuf,
    report: PathBuf,
}

/// Finds `<app>/<version>/<fault>/<app>.graphml` with `<test>/data.json`.
fn failures(app_dir: &Path) -> Vec<Failing> {
    let mut out = Vec::new();
    let mut stack = vec![app_dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        let graph = entries
            .iter()
            .find(|p| p.extension().is_some_and(|x| x == "graphml"))
            .cloned();
        for p in entries {
            if p.is_dir() {
                let report = p.join("data.json");
                match (&graph, report.is_file()) {
                    (Some(g), true) => out.push(Failing {
                        graph: g.clone(),
                        report,
                    }),
                    _ => stack.push(p),
                }
            }
        }
    }
    out.sort_by(|a, b| a.report.cmp(&b.report));
    out
}

struct Row {
    name: String,
    failures: usize,
    nodes: usize,
    parse_ms: f64,
    recover_med: f64,
    recover_max: f64,
    stack_only_max: f64,
    maybe_pct: f64,
    peak_mib: Option<f64>,
    exact_checks: u64,
    fsa_max: Option<f64>,
    fsa_gave_up: bool,
    fsa_undecided: usize,
    /// Ambiguous obsNo sets weakened because the product did not fit.
    fsa_dropped: usize,
    cs_max: Option<f64>,
    /// Worst context-sensitive bulk recovery with the stack only.
    cs_stack_only_max: f64,
}

fn print_rows(rows: &[Row]) {
    println!(
        "{:<14} {:>8} {:>9} {:>10} {:>12} {:>12} {:>14} {:>8} {:>9} {:>7} {:>12}",
        "program",
        "failures",
        "nodes",
        "parse ms",
        "recover med",
        "recover max",
        "stack-only max",
        "maybe %",
        "peak MiB",
        "exact",
        "fsa max ms"
    );
    for r in rows {
        println!(
            "{:<14} {:>8} {:>9} {:>10.2} {:>12.3} {:>12.3} {:>14.3} {:>8.1} {:>9} {:>7} {:>12}",
            r.name,
            r.failures,
            r.nodes,
            r.parse_ms,
            r.recover_med,
            r.recover_max,
            r.stack_only_max,
            r.maybe_pct,
            r.peak_mib
                .map(|m| format!("{m:.0}"))
                .unwrap_or_else(|| "-".into()),
            r.exact_checks,
            match r.fsa_max {
                Some(t) => format!(
                    "{t:.3}{}",
                    if r.fsa_gave_up {
                        " (gave up)".to_string()
                    } else if r.fsa_undecided > 0 {
                        format!(" ({} undecided)", r.fsa_undecided)
                    } else if r.fsa_dropped > 0 {
                        format!(" ({} obsNo weakened)", r.fsa_dropped)
                    } else {
                        String::new()
                    }
                ),
                None => "-".into(),
            }
        );
    }
    if rows.iter().any(|r| r.cs_max.is_some()) {
        println!(
            "\n{:<14} {:>12} {:>12} {:>10} {:>16} {:>16} {:>12}",
            "program",
            "utl max ms",
            "cs max ms",
            "cs / utl",
            "utl stack ms",
            "cs stack ms",
            "cs / utl"
        );
        for r in rows {
            if let Some(c) = r.cs_max {
                println!(
                    "{:<14} {:>12.3} {:>12.3} {:>10.1} {:>16.3} {:>16.3} {:>12.1}",
                    r.name,
                    r.recover_max,
                    c,
                    c / r.recover_max.max(1e-9),
                    r.stack_only_max,
                    r.cs_stack_only_max,
                    r.cs_stack_only_max / r.stack_only_max.max(1e-9)
                );
            }
        }
    }
}

fn measure(
    name: &str,
    fails: &[Failing],
    repeat: usize,
    peak: bool,
    fsa_too: bool,
    cs_too: bool,
) -> Result<Row, Failure> {
    let utl = Utl::default();
    let fsa = Fsa::default();
    let cs: Cs<Fsa> = Cs::default();
    let mut cs_max: f64 = 0.0;
    let mut cs_so_max: f64 = 0.0;
    let mut fsa_max: f64 = 0.0;
    let mut fsa_gave_up = false;
    let mut fsa_undecided = 0;
    let mut fsa_dropped = 0;
    let mut parse_ms = f64::INFINITY;
    let mut times = Vec::new();
    let mut so_max: f64 = 0.0;
    let mut nodes = 0;
    let mut maybe = 0usize;
    let mut exact = 0u64;
    let mut total = 0usize;
    let mut last_graph: Option<(PathBuf, postmortem_core::Icfg)> = None;
    for f in fails {
        if last_graph.as_ref().is_none_or(|(p, _)| *p != f.graph) {
            let (t, g) = min_time(repeat, || load_graph(&f.graph));
            parse_ms = parse_ms.min(t);
            last_graph = Some((f.graph.clone(), g?));
        }
        let g = &last_graph.as_ref().expect("graph").1;
        nodes = g.num_nodes();
        let report = load_report(&f.report, g)?;
        let (t, rec) = min_time(repeat, || utl.recover(g, &report));
        let rec = rec.map_err(|e| Failure::internal(format!("{}: {e}", f.report.display())))?;
        let c = Counts::of(&rec.labels);
        exact += rec
            .stats
            .iter()
            .find(|s| s.0 == "exact_checks")
            .map_or(0, |s| s.1);
        maybe += c.maybe;
        total += c.total();
        times.push(t);
        let so = report.stack_only();
        let (t, _) = min_time(repeat, || utl.recover(g, &so));
        so_max = so_max.max(t);
        if cs_too {
            let (t, _) = min_time(repeat.min(3), || cs.recover(g, &report));
            cs_max = cs_max.max(t);
            let (t, _) = min_time(repeat.min(3), || cs.recover(g, &so));
            cs_so_max = cs_so_max.max(t);
        }
        if fsa_too {
            let (t, r) = min_time(repeat.min(3), || fsa.recover(g, &report));
            fsa_max = fsa_max.max(t);
            if let Ok(r) = r {
                fsa_undecided += r.undecided.len();
                fsa_gave_up |= r.weakened.iter().any(|w| w.how.contains("gave up"));
                fsa_dropped += r
                    .weakened
                    .iter()
                    .filter(|w| w.how.contains("did not fit"))
                    .count();
            }
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(Row {
        name: name.to_string(),
        failures: fails.len(),
        nodes,
        parse_ms,
        recover_med: times.get(times.len() / 2).copied().unwrap_or(0.0),
        recover_max: times.last().copied().unwrap_or(0.0),
        stack_only_max: so_max,
        maybe_pct: if total == 0 {
            0.0
        } else {
            100.0 * maybe as f64 / total as f64
        },
        peak_mib: if peak { peak_rss_mib() } else { None },
        exact_checks: exact,
        fsa_max: fsa_too.then_some(fsa_max),
        fsa_gave_up,
        fsa_dropped,
        fsa_undecided,
        cs_max: cs_too.then_some(cs_max),
        cs_stack_only_max: cs_so_max,
    })
}

/// Figures the PLDI 2017 paper states in its text for the shared apps
/// (mean % of basic blocks decided; Figure 12: stack only, Figure 14:
/// stack and call coverage). The other bars are only in the plots.
fn paper_figure(app: &str) -> &'static str {
    match app {
        "print_tokens" => "s-VPA 20% stack only (Fig. 12); UTL 63% full (Fig. 14)",
        _ => "",
    }
}

/// `bench --precision`: the mean share of nodes decided per failure, per
/// app and solver.
fn precision(apps: &[(String, Vec<Failing>)]) -> Result<(), Failure> {
    let solvers: [(&str, Box<dyn Solver>); 5] = [
        ("utl", Box::new(Utl::default())),
        ("fsa", Box::new(Fsa::default())),
        ("cs", Box::new(Cs::<Fsa>::default())),
        (
            "best",
            Box::new(Cs::<Fsa> {
                best: true,
                ..Cs::default()
            }),
        ),
        (
            "exact",
            Box::new(Cs::<Fsa> {
                exact: true,
                ..Cs::default()
            }),
        ),
    ];
    println!("Mean share of nodes decided (Yes or No) per failure, stack only | full report.");
    println!("The paper counts basic blocks, we count the graph's nodes; its figures are");
    println!("quoted where its text gives them.\n");
    println!(
        "| app | failures | utl | fsa | cs | best | cs --exact | cs max ms | exact max ms | paper |\n|---|---|---|---|---|---|---|---|---|---|"
    );
    for (name, fails) in apps {
        let mut sums = [[0f64; 2]; 5];
        let (mut cs_max, mut exact_max): (f64, f64) = (0.0, 0.0);
        let mut last: Option<(PathBuf, postmortem_core::Icfg)> = None;
        for f in fails {
            if last.as_ref().is_none_or(|(p, _)| *p != f.graph) {
                last = Some((f.graph.clone(), load_graph(&f.graph)?));
            }
            let g = &last.as_ref().expect("graph").1;
            let full = load_report(&f.report, g)?;
            for (k, r) in [full.stack_only(), full].iter().enumerate() {
                for (i, (sname, s)) in solvers.iter().enumerate() {
                    let t = Instant::now();
                    let rec = s.recover(g, r).map_err(|e| {
                        Failure::internal(format!("{} ({sname}): {e}", f.report.display()))
                    })?;
                    match *sname {
                        "cs" => cs_max = cs_max.max(ms(t)),
                        "exact" => exact_max = exact_max.max(ms(t)),
                        _ => {}
                    }
                    let c = Counts::of(&rec.labels);
                    sums[i][k] += 100.0 * (c.total() - c.maybe) as f64 / c.total().max(1) as f64;
                }
            }
        }
        let n = fails.len().max(1) as f64;
        let cell = |i: usize| format!("{:.1} \\| {:.1}", sums[i][0] / n, sums[i][1] / n);
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {cs_max:.1} | {exact_max:.1} | {} |",
            fails.len(),
            cell(0),
            cell(1),
            cell(2),
            cell(3),
            cell(4),
            paper_figure(name)
        );
    }
    Ok(())
}

pub fn run(a: BenchArgs) -> Result<(), Failure> {
    let mut rows = Vec::new();
    // The synthetic program first, so that the peak memory is its own.
    if let Some(scale) = a.synthetic {
        let dir = std::env::temp_dir().join(format!("postmortem-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Failure::internal(format!("{}: {e}", dir.display())))?;
        let (graph, report) = write_synth(&dir, config(scale, 1))?;
        if a.solvers {
            let table = per_solver(&graph, &report);
            let _ = std::fs::remove_dir_all(&dir);
            return table;
        }
        eprintln!("postmortem: parsing and analysing it ...");
        let row = measure(
            "synthetic",
            &[Failing { graph, report }],
            a.repeat.min(3),
            true,
            a.fsa,
            a.cs,
        );
        let _ = std::fs::remove_dir_all(&dir);
        rows.push(row?);
    }
    let mut by_app: Vec<(String, Vec<Failing>)> = Vec::new();
    if !a.no_shared {
        let mut apps: Vec<PathBuf> = std::fs::read_dir(&a.data)
            .map_err(|e| {
                Failure::input(format!(
                    "{}: {e} (pass --data DIR or --no-shared)",
                    a.data.display()
                ))
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        apps.sort();
        for app in apps {
            let name = app
                .file_name()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            eprintln!("postmortem: {name} ...");
            let fails = failures(&app);
            if fails.is_empty() {
                continue;
            }
            if a.precision {
                by_app.push((name, fails));
            } else {
                rows.push(measure(&name, &fails, a.repeat, false, a.fsa, a.cs)?);
            }
        }
    }
    if a.precision {
        return precision(&by_app);
    }
    println!(
        "UTL bulk recovery (times are the minimum of {} runs; recover = all nodes at once;",
        a.repeat
    );
    println!(
        "exact = exact per-node checks left after dominators and witnesses, summed over failures;"
    );
    println!("fsa max ms = worst FSA bulk recovery; (N undecided) = nodes it left Maybe without deciding,");
    println!("(gave up) = a limit was reached and answers were weakened soundly; (N obsNo weakened) = ambiguous obsNo\n dropped (listed) because the product with them did not fit)");
    print_rows(&rows);
    Ok(())
}

/// One `postmortem analyze` of `graph` and `report` with `solver`, in a
/// child process: its wall time (s), peak resident memory (MiB, from
/// `wait4`) and the JSON output.
fn analyze_child(
    graph: &Path,
    report: &Path,
    solver: &str,
) -> Result<(f64, f64, serde_json::Value), Failure> {
    use std::io::Read;
    let exe = std::env::current_exe()?;
    let t = Instant::now();
    let mut child = std::process::Command::new(exe)
        .arg("analyze")
        .arg("--cfg")
        .arg(graph)
        .arg("--report")
        .arg(report)
        .args(["--solver", solver, "--format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .expect("piped stdout")
        .read_to_end(&mut out)?;
    let mut status = 0;
    // SAFETY: `rusage` is plain data; `wait4` fills it for our own child,
    // which `std` has not waited for (it never does unless asked).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let wall = t.elapsed().as_secs_f64();
    if pid < 0 || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(Failure::internal(format!(
            "postmortem analyze --solver {solver} failed (status {status})"
        )));
    }
    let json = serde_json::from_slice(&out)
        .map_err(|e| Failure::internal(format!("analyze --solver {solver}: {e}")))?;
    Ok((wall, usage.ru_maxrss as f64 / 1024.0, json))
}

/// `bench --synthetic SCALE --solvers`: every solver on the synthetic
/// program, each in its own process.
fn per_solver(graph: &Path, report: &Path) -> Result<(), Failure> {
    println!("Whole `postmortem analyze --format json` per solver, one process each (wall time, peak RSS);");
    println!("phases: solver_stats ending in _ms (fsa_bulk: FSA bulk recovery, confirm: choices, settle: checks");
    println!("one by one, cs_*: the context-sensitive refinement); left: Maybe nodes settle left unconfirmed.\n");
    println!(
        "| solver | wall s | x utl | peak MiB | yes | no | maybe | undecided | phases (ms) |\n|---|---|---|---|---|---|---|---|---|"
    );
    let mut utl_wall = None;
    for solver in ["utl", "fsa", "cs", "best"] {
        eprintln!("postmortem: analyze --solver {solver} ...");
        let (wall, peak, j) = analyze_child(graph, report, solver)?;
        let utl = *utl_wall.get_or_insert(wall);
        let count = |k: &str| j["nodes"][k].as_array().map_or(0, |a| a.len());
        let mut phases: Vec<String> = j["solver_stats"]
            .as_object()
            .map(|o| {
                o.iter()
                    .filter(|(k, _)| k.ends_with("_ms") || *k == "settle_left")
                    .map(|(k, v)| format!("{}: {v}", k.trim_end_matches("_ms")))
                    .collect()
            })
            .unwrap_or_default();
        if phases.is_empty() {
            phases.push("-".into());
        }
        println!(
            "| {solver} | {wall:.2} | {:.1} | {peak:.0} | {} | {} | {} | {} | {} |",
            wall / utl.max(1e-9),
            count("yes"),
            count("no"),
            count("maybe"),
            j["undecided"].as_array().map_or(0, |a| a.len()),
            phases.join(", ")
        );
    }
    Ok(())
}
