use super::names::library_name_keys;
use super::*;
use crate::icfg::{IcfgBuilder, NodeKind, NodeSpec};
use crate::report::{Frame, NodeSet};

/// `main` (m.c) calls `f` twice on line 10 (columns 3 and 12) and `g`
/// on line 11; `f` (lib/f.c) has two nodes on line 20 and calls
/// `strlen` (external) on line 21; `g` (m.c) has line 30; a static
/// `h` exists in both m.c and other.c... names are unique in the
/// builder, so `h` is one function here.
struct G {
    g: Icfg,
    c10a: NodeId,
    c10b: NodeId,
    c11: NodeId,
    f20a: NodeId,
    f20b: NodeId,
    f21: NodeId,
    fe: NodeId,
    ge: NodeId,
    g30: NodeId,
}

fn graph() -> G {
    let mut b = IcfgBuilder::new();
    let main = b.function("main");
    let f = b.function("f");
    let g = b.function("g");
    b.set_function_file(main, "/home/me/proj/src/m.c");
    b.set_function_file(f, "/home/me/proj/lib/f.c");
    b.set_function_file(g, "/home/me/proj/src/m.c");
    let add = |b: &mut IcfgBuilder, id: &str, kind: NodeKind, func: FuncId, lines: &[u32]| {
        b.add_node(NodeSpec {
            ext_id: id,
            kind,
            func,
            label: id,
            lines,
        })
        .unwrap()
    };
    let me = add(&mut b, "me", NodeKind::Entry, main, &[9]);
    let c10a = add(&mut b, "c10a", NodeKind::CallSite, main, &[10]);
    let s10 = add(&mut b, "s10", NodeKind::Statement, main, &[10]);
    let c10b = add(&mut b, "c10b", NodeKind::CallSite, main, &[10]);
    let c11 = add(&mut b, "c11", NodeKind::CallSite, main, &[11]);
    let mx = add(&mut b, "mx", NodeKind::Exit, main, &[12]);
    let fe = add(&mut b, "fe", NodeKind::Entry, f, &[19]);
    let f20a = add(&mut b, "f20a", NodeKind::Statement, f, &[20]);
    let f20b = add(&mut b, "f20b", NodeKind::Statement, f, &[20]);
    let f21 = add(&mut b, "f21", NodeKind::CallSite, f, &[21]);
    let fx = add(&mut b, "fx", NodeKind::Exit, f, &[22]);
    let ge = add(&mut b, "ge", NodeKind::Entry, g, &[29]);
    let g30 = add(&mut b, "g30", NodeKind::Statement, g, &[30]);
    let gx = add(&mut b, "gx", NodeKind::Exit, g, &[31]);
    for (a, c) in [
        (me, c10a),
        (c10a, s10),
        (s10, c10b),
        (c10b, c11),
        (c11, mx),
        (fe, f20a),
        (f20a, f20b),
        (f20b, f21),
        (f21, fx),
        (ge, g30),
        (g30, gx),
    ] {
        b.add_flow_edge(a, c);
    }
    b.add_call_edge(c10a, fe);
    b.add_call_edge(c10b, fe);
    b.add_call_edge(c11, ge);
    b.set_column(c10a, 3);
    b.set_column(c10b, 12);
    // The instructions' columns of line 20's two statements.
    b.add_instruction_column(f20a, 3);
    b.add_instruction_column(f20a, 9);
    b.add_instruction_column(f20b, 5);
    b.add_external_callee(f21);
    b.add_external_callee_name(f21, "strlen");
    let g = b.build().unwrap();
    G {
        g,
        c10a,
        c10b,
        c11,
        f20a,
        f20b,
        f21,
        fe,
        ge,
        g30,
    }
}

fn frame(
    function: Option<&str>,
    file: Option<&str>,
    line: Option<u32>,
    column: Option<u32>,
) -> SourceFrame {
    SourceFrame {
        function: function.map(str::to_string),
        file: file.map(str::to_string),
        line,
        column,
        label: SourceFrame::describe("frame", function, file, line, column),
        ..SourceFrame::default()
    }
}

fn set(v: &[NodeId]) -> NodeSet {
    NodeSet::new(v.to_vec()).unwrap()
}

#[test]
fn paths_match_by_component_suffix() {
    assert!(same_file("src/m.c", "/home/me/proj/src/m.c"));
    assert!(same_file("/home/me/proj/src/m.c", "m.c"));
    assert!(same_file("./src/./m.c", "/x/src/m.c"));
    assert!(same_file("../src/m.c", "/x/src/m.c"));
    assert!(same_file("a/b/../m.c", "a/m.c"));
    assert!(!same_file("rc/m.c", "/x/src/m.c"));
    assert!(!same_file("src/m.c", "/x/lib/m.c"));
    assert!(!same_file("", "m.c"));
    assert!(same_file("C:\\proj\\src\\m.c", "src/m.c"));
}

#[test]
fn path_map_rewrites_the_longest_prefix_at_a_component_boundary() {
    let mut m = PathMap::new();
    m.push_spec("/build=/home/me/proj").unwrap();
    m.push_spec("/build/gen=/tmp/gen/").unwrap();
    assert_eq!(m.apply("/build/src/a.c"), "/home/me/proj/src/a.c");
    assert_eq!(m.apply("/build/gen/x.c"), "/tmp/gen/x.c");
    assert_eq!(m.apply("/builds/a.c"), "/builds/a.c");
    assert_eq!(m.apply("/build"), "/home/me/proj");
    assert!(m.push_spec("nothing").is_err());
    assert_eq!(
        m.push_spec("=x").unwrap_err().to_string(),
        "path map `=x` is not of the form FROM=TO (with a non-empty FROM)"
    );
    let mut strip = PathMap::new();
    strip.push_spec("/build/=").unwrap();
    assert_eq!(strip.apply("/build/src/a.c"), "src/a.c");
}

#[test]
fn name_keys_strip_parameters_qualifiers_and_rust_hashes() {
    assert_eq!(
        name_keys("ns::f(int, char*) const"),
        vec!["ns::f(int, char*) const", "ns::f"]
    );
    assert_eq!(name_keys("f"), vec!["f"]);
    assert_eq!(
        name_keys("(anonymous namespace)::g"),
        vec!["(anonymous namespace)::g"]
    );
    assert_eq!(
        name_keys("S::operator()(int)"),
        vec!["S::operator()(int)", "S::operator()"]
    );
    assert_eq!(
        name_keys("app::main::h0123456789abcdef"),
        vec!["app::main::h0123456789abcdef", "app::main"]
    );
    assert!(name_keys("  ").is_empty());
    // A template function's demangled name starts with its return type,
    // which debuggers leave out (json.hpp's frames in the C++ harness).
    assert_eq!(
        name_keys("void ns::S<(ns::k)3>::f<std::map<int, int> >(int&&)"),
        vec![
            "void ns::S<(ns::k)3>::f<std::map<int, int> >(int&&)",
            "void ns::S<(ns::k)3>::f<std::map<int, int> >",
            "ns::S<(ns::k)3>::f<std::map<int, int> >"
        ]
    );
    assert_eq!(
        name_keys("unsigned long f<char const (&) [4]>(int)"),
        vec![
            "unsigned long f<char const (&) [4]>(int)",
            "unsigned long f<char const (&) [4]>",
            "f<char const (&) [4]>"
        ]
    );
    assert_eq!(
        name_keys("bool ns::operator< <int>(int, int)"),
        vec![
            "bool ns::operator< <int>(int, int)",
            "bool ns::operator< <int>",
            "ns::operator< <int>"
        ]
    );
    // Not a template: nothing to strip.
    assert_eq!(
        name_keys("ns::S::operator int() const"),
        vec!["ns::S::operator int() const", "ns::S::operator int"]
    );
    assert_eq!(library_name_keys("__GI_raise"), vec!["__GI_raise", "raise"]);
    assert_eq!(
        library_name_keys("__strlen_avx2"),
        vec!["__strlen_avx2", "__strlen", "strlen_avx2", "strlen"]
    );
    assert_eq!(
        library_name_keys("__interceptor_strlen"),
        vec!["__interceptor_strlen", "strlen"]
    );
    assert_eq!(
        library_name_keys("__GI___assert_fail"),
        vec!["__GI___assert_fail", "__assert_fail", "assert_fail"]
    );
}

#[test]
fn a_simple_stack_maps_to_call_entry_frames_and_a_crash_line() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    let frames = [
        frame(Some("g"), Some("src/m.c"), Some(30), None),
        frame(Some("main"), Some("m.c"), Some(11), None),
    ];
    let l = loc.locate_stack(&frames);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
    assert_eq!(l.report.crash, Some(NodeSet::one(t.g30)));
    assert_eq!(
        l.report.stack,
        vec![Frame {
            call: NodeSet::one(t.c11),
            entry: NodeSet::one(t.ge)
        }]
    );
}

#[test]
fn several_nodes_on_the_crash_line_make_an_ambiguous_crash_set() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    let l = loc.locate_stack(&[frame(Some("f"), Some("f.c"), Some(20), Some(7))]);
    assert_eq!(l.report.crash, Some(set(&[t.f20a, t.f20b])));
}

/// A core's crash pc names its column: the crash is in the node with an
/// instruction there; a column no node has (or none) leaves them all.
#[test]
fn the_crash_column_picks_the_node_with_an_instruction_there() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    let at = |col| {
        loc.locate_stack(&[frame(Some("f"), Some("f.c"), Some(20), col)])
            .report
            .crash
    };
    assert_eq!(at(Some(9)), Some(NodeSet::one(t.f20a)));
    assert_eq!(at(Some(5)), Some(NodeSet::one(t.f20b)));
    assert_eq!(at(Some(7)), Some(set(&[t.f20a, t.f20b])));
    assert_eq!(at(None), Some(set(&[t.f20a, t.f20b])));
}

#[test]
fn columns_pick_one_call_site_and_are_ignored_when_none_matches() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    let at = |col| {
        loc.locate_stack(&[
            frame(Some("f"), None, Some(20), None),
            frame(Some("main"), Some("m.c"), Some(10), col),
        ])
        .report
        .stack[0]
            .call
            .clone()
    };
    assert_eq!(at(Some(12)), NodeSet::one(t.c10b));
    assert_eq!(at(Some(3)), NodeSet::one(t.c10a));
    assert_eq!(at(Some(99)), set(&[t.c10a, t.c10b]));
    assert_eq!(at(None), set(&[t.c10a, t.c10b]));
}

#[test]
fn path_map_applies_before_matching() {
    let t = graph();
    // A relative path matches by suffix...
    let fr = frame(None, Some("src/m.c"), Some(30), None);
    let plain = Locator::new(&t.g, PathMap::new());
    assert_eq!(
        plain.locate_stack(std::slice::from_ref(&fr)).report.crash,
        Some(NodeSet::one(t.g30))
    );
    // ...but two absolute paths under different roots (the backtrace
    // was taken on a build machine under /build) need the map.
    let fr = frame(None, Some("/build/sources/m.c"), Some(30), None);
    let l = plain.locate_stack(std::slice::from_ref(&fr));
    assert_eq!(l.report.crash, None);
    let mut m = PathMap::new();
    m.push("/build/sources", "/home/me/proj/src");
    let mapped = Locator::new(&t.g, m);
    assert_eq!(
        mapped.locate_stack(&[fr]).report.crash,
        Some(NodeSet::one(t.g30))
    );
}

#[test]
fn a_library_crash_is_placed_at_the_calling_site() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    let mut strlen = frame(Some("__strlen_avx2"), None, None, None);
    strlen.library = true;
    let frames = [
        strlen,
        frame(Some("f"), Some("lib/f.c"), Some(21), None),
        frame(Some("main"), None, Some(10), Some(12)),
    ];
    let l = loc.locate_stack(&frames);
    assert_eq!(l.report.crash, Some(NodeSet::one(t.f21)));
    assert_eq!(
        l.report.stack,
        vec![Frame {
            call: NodeSet::one(t.c10b),
            entry: NodeSet::one(t.fe)
        }]
    );
    assert_eq!(l.warnings.len(), 1);
    assert_eq!(l.warnings[0].problem, Problem::NotInProgram);
    assert!(matches!(l.warnings[0].action, Action::CrashAtCaller { .. }));
    // A runtime frame (abort) is silent; without a note naming it the
    // crash is the whole line.
    let mut abort = frame(Some("abort"), None, None, None);
    abort.runtime = true;
    let l = loc.locate_stack(&[abort, frame(Some("f"), None, Some(20), None)]);
    assert!(l.warnings.is_empty());
    assert_eq!(l.report.crash, Some(set(&[t.f20a, t.f20b])));
}

#[test]
fn an_unmatched_middle_frame_drops_the_frames_into_and_out_of_it() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    // main -> qsort (library) -> g: the calls into and out of qsort go.
    let frames = [
        frame(Some("g"), None, Some(30), None),
        frame(Some("qsort"), Some("msort.c"), Some(297), None),
        frame(Some("main"), Some("m.c"), Some(11), None),
    ];
    let l = loc.locate_stack(&frames);
    assert_eq!(l.report.crash, Some(NodeSet::one(t.g30)));
    assert!(l.report.stack.is_empty());
    assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
    assert_eq!(l.warnings[0].problem, Problem::NotInProgram);
    assert_eq!(l.warnings[0].action, Action::FramesDropped { count: 2 });
    assert!(
        l.warnings[0].to_string().contains("qsort"),
        "{}",
        l.warnings[0]
    );
    // The surviving frames stay a subsequence of the full stack.
    let full = loc.locate_stack(&[frames[0].clone(), frames[2].clone()]);
    assert_eq!(full.report.stack.len(), 1);
}

#[test]
fn an_outer_unknown_frame_drops_one_frame_and_keeps_the_inner_ones() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    let frames = [
        frame(Some("f"), None, Some(20), None),
        frame(Some("main"), None, Some(10), Some(3)),
        frame(Some("mystery_outer"), Some("nowhere.c"), Some(5), None),
    ];
    let l = loc.locate_stack(&frames);
    assert_eq!(
        l.report.stack,
        vec![Frame {
            call: NodeSet::one(t.c10a),
            entry: NodeSet::one(t.fe)
        }]
    );
    assert_eq!(l.warnings.len(), 1);
    assert_eq!(l.warnings[0].action, Action::FramesDropped { count: 1 });
}

#[test]
fn a_line_without_nodes_widens_to_the_function() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    let l = loc.locate_stack(&[frame(Some("g"), None, Some(99), None)]);
    assert_eq!(l.report.crash.as_ref().unwrap().nodes().len(), 3);
    assert_eq!(l.warnings[0].problem, Problem::NoNodeOnLine(99));
    // As a caller: any call site of main that may call f.
    let l = loc.locate_stack(&[
        frame(Some("f"), None, Some(20), None),
        frame(Some("main"), None, Some(99), None),
    ]);
    assert_eq!(l.report.stack[0].call, set(&[t.c10a, t.c10b]));
    assert_eq!(
        l.warnings[0].action,
        Action::CallAnywhereInFunction { count: 2 }
    );
}

#[test]
fn an_unplaceable_innermost_frame_leaves_the_crash_open() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    let l = loc.locate_stack(&[
        frame(None, None, None, None),
        frame(Some("main"), None, Some(11), None),
    ]);
    assert_eq!(l.report.crash, None);
    assert_eq!(l.warnings[0].action, Action::CrashUnconstrained);
    assert!(l.report.stack.is_empty());
    let l = loc.locate_stack(&[]);
    assert_eq!(l, Located::default());
}

#[test]
fn callee_edges_narrow_the_call_sites() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    // Line 10 has two calls of f: frames naming f keep the two f calls;
    // a frame naming g on line 10, where no site may call g, is one of
    // main's calls of g elsewhere (c11: see
    // a_line_whose_calls_cannot_call_the_frame_above_widens_to_the_functions_calls).
    let l = loc.locate_stack(&[
        frame(Some("f"), None, Some(20), None),
        frame(Some("main"), None, Some(10), None),
    ]);
    assert_eq!(l.report.stack[0].call, set(&[t.c10a, t.c10b]));
    let l = loc.locate_stack(&[
        frame(Some("g"), None, Some(30), None),
        frame(Some("main"), None, Some(10), None),
    ]);
    assert_eq!(l.report.stack[0].call, set(&[t.c11]));
}

#[test]
fn selectors() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    assert_eq!(
        loc.ran(&Selector::Function("f".into())).unwrap(),
        NodeSet::one(t.fe)
    );
    assert_eq!(
        loc.ran(&Selector::Line {
            file: "f.c".into(),
            line: 20
        })
        .unwrap(),
        set(&[t.f20a, t.f20b])
    );
    assert_eq!(
        loc.ran(&Selector::Call("f".into())).unwrap(),
        set(&[t.c10a, t.c10b])
    );
    assert_eq!(
        loc.ran(&Selector::Call("strlen".into())).unwrap(),
        NodeSet::one(t.f21)
    );
    assert_eq!(
        loc.not_ran(&Selector::Function("g".into())).unwrap(),
        vec![NodeSet::one(t.ge)]
    );
    assert_eq!(
        loc.not_ran(&Selector::Line {
            file: "lib/f.c".into(),
            line: 20
        })
        .unwrap(),
        vec![NodeSet::one(t.f20a), NodeSet::one(t.f20b)]
    );
    assert_eq!(
        loc.not_ran(&Selector::Call("g".into())).unwrap(),
        vec![NodeSet::one(t.c11)]
    );
    let w = loc.ran(&Selector::Function("nope".into())).unwrap_err();
    assert_eq!(w.problem, Problem::NoMatch);
    assert!(loc
        .not_ran(&Selector::Line {
            file: "m.c".into(),
            line: 500
        })
        .is_err());
}

#[test]
fn callee_aliases_narrow_a_library_crash() {
    let t = graph();
    let mut loc = Locator::new(&t.g, PathMap::new());
    let mut lib = frame(
        Some("core::panicking::panic_bounds_check"),
        None,
        None,
        None,
    );
    lib.runtime = true;
    let frames = [lib, frame(Some("f"), None, Some(21), None)];
    // Without an alias the note's `strlen` says nothing about this frame:
    // the whole line.
    assert_eq!(
        loc.locate_stack(&frames).report.crash,
        Some(NodeSet::one(t.f21))
    );
    let frames2 = [frames[0].clone(), frame(Some("f"), None, Some(20), None)];
    assert_eq!(
        loc.locate_stack(&frames2).report.crash,
        Some(set(&[t.f20a, t.f20b]))
    );
    loc.add_callee_alias(
        "strlen",
        "core::panicking::panic_bounds_check::h0123456789abcdef",
    );
    assert_eq!(
        loc.call_sites_of("core::panicking::panic_bounds_check"),
        vec![t.f21]
    );
    assert_eq!(loc.external_callee_names().count(), 3);
}

#[test]
fn aliases_find_mangled_functions() {
    let mut b = IcfgBuilder::new();
    let f = b.function("_Z3fooi");
    let e = b
        .add_node(NodeSpec {
            ext_id: "e",
            kind: NodeKind::Entry,
            func: f,
            label: "",
            lines: &[1],
        })
        .unwrap();
    let g = b.build().unwrap();
    let mut loc = Locator::new(&g, PathMap::new());
    assert!(loc.functions_named("foo(int)").is_empty());
    loc.add_alias(f, "foo(int)");
    assert_eq!(loc.functions_named("foo(int)"), vec![f]);
    assert_eq!(loc.functions_named("foo"), vec![f]);
    assert_eq!(
        loc.ran(&Selector::Function("foo".into())).unwrap(),
        NodeSet::one(e)
    );
}

/// sibling.c in small: `main` calls `leaf` and `mid` on line 10, `mid`
/// (line 20) calls `target` (`leaf` or `other`) and `leaf` has line 30.
/// Returns the graph, main's two call sites and the entries of leaf and
/// mid.
fn sibling_graph(tail: bool, target: &str) -> (Icfg, [NodeId; 2], [NodeId; 2]) {
    let mut b = IcfgBuilder::new();
    let main = b.function("main");
    let mid = b.function("mid");
    let leaf = b.function("leaf");
    let other = b.function("other");
    for f in [main, mid, leaf, other] {
        b.set_function_file(f, "s.c");
    }
    let add = |b: &mut IcfgBuilder, id: &str, kind: NodeKind, func: FuncId, lines: &[u32]| {
        b.add_node(NodeSpec {
            ext_id: id,
            kind,
            func,
            label: id,
            lines,
        })
        .unwrap()
    };
    let me = add(&mut b, "me", NodeKind::Entry, main, &[9]);
    let cl = add(&mut b, "cl", NodeKind::CallSite, main, &[10]);
    let cm = add(&mut b, "cm", NodeKind::CallSite, main, &[10]);
    let mx = add(&mut b, "mx", NodeKind::Exit, main, &[11]);
    let de = add(&mut b, "de", NodeKind::Entry, mid, &[19]);
    let dt = add(&mut b, "dt", NodeKind::CallSite, mid, &[20]);
    let dx = add(&mut b, "dx", NodeKind::Exit, mid, &[21]);
    let le = add(&mut b, "le", NodeKind::Entry, leaf, &[29]);
    let l30 = add(&mut b, "l30", NodeKind::Statement, leaf, &[30]);
    let lx = add(&mut b, "lx", NodeKind::Exit, leaf, &[31]);
    let oe = add(&mut b, "oe", NodeKind::Entry, other, &[39]);
    let ox = add(&mut b, "ox", NodeKind::Exit, other, &[40]);
    for (a, c) in [
        (me, cl),
        (cl, cm),
        (cm, mx),
        (de, dt),
        (dt, dx),
        (le, l30),
        (l30, lx),
        (oe, ox),
    ] {
        b.add_flow_edge(a, c);
    }
    b.add_call_edge(cl, le);
    b.add_call_edge(cm, de);
    b.add_call_edge(dt, if target == "leaf" { le } else { oe });
    if tail {
        b.mark_tail_call(dt);
        // Not a call site: ignored.
        b.mark_tail_call(l30);
    }
    let g = b.build().unwrap();
    (g, [cl, cm], [le, de])
}

#[test]
fn a_tail_call_that_may_reach_the_frame_above_leaves_a_gap() {
    let frames = [
        frame(Some("leaf"), Some("s.c"), Some(30), None),
        frame(Some("main"), Some("s.c"), Some(10), None),
    ];
    // Without tail markers (-O0): main's pending call is its call of leaf.
    let (g, [cl, cm], [le, de]) = sibling_graph(false, "leaf");
    assert!(g.tail_calls().is_empty());
    let l = Locator::new(&g, PathMap::new()).locate_stack(&frames);
    assert_eq!(
        l.report.stack,
        vec![Frame {
            call: set(&[cl]),
            entry: set(&[le])
        }]
    );
    assert!(l.report.stack_gaps.is_empty());
    // mid's call of leaf may be a jump: main's pending call may be its
    // call of mid, and frames may be missing after it.
    let (g, _, _) = sibling_graph(true, "leaf");
    assert_eq!(g.tail_calls().len(), 1, "only call sites are marked");
    let l = Locator::new(&g, PathMap::new()).locate_stack(&frames);
    assert_eq!(
        l.report.stack,
        vec![Frame {
            call: set(&[cl, cm]),
            entry: set(&[le, de])
        }]
    );
    assert_eq!(l.report.stack_gaps, vec![1]);
    // Only sibling calls left it: a gap of tail-marked calls.
    assert_eq!(l.report.sibling_gaps, vec![1]);
    // A core shows main's call is a direct call of leaf: no gap.
    let mut direct = frames.clone();
    direct[1].direct_call = true;
    let l = Locator::new(&g, PathMap::new()).locate_stack(&direct);
    assert_eq!(l.report.stack[0].call, set(&[cl]));
    assert!(l.report.stack_gaps.is_empty() && l.report.sibling_gaps.is_empty());
    // A frame dropped there too: a plain gap.
    let unplaceable = frame(None, None, None, None);
    let l = Locator::new(&g, PathMap::new()).locate_stack(&[
        frames[0].clone(),
        unplaceable,
        frames[1].clone(),
    ]);
    assert!(!l.report.stack_gaps.is_empty());
    assert!(l.report.sibling_gaps.is_empty(), "{:?}", l.report);
    // A tail call that cannot reach leaf hides no frame between them.
    let (g, _, _) = sibling_graph(true, "other");
    let l = Locator::new(&g, PathMap::new()).locate_stack(&frames);
    assert_eq!(l.report.stack[0].call, set(&[cl]));
    assert!(l.report.stack_gaps.is_empty());
}

#[test]
fn a_location_in_another_file_is_never_a_line_of_the_function() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    // `g` is in m.c: line 30 of f.c is not its line 30.
    let l = loc.locate_stack(&[frame(Some("g"), Some("lib/f.c"), Some(30), None)]);
    assert_eq!(l.report.crash.as_ref().unwrap().nodes().len(), 3);
    assert_eq!(l.warnings[0].problem, Problem::OtherFile("lib/f.c".into()));
    // A file of no graph function, of another name: the same.
    let l = loc.locate_stack(&[frame(Some("g"), Some("kv.c"), Some(30), None)]);
    assert_eq!(l.report.crash.as_ref().unwrap().nodes().len(), 3);
    assert_eq!(l.warnings[0].problem, Problem::OtherFile("kv.c".into()));
    // As a caller: any call site of main that may call g.
    let l = loc.locate_stack(&[
        frame(Some("g"), Some("m.c"), Some(30), None),
        frame(Some("main"), Some("kv.c"), Some(10), None),
    ]);
    assert_eq!(l.report.crash, Some(NodeSet::one(t.g30)));
    assert_eq!(l.report.stack[0].call, NodeSet::one(t.c11));
    assert_eq!(l.warnings[0].problem, Problem::OtherFile("kv.c".into()));
    // The same name in other folders is taken as the same file (a build
    // tree moved).
    let l = loc.locate_stack(&[frame(Some("g"), Some("/build/x/m.c"), Some(30), None)]);
    assert_eq!(l.report.crash, Some(NodeSet::one(t.g30)));
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
}

fn inlined(
    mut host: SourceFrame,
    chain: Vec<SourceFrame>,
    mut sites: Vec<SourceLoc>,
) -> SourceFrame {
    let inner = &chain[0];
    sites.push(SourceLoc {
        file: host.file.take(),
        line: host.line.take(),
        column: host.column.take(),
    });
    host.file = inner.file.clone();
    host.line = inner.line;
    host.column = inner.column;
    host.sites = sites;
    host.inlined = chain;
    host
}

#[test]
fn code_inlined_from_another_file_is_placed_at_its_site_in_the_function() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    // `f` (f.c) inlined into `main` on line 11, where the graph calls
    // only `g`: merged, and placed on line 11, not on a line 20 of m.c.
    let host = frame(Some("main"), Some("src/m.c"), Some(11), None);
    let f = frame(Some("f"), Some("lib/f.c"), Some(20), None);
    let l = loc.locate_stack(&[inlined(host, vec![f], Vec::new())]);
    assert_eq!(l.report.crash, Some(NodeSet::one(t.c11)));
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
}

#[test]
fn an_inlined_frame_the_graph_calls_is_a_frame_of_its_own() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    // `f` inlined into `main` at 10:3, where the graph calls it: the
    // crash is in `f`, called from c10a (merged, it would be placed at
    // main's line 10, before the call: f's code taken as not run).
    let host = frame(Some("main"), Some("src/m.c"), Some(10), Some(3));
    let f = frame(Some("f"), Some("lib/f.c"), Some(20), None);
    let outer = frame(Some("__libc_start_main"), None, None, None);
    let l = loc.locate_stack(&[inlined(host, vec![f], Vec::new()), outer]);
    assert_eq!(l.report.crash, Some(set(&[t.f20a, t.f20b])));
    assert_eq!(
        l.report.stack,
        vec![Frame {
            call: NodeSet::one(t.c10a),
            entry: NodeSet::one(t.fe)
        }]
    );
    // The restored frame has no physical frame of its own.
    assert_eq!(l.callee_frames, vec![None]);
    // A chain of two, both called in the graph: g inlined into f
    // inlined into main; f calls no g, so g stays merged into f.
    let host = frame(Some("main"), Some("src/m.c"), Some(10), Some(12));
    let f = frame(Some("f"), Some("lib/f.c"), Some(21), None);
    let g = frame(Some("g"), Some("src/m.c"), Some(30), None);
    let site = SourceLoc {
        file: f.file.clone(),
        line: f.line,
        column: None,
    };
    let l = loc.locate_stack(&[inlined(host, vec![g, f], vec![site])]);
    assert_eq!(l.report.stack[0].call, NodeSet::one(t.c10b));
    // g's location is in m.c, not f.c: f's own site, line 21.
    assert_eq!(l.report.crash, Some(NodeSet::one(t.f21)));
}

#[test]
fn a_line_whose_calls_cannot_call_the_frame_above_widens_to_the_functions_calls() {
    let t = graph();
    let loc = Locator::new(&t.g, PathMap::new());
    // main's line 11 calls only g; the frame above is f: the call that
    // made it is one of main's calls of f (an optimiser's merged call
    // site takes any line), never c11.
    let l = loc.locate_stack(&[
        frame(Some("f"), Some("f.c"), Some(20), None),
        frame(Some("main"), Some("m.c"), Some(11), None),
    ]);
    assert_eq!(l.report.stack[0].call, set(&[t.c10a, t.c10b]));
    assert_eq!(l.warnings[0].problem, Problem::NoCallOfCalleeOnLine(11));
    assert_eq!(
        l.warnings[0].action,
        Action::CallAnywhereInFunction { count: 2 }
    );
}

/// A crash on a line no statement has (optimised code hoisted its load
/// into another line's block, where it is a weak line): only a node whose
/// code is all borrowed from that line is the crash (the branch of
/// `for (;;)`); a node with a line of its own would claim that line ran,
/// and the crash may come before it (bzip2's `BZ2_blockSort` at `-O2`:
/// the crash on line 1035, whose load sits in the node of line 1044).
#[test]
fn a_crash_on_a_borrowed_line_is_never_a_node_with_lines_of_its_own() {
    let build = |own_line: bool| {
        let mut b = IcfgBuilder::new();
        let f = b.function("f");
        b.set_function_file(f, "a.c");
        let add = |b: &mut IcfgBuilder, id: &str, kind: NodeKind, lines: &[u32]| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind,
                func: f,
                label: id,
                lines,
            })
            .unwrap()
        };
        let e = add(&mut b, "e", NodeKind::Entry, &[1]);
        let s = add(
            &mut b,
            "s",
            NodeKind::Statement,
            if own_line { &[12] } else { &[] },
        );
        let t = add(&mut b, "t", NodeKind::Statement, &[13]);
        let x = add(&mut b, "x", NodeKind::Exit, &[14]);
        b.add_weak_line(s, 10);
        for (a, c) in [(e, s), (s, t), (t, x)] {
            b.add_flow_edge(a, c);
        }
        (b.build().unwrap(), s)
    };
    let (g, s) = build(false);
    let loc = Locator::new(&g, PathMap::new());
    let l = loc.locate_stack(&[frame(Some("f"), Some("a.c"), Some(10), None)]);
    assert_eq!(l.report.crash, Some(NodeSet::one(s)));
    let (g, _) = build(true);
    let loc = Locator::new(&g, PathMap::new());
    let l = loc.locate_stack(&[frame(Some("f"), Some("a.c"), Some(10), None)]);
    assert_eq!(l.report.crash.as_ref().unwrap().nodes().len(), 4);
    assert_eq!(l.warnings[0].problem, Problem::NoNodeOnLine(10));
}
