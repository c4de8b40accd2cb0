//! Golden test: the worked example of Ohmann et al., "Recovering Execution
//! Data from Incomplete Observations" (WODA 2015).

use postmortem_core::utl::Utl;
use postmortem_core::{IcfgBuilder, Label, NodeKind, NodeSet, NodeSpec, Report, Solver, Trace};
use postmortem_testkit::oracle;

fn woda() -> (postmortem_core::Icfg, Report) {
    let mut b = IcfgBuilder::new();
    let f = b.function("main");
    let names = "abcdefghijk";
    let ids: Vec<_> = names
        .chars()
        .map(|c| {
            let s = c.to_string();
            let kind = if c == 'a' {
                NodeKind::Entry
            } else {
                NodeKind::Statement
            };
            b.add_node(NodeSpec {
                ext_id: &s,
                kind,
                func: f,
                label: &s,
                lines: &[],
            })
            .unwrap()
        })
        .collect();
    let id = |c: char| ids[names.find(c).unwrap()];
    for e in [
        "ab", "bc", "bj", "cd", "ci", "de", "df", "eh", "fg", "fh", "gh", "hi", "ib", "jk",
    ] {
        let mut cs = e.chars();
        b.add_flow_edge(id(cs.next().unwrap()), id(cs.next().unwrap()));
    }
    let g = b.build().unwrap();
    let r = Report {
        crash: Some(NodeSet::one(id('j'))),
        obs_yes: vec![Trace {
            reliable: false,
            entries: "bcb".chars().map(|c| NodeSet::one(id(c))).collect(),
        }],
        obs_no: vec![NodeSet::one(id('f'))],
        ..Report::default()
    };
    (g, r)
}

fn split(g: &postmortem_core::Icfg, labels: &[Label]) -> [String; 3] {
    let pick = |l: Label| {
        g.nodes()
            .filter(|&n| labels[n.index()] == l)
            .map(|n| g.ext_id(n).to_string())
            .collect::<String>()
    };
    [pick(Label::Yes), pick(Label::No), pick(Label::Maybe)]
}

#[test]
fn woda_2015_worked_example() {
    let (g, r) = woda();
    let rec = Utl::default().recover(&g, &r).unwrap();
    assert_eq!(
        split(&g, &rec.labels),
        ["abcij".to_string(), "fgk".to_string(), "deh".to_string()]
    );
    assert!(rec.weakened.is_empty());
    assert!(rec.undecided.is_empty());
}

#[test]
fn woda_2015_worked_example_oracles_agree() {
    let (g, r) = woda();
    let exact = oracle::recover(&g, &r).unwrap();
    assert_eq!(
        split(&g, &exact),
        ["abcij".to_string(), "fgk".to_string(), "deh".to_string()]
    );
    let by_paths = oracle::recover_by_paths(&g, &r, 16).unwrap();
    assert_eq!(by_paths, exact);
}
