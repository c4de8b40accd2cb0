//! The mapping rules, one hand-written module each (tests/data/*.ll; each
//! file's header comment draws the expected graph).

use postmortem_core::{EdgeKind, Icfg, NodeId, NodeKind};
use postmortem_formats::pmcfg;
use postmortem_llvm::{load_path, Loaded};
use std::path::{Path, PathBuf};

mod common;
use common::{tool, TempDir};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn load(name: &str) -> Loaded {
    load_path(&data(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn id(g: &Icfg, ext: &str) -> NodeId {
    g.lookup(ext).unwrap_or_else(|| panic!("no node {ext}"))
}

/// Successors of a node as (id, kind), sorted.
fn succs(g: &Icfg, ext: &str) -> Vec<(String, EdgeKind)> {
    let mut v: Vec<_> = g
        .succs(id(g, ext))
        .map(|(n, k)| (g.ext_id(n).to_string(), k))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn local(ids: &[&str]) -> Vec<(String, EdgeKind)> {
    ids.iter()
        .map(|s| (s.to_string(), EdgeKind::Local))
        .collect()
}

fn call(ids: &[&str]) -> Vec<(String, EdgeKind)> {
    ids.iter()
        .map(|s| (s.to_string(), EdgeKind::Call))
        .collect()
}

fn return_sites(g: &Icfg, ext: &str) -> Vec<String> {
    let mut v: Vec<_> = g
        .return_sites(id(g, ext))
        .map(|n| g.ext_id(n).to_string())
        .collect();
    v.sort();
    v
}

fn string_args(g: &Icfg, ext: &str) -> Vec<String> {
    g.call_note(id(g, ext))
        .map(|c| c.string_args.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default()
}

fn callee_names(g: &Icfg, ext: &str) -> Vec<String> {
    g.call_note(id(g, ext))
        .map(|c| c.external_callees.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn a_call_is_its_own_node_followed_by_its_return_site() {
    let g = load("calls.ll").icfg;
    assert_eq!(g.kind(id(&g, "main:4:3")), NodeKind::CallSite);
    assert_eq!(g.label(id(&g, "main:4:3")), "call f");
    // A call to a function of the program goes through the callee ...
    assert_eq!(succs(&g, "main:4:3"), call(&["f:entry"]));
    assert_eq!(return_sites(&g, "main:4:3"), ["main:4:10"]);
    // ... two calls on one line are two nodes, the second the return site
    // of the first ...
    assert_eq!(succs(&g, "main:4:10"), call(&["f:entry"]));
    assert_eq!(return_sites(&g, "main:4:10"), ["main:5:3"]);
    // ... and the callee's exit returns to both return sites.
    assert_eq!(
        succs(&g, "f:exit"),
        vec![
            ("main:4:10".into(), EdgeKind::Return),
            ("main:5:3".into(), EdgeKind::Return)
        ]
    );
    assert_eq!(g.num_call_sites(), 2);
}

#[test]
fn instructions_are_grouped_by_line_within_each_block_with_columns() {
    let g = load("calls.ll").icfg;
    // Instructions without a location (allocas) join the first group; the
    // whole of line 3 is one node, at the column of its first location.
    let n = id(&g, "main:3:7");
    assert_eq!(g.kind(n), NodeKind::Statement);
    assert_eq!(g.lines(n), &[3]);
    assert_eq!(g.column(n), Some(7));
    assert_eq!(succs(&g, "main:3:7"), local(&["main:4:3"]));
    // add, icmp, br of line 5 are one node ...
    assert_eq!(g.label(id(&g, "main:5:3")), "add icmp br");
    assert_eq!(succs(&g, "main:5:3"), local(&["main:5:3#2", "main:6:5"]));
    // ... but the phi of line 5 in another block is another node; the ret
    // of line 8 in that block is a third.
    assert_eq!(g.label(id(&g, "main:5:3#2")), "phi");
    assert_eq!(g.lines(id(&g, "main:5:3#2")), &[5]);
    assert_eq!(succs(&g, "main:5:3#2"), local(&["main:8:3"]));
    assert_eq!(succs(&g, "main:6:5"), local(&["main:7:3"]));
    assert_eq!(g.column(id(&g, "main:6:5")), Some(5));
    assert_eq!(succs(&g, "main:7:3"), local(&["main:5:3#2"]));
    assert_eq!(g.num_nodes(), 14);
}

#[test]
fn functions_have_entry_and_exit_nodes_and_their_file() {
    let g = load("calls.ll").icfg;
    let main = g.function_by_name("main").unwrap();
    let f = g.function(main);
    assert_eq!(f.entry, Some(id(&g, "main:entry")));
    assert_eq!(f.exit, Some(id(&g, "main:exit")));
    assert_eq!(g.file_path(f.file.unwrap()), "/src/calls.c");
    assert_eq!(g.start(), id(&g, "main:entry"));
    // Entry: the DISubprogram line; exit: the lines of the rets.
    assert_eq!(g.lines(id(&g, "main:entry")), &[2]);
    assert_eq!(g.lines(id(&g, "main:exit")), &[8]);
    assert_eq!(g.lines(id(&g, "f:entry")), &[11]);
    assert_eq!(succs(&g, "main:entry"), local(&["main:3:7"]));
    assert_eq!(succs(&g, "main:8:3"), local(&["main:exit"]));
    assert_eq!(succs(&g, "f:13:1"), local(&["f:exit"]));
    for n in g.nodes() {
        assert_eq!(g.file_path(g.file_of(n).unwrap()), "/src/calls.c");
    }
}

#[test]
fn intrinsics_are_not_call_sites() {
    let g = load("calls.ll").icfg;
    // llvm.dbg.declare is dropped, llvm.lifetime.start is an ordinary
    // instruction of the line-3 node.
    assert!(g.nodes().all(|n| !g.label(n).contains("llvm.")));
    assert_eq!(g.num_call_sites(), 2);
    assert!(g.function_by_name("llvm.lifetime.start.p0i8").is_none());
    assert_eq!(g.functions().len(), 2);
}

#[test]
fn string_arguments_are_recorded_on_in_program_calls_too() {
    let g = load("calls.ll").icfg;
    assert_eq!(string_args(&g, "main:4:3"), ["hello"]);
    assert!(g.call_note(id(&g, "main:4:10")).is_none());
}

#[test]
fn indirect_calls_go_to_every_compatible_address_taken_function() {
    let loaded = load("indirect.ll");
    let g = &loaded.icfg;
    // %f(i32) -> i32: a and b (same type), v (void return), va (variadic);
    // not two (two parameters), dbl (double), p (pointer), notaken (its
    // address is never taken).
    assert_eq!(
        succs(g, "main:0:0#4"),
        call(&["a:entry", "b:entry", "v:entry", "va:entry"])
    );
    assert_eq!(return_sites(g, "main:0:0#4"), ["main:0:0#5"]);
    // %g(i8*): p, and the address-taken declaration free (falls through).
    assert_eq!(
        succs(g, "main:0:0#6"),
        vec![
            ("main:0:0#7".into(), EdgeKind::Local),
            ("p:entry".into(), EdgeKind::Call)
        ]
    );
    assert_eq!(callee_names(g, "main:0:0#6"), ["free"]);
    // %h(float): nothing fits: a call to code outside the program, which
    // may call back any address-taken function (through the external
    // code function), and falls through.
    assert_eq!(
        succs(g, "main:0:0#8"),
        vec![
            ("<external>:entry".into(), EdgeKind::Call),
            ("main:0:0#9".into(), EdgeKind::Local)
        ]
    );
    let mut called_back: Vec<_> = g
        .succs(id(g, "<external>:dispatch"))
        .filter_map(|(n, _)| g.callees(n).next())
        .map(|f| g.function(f).name.to_string())
        .collect();
    called_back.sort();
    assert_eq!(
        called_back,
        ["a", "b", "cmp", "dbl", "p", "two", "v", "va"],
        "every address-taken function of the program"
    );
    assert_eq!(
        loaded.report.external_code_sites, 1,
        "only %h: qsort and free are known"
    );
    let r = &loaded.report;
    assert_eq!(
        (
            r.indirect_calls,
            r.indirect_resolved,
            r.indirect_unresolved,
            r.indirect_edges
        ),
        (3, 2, 1, 5)
    );
    assert_eq!(r.address_taken, 8, "a b v two dbl p va cmp");
    assert!(
        r.summary().contains("2 of 3 indirect calls resolved"),
        "{}",
        r.summary()
    );
    // A direct call to notaken stays direct.
    assert_eq!(succs(g, "main:0:0#2"), call(&["notaken:entry"]));
}

#[test]
fn a_callback_passed_to_a_library_function_may_be_called() {
    let loaded = load("indirect.ll");
    let g = &loaded.icfg;
    assert_eq!(
        succs(g, "main:0:0#9"),
        vec![
            ("cmp:entry".into(), EdgeKind::Call),
            ("main:0:0#10".into(), EdgeKind::Local)
        ]
    );
    assert_eq!(callee_names(g, "main:0:0#9"), ["qsort"]);
    assert_eq!(loaded.report.callback_sites, 1);
}

#[test]
fn calls_to_declarations_flow_through_with_the_callee_name() {
    let g = load("external.ll").icfg;
    assert_eq!(succs(&g, "main:4:3"), local(&["main:5:3"]));
    assert_eq!(callee_names(&g, "main:4:3"), ["printf"]);
    assert_eq!(succs(&g, "main:5:3#2"), local(&["main:6:3"]));
    assert_eq!(callee_names(&g, "main:5:3#2"), ["fputs"]);
    assert_eq!(callee_names(&g, "main:6:3"), ["syslog"]);
    assert!(
        g.function_by_name("printf").is_none(),
        "declarations are not functions of the graph"
    );
}

#[test]
fn constant_string_arguments_are_recorded_on_every_call_site() {
    let g = load("external.ll").icfg;
    assert_eq!(string_args(&g, "main:4:3"), ["count: %d\n"]);
    assert_eq!(string_args(&g, "main:5:3#2"), ["oops\n"]);
    // An offset into a constant string; a non-constant global is not a
    // constant string.
    assert_eq!(string_args(&g, "main:6:3"), ["%s: %m"]);
    // In-program callee.
    assert_eq!(string_args(&g, "main:7:3"), ["oops\n"]);
    assert_eq!(succs(&g, "main:7:3"), call(&["log_it:entry"]));
}

#[test]
fn calls_that_never_return_and_unreachable_end_paths() {
    let loaded = load("external.ll");
    let g = &loaded.icfg;
    // abort: by name; fatal: declared noreturn only; exit: call-site
    // attribute; mine: a noreturn function of the program.
    for site in ["main:9:5", "main:11:5", "main:15:3"] {
        assert!(succs(g, site).is_empty(), "{site} must end its path");
    }
    assert_eq!(succs(g, "main:13:3"), call(&["mine:entry"]));
    assert!(return_sites(g, "main:13:3").is_empty());
    // `unreachable` has no successor; the br after fatal is never reached.
    assert!(succs(g, "main:9:5#2").is_empty());
    assert_eq!(g.preds(id(g, "main:11:5#2")).count(), 0);
    // The program's own `err` returns, though libc's err does not.
    assert_eq!(return_sites(g, "main:14:3"), ["main:15:3"]);
    assert_eq!(loaded.report.noreturn_calls, 5);
}

#[test]
fn invoke_keeps_both_the_normal_and_the_unwind_edge() {
    let g = load("invoke.ll").icfg;
    assert_eq!(g.kind(id(&g, "main:0:0")), NodeKind::CallSite);
    assert_eq!(succs(&g, "main:0:0"), call(&["work:entry"]));
    assert_eq!(return_sites(&g, "main:0:0"), ["main:0:0#2", "main:0:0#4"]);
    assert_eq!(
        succs(&g, "work:exit"),
        vec![
            ("main:0:0#2".into(), EdgeKind::Return),
            ("main:0:0#4".into(), EdgeKind::Return)
        ]
    );
    // __cxa_throw never returns: only the unwind edge stays.
    assert_eq!(succs(&g, "main:0:0#2"), local(&["main:0:0#4"]));
    assert_eq!(g.preds(id(&g, "main:0:0#3")).count(), 0);
    // resume leaves through the exit.
    assert_eq!(succs(&g, "main:0:0#6"), local(&["main:exit"]));
}

#[test]
fn no_debug_info_gives_position_free_ids_and_no_lines() {
    let loaded = load("invoke.ll");
    let g = &loaded.icfg;
    assert!(g
        .nodes()
        .all(|n| g.lines(n).is_empty() && g.column(n).is_none() && g.file_of(n).is_none()));
    assert_eq!(loaded.report.functions_without_debug_info, 2);
}

#[test]
fn bitcode_and_text_give_the_same_graph_for_every_fixture() {
    let tmp = TempDir::new("fixtures");
    let dir = &tmp.0;
    for name in ["calls", "indirect", "external", "invoke"] {
        let bc = dir.join(format!("{name}.bc"));
        let st = tool("llvm-as-14")
            .arg(data(&format!("{name}.ll")))
            .arg("-o")
            .arg(&bc)
            .status()
            .unwrap();
        assert!(st.success(), "llvm-as-14 {name}.ll failed");
        let from_text = load(&format!("{name}.ll"));
        let from_bc = load_path(&bc).unwrap();
        // encode() is deterministic: equal bytes, equal graphs. This also
        // checks that `fatal`'s noreturn declaration is read from bitcode.
        assert!(
            pmcfg::encode(&from_text.icfg) == pmcfg::encode(&from_bc.icfg),
            "{name}: .ll and .bc graphs differ"
        );
        assert_eq!(from_text.report, from_bc.report);
    }
}

#[test]
fn unreadable_and_malformed_input_is_one_line_error() {
    let e = load_path(Path::new("/nonexistent/x.ll"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/nonexistent/x.ll: cannot read"), "{e}");
    let e = postmortem_llvm::load_ir_str("define i32 @main() {\n  ret i32 %nope\n}\n", "bad.ll")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("bad.ll: not LLVM 14 IR or bitcode"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    // No body at all: no graph.
    let e = postmortem_llvm::load_ir_str("declare void @f()\n", "decl.ll")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no control-flow node"), "{e}");
}
