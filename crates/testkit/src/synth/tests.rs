use super::*;
use quick_xml::events::Event;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

fn gen(cfg: &SynthConfig) -> (Vec<u8>, Vec<u8>, SynthStats) {
    let (mut g, mut r) = (Vec::new(), Vec::new());
    let stats = generate(cfg, &mut g, &mut r).unwrap();
    (g, r, stats)
}

#[test]
fn fsa_report_has_a_true_reliable_trace_and_ambiguous_entries() {
    let cfg = SynthConfig {
        reliable_trace: 12,
        ambiguous: 3,
        ..SynthConfig::small(5)
    };
    let (g, r, _) = gen(&cfg);
    let g = postmortem_formats::read_graphml(&g[..], "synth.graphml").unwrap();
    let rep =
        postmortem_formats::read_report_str(std::str::from_utf8(&r).unwrap(), "synth.json", &g)
            .unwrap();
    let reliable: Vec<_> = rep.obs_yes.iter().filter(|t| t.reliable).collect();
    assert_eq!(reliable.len(), 1);
    assert!(!reliable[0].entries.is_empty() && reliable[0].entries.len() <= 12);
    assert_eq!(
        rep.obs_yes
            .iter()
            .filter(|t| t.entries[0].nodes().len() == 2)
            .count(),
        3
    );
    // The report is true of the run, so the exact solver finds it possible.
    use postmortem_core::Solver;
    let f = postmortem_core::fsa::Fsa::default();
    assert_eq!(
        f.check(&g, &rep, None).unwrap().answer,
        postmortem_core::Answer::Possible
    );
}

fn mid() -> SynthConfig {
    SynthConfig::gcc_like().scaled(0.05)
}

/// The graph as a test sees it: node kinds, flow successors, call
/// targets, all by node id.
#[derive(Default)]
struct Parsed {
    kind: HashMap<String, String>,
    flow: HashMap<String, Vec<String>>,
    calls: HashMap<String, Vec<String>>,
}

fn parse(xml: &[u8]) -> Parsed {
    let mut rd = quick_xml::Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut p = Parsed::default();
    let mut node: Option<String> = None;
    let mut edge: Option<(String, String, bool)> = None;
    let mut key = String::new();
    let attr = |e: &quick_xml::events::BytesStart, k: &[u8]| -> Option<String> {
        e.attributes()
            .map(|a| a.unwrap())
            .find(|a| a.key.as_ref() == k)
            .map(|a| String::from_utf8(a.value.to_vec()).unwrap())
    };
    loop {
        match rd.read_event_into(&mut buf).expect("well-formed XML") {
            Event::Eof => break,
            Event::Start(e) if e.name().as_ref() == b"node" => {
                let id = attr(&e, b"id").unwrap();
                p.kind.insert(id.clone(), "declaration".into());
                node = Some(id);
            }
            Event::End(e) if e.name().as_ref() == b"node" => node = None,
            Event::Start(e) if e.name().as_ref() == b"edge" => {
                edge = Some((
                    attr(&e, b"source").unwrap(),
                    attr(&e, b"target").unwrap(),
                    false,
                ));
            }
            Event::Empty(e) if e.name().as_ref() == b"edge" => {
                let (s, t) = (attr(&e, b"source").unwrap(), attr(&e, b"target").unwrap());
                p.flow.entry(s).or_default().push(t);
            }
            Event::End(e) if e.name().as_ref() == b"edge" => {
                let (s, t, control) = edge.take().unwrap();
                assert!(control, "an edge with data must be a call edge");
                p.calls.entry(s).or_default().push(t);
            }
            Event::Start(e) if e.name().as_ref() == b"data" => key = attr(&e, b"key").unwrap(),
            Event::Text(t) => {
                let t = t.unescape().unwrap().to_string();
                if key == "kind" {
                    if let Some(n) = &node {
                        p.kind.insert(n.clone(), t);
                    }
                } else if key == "type" {
                    if let Some(e) = &mut edge {
                        assert_eq!(t, "control");
                        e.2 = true;
                    }
                }
            }
            Event::End(e) if e.name().as_ref() == b"data" => key.clear(),
            _ => {}
        }
        buf.clear();
    }
    p
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn func_of(id: &str) -> &str {
    id.rsplit_once(':').unwrap().0
}

/// Checks the report against the graph; returns the obsYes and obsNo ids.
fn check_report(p: &Parsed, report: &[u8], depth: usize) -> (Vec<String>, Vec<String>) {
    let v: Value = serde_json::from_slice(report).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4);
    let stack = v["stack"].as_array().unwrap();
    assert_eq!(stack.len(), depth);
    let mut caller = "n:-0".to_string();
    for (i, fr) in stack.iter().enumerate() {
        let call = ids(&fr["call"]);
        let entry = ids(&fr["entry"]);
        assert_eq!((call.len(), entry.len()), (1, 1));
        assert_eq!(p.kind[&call[0]], "call-site");
        assert_eq!(p.kind[&entry[0]], "entry");
        assert!(
            p.calls[&call[0]].contains(&entry[0]),
            "frame {i}: callee mismatch"
        );
        if i > 0 {
            assert_eq!(
                func_of(&call[0]),
                caller,
                "frame {i} not called from the frame above"
            );
        }
        caller = func_of(&entry[0]).to_string();
    }
    let crash = ids(&v["crash"]);
    assert_eq!(crash.len(), 1);
    assert_eq!(p.kind[&crash[0]], "expression");
    if depth > 0 {
        assert_eq!(func_of(&crash[0]), caller);
    }
    let yes: Vec<String> = v["obsYes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            assert_eq!(o["reliable"], Value::Bool(false));
            let e = o["entries"].as_array().unwrap();
            assert_eq!(e.len(), 1);
            let s = ids(&e[0]);
            assert_eq!(s.len(), 1);
            s[0].clone()
        })
        .collect();
    let no: Vec<String> = v["obsNo"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let s = ids(s);
            assert_eq!(s.len(), 1);
            s[0].clone()
        })
        .collect();
    let ys: HashSet<&String> = yes.iter().collect();
    let ns: HashSet<&String> = no.iter().collect();
    assert_eq!(ys.len(), yes.len(), "duplicate obsYes");
    assert_eq!(ns.len(), no.len(), "duplicate obsNo");
    assert!(ys.is_disjoint(&ns), "obsYes and obsNo overlap");
    for n in yes.iter().chain(&no) {
        assert_eq!(p.kind[n], "call-site");
    }
    for fr in stack {
        // A pending call executed.
        assert!(!ns.contains(&ids(&fr["call"])[0]));
    }
    (yes, no)
}

/// Replays the recorded run on the emitted graph: every step follows a
/// flow edge, a call edge, or a return to the pending call's return
/// site; at the end the pending calls are the report's stack.
fn replay(cfg: &SynthConfig) {
    let prog = build_program(cfg);
    let run = simulate(&prog, cfg, true);
    let (mut xml, mut rep) = (Vec::new(), Vec::new());
    write_graphml(&prog, &mut xml).unwrap();
    write_report(&prog, &run, cfg, &mut rep).unwrap();
    let p = parse(&xml);
    let (yes, no) = check_report(&p, &rep, prog.depth);
    let id = |(f, l): (u32, u32)| format!("n:-{}:{}", prog.funcs[f as usize].num, l);
    let trace: Vec<String> = run.trace.as_ref().unwrap().iter().map(|&x| id(x)).collect();
    assert_eq!(trace.len() as u64, run.steps);
    let main = id((0, 1));
    assert_eq!(trace[0], main);
    let empty = Vec::new();
    let mut stack: Vec<&String> = Vec::new();
    for w in trace.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        let kind = p.kind[a].as_str();
        let flow = p.flow.get(a).unwrap_or(&empty);
        match kind {
            "call-site" => {
                let callees = &p.calls[a];
                if callees.contains(b) {
                    stack.push(a);
                } else {
                    assert!(flow.contains(b), "{a} -> {b}");
                    assert!(
                        callees.iter().any(|c| p.kind[c] == "declaration"),
                        "{a} flowed on without a call"
                    );
                }
            }
            "exit" => {
                let site = stack.pop().expect("return without a call");
                assert!(
                    p.flow[site].contains(b),
                    "return from {a} to {b}, not after {site}"
                );
            }
            _ => assert!(flow.contains(b), "{a} -> {b} is not a flow edge"),
        }
    }
    assert_eq!(trace.last().unwrap(), &id(run.crash));
    let v: Value = serde_json::from_slice(&rep).unwrap();
    let rstack: Vec<String> = v["stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| ids(&f["call"])[0].clone())
        .collect();
    let pending: Vec<String> = stack.iter().map(|s| s.to_string()).collect();
    assert_eq!(rstack, pending);
    let seen: HashSet<&String> = trace.iter().collect();
    for y in &yes {
        assert!(seen.contains(y), "obsYes {y} never executed");
    }
    for n in &no {
        assert!(!seen.contains(n), "obsNo {n} executed");
    }
}

#[test]
fn small_is_well_formed() {
    for seed in 0..20 {
        let cfg = SynthConfig::small(seed);
        let (g, r, stats) = gen(&cfg);
        let p = parse(&g);
        assert_eq!(p.kind.len(), stats.nodes);
        assert!((100..=1000).contains(&stats.nodes), "{stats:?}");
        assert_eq!(stats.functions, cfg.functions);
        assert_eq!(stats.stack_depth, cfg.crash_depth);
        check_report(&p, &r, cfg.crash_depth);
        let text = std::str::from_utf8(&r).unwrap();
        let order: Vec<usize> = ["\"obsYes\"", "\"crash\"", "\"obsNo\"", "\"stack\""]
            .iter()
            .map(|k| text.find(k).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "key order");
        // Every function kind is present.
        let kinds: HashSet<&str> = p.kind.values().map(|s| s.as_str()).collect();
        for k in ["entry", "exit", "expression", "call-site", "declaration"] {
            assert!(kinds.contains(k), "seed {seed}: no {k} node");
        }
    }
}

#[test]
fn deterministic() {
    let cfg = SynthConfig::small(7);
    let (g1, r1, s1) = gen(&cfg);
    let (g2, r2, s2) = gen(&cfg);
    assert!(g1 == g2 && r1 == r2 && s1 == s2);
    let (g3, r3, _) = gen(&SynthConfig::small(8));
    assert!(g1 != g3 && r1 != r3);
    let m = mid();
    let (a, b, _) = gen(&m);
    let (c, d, _) = gen(&m);
    assert!(a == c && b == d);
}

#[test]
fn runs_replay_on_the_graph() {
    for seed in 0..30 {
        replay(&SynthConfig::small(seed));
    }
    let mut m = mid();
    for seed in 0..3 {
        m.seed = seed;
        replay(&m);
    }
}

#[test]
fn odd_configs_still_crash_at_the_right_depth() {
    let base = SynthConfig::small(1);
    let odd = [
        SynthConfig {
            functions: 2,
            blocks: 5,
            statements: 10,
            crash_depth: 1,
            ..base.clone()
        },
        SynthConfig {
            crash_depth: 0,
            coverage: 0,
            obs_no: 0,
            ..base.clone()
        },
        SynthConfig {
            library_functions: 0,
            declarations: 0,
            ..base.clone()
        },
        SynthConfig {
            statements: 40,
            call_permille: 0,
            ..base.clone()
        },
        SynthConfig {
            recursion_permille: 1000,
            indirect_permille: 1000,
            ..base.clone()
        },
        SynthConfig {
            max_steps: 0,
            explore_depth: 0,
            ..base.clone()
        },
    ];
    for cfg in &odd {
        for seed in 0..5 {
            replay(&SynthConfig {
                seed,
                ..cfg.clone()
            });
        }
    }
    // A depth the call graph cannot reach is capped.
    let cfg = SynthConfig {
        functions: 5,
        crash_depth: 30,
        ..base
    };
    let (_, _, s) = gen(&cfg);
    assert_eq!(s.stack_depth, 4);
}

#[test]
fn mid_size_stats() {
    let cfg = mid();
    let (g, r, s) = gen(&cfg);
    let near =
        |x: usize, want: usize, tol: f64| (x as f64 - want as f64).abs() <= tol * want as f64;
    assert_eq!(s.functions, cfg.functions);
    assert!(near(s.blocks, cfg.blocks, 0.02), "{s:?}");
    assert!(near(s.nodes, cfg.statements, 0.10), "{s:?}");
    assert!(near(s.call_sites, cfg.statements * 6 / 100, 0.4), "{s:?}");
    assert_eq!(s.stack_depth, cfg.crash_depth);
    assert_eq!(s.obs_yes, cfg.coverage, "{s:?}");
    assert!(s.obs_no > cfg.obs_no / 2 && s.obs_no <= cfg.obs_no, "{s:?}");
    assert!(s.executed_steps > 0);
    let p = parse(&g);
    assert_eq!(p.kind.len(), s.nodes);
    let (yes, no) = check_report(&p, &r, cfg.crash_depth);
    assert_eq!((yes.len(), no.len()), (s.obs_yes, s.obs_no));
    // Popular callees: some entry is called from many sites, and the
    // call graph has recursion.
    let mut callers: HashMap<&String, usize> = HashMap::new();
    let mut self_calls = 0;
    for (site, ts) in &p.calls {
        for t in ts {
            *callers.entry(t).or_default() += 1;
            if func_of(site) == func_of(t) {
                self_calls += 1;
            }
        }
    }
    assert!(callers.values().max().unwrap() > &50, "no popular function");
    assert!(self_calls > 0, "no direct recursion");
}

#[test]
fn reads_back_with_the_crate_readers() {
    for seed in 0..5 {
        let cfg = SynthConfig::small(seed);
        let (g, r, s) = gen(&cfg);
        let icfg = postmortem_formats::read_graphml(&g[..], "synth.graphml").unwrap();
        // Declarations are left out of the model.
        assert_eq!(icfg.num_nodes(), s.nodes - cfg.declarations);
        assert_eq!(icfg.num_call_sites(), s.call_sites);
        let main = format!("n:-{}:1", build_program(&cfg).funcs[0].num);
        assert_eq!(icfg.ext_id(icfg.start()), main);
        let report = postmortem_formats::read_report_str(
            std::str::from_utf8(&r).unwrap(),
            "synth.json",
            &icfg,
        )
        .unwrap();
        assert_eq!(report.stack.len(), cfg.crash_depth);
        assert_eq!(report.obs_yes.len(), s.obs_yes);
        assert_eq!(report.obs_no.len(), s.obs_no);
    }
}
