//! Where stored and returned values came from (`flows.rs`, issue 36), on
//! clang-14's `-O0` code: a call's result stored to a local, a copy of a
//! global, a function's returns through clang's return slot (one per
//! `return`, with what it returns), and a single `return p;` as a copy.
//! Fails (never skips) without clang-14.

mod common;
use common::{tool, TempDir};
use postmortem_formats::vars::{Origin, VarMap, Written};
use postmortem_llvm::load_path;

const PROG: &str = r#"static int *head;
static int *find(int k) {
    int *e = head;
    if (k == 3)
        return e;
    if (k == 4)
        return (int *)8;
    return 0;
}
static int missing(int k) {
    if (k)
        return 1;
}
int *get(int k) {
    int *p = find(k);
    int m = missing(k);
    return m ? p : 0;
}
int *copy(int k) {
    int *p = find(k);
    return p;
}
struct inner { int k; int *p; };
struct outer { long x; struct inner in; };
void set(struct outer *o) {
    o->in.p = 0;
}
int get_p(struct inner *i) {
    return *i->p;
}
void step(struct inner *i) {
    i->p++;
}
int main(int argc, char **argv) {
    static int one;
    head = &one;
    return get(argc) != 0 && copy(argc) != 0;
}
"#;

fn map() -> (postmortem_core::Icfg, VarMap) {
    map_of("flows", PROG)
}

/// The graph and variable map of the program `src`, built in a scratch
/// directory named after `name`.
fn map_of(name: &str, src: &str) -> (postmortem_core::Icfg, VarMap) {
    let dir = TempDir::new(name);
    std::fs::write(dir.0.join("prog.c"), src).unwrap();
    let out = tool("clang-14")
        .current_dir(&dir.0)
        .args(["-g", "-O0", "-emit-llvm", "-c", "prog.c", "-o", "prog.bc"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let loaded = load_path(&dir.0.join("prog.bc")).unwrap();
    (loaded.icfg, loaded.vars.expect("a variable map"))
}

/// The line of `g`'s node `n`.
fn line(g: &postmortem_core::Icfg, n: u32) -> u32 {
    g.lines(postmortem_core::NodeId::new(n as usize))[0]
}

fn line_of(text: &str) -> u32 {
    1 + PROG.lines().position(|l| l.contains(text)).unwrap() as u32
}

#[test]
fn stores_and_returns_say_where_their_values_came_from() {
    let (g, map) = map();
    let var = |f: &str, name: &str| {
        map.locals_of(f)
            .find(|(_, v, _)| v.name == name)
            .map(|(i, v, _)| (i, v.clone()))
            .unwrap_or_else(|| panic!("no {name} in {f}: {map:?}"))
    };
    let head = map
        .globals()
        .find(|(_, v, _)| v.name == "head")
        .map(|(i, _, _)| i as u32)
        .expect("head");
    // `int *e = head;`: a copy of head.
    let (e, ve) = var("find", "e");
    assert_eq!(ve.from.len(), 1, "{ve:?}");
    assert_eq!(ve.from[0].1, Origin::Copy(head));
    assert_eq!(line(&g, ve.from[0].0), line_of("int *e = head;"));
    // `int *p = find(k);`: find's result, in both callers.
    for f in ["get", "copy"] {
        let (_, p) = var(f, "p");
        assert_eq!(p.from.len(), 1, "{p:?}");
        assert_eq!(p.from[0].1, Origin::Call("find".into()));
    }
    // find's three returns, each at its `return` line.
    let mut returns: Vec<(u32, Written, Option<Origin>)> = map.returns["find"]
        .iter()
        .map(|r| (line(&g, r.node), r.written, r.from.clone()))
        .collect();
    returns.sort_by_key(|r| r.0);
    assert_eq!(
        returns,
        vec![
            (
                line_of("return e;"),
                Written::Unknown,
                Some(Origin::Copy(e as u32))
            ),
            (line_of("return (int *)8;"), Written::Const(8), None),
            (line_of("return 0;"), Written::Const(0), None),
        ]
    );
    // `return p;` alone: a copy of p at the `ret`.
    let (p, _) = var("copy", "p");
    let r = &map.returns["copy"];
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].from, Some(Origin::Copy(p as u32)));
    // A path that falls off the end of `missing` returns what the slot
    // held: an unknown return besides `return 1;`.
    let r = &map.returns["missing"];
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r.iter().any(|r| r.written == Written::Const(1)));
    assert!(r
        .iter()
        .any(|r| r.written == Written::Unknown && r.from.is_none()));
    // A parameter's value comes from the calls: `k` of `get` is its
    // argument 1, and `find(k)` passes a copy of it.
    let (k, vk) = var("get", "k");
    assert!(vk.from.iter().any(|f| f.1 == Origin::Arg(0)), "{vk:?}");
    let calls = &map.calls["find"];
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(
        calls
            .iter()
            .any(|c| c.args == vec![(Written::Unknown, Some(Origin::Copy(k as u32)))]),
        "{calls:?}"
    );
    let mut sites: Vec<u32> = calls.iter().map(|c| line(&g, c.site)).collect();
    sites.sort_unstable();
    let calls_at: Vec<u32> = PROG
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("int *p = find(k);"))
        .map(|(i, _)| i as u32 + 1)
        .collect();
    assert_eq!(sites, calls_at);
    // A return of a choice (`m ? p : 0`): one of a copy of `p` and a
    // value computed where the condition chose it (the constant).
    let (p, _) = var("get", "p");
    assert_eq!(
        map.returns["get"]
            .iter()
            .map(|r| r.from.clone())
            .collect::<Vec<_>>(),
        vec![Some(Origin::Either(vec![
            Some(Origin::Copy(p as u32)),
            None
        ]))],
        "{:?}",
        map.returns["get"]
    );
    // A field is one field however it is reached: `o->in.p` (through
    // `outer`) and `i->p` are `inner`'s field 1; `*i->p` dereferences it.
    let mut stores: Vec<(u32, Written)> = map.fields["struct.inner.1"]
        .iter()
        .map(|w| (line(&g, w.node), w.written))
        .collect();
    stores.sort_by_key(|s| s.0);
    // `i->p++` is not null: a pointer plus one element.
    assert_eq!(
        stores,
        vec![
            (line_of("o->in.p = 0;"), Written::Const(0)),
            (line_of("i->p++;"), Written::NonNull),
        ],
        "{:?}",
        map.fields
    );
    let deref = map
        .derefs
        .iter()
        .find(|d| d.from == Origin::Field("struct.inner.1".into()))
        .unwrap_or_else(|| panic!("{:?}", map.derefs));
    assert_eq!(line(&g, deref.node), line_of("return *i->p;"));
    assert!(!deref.div);
    map.check(g.num_nodes()).unwrap();
}

/// An out-parameter: `e`'s address goes to `wrap` and nowhere else, so
/// `e` is no variable of the map but an out-local, with its own store
/// (`e = NULL`) and the call that took its address, through `wrap`'s
/// parameter 2, which `wrap` passes on to `find`, whose stores through
/// it (`*out = ...`, two) are listed;
/// `p`, whose address is also stored in a global, is neither.
#[test]
fn out_parameters_are_followed_through_the_calls_that_took_them() {
    const SRC: &str = r#"
static int slot, *kept;
static int find(int key, int **out) {
    if (key > 3)
        return -1;
    if (key == 1) {
        *out = &slot;
        return 0;
    }
    *out = 0;
    return -1;
}
static int wrap(int key, int **out) {
    return find(key, out);
}
int main(int argc, char **argv) {
    int *e = 0;
    int *p = 0;
    kept = (int *)&p;
    wrap(argc, &e);
    find(argc, &p);
    return *e + *p;
}
"#;
    let (g, map) = map_of("flows-out", SRC);
    let at = |text: &str| 1 + SRC.lines().position(|l| l.contains(text)).unwrap() as u32;
    assert_eq!(map.out_locals.len(), 1, "{:?}", map.out_locals);
    let e = &map.out_locals[0];
    assert_eq!((e.function.as_str(), e.name.as_str()), ("main", "e"));
    let stores: Vec<(u32, Written)> = e.stores.iter().map(|s| (line(&g, s.0), s.1)).collect();
    assert_eq!(stores, vec![(at("int *e = 0;"), Written::Const(0))]);
    let passed: Vec<(u32, Origin)> = e
        .passed
        .iter()
        .map(|p| (line(&g, p.0), p.1.clone()))
        .collect();
    assert_eq!(
        passed,
        vec![(at("wrap(argc, &e);"), Origin::Through("wrap".into(), 1))]
    );
    // `wrap` passes the pointer on to `find`.
    let on: Vec<(u32, u32, Option<Origin>)> = map.param_writes["wrap"]
        .iter()
        .map(|w| (w.param, line(&g, w.node), w.passed_on.clone()))
        .collect();
    assert_eq!(
        on,
        vec![(
            1,
            at("return find(key, out);"),
            Some(Origin::Through("find".into(), 1))
        )]
    );
    let mut writes: Vec<(u32, u32)> = map.param_writes["find"]
        .iter()
        .map(|w| (w.param, line(&g, w.node)))
        .collect();
    writes.sort_unstable();
    assert_eq!(writes, vec![(1, at("*out = &slot;")), (1, at("*out = 0;"))]);
    // The crash statement's load of `e` is an access through it.
    assert!(
        map.derefs.iter().any(|d| d.from == Origin::OutLocal(0)),
        "{:?}",
        map.derefs
    );
}
