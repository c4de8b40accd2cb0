use super::*;

fn node(b: &mut IcfgBuilder, id: &str, kind: NodeKind, f: FuncId) -> NodeId {
    b.test_node(id, kind, f, 1)
}

#[test]
fn calls_go_through_the_callee_and_return_to_every_return_site() {
    let mut b = IcfgBuilder::new();
    let main = b.function("main");
    let f = b.function("f");
    let me = node(&mut b, "me", NodeKind::Entry, main);
    let c1 = node(&mut b, "c1", NodeKind::CallSite, main);
    let r1 = node(&mut b, "r1", NodeKind::Statement, main);
    let c2 = node(&mut b, "c2", NodeKind::CallSite, main);
    let mx = node(&mut b, "mx", NodeKind::Exit, main);
    let fe = node(&mut b, "fe", NodeKind::Entry, f);
    let fx = node(&mut b, "fx", NodeKind::Exit, f);
    let lib = node(&mut b, "lib", NodeKind::CallSite, main);
    b.add_flow_edge(me, c1);
    b.add_flow_edge(c1, r1);
    b.add_flow_edge(r1, c2);
    b.add_flow_edge(c2, lib);
    b.add_flow_edge(lib, mx);
    b.add_flow_edge(fe, fx);
    b.add_call_edge(c1, fe);
    b.add_call_edge(c2, fe);
    let g = b.build().unwrap();
    assert_eq!(g.start(), me);
    let s: Vec<_> = g.succs(c1).collect();
    assert_eq!(s, vec![(fe, EdgeKind::Call)]);
    let mut s: Vec<_> = g.succs(fx).collect();
    s.sort_by_key(|x| x.0);
    assert_eq!(s, vec![(r1, EdgeKind::Return), (lib, EdgeKind::Return)]);
    assert_eq!(
        g.succs(lib).collect::<Vec<_>>(),
        vec![(mx, EdgeKind::Local)]
    );
    assert_eq!(g.return_sites(c2).collect::<Vec<_>>(), vec![lib]);
    assert_eq!(g.lookup("r1"), Some(r1));
    assert_eq!(g.lookup("nope"), None);
    assert_eq!(
        g.preds(r1).collect::<Vec<_>>(),
        vec![(fx, EdgeKind::Return)]
    );
}

#[test]
fn start_falls_back_to_the_only_entry_and_errors_otherwise() {
    let mut b = IcfgBuilder::new();
    let f = b.function("f");
    let g = b.function("g");
    node(&mut b, "fe", NodeKind::Entry, f);
    node(&mut b, "ge", NodeKind::Entry, g);
    assert_eq!(b.build().unwrap_err(), BuildError::NoStart { entries: 2 });
    let mut b = IcfgBuilder::new();
    let f = b.function("f");
    let fe = node(&mut b, "fe", NodeKind::Entry, f);
    assert_eq!(b.build().unwrap().start(), fe);
}

#[test]
fn columns_and_call_notes_survive_the_build() {
    let mut b = IcfgBuilder::new();
    let main = b.function("main");
    let me = node(&mut b, "me", NodeKind::Entry, main);
    let c = node(&mut b, "c", NodeKind::CallSite, main);
    let mx = node(&mut b, "mx", NodeKind::Exit, main);
    b.add_flow_edge(me, c);
    b.add_flow_edge(c, mx);
    b.add_external_callee(c);
    b.add_external_callee_name(c, "printf");
    b.set_column(c, 7);
    b.add_string_arg(c, "Processed %d\n");
    let g = b.build().unwrap();
    assert_eq!(g.column(c), Some(7));
    assert_eq!(g.column(me), None);
    let note = g.call_note(c).unwrap();
    assert_eq!(&*note.external_callees[0], "printf");
    assert_eq!(&*note.string_args[0], "Processed %d\n");
    assert!(g.call_note(me).is_none());
    assert_eq!(g.function_by_name("main"), Some(main));
    assert_eq!(g.callees(c).count(), 0);
}

#[test]
fn duplicate_ids_are_rejected() {
    let mut b = IcfgBuilder::new();
    let f = b.function("f");
    node(&mut b, "x", NodeKind::Statement, f);
    let e = b.add_node(NodeSpec {
        ext_id: "x",
        kind: NodeKind::Statement,
        func: f,
        label: "",
        lines: &[],
    });
    assert_eq!(e.unwrap_err(), BuildError::DuplicateNode("x".into()));
}

/// One node, `main`'s entry, as raw parts.
fn one_node_parts() -> IcfgParts {
    IcfgParts {
        kinds: vec![NodeKind::Entry],
        funcs_of: vec![0],
        ids: StrTable::new("a".into(), vec![1]).unwrap(),
        labels: StrTable::new("A".into(), vec![1]).unwrap(),
        line_ends: vec![0],
        functions: vec![Function {
            name: "main".into(),
            file: None,
            entry: Some(NodeId::new(0)),
            exit: None,
        }],
        succ_offsets: vec![0, 0],
        return_offsets: vec![0, 0],
        ..IcfgParts::default()
    }
}

#[test]
fn from_parts_checks_every_index() {
    let g = Icfg::from_parts(one_node_parts()).unwrap();
    assert_eq!(g.lookup("a"), Some(NodeId::new(0)));
    assert_eq!(g.function_by_name("main"), Some(FuncId::new(0)));
    type Edit = fn(&mut IcfgParts);
    let bad: [(Edit, &str); 9] = [
        (|p| p.start = 1, "start node"),
        (|p| p.funcs_of = vec![1], "a node belongs to no function"),
        (
            |p| p.functions[0].entry = Some(NodeId::new(3)),
            "function entry or exit",
        ),
        (
            |p| p.functions[0].file = Some(FileId::new(0)),
            "function file",
        ),
        (
            |p| {
                p.succ_offsets = vec![0, 1];
                p.succ_targets = vec![5];
                p.succ_kinds = vec![EdgeKind::Local];
            },
            "successors",
        ),
        (|p| p.weak_lines = vec![(NodeId::new(2), 1)], "weak lines"),
        (|p| p.line_ends = vec![4], "line offsets"),
        (|p| p.tail_calls = vec![NodeId::new(1)], "tail calls"),
        // Node 0 is an entry, not a call site.
        (|p| p.tail_calls = vec![NodeId::new(0)], "tail calls"),
    ];
    for (edit, what) in bad {
        let mut p = one_node_parts();
        edit(&mut p);
        assert_eq!(Icfg::from_parts(p).unwrap_err(), PartsError(what));
    }
    assert!(StrTable::new("a".into(), vec![2]).is_none());
    assert!(
        StrTable::new("\u{e9}".into(), vec![1]).is_none(),
        "not a char boundary"
    );
}

/// The call graph: `main` calls `f` twice and `g` once, `f` calls `g`;
/// `g` jumps into `main` (a `Local` edge across functions), so it may
/// leave other than by returning. Callers and callees deduplicated; the
/// graph built once and shared.
#[test]
fn the_call_graph_of_functions() {
    let mut b = IcfgBuilder::new();
    let (main, f, g) = (b.function("main"), b.function("f"), b.function("g"));
    let me = node(&mut b, "me", NodeKind::Entry, main);
    let c1 = node(&mut b, "c1", NodeKind::CallSite, main);
    let c2 = node(&mut b, "c2", NodeKind::CallSite, main);
    let c3 = node(&mut b, "c3", NodeKind::CallSite, main);
    let land = node(&mut b, "land", NodeKind::Statement, main);
    let mx = node(&mut b, "mx", NodeKind::Exit, main);
    let fe = node(&mut b, "fe", NodeKind::Entry, f);
    let fc = node(&mut b, "fc", NodeKind::CallSite, f);
    let fx = node(&mut b, "fx", NodeKind::Exit, f);
    let ge = node(&mut b, "ge", NodeKind::Entry, g);
    let gx = node(&mut b, "gx", NodeKind::Exit, g);
    for (p, q) in [(me, c1), (c1, c2), (c2, c3), (c3, land), (land, mx)] {
        b.add_flow_edge(p, q);
    }
    b.add_flow_edge(fe, fc);
    b.add_flow_edge(fc, fx);
    b.add_flow_edge(ge, gx);
    b.add_flow_edge(ge, land);
    for (site, callee) in [(c1, fe), (c2, fe), (c3, ge), (fc, ge)] {
        b.add_call_edge(site, callee);
    }
    let ig = b.build().unwrap();
    let cg = ig.call_graph();
    let idx = |f: FuncId| f.index() as u32;
    assert_eq!(cg.callees.succs(idx(main)), &[idx(f), idx(g)]);
    assert_eq!(cg.callees.succs(idx(f)), &[idx(g)]);
    assert_eq!(cg.callers.succs(idx(g)), &[idx(main), idx(f)]);
    assert!(cg.callers.succs(idx(main)).is_empty());
    assert_eq!(cg.leaves, vec![false, false, true]);
    assert!(cg.any_leaves);
    assert_eq!(cg.sccs.count(), 3);
    assert!(std::ptr::eq(cg, ig.call_graph()));
    // Each function's nodes, in node order, as a scan of every node gives.
    for f in [main, f, g] {
        let scan: Vec<NodeId> = ig.nodes().filter(|&v| ig.func_of(v) == f).collect();
        assert_eq!(ig.function_nodes(f), &scan[..]);
    }
    assert_eq!(ig.function_nodes(g), &[ge, gx]);
}
