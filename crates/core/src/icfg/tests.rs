use super::*;

fn node(b: &mut IcfgBuilder, id: &str, kind: NodeKind, f: FuncId) -> NodeId {
    b.add_node(NodeSpec {
        ext_id: id,
        kind,
        func: f,
        label: id,
        lines: &[1],
    })
    .unwrap()
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
