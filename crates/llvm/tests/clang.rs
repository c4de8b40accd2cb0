//! Real clang-14 output: a small C program compiled to `.ll` and to `.bc`
//! gives the same graph, and a two-file program linked with llvm-link-14
//! keeps each function's file. These tests fail (never skip) without
//! clang-14.

mod common;
use common::{tool, TempDir};
use postmortem_core::utl::Utl;
use postmortem_core::{EdgeKind, Icfg, Label, NodeId, Report, Solver};
use postmortem_formats::pmcfg;
use postmortem_llvm::load_path;
use std::path::Path;

const PROG: &str = r#"#include <stdio.h>
#include <stdlib.h>

static int add(int a, int b) { return a + b; }
static int sub(int a, int b) { return a - b; }
static int (*ops[])(int, int) = { add, sub };

static void usage(void) {
  fprintf(stderr, "usage: prog N\n");
  exit(2);
}

int main(int argc, char **argv) {
  if (argc < 2)
    usage();
  int n = atoi(argv[1]);
  int r = ops[n & 1](n, 2);
  printf("result %d\n", r);
  if (r > 100)
    abort();
  return 0;
}
"#;

fn compile(dir: &Path, src: &str, args: &[&str]) {
    let out = tool("clang-14")
        .current_dir(dir)
        .args(["-g", "-O0"])
        .args(args)
        .arg(src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "clang-14 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn id(g: &Icfg, ext: &str) -> NodeId {
    g.lookup(ext).unwrap_or_else(|| panic!("no node {ext}"))
}

fn site(g: &Icfg, label: &str) -> NodeId {
    g.nodes()
        .find(|&n| g.label(n) == label)
        .unwrap_or_else(|| panic!("no node labelled {label}"))
}

#[test]
fn ll_and_bc_from_clang_give_identical_graphs() {
    let tmp = TempDir::new("clang");
    let dir = &tmp.0;
    std::fs::write(dir.join("prog.c"), PROG).unwrap();
    compile(dir, "prog.c", &["-S", "-emit-llvm", "-o", "prog.ll"]);
    compile(dir, "prog.c", &["-c", "-emit-llvm", "-o", "prog.bc"]);
    let ll = load_path(&dir.join("prog.ll")).unwrap();
    let bc = load_path(&dir.join("prog.bc")).unwrap();
    assert!(
        pmcfg::encode(&ll.icfg) == pmcfg::encode(&bc.icfg),
        ".ll and .bc graphs differ"
    );
    assert_eq!(ll.report, bc.report);

    let g = &ll.icfg;
    let main = g.function(g.function_by_name("main").unwrap());
    assert_eq!(
        g.file_path(main.file.unwrap()),
        format!("{}/prog.c", dir.display())
    );
    assert_eq!(g.lines(main.entry.unwrap()), &[13]);
    // ops[n & 1](n, 2) reaches add and sub.
    let r = &ll.report;
    assert_eq!(
        (r.indirect_calls, r.indirect_resolved, r.indirect_edges),
        (1, 1, 2)
    );
    let ind = site(g, "call (indirect)");
    assert_eq!(g.lines(ind), &[17]);
    let mut callees: Vec<_> = g
        .callees(ind)
        .map(|f| g.function(f).name.to_string())
        .collect();
    callees.sort();
    assert_eq!(callees, ["add", "sub"]);
    // Format strings, library callees, paths that end.
    let printf = site(g, "call printf");
    assert_eq!(&*g.call_note(printf).unwrap().string_args[0], "result %d\n");
    assert_eq!(&*g.call_note(printf).unwrap().external_callees[0], "printf");
    assert_eq!(
        &*g.call_note(site(g, "call fprintf")).unwrap().string_args[0],
        "usage: prog N\n"
    );
    // exit and abort do not return, but may run code of the program
    // first (exit handlers, a SIGABRT handler): they call the external
    // code, which may call the address-taken add and sub.
    let external = id(g, "<external>:entry");
    for dead_end in ["call exit", "call abort"] {
        let s = site(g, dead_end);
        assert_eq!(g.succs(s).collect::<Vec<_>>(), [(external, EdgeKind::Call)]);
        assert_eq!(g.return_sites(s).count(), 0);
    }
    let mut called_back: Vec<_> = g
        .succs(id(g, "<external>:dispatch"))
        .filter_map(|(n, _)| g.callees(n).next())
        .map(|f| g.function(f).name.to_string())
        .collect();
    called_back.sort();
    assert_eq!(called_back, ["add", "sub"]);
    // usage() is not declared noreturn: its call returns.
    let usage = site(g, "call usage");
    assert_eq!(
        g.succs(usage).map(|e| e.1).collect::<Vec<_>>(),
        [EdgeKind::Call]
    );
    assert_eq!(g.return_sites(usage).count(), 1);
    assert!(g.nodes().all(|n| !g.label(n).contains("llvm.dbg")));

    // The UTL solver on an "anywhere" report: main's entry surely ran,
    // nothing is labelled without a reason to.
    let rec = Utl::default().recover(g, &Report::default()).unwrap();
    assert_eq!(rec.labels.len(), g.num_nodes());
    assert_eq!(rec.labels[g.start().index()], Label::Yes);
}

#[test]
fn a_linked_multi_file_program_keeps_each_functions_file() {
    let tmp = TempDir::new("link");
    let dir = &tmp.0;
    std::fs::write(
        dir.join("a.c"),
        "int helper(int);\nint main(void) {\n  return helper(1);\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("b.c"), "int helper(int x) {\n  return x + 1;\n}\n").unwrap();
    compile(dir, "a.c", &["-c", "-emit-llvm", "-o", "a.bc"]);
    compile(dir, "b.c", &["-c", "-emit-llvm", "-o", "b.bc"]);
    let st = tool("llvm-link-14")
        .current_dir(dir)
        .args(["a.bc", "b.bc", "-o", "prog.bc"])
        .status()
        .unwrap();
    assert!(st.success(), "llvm-link-14 failed");
    let g = load_path(&dir.join("prog.bc")).unwrap().icfg;
    let file = |name: &str| {
        let f = g.function(g.function_by_name(name).unwrap());
        g.file_path(f.file.unwrap()).to_string()
    };
    assert_eq!(file("main"), format!("{}/a.c", dir.display()));
    assert_eq!(file("helper"), format!("{}/b.c", dir.display()));
    let call = site(&g, "call helper");
    assert_eq!(
        g.callees(call)
            .map(|f| g.function(f).name.to_string())
            .collect::<Vec<_>>(),
        ["helper"]
    );
    assert_eq!(g.num_files(), 2);
}

const HIDDEN: &str = r#"#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static jmp_buf env;
static sigjmp_buf senv;

static void fail(void) { longjmp(env, 1); }
static void on_int(int sig) { siglongjmp(senv, sig); }
static void *run(void *arg) { return arg; }
static void *other(void *arg) { return arg; }
static void *(*table[])(void *) = {other};
static void not_a_handler(double x) { printf("%f\n", x); }
static void (*keep)(double) = not_a_handler;

static int spawn(void *(*routine)(void *)) {
  pthread_t t;
  return pthread_create(&t, 0, routine, 0);
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_int;
  sigaction(SIGINT, &sa, 0);
  spawn(run);
  table[0](0);
  if (setjmp(env) == 0)
    fail();
  if (sigsetjmp(senv, 1) == 0)
    puts("first");
  keep(1.0);
  return 0;
}
"#;

#[test]
fn nonlocal_jumps_and_asynchronous_functions_from_clang() {
    let tmp = TempDir::new("hidden");
    let dir = &tmp.0;
    std::fs::write(dir.join("h.c"), HIDDEN).unwrap();
    compile(dir, "h.c", &["-c", "-emit-llvm", "-o", "h.bc"]);
    let loaded = load_path(&dir.join("h.bc")).unwrap();
    let (g, r) = (&loaded.icfg, &loaded.report);
    // Two setjmp-like sites (setjmp is `_setjmp`, sigsetjmp `__sigsetjmp`
    // in glibc's headers), two longjmp-like sites: each jumps to the
    // resume point of both.
    assert_eq!(r.setjmp_sites, 2, "{}", r.summary());
    let resume_of = |label: &str| -> Vec<NodeId> {
        let s = site(g, label);
        g.succs(s)
            .filter(|&(_, k)| k == EdgeKind::Local)
            .map(|(n, _)| n)
            .collect()
    };
    let mut resumes = [resume_of("call _setjmp"), resume_of("call __sigsetjmp")].concat();
    resumes.sort();
    assert_eq!(resumes.len(), 2);
    for jump in ["call longjmp", "call siglongjmp"] {
        let mut to: Vec<NodeId> = g.succs(site(g, jump)).map(|(n, _)| n).collect();
        to.sort();
        assert_eq!(to, resumes, "{jump}");
    }
    assert_eq!(r.longjmp_edges, 4);
    // The handler reaches sigaction in a structure, the thread routine
    // pthread_create through spawn's parameter, traced to the one
    // function passed (not the address-taken `other` of the same type): both may
    // run asynchronously; a function of another type is not a handler.
    let mut asynchronous: Vec<_> = g
        .async_functions()
        .iter()
        .map(|&f| g.function(f).name.to_string())
        .collect();
    asynchronous.sort();
    assert_eq!(asynchronous, ["on_int", "run"]);
    let registered_at: Vec<_> = g
        .async_registrations()
        .iter()
        .map(|&(s, f)| (g.label(s).to_string(), g.function(f).name.to_string()))
        .collect();
    assert!(
        registered_at.contains(&("call pthread_create".into(), "run".into())),
        "{registered_at:?}"
    );
    // Every call here is to a known C library function: no external-code
    // function is needed.
    assert_eq!(r.external_code_sites, 0, "{}", r.summary());
    assert!(g.lookup("<external>:entry").is_none());
    // The cache keeps all of it.
    let back = pmcfg::decode(&pmcfg::encode(g)).unwrap();
    assert_eq!(back.async_functions(), g.async_functions());
    assert_eq!(back.num_edges(), g.num_edges());
}

/// A `case` label that falls through is an empty block whose branch clang
/// gives the location of the statement it emitted last: the previous
/// case's `break;`. With coverage flags, that block's flag check gets the
/// same location. Neither may put a node on the `break;` line, or the line
/// would be Yes whenever the later case ran. Checked on the plain and the
/// instrumented IR: every node on the `break;` line follows the previous
/// case's body.
#[test]
fn a_loop_left_in_its_first_iteration_keeps_its_for_line_off_no() {
    // clang gives `for(;;)` two branches: the entry branch, alone in its
    // block (a weak line: its location may be borrowed), and the back edge
    // at the end of the body. Left in its first iteration, only the entry
    // branch of that line ran: the line must not be No (SQLite's
    // `lookupName`, `for(;;){`, gdb hits it).
    const SRC: &str = r#"int g(int x) {
  int r = 0;
  if (x > 5)
    r = 1;
  for (;;) {
    r += x;
    if (r > 0) break;
    r = -r;
  }
  return r;
}
int main(int argc, char **argv) { (void)argv; return g(argc); }
"#;
    let dir = TempDir::new("forloop");
    std::fs::write(dir.0.join("forloop.c"), SRC).unwrap();
    for (out, extra) in [
        ("plain.ll", &[][..]),
        (
            "bb.ll",
            &["-fsanitize-coverage=bb,inline-bool-flag,pc-table"][..],
        ),
    ] {
        compile(
            &dir.0,
            "forloop.c",
            &[&["-S", "-emit-llvm", "-o", out][..], extra].concat(),
        );
        let g = load_path(&dir.0.join(out)).unwrap().icfg;
        let gf = g.function_by_name("g").unwrap();
        let on = |line: u32| -> Vec<NodeId> {
            g.nodes()
                .filter(|&n| g.func_of(n) == gf && g.lines(n).contains(&line))
                .collect()
        };
        // The crash at `return r;` (the `if` above the loop makes the loop's
        // entry branch alone in its block), entered from main; `r = -r;`
        // never ran.
        let main = g.function_by_name("main").unwrap();
        let call = g
            .nodes()
            .find(|&n| g.func_of(n) == main && g.succs(n).any(|(_, k)| k == EdgeKind::Call))
            .unwrap();
        let r = Report {
            stack: vec![postmortem_core::Frame {
                call: postmortem_core::NodeSet::one(call),
                entry: postmortem_core::NodeSet::one(g.function(gf).entry.unwrap()),
            }],
            crash: postmortem_core::NodeSet::new(on(10)),
            obs_no: on(8)
                .into_iter()
                .map(postmortem_core::NodeSet::one)
                .collect(),
            ..Report::default()
        };
        let rec = Utl::default().recover(&g, &r).unwrap();
        let lines = postmortem_core::summary::by_line(&g, &rec.labels);
        let line5 = lines[0].lines.get(&5).copied();
        assert_eq!(lines[0].lines.get(&8), Some(&Label::No), "{out}");
        assert!(
            matches!(line5, Some(Label::Maybe)),
            "{out}: the `for(;;)` line is {line5:?}"
        );
    }
}

#[test]
fn fall_through_case_labels_do_not_borrow_the_previous_break() {
    // As SQLite's parser: empty statements (a macro that expands to
    // nothing) between the labels make each label its own block.
    const SRC: &str = r#"#define T(X)
int f(int x) {
  int r = 0;
  switch (x) {
  case 1:
    r = 10;
    break;
  case 2: T(x == 2);
  case 3: T(x == 3);
  case 4:
    r = 20;
    break;
  }
  return r;
}
int main(int argc, char **argv) { (void)argv; return f(argc); }
"#;
    let dir = TempDir::new("cases");
    std::fs::write(dir.0.join("cases.c"), SRC).unwrap();
    for (out, extra) in [
        ("plain.ll", &[][..]),
        (
            "bb.ll",
            &["-fsanitize-coverage=bb,inline-bool-flag,pc-table"][..],
        ),
    ] {
        compile(
            &dir.0,
            "cases.c",
            &[&["-S", "-emit-llvm", "-o", out][..], extra].concat(),
        );
        let g = load_path(&dir.0.join(out)).unwrap().icfg;
        let on = |line: u32| -> Vec<NodeId> {
            g.nodes()
                .filter(|&n| {
                    g.func_of(n) == g.function_by_name("f").unwrap() && g.lines(n).contains(&line)
                })
                .collect()
        };
        let (body, brk) = (on(6), on(7));
        assert!(!body.is_empty() && !brk.is_empty(), "{out}");
        for &n in &brk {
            let ok = g
                .preds(n)
                .all(|(p, _)| body.contains(&p) || brk.contains(&p));
            assert!(
                ok,
                "{out}: {} on the `break;` line is entered from {:?}",
                g.ext_id(n),
                g.preds(n)
                    .map(|(p, _)| g.ext_id(p).to_string())
                    .collect::<Vec<_>>()
            );
        }
    }
}

/// LLVM's `tail` marker (a call that may be compiled as a jump, hiding
/// its caller's frame) is kept on the call site and through the cache;
/// `-O0` IR has none, so an `-O0` graph leaves no sibling-call gap.
#[test]
fn tail_markers_are_kept_and_absent_at_o0() {
    const SRC: &str = r#"int g;
__attribute__((noinline)) int leaf(int x) { return g + x; }
__attribute__((noinline)) int mid(int x) { g = 3; return leaf(x + 1); }
int main(int argc, char **argv) { return mid(argc) + 1; }
"#;
    let tmp = TempDir::new("tail");
    let dir = &tmp.0;
    std::fs::write(dir.join("t.c"), SRC).unwrap();
    compile(dir, "t.c", &["-S", "-emit-llvm", "-o", "o0.ll"]);
    compile(dir, "t.c", &["-O2", "-S", "-emit-llvm", "-o", "o2.ll"]);
    let o0 = load_path(&dir.join("o0.ll")).unwrap();
    assert!(o0.icfg.tail_calls().is_empty());
    assert_eq!(o0.report.tail_calls, 0);
    let o2 = load_path(&dir.join("o2.ll")).unwrap();
    let g = pmcfg::decode(&pmcfg::encode(&o2.icfg)).unwrap();
    let mid = g.function_by_name("mid").unwrap();
    let in_mid: Vec<NodeId> = g
        .tail_calls()
        .iter()
        .copied()
        .filter(|&s| g.func_of(s) == mid)
        .collect();
    assert_eq!(in_mid.len(), 1, "{:?}", g.tail_calls());
    assert_eq!(g.label(in_mid[0]), "call leaf");
    assert_eq!(o2.report.tail_calls, g.tail_calls().len());
}

/// Lines of code inlined into a function are recorded as such (and kept
/// through the cache): at `-O2` `main` holds `scale`'s body, whose lines
/// are `scale`'s, and the call's own line is `main`'s; at `-O0` nothing
/// is inlined.
#[test]
fn lines_of_inlined_code_are_known() {
    const SRC: &str = r#"static int scale(int x) {
    int y = x * 3;
    return y + 1;
}
int main(int argc, char **argv) {
    int r = scale(argc);
    return r;
}
"#;
    let tmp = TempDir::new("inlined-lines");
    let dir = &tmp.0;
    std::fs::write(dir.join("t.c"), SRC).unwrap();
    compile(dir, "t.c", &["-g", "-S", "-emit-llvm", "-o", "o0.ll"]);
    compile(
        dir,
        "t.c",
        &["-g", "-O2", "-S", "-emit-llvm", "-o", "o2.ll"],
    );
    let o0 = load_path(&dir.join("o0.ll")).unwrap().icfg;
    for f in 0..o0.functions().len() {
        assert_eq!(o0.inlined_lines(postmortem_core::FuncId::new(f)).count(), 0);
    }
    // The columns of each node's instructions, at -O0 only (optimised
    // code moves instructions away from their locations).
    let y = o0.lookup("scale:2:13").expect("the multiplication's node");
    let cols: Vec<u32> = o0.instruction_columns(y).collect();
    assert!(cols.contains(&13) && cols.contains(&9), "{cols:?}");
    let o2 = load_path(&dir.join("o2.ll")).unwrap().icfg;
    assert!(o2
        .nodes()
        .all(|n| o2.instruction_columns(n).next().is_none()));
    let g = pmcfg::decode(&pmcfg::encode(&o2)).unwrap();
    let main = g.function_by_name("main").unwrap();
    let inlined: Vec<u32> = g.inlined_lines(main).collect();
    assert!(!inlined.is_empty(), "nothing inlined into main");
    assert!(
        inlined.iter().all(|l| (2..=3).contains(l)),
        "main's inlined lines {inlined:?} are not scale's"
    );
    assert_eq!(inlined, o2.inlined_lines(main).collect::<Vec<_>>());
}

#[test]
fn a_throw_inside_libstdcxx_reaches_the_handler_of_a_caller() {
    // `v.at(i)` throws from libstdc++ (`std::__throw_out_of_range_fmt`, a
    // declaration) through `pick`, which has no handler and calls it with
    // a plain `call`, to main's `invoke`, whose landing pad catches: the
    // handler's line may have run before `after` (the C++ harness
    // program, nlohmann/json, lives on such paths), and `r += 100;` too.
    const SRC: &str = r#"#include <cstdio>
#include <stdexcept>
#include <vector>
static int pick(const std::vector<int> &v, int i) { return v.at(i); }
static void after(int r) { std::printf("%d\n", r); }
int main(int argc, char **) {
  std::vector<int> v{1, 2, 3};
  int r = 0;
  try {
    r = pick(v, argc + 5);
    r += 100;
  } catch (const std::out_of_range &e) {
    r = -1;
  }
  after(r);
  return 0;
}
"#;
    let dir = TempDir::new("cxxthrow");
    std::fs::write(dir.0.join("throw.cpp"), SRC).unwrap();
    let out = tool("clang++-14")
        .current_dir(&dir.0)
        .args(["-g", "-O0", "-fexceptions", "-S", "-emit-llvm"])
        .args(["throw.cpp", "-o", "throw.ll"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "clang++-14 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let g = load_path(&dir.0.join("throw.ll")).unwrap().icfg;
    let main = g.function_by_name("main").unwrap();
    let after = g
        .functions()
        .iter()
        .position(|f| f.name.contains("after"))
        .map(postmortem_core::FuncId::new)
        .unwrap();
    let on = |line: u32| -> Vec<NodeId> {
        g.nodes()
            .filter(|&n| g.func_of(n) == main && g.lines(n).contains(&line))
            .collect()
    };
    let call = on(15)
        .into_iter()
        .find(|&n| g.succs(n).any(|(_, k)| k == EdgeKind::Call))
        .expect("main calls after on line 15");
    let r = Report {
        stack: vec![postmortem_core::Frame {
            call: postmortem_core::NodeSet::one(call),
            entry: postmortem_core::NodeSet::one(g.function(after).entry.unwrap()),
        }],
        crash: postmortem_core::NodeSet::new(
            g.nodes().filter(|&n| g.func_of(n) == after).collect(),
        ),
        ..Report::default()
    };
    let rec = Utl::default().recover(&g, &r).unwrap();
    let file = postmortem_core::summary::by_line(&g, &rec.labels)
        .into_iter()
        .find(|f| g.file_path(f.file).ends_with("throw.cpp"))
        .unwrap();
    for line in [11, 13] {
        assert_eq!(
            file.lines.get(&line),
            Some(&Label::Maybe),
            "line {line}: {:?}",
            file.lines
        );
    }
    // The handler ran (an observation): still a consistent report.
    let mut seen = r.clone();
    seen.obs_yes = vec![postmortem_core::Trace {
        reliable: false,
        entries: vec![postmortem_core::NodeSet::new(on(13)).unwrap()],
    }];
    let rec = Utl::default().recover(&g, &seen).unwrap();
    let file = postmortem_core::summary::by_line(&g, &rec.labels)
        .into_iter()
        .find(|f| g.file_path(f.file).ends_with("throw.cpp"))
        .unwrap();
    assert_eq!(file.lines.get(&13), Some(&Label::Yes), "{:?}", file.lines);
}
