//! What a reader of optimised code's labels needs beside them: the lines
//! the optimiser moved, and the lines with no code in the binary.
//!
//! Labels are of the graph's nodes, and a line's label is its nodes'
//! (see [`crate::summary::by_line`]). In an optimised build a source line
//! can sit far from where the source puts it: `int lineno = 0, errors =
//! 0;` whose only instruction is in the loop's exit block is No on every
//! run that crashed inside the loop, which is right (that instruction
//! never ran) and reads as wrong. And code generation drops the locations
//! of some instructions: such a line is labelled from the IR but has no
//! instruction in the binary, so no debugger can see it run.
//!
//! **Moved.** A line of an optimised function (one with weak lines: the
//! front-end's mark of optimised IR) is *moved* when each node that has
//! it (as a line or a weak line) is strictly dominated, in its function's
//! control flow (local edges, calls to their return sites), by a node
//! whose lines all come after it (lines of code inlined into the
//! function, [`Icfg::inlined_lines`], are another function's and left
//! out on both sides). Source code runs a line before the
//! lines that follow it, except around loops and `goto`s, and those
//! leave the line some node the later lines do not dominate (the test of
//! a `for` at the loop's entry as well as its latch). The note names the
//! node's own next line (`to`), else the dominating line (`after`).
//!
//! **No code.** Given by the caller (the binary's line table is read by
//! the formats crate): lines the graph labels on which the binary has no
//! row.

use crate::algo::{dominators, NONE};
use crate::graph::Csr;
use crate::icfg::{EdgeKind, Icfg};
use crate::ids::{FileId, NodeId};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// Where the optimiser moved a line ([`moved_lines`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moved {
    /// The smallest later line its code shares a node with, if any.
    pub to: Option<u32>,
    /// The line of a node that runs before it on every path (its nearest
    /// such dominator whose lines all come after it; the smallest over
    /// its nodes).
    pub after: u32,
}

/// What to say beside one line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineNote {
    /// The binary's line table has no row on the line.
    pub no_code: bool,
    /// Its code was moved by the optimiser.
    pub moved: Option<Moved>,
}

impl fmt::Display for LineNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        if self.no_code {
            write!(f, "no code in the binary")?;
            sep = "; ";
        }
        match self.moved {
            Some(Moved { to: Some(to), .. }) => {
                write!(f, "{sep}moved by the optimiser to line {to}")
            }
            Some(Moved { after, .. }) => {
                write!(f, "{sep}moved by the optimiser after line {after}")
            }
            None => Ok(()),
        }
    }
}

/// The notes of a graph's lines, by file and line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineNotes {
    notes: BTreeMap<(FileId, u32), LineNote>,
}

impl LineNotes {
    /// The moved lines of `g` ([`moved_lines`]), and `no_code`: lines the
    /// binary has no code on (none known without a binary).
    pub fn new(g: &Icfg, no_code: &[(FileId, u32)]) -> LineNotes {
        let mut notes: BTreeMap<(FileId, u32), LineNote> = BTreeMap::new();
        for &k in no_code {
            notes.entry(k).or_default().no_code = true;
        }
        for (file, line, m) in moved_lines(g) {
            notes.entry((file, line)).or_default().moved = Some(m);
        }
        LineNotes { notes }
    }

    /// The note of `line` of `file`, if it has one.
    pub fn get(&self, file: FileId, line: u32) -> Option<&LineNote> {
        self.notes.get(&(file, line))
    }

    /// The notes of `file`, in line order.
    pub fn of_file(&self, file: FileId) -> impl Iterator<Item = (u32, &LineNote)> + '_ {
        self.notes
            .range((file, 0)..=(file, u32::MAX))
            .map(|(&(_, l), n)| (l, n))
    }

    /// Whether there is no note at all.
    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }
}

/// The lines the optimiser moved (module docs), by file, line and where.
pub fn moved_lines(g: &Icfg) -> Vec<(FileId, u32, Moved)> {
    let mut by_func: Vec<Vec<NodeId>> = vec![Vec::new(); g.functions().len()];
    for n in g.nodes() {
        by_func[g.func_of(n).index()].push(n);
    }
    let mut out = Vec::new();
    for (fi, nodes) in by_func.iter().enumerate() {
        let f = &g.functions()[fi];
        let (Some(entry), Some(file)) = (f.entry, f.file) else {
            continue;
        };
        if !nodes.iter().any(|&n| g.weak_lines(n).next().is_some()) {
            continue;
        }
        for (line, m) in moved_in(g, nodes, entry) {
            out.push((file, line, m));
        }
    }
    out.sort_unstable_by_key(|&(f, l, _)| (f, l));
    out
}

/// [`moved_lines`] of one function: its `nodes`, entered at `entry`.
fn moved_in(g: &Icfg, nodes: &[NodeId], entry: NodeId) -> Vec<(u32, Moved)> {
    let pos: HashMap<NodeId, u32> = nodes
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, i as u32))
        .collect();
    let mut edges: Vec<(u32, u32)> = Vec::new();
    for (i, &v) in nodes.iter().enumerate() {
        for (w, k) in g.succs(v) {
            if k == EdgeKind::Local {
                if let Some(&j) = pos.get(&w) {
                    edges.push((i as u32, j));
                }
            }
        }
        for r in g.return_sites(v) {
            if let Some(&j) = pos.get(&r) {
                edges.push((i as u32, j));
            }
        }
    }
    edges.sort_unstable();
    edges.dedup();
    let csr = Csr::from_edges(nodes.len(), &edges);
    let root = pos[&entry];
    let preds = csr.reversed();
    let idom = dominators(&csr, &preds, root, |_| true);
    // Lines only code inlined into the function has: another function's
    // statements, in the order of that function's source.
    let inlined: Vec<u32> = g.inlined_lines(g.func_of(entry)).collect();
    let own = |l: &u32| inlined.binary_search(l).is_err();
    // Every own line's nodes (lines and weak lines).
    let mut holders: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (i, &v) in nodes.iter().enumerate() {
        for l in g.lines(v).iter().copied().chain(g.weak_lines(v)) {
            if own(&l) {
                holders.entry(l).or_default().push(i as u32);
            }
        }
    }
    let first_line = |i: u32| g.lines(nodes[i as usize]).iter().copied().filter(own).min();
    let mut out = Vec::new();
    'lines: for (&line, hs) in &holders {
        let mut m = Moved {
            to: None,
            after: u32::MAX,
        };
        for &h in hs {
            // The nearest strict dominator whose lines all follow `line`,
            // not straight before it (none: the line is where the source
            // puts it).
            let mut d = h;
            let after = loop {
                if d == root || idom[d as usize] == NONE {
                    continue 'lines;
                }
                d = idom[d as usize];
                if let Some(l) = first_line(d).filter(|&l| l > line) {
                    if !straight(&csr, &preds, d, h) {
                        break l;
                    }
                }
            };
            m.after = m.after.min(after);
            let to = g
                .lines(nodes[h as usize])
                .iter()
                .copied()
                .filter(own)
                .find(|&l| l > line);
            m.to = match (m.to, to) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        out.push((line, m));
    }
    out
}

/// Whether `h` follows `d` in straight-line code: going back from `h`
/// through lone predecessors that have `h`'s way as their lone successor
/// reaches `d`. The arguments of a call written over several lines are
/// evaluated (on their lines) before the call (on its first line), in one
/// block: the call is not moved.
fn straight(succ: &Csr, preds: &Csr, d: u32, h: u32) -> bool {
    let mut v = h;
    // A block is short; the bound keeps a long chain linear overall.
    for _ in 0..4096 {
        let [p] = preds.succs(v) else {
            return false;
        };
        if succ.succs(*p).len() != 1 {
            return false;
        }
        if *p == d {
            return true;
        }
        v = *p;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::icfg::{IcfgBuilder, NodeKind, NodeSpec};

    /// One function: entry (`entry_lines`), a loop header (line 8) whose body
    /// (line 9) loops back, and the loop's exit holding `exit_lines`;
    /// with `weak`, the body and the exit carry weak lines (optimised).
    fn function(entry_lines: &[u32], exit_lines: &[u32], weak: &[u32]) -> Icfg {
        let mut b = IcfgBuilder::new();
        let f = b.function("parse");
        b.set_function_file(f, "parse.c");
        let mut add = |id: &str, kind: NodeKind, lines: &[u32]| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind,
                func: f,
                label: id,
                lines,
            })
            .unwrap()
        };
        let entry = add("e", NodeKind::Entry, entry_lines);
        let head = add("h", NodeKind::Statement, &[8]);
        let body = add("b", NodeKind::Statement, &[9]);
        let exit = add("x", NodeKind::Exit, exit_lines);
        for &l in weak {
            b.add_weak_line(exit, l);
        }
        b.set_start(entry);
        for (p, q) in [(entry, head), (head, body), (body, head), (head, exit)] {
            b.add_flow_edge(p, q);
        }
        b.build().unwrap()
    }

    #[test]
    fn a_line_sunk_below_a_later_line_is_moved() {
        // Line 7 (a declaration) has code only in the loop's exit.
        let g = function(&[5], &[20], &[7]);
        let file = FileId::new(0);
        // Line 7 runs only after line 8; lines 9 and 20 are where the
        // source puts them (after 8, not before it).
        let m = moved_lines(&g);
        assert_eq!(
            m,
            vec![(
                file,
                7,
                Moved {
                    to: Some(20),
                    after: 8
                }
            )]
        );
        let notes = LineNotes::new(&g, &[(file, 9)]);
        assert_eq!(
            notes.get(file, 7).unwrap().to_string(),
            "moved by the optimiser to line 20"
        );
        assert_eq!(
            notes.get(file, 9).unwrap().to_string(),
            "no code in the binary"
        );
        assert_eq!(notes.of_file(file).count(), 2);
        // Alone in its node: after the line that dominates it.
        let g = function(&[5], &[], &[7]);
        assert_eq!(
            LineNotes::new(&g, &[]).get(file, 7).unwrap().to_string(),
            "moved by the optimiser after line 8"
        );
    }

    /// A line that also has a node no later line dominates is where the
    /// source puts it (a loop's test at its entry and at its latch; here a
    /// declaration's code at the entry and in the exit).
    #[test]
    fn a_line_with_code_before_the_later_lines_is_not_moved() {
        // Line 7 also at the function's entry.
        let g = function(&[5, 7], &[20], &[7]);
        assert!(moved_lines(&g).is_empty(), "{:?}", moved_lines(&g));
    }

    /// A call written over several lines: its arguments (line 9) are
    /// evaluated before the call (line 8) in one block. Not moved; the
    /// same line after a branch is.
    #[test]
    fn a_call_after_its_arguments_lines_is_not_moved() {
        let build = |branch: bool| {
            let mut b = IcfgBuilder::new();
            let f = b.function("f");
            b.set_function_file(f, "f.c");
            let mut add = |id: &str, kind: NodeKind, lines: &[u32]| {
                b.add_node(NodeSpec {
                    ext_id: id,
                    kind,
                    func: f,
                    label: id,
                    lines,
                })
                .unwrap()
            };
            let entry = add("e", NodeKind::Entry, &[5]);
            let args = add("a", NodeKind::Statement, &[9]);
            let call = add("c", NodeKind::Statement, &[8]);
            let other = add("o", NodeKind::Statement, &[10]);
            let exit = add("x", NodeKind::Exit, &[11]);
            b.add_weak_line(exit, 11);
            b.set_start(entry);
            b.add_flow_edge(entry, args);
            b.add_flow_edge(args, call);
            if branch {
                b.add_flow_edge(args, other);
                b.add_flow_edge(other, exit);
            }
            b.add_flow_edge(call, exit);
            b.build().unwrap()
        };
        assert!(moved_lines(&build(false)).is_empty());
        let m = moved_lines(&build(true));
        assert_eq!(m.len(), 1, "{m:?}");
        assert_eq!((m[0].1, m[0].2.after), (8, 9));
    }

    /// Without weak lines (not optimised) no line is called moved,
    /// whatever the dominators say.
    #[test]
    fn unoptimised_functions_have_no_moved_lines() {
        let g = function(&[5], &[7], &[]);
        assert!(moved_lines(&g).is_empty());
    }
}
