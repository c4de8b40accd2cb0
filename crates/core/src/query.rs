//! The query language: questions about the failing run as regular
//! languages over ICFG paths.
//!
//! # Selectors
//!
//! * a node id as in the input graph (`n:-9:123`);
//! * `fn:NAME`: the entry of function NAME ("NAME was entered");
//! * `call:NAME`: any call site calling NAME (in the program or a library);
//! * `FILE:LINE`: any node on that line of a file whose path ends with FILE.
//!
//! # Formulas
//!
//! ```text
//! ran(S)          S happened at least once
//! not ran(S)      S never happened
//! A then B        A happened, and later B happened (concatenation)
//! A and B, A or B, not A, ( A )
//! ```
//!
//! `then` binds tighter than `and`, which binds tighter than `or`.
//! Examples from the PLDI 2017 paper:
//!
//! * "Is it possible that init() did not run?": `not ran(fn:init)`;
//! * "was lock called twice with no unlock in between?": a regular
//!   expression (below): `.* call:lock (!call:unlock)* call:lock .*`;
//! * "Could x have been used at line U before being initialized at line I?":
//!   `(!a.c:I)* a.c:U .*`.
//!
//! # Regular expressions (`--regex`)
//!
//! Over selectors, one node per step: `.` any node, `S` a node of S, `!S` a
//! node not in S, juxtaposition, `|`, `*`, `+`, `?`, parentheses. Tokens
//! are separated by spaces or operators; quote a selector with `"` if it
//! holds operator characters.

use crate::automaton::Dfa;
use crate::icfg::{Icfg, NodeKind};
use crate::ids::NodeId;
use crate::report::Origin;
use std::collections::{BTreeSet, HashMap};

/// A query that does not parse or names nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryError(pub String);

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for QueryError {}

/// Resolves a selector to the nodes it denotes.
pub fn resolve(g: &Icfg, sel: &str) -> Result<Vec<NodeId>, QueryError> {
    if let Some(n) = g.lookup(sel) {
        return Ok(vec![n]);
    }
    if let Some(name) = sel.strip_prefix("fn:") {
        let f = g
            .function_by_name(name)
            .ok_or_else(|| QueryError(format!("no function named `{name}`")))?;
        return g.function(f).entry.map(|e| vec![e]).ok_or_else(|| {
            QueryError(format!("function `{name}` has no entry node in the graph"))
        });
    }
    if let Some(name) = sel.strip_prefix("call:") {
        let sites: Vec<NodeId> = g
            .nodes()
            .filter(|&n| g.kind(n) == NodeKind::CallSite)
            .filter(|&n| {
                g.callees(n).any(|f| &*g.function(f).name == name)
                    || g.call_note(n)
                        .is_some_and(|c| c.external_callees.iter().any(|x| &**x == name))
            })
            .collect();
        if sites.is_empty() {
            return Err(QueryError(format!("no call site calls `{name}`")));
        }
        return Ok(sites);
    }
    if let Some((file, line)) = sel.rsplit_once(':') {
        if let (false, Ok(line)) = (file.is_empty(), line.parse::<u32>()) {
            let nodes: Vec<NodeId> = g
                .nodes()
                .filter(|&n| g.lines(n).contains(&line))
                .filter(|&n| {
                    g.file_of(n)
                        .is_some_and(|f| path_ends_with(g.file_path(f), file))
                })
                .collect();
            if nodes.is_empty() {
                return Err(QueryError(format!(
                    "no node on line {line} of a file ending in `{file}`"
                )));
            }
            return Ok(nodes);
        }
    }
    Err(QueryError(format!(
        "`{sel}` is not a node id, fn:NAME, call:NAME or FILE:LINE"
    )))
}

/// Does `path` end with the path components of `suffix`?
pub fn path_ends_with(path: &str, suffix: &str) -> bool {
    let p: Vec<&str> = path
        .split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    let s: Vec<&str> = suffix
        .split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    !s.is_empty() && p.len() >= s.len() && p[p.len() - s.len()..] == s[..]
}

// ---------------------------------------------------------------- syntax

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Op(char),
}

fn tokenize(s: &str, ops: &str) -> Result<Vec<Tok>, QueryError> {
    let mut out = Vec::new();
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if ops.contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else if c == '"' {
            let j = cs[i + 1..]
                .iter()
                .position(|&x| x == '"')
                .ok_or_else(|| QueryError("unterminated quote".into()))?;
            out.push(Tok::Word(cs[i + 1..i + 1 + j].iter().collect()));
            i += j + 2;
        } else {
            let start = i;
            while i < cs.len() && !cs[i].is_whitespace() && !ops.contains(cs[i]) && cs[i] != '"' {
                i += 1;
            }
            out.push(Tok::Word(cs[start..i].iter().collect()));
        }
    }
    Ok(out)
}

/// A formula of the query language.
#[derive(Clone, Debug, PartialEq)]
enum Formula {
    Ran(String),
    Then(Box<Formula>, Box<Formula>),
    And(Box<Formula>, Box<Formula>),
    Or(Box<Formula>, Box<Formula>),
    Not(Box<Formula>),
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek_word(&self, w: &str) -> bool {
        matches!(self.toks.get(self.pos), Some(Tok::Word(x)) if x == w)
    }
    fn eat_op(&mut self, c: char) -> bool {
        if self.toks.get(self.pos) == Some(&Tok::Op(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect_op(&mut self, c: char) -> Result<(), QueryError> {
        if self.eat_op(c) {
            Ok(())
        } else {
            Err(QueryError(format!("expected `{c}` at {}", self.here())))
        }
    }
    fn here(&self) -> String {
        match self.toks.get(self.pos) {
            None => "the end".into(),
            Some(Tok::Word(w)) => format!("`{w}`"),
            Some(Tok::Op(c)) => format!("`{c}`"),
        }
    }
    fn or(&mut self) -> Result<Formula, QueryError> {
        let mut f = self.and()?;
        while self.peek_word("or") {
            self.pos += 1;
            f = Formula::Or(Box::new(f), Box::new(self.and()?));
        }
        Ok(f)
    }
    fn and(&mut self) -> Result<Formula, QueryError> {
        let mut f = self.then()?;
        while self.peek_word("and") {
            self.pos += 1;
            f = Formula::And(Box::new(f), Box::new(self.then()?));
        }
        Ok(f)
    }
    fn then(&mut self) -> Result<Formula, QueryError> {
        let mut f = self.unary()?;
        while self.peek_word("then") {
            self.pos += 1;
            f = Formula::Then(Box::new(f), Box::new(self.unary()?));
        }
        Ok(f)
    }
    fn unary(&mut self) -> Result<Formula, QueryError> {
        if self.peek_word("not") {
            self.pos += 1;
            return Ok(Formula::Not(Box::new(self.unary()?)));
        }
        if self.peek_word("ran") {
            self.pos += 1;
            self.expect_op('(')?;
            let sel = match self.toks.get(self.pos) {
                Some(Tok::Word(w)) => w.clone(),
                _ => {
                    return Err(QueryError(format!(
                        "expected a selector at {}",
                        self.here()
                    )))
                }
            };
            self.pos += 1;
            self.expect_op(')')?;
            return Ok(Formula::Ran(sel));
        }
        if self.eat_op('(') {
            let f = self.or()?;
            self.expect_op(')')?;
            return Ok(f);
        }
        Err(QueryError(format!(
            "expected `ran(...)`, `not`, or `(` at {}",
            self.here()
        )))
    }
}

/// A regular expression over selectors.
#[derive(Clone, Debug, PartialEq)]
enum Re {
    Any,
    Sel(String, bool), // selector, negated
    Cat(Vec<Re>),
    Alt(Vec<Re>),
    Star(Box<Re>),
    /// One or more: built once (not as `x x*`, which copies `x` and makes
    /// `x++++...` exponential in the number of `+`).
    Plus(Box<Re>),
}

struct ReParser {
    toks: Vec<Tok>,
    pos: usize,
}

impl ReParser {
    fn alt(&mut self) -> Result<Re, QueryError> {
        let mut alts = vec![self.seq()?];
        while self.toks.get(self.pos) == Some(&Tok::Op('|')) {
            self.pos += 1;
            alts.push(self.seq()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().expect("one")
        } else {
            Re::Alt(alts)
        })
    }
    fn seq(&mut self) -> Result<Re, QueryError> {
        let mut items = Vec::new();
        while let Some(t) = self.toks.get(self.pos) {
            if matches!(t, Tok::Op('|') | Tok::Op(')')) {
                break;
            }
            items.push(self.rep()?);
        }
        Ok(Re::Cat(items))
    }
    fn rep(&mut self) -> Result<Re, QueryError> {
        let mut r = self.prim()?;
        while let Some(Tok::Op(c @ ('*' | '+' | '?'))) = self.toks.get(self.pos) {
            r = match c {
                '*' => Re::Star(Box::new(r)),
                '+' => Re::Plus(Box::new(r)),
                _ => Re::Alt(vec![r, Re::Cat(vec![])]),
            };
            self.pos += 1;
        }
        Ok(r)
    }
    fn prim(&mut self) -> Result<Re, QueryError> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        match t {
            Some(Tok::Word(w)) if w == "." => Ok(Re::Any),
            Some(Tok::Word(w)) => Ok(Re::Sel(w, false)),
            Some(Tok::Op('!')) => match self.toks.get(self.pos).cloned() {
                Some(Tok::Word(w)) => {
                    self.pos += 1;
                    Ok(Re::Sel(w, true))
                }
                _ => Err(QueryError("`!` must be followed by a selector".into())),
            },
            Some(Tok::Op('(')) => {
                let r = self.alt()?;
                if self.toks.get(self.pos) != Some(&Tok::Op(')')) {
                    return Err(QueryError("missing `)`".into()));
                }
                self.pos += 1;
                Ok(r)
            }
            Some(Tok::Op(c)) => Err(QueryError(format!("unexpected `{c}`"))),
            None => Err(QueryError("unexpected end of expression".into())),
        }
    }
}

// ------------------------------------------------------------ automata

/// Selectors and the node classes they induce.
struct Alphabet {
    sels: Vec<String>,
    /// Class of each mentioned node; class 0 = no selector.
    class: HashMap<u32, u32>,
    /// Per class: which selectors hold it.
    sigs: Vec<Vec<bool>>,
}

impl Alphabet {
    fn new(g: &Icfg, sels: Vec<String>) -> Result<Alphabet, QueryError> {
        let mut member: HashMap<u32, Vec<bool>> = HashMap::new();
        for (i, s) in sels.iter().enumerate() {
            for n in resolve(g, s)? {
                member
                    .entry(n.as_u32())
                    .or_insert_with(|| vec![false; sels.len()])[i] = true;
            }
        }
        let mut sigs = vec![vec![false; sels.len()]];
        let mut ids: HashMap<Vec<bool>, u32> = HashMap::new();
        let mut class = HashMap::new();
        let mut nodes: Vec<_> = member.into_iter().collect();
        nodes.sort_by_key(|x| x.0);
        for (n, sig) in nodes {
            let c = *ids.entry(sig.clone()).or_insert_with(|| {
                sigs.push(sig);
                sigs.len() as u32 - 1
            });
            class.insert(n, c);
        }
        Ok(Alphabet { sels, class, sigs })
    }
    fn k(&self) -> u32 {
        self.sigs.len() as u32
    }
    fn holds(&self, class: u32, sel: &str) -> bool {
        let i = self
            .sels
            .iter()
            .position(|s| s == sel)
            .expect("known selector");
        self.sigs[class as usize][i]
    }
}

/// A complete DFA over the alphabet's classes.
#[derive(Clone, Debug)]
struct Complete {
    delta: Vec<u32>, // [q * k + c]
    acc: Vec<bool>,
    k: u32,
}

impl Complete {
    fn step(&self, q: u32, c: u32) -> u32 {
        self.delta[(q * self.k + c) as usize]
    }
    fn ran(ab: &Alphabet, sel: &str) -> Complete {
        let k = ab.k();
        let delta = (0..2 * k)
            .map(|i| {
                if i / k == 1 || ab.holds(i % k, sel) {
                    1
                } else {
                    0
                }
            })
            .collect();
        Complete {
            delta,
            acc: vec![false, true],
            k,
        }
    }
    fn not(mut self) -> Complete {
        self.acc.iter_mut().for_each(|a| *a = !*a);
        self
    }
    fn product(&self, o: &Complete, both: bool) -> Complete {
        let (n, m, k) = (self.acc.len() as u32, o.acc.len() as u32, self.k);
        let mut delta = Vec::with_capacity((n * m * k) as usize);
        let mut acc = Vec::with_capacity((n * m) as usize);
        for a in 0..n {
            for b in 0..m {
                acc.push(if both {
                    self.acc[a as usize] && o.acc[b as usize]
                } else {
                    self.acc[a as usize] || o.acc[b as usize]
                });
                for c in 0..k {
                    delta.push(self.step(a, c) * m + o.step(b, c));
                }
            }
        }
        Complete { delta, acc, k }
    }
    /// L(self) · L(o), by subset construction over (set of self states,
    /// set of o states).
    fn then(&self, o: &Complete) -> Complete {
        let close = |a: &BTreeSet<u32>, b: &mut BTreeSet<u32>| {
            if a.iter().any(|&q| self.acc[q as usize]) {
                b.insert(0);
            }
        };
        let mut init_b = BTreeSet::new();
        let init_a: BTreeSet<u32> = [0].into();
        close(&init_a, &mut init_b);
        subset(
            self.k,
            (init_a, init_b),
            |(a, b), c| {
                let na: BTreeSet<u32> = a.iter().map(|&q| self.step(q, c)).collect();
                let mut nb: BTreeSet<u32> = b.iter().map(|&q| o.step(q, c)).collect();
                close(&na, &mut nb);
                (na, nb)
            },
            |(_, b)| b.iter().any(|&q| o.acc[q as usize]),
        )
    }
}

/// Generic subset construction from an initial macro-state.
fn subset<S: Clone + Ord + std::hash::Hash>(
    k: u32,
    init: S,
    step: impl Fn(&S, u32) -> S,
    accepting: impl Fn(&S) -> bool,
) -> Complete {
    let mut ids: HashMap<S, u32> = HashMap::new();
    let mut states = vec![init.clone()];
    ids.insert(init, 0);
    let mut delta = Vec::new();
    let mut i = 0;
    while i < states.len() {
        for c in 0..k {
            let t = step(&states[i], c);
            let len = states.len() as u32;
            let id = *ids.entry(t.clone()).or_insert_with(|| {
                states.push(t);
                len
            });
            delta.push(id);
        }
        i += 1;
    }
    let acc = states.iter().map(accepting).collect();
    Complete { delta, acc, k }
}

fn formula_sels(f: &Formula, out: &mut Vec<String>) {
    match f {
        Formula::Ran(s) => {
            if !out.contains(s) {
                out.push(s.clone())
            }
        }
        Formula::Then(a, b) | Formula::And(a, b) | Formula::Or(a, b) => {
            formula_sels(a, out);
            formula_sels(b, out);
        }
        Formula::Not(a) => formula_sels(a, out),
    }
}

fn compile_formula(ab: &Alphabet, f: &Formula) -> Complete {
    match f {
        Formula::Ran(s) => Complete::ran(ab, s),
        Formula::Not(a) => compile_formula(ab, a).not(),
        Formula::And(a, b) => compile_formula(ab, a).product(&compile_formula(ab, b), true),
        Formula::Or(a, b) => compile_formula(ab, a).product(&compile_formula(ab, b), false),
        Formula::Then(a, b) => compile_formula(ab, a).then(&compile_formula(ab, b)),
    }
}

/// Thompson NFA for a regex: states with epsilon and class-labelled moves.
#[derive(Default)]
struct Nfa {
    eps: Vec<Vec<u32>>,
    moves: Vec<Vec<(Re, u32)>>, // Re is Any or Sel
}

impl Nfa {
    fn state(&mut self) -> u32 {
        self.eps.push(vec![]);
        self.moves.push(vec![]);
        self.eps.len() as u32 - 1
    }
    /// Builds `r` between fresh states; returns (in, out).
    fn build(&mut self, r: &Re) -> (u32, u32) {
        let (i, o) = (self.state(), self.state());
        match r {
            Re::Any | Re::Sel(..) => self.moves[i as usize].push((r.clone(), o)),
            Re::Cat(items) => {
                let mut cur = i;
                for it in items {
                    let (a, b) = self.build(it);
                    self.eps[cur as usize].push(a);
                    cur = b;
                }
                self.eps[cur as usize].push(o);
            }
            Re::Alt(alts) => {
                for it in alts {
                    let (a, b) = self.build(it);
                    self.eps[i as usize].push(a);
                    self.eps[b as usize].push(o);
                }
            }
            Re::Star(x) => {
                let (a, b) = self.build(x);
                self.eps[i as usize].push(a);
                self.eps[i as usize].push(o);
                self.eps[b as usize].push(a);
                self.eps[b as usize].push(o);
            }
            Re::Plus(x) => {
                let (a, b) = self.build(x);
                self.eps[i as usize].push(a);
                self.eps[b as usize].push(a);
                self.eps[b as usize].push(o);
            }
        }
        (i, o)
    }
    fn closure(&self, set: &mut BTreeSet<u32>) {
        let mut stack: Vec<u32> = set.iter().copied().collect();
        while let Some(q) = stack.pop() {
            for &t in &self.eps[q as usize] {
                if set.insert(t) {
                    stack.push(t);
                }
            }
        }
    }
}

fn re_sels(r: &Re, out: &mut Vec<String>) {
    match r {
        Re::Any => {}
        Re::Sel(s, _) => {
            if !out.contains(s) {
                out.push(s.clone())
            }
        }
        Re::Cat(v) | Re::Alt(v) => v.iter().for_each(|x| re_sels(x, out)),
        Re::Star(x) | Re::Plus(x) => re_sels(x, out),
    }
}

/// Moore's partition refinement: merges language-equivalent states, so
/// that a state looping on "any other node" is recognised as silent there.
fn minimize(c: &Complete) -> Complete {
    let n = c.acc.len();
    let mut block: Vec<u32> = c.acc.iter().map(|&a| u32::from(a)).collect();
    loop {
        let mut ids: HashMap<Vec<u32>, u32> = HashMap::new();
        let next: Vec<u32> = (0..n as u32)
            .map(|q| {
                let mut sig = vec![block[q as usize]];
                sig.extend((0..c.k).map(|x| block[c.step(q, x) as usize]));
                let len = ids.len() as u32;
                *ids.entry(sig).or_insert(len)
            })
            .collect();
        let stable = ids.len() == block.iter().collect::<std::collections::HashSet<_>>().len();
        block = next;
        if stable {
            break;
        }
    }
    // Renumber so that the initial state's block is 0.
    let b0 = block[0];
    let renum = |b: u32| {
        if b == b0 {
            0
        } else if b == 0 {
            b0
        } else {
            b
        }
    };
    let nb = block.iter().collect::<std::collections::HashSet<_>>().len();
    let mut delta = vec![0u32; nb * c.k as usize];
    let mut acc = vec![false; nb];
    for q in 0..n as u32 {
        let b = renum(block[q as usize]);
        acc[b as usize] = c.acc[q as usize];
        for x in 0..c.k {
            delta[(b * c.k + x) as usize] = renum(block[c.step(q, x) as usize]);
        }
    }
    Complete { delta, acc, k: c.k }
}

fn to_dfa(ab: &Alphabet, c: &Complete) -> Dfa {
    let c = minimize(c);
    Dfa::from_table(
        Origin::Query,
        0,
        c.acc.clone(),
        ab.class.clone(),
        ab.k(),
        c.delta,
    )
}

/// Compiles a formula of the query language to an automaton.
pub fn compile(g: &Icfg, text: &str) -> Result<Dfa, QueryError> {
    let toks = tokenize(text, "()")?;
    if toks.is_empty() {
        return Err(QueryError("empty query".into()));
    }
    let mut p = Parser { toks, pos: 0 };
    let f = p.or()?;
    if p.pos != p.toks.len() {
        return Err(QueryError(format!(
            "unexpected {} after the query",
            p.here()
        )));
    }
    let mut sels = Vec::new();
    formula_sels(&f, &mut sels);
    let ab = Alphabet::new(g, sels)?;
    Ok(to_dfa(&ab, &compile_formula(&ab, &f)))
}

/// Compiles a regular expression over selectors to an automaton.
pub fn compile_regex(g: &Icfg, text: &str) -> Result<Dfa, QueryError> {
    let toks = tokenize(text, "()|*+?!")?;
    let mut p = ReParser { toks, pos: 0 };
    let r = p.alt()?;
    if p.pos != p.toks.len() {
        return Err(QueryError("unbalanced `)`".into()));
    }
    let mut sels = Vec::new();
    re_sels(&r, &mut sels);
    let ab = Alphabet::new(g, sels)?;
    let mut nfa = Nfa::default();
    let (i, o) = nfa.build(&r);
    let mut init: BTreeSet<u32> = [i].into();
    nfa.closure(&mut init);
    let c = subset(
        ab.k(),
        init,
        |set, c| {
            let mut next = BTreeSet::new();
            for &q in set {
                for (lab, t) in &nfa.moves[q as usize] {
                    let ok = match lab {
                        Re::Any => true,
                        Re::Sel(s, neg) => ab.holds(c, s) != *neg,
                        _ => false,
                    };
                    if ok {
                        next.insert(*t);
                    }
                }
            }
            nfa.closure(&mut next);
            next
        },
        |set| set.contains(&o),
    );
    Ok(to_dfa(&ab, &c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::automaton::DEAD;
    use crate::icfg::{IcfgBuilder, NodeSpec};

    fn graph() -> (Icfg, Vec<NodeId>) {
        let mut b = IcfgBuilder::new();
        let main = b.function("main");
        let init = b.function("init");
        b.set_function_file(main, "src/m.c");
        let mut ids = vec![];
        for (i, (f, k, line)) in [
            (main, NodeKind::Entry, 1),
            (main, NodeKind::CallSite, 2),
            (main, NodeKind::CallSite, 3),
            (main, NodeKind::Exit, 4),
            (init, NodeKind::Entry, 10),
            (init, NodeKind::Exit, 11),
        ]
        .into_iter()
        .enumerate()
        {
            let id = format!("x{i}");
            ids.push(
                b.add_node(NodeSpec {
                    ext_id: &id,
                    kind: k,
                    func: f,
                    label: "",
                    lines: &[line],
                })
                .unwrap(),
            );
        }
        b.add_flow_edge(ids[0], ids[1]);
        b.add_flow_edge(ids[1], ids[2]);
        b.add_flow_edge(ids[2], ids[3]);
        b.add_flow_edge(ids[4], ids[5]);
        b.add_call_edge(ids[1], ids[4]);
        b.add_external_callee(ids[2]);
        b.add_external_callee_name(ids[2], "lock");
        (b.build().unwrap(), ids)
    }

    fn accepts(d: &Dfa, w: &[NodeId]) -> bool {
        let mut q = d.initial[0];
        for n in w {
            q = d.step(q, n.as_u32());
            if q == DEAD {
                return false;
            }
        }
        d.accepting[q as usize]
    }

    #[test]
    fn selectors_resolve() {
        let (g, ids) = graph();
        assert_eq!(resolve(&g, "x3").unwrap(), vec![ids[3]]);
        assert_eq!(resolve(&g, "fn:init").unwrap(), vec![ids[4]]);
        assert_eq!(resolve(&g, "call:init").unwrap(), vec![ids[1]]);
        assert_eq!(resolve(&g, "call:lock").unwrap(), vec![ids[2]]);
        assert_eq!(resolve(&g, "m.c:3").unwrap(), vec![ids[2]]);
        assert_eq!(resolve(&g, "src/m.c:3").unwrap(), vec![ids[2]]);
        assert!(resolve(&g, "other.c:3").is_err());
        assert!(resolve(&g, "fn:nope").unwrap_err().0.contains("nope"));
        assert!(resolve(&g, "call:nope").is_err());
    }

    #[test]
    fn formulas_mean_what_they_say() {
        let (g, x) = graph();
        let d = compile(&g, "not ran(fn:init)").unwrap();
        assert!(accepts(&d, &[x[0], x[2]]));
        assert!(!accepts(&d, &[x[0], x[4], x[2]]));
        let d = compile(&g, "ran(x1) then ran(x2)").unwrap();
        assert!(accepts(&d, &[x[1], x[0], x[2]]));
        assert!(!accepts(&d, &[x[2], x[1]]));
        let d = compile(&g, "ran(x1) and not (ran(x2) or ran(x3))").unwrap();
        assert!(accepts(&d, &[x[1]]));
        assert!(!accepts(&d, &[x[1], x[3]]));
        assert!(compile(&g, "ran(x1) then").is_err());
        assert!(compile(&g, "ran(x1) x2").is_err());
        assert!(compile(&g, "").is_err());
    }

    #[test]
    fn regexes_mean_what_they_say() {
        let (g, x) = graph();
        // lock twice with no unlock (here: no x3) in between
        let d = compile_regex(&g, ".* call:lock (!x3)* call:lock .*").unwrap();
        assert!(accepts(&d, &[x[0], x[2], x[1], x[2]]));
        assert!(!accepts(&d, &[x[2], x[3], x[2]]));
        assert!(!accepts(&d, &[x[2]]));
        // used at line 3 before initialised at line 2
        let d = compile_regex(&g, "(!m.c:2)* m.c:3 .*").unwrap();
        assert!(accepts(&d, &[x[0], x[2], x[1]]));
        assert!(!accepts(&d, &[x[1], x[2]]));
        let d = compile_regex(&g, "x0 (x1 | x2)+ x3?").unwrap();
        assert!(accepts(&d, &[x[0], x[1], x[2]]));
        assert!(accepts(&d, &[x[0], x[2], x[3]]));
        assert!(!accepts(&d, &[x[0]]));
        // Minimal, and silent on nodes no selector names.
        let d = compile_regex(&g, ".* call:lock .*").unwrap();
        assert_eq!(d.num_states(), 2);
        assert!(d.silent_elsewhere());
        assert!(compile(&g, "not ran(fn:init) and ran(x1)")
            .unwrap()
            .silent_elsewhere());
        assert!(compile_regex(&g, "(x0").is_err());
        assert!(compile_regex(&g, "x0)").is_err());
        assert!(compile_regex(&g, "!").is_err());
    }

    /// Fuzzer find (`query` target, out of memory): `x+` was `x x*`, so
    /// every further `+` doubled the expression: 44 of them ran out of
    /// memory. Now linear, and `x++` means `x+`.
    #[test]
    fn repeated_plus_is_linear() {
        let (g, x) = graph();
        let many = format!("x0{}", "+".repeat(60));
        let d = compile_regex(&g, &many).unwrap();
        let one = compile_regex(&g, "x0+").unwrap();
        assert_eq!(d.num_states(), one.num_states());
        assert!(accepts(&d, &[x[0]]) && accepts(&d, &[x[0], x[0], x[0]]));
        assert!(!accepts(&d, &[]) && !accepts(&d, &[x[1]]));
        let d = compile_regex(&g, "(x0 x1)+").unwrap();
        assert!(accepts(&d, &[x[0], x[1], x[0], x[1]]));
        assert!(!accepts(&d, &[x[0], x[1], x[0]]));
        // The fuzzer's input itself.
        let found = "R\0++++++++++++++++++++++++++++++++++++++++++\"\"*++\0\"\"*++";
        let _ = compile_regex(&g, found);
    }

    #[test]
    fn paths_match_by_component_suffix() {
        assert!(path_ends_with("/home/u/src/m.c", "src/m.c"));
        assert!(path_ends_with("/home/u/src/m.c", "./m.c"));
        assert!(!path_ends_with("/home/u/src/am.c", "m.c"));
    }
}
