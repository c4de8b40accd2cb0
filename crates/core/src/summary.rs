//! Per-node labels summarised per source file and line.
//!
//! A line is Yes if any node on it is Yes, No if all its nodes are No, and
//! Maybe otherwise. Nodes without a line or a file are not summarised.

use crate::icfg::Icfg;
use crate::ids::FileId;
use crate::solver::Label;
use std::collections::BTreeMap;

/// Labels of the lines of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileLines {
    /// The file.
    pub file: FileId,
    /// Every line with at least one node, with its label, in line order.
    pub lines: BTreeMap<u32, Label>,
}

impl FileLines {
    /// The lines with label `l`, in order.
    pub fn with(&self, l: Label) -> impl Iterator<Item = u32> + '_ {
        self.lines
            .iter()
            .filter(move |(_, &x)| x == l)
            .map(|(&n, _)| n)
    }
}

/// Counts of nodes per label.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Yes nodes.
    pub yes: usize,
    /// No nodes.
    pub no: usize,
    /// Maybe nodes.
    pub maybe: usize,
}

impl Counts {
    /// Counts the labels.
    pub fn of(labels: &[Label]) -> Counts {
        let mut c = Counts::default();
        for l in labels {
            match l {
                Label::Yes => c.yes += 1,
                Label::No => c.no += 1,
                Label::Maybe => c.maybe += 1,
            }
        }
        c
    }
    /// Total.
    pub fn total(&self) -> usize {
        self.yes + self.no + self.maybe
    }
}

/// Summarises node labels per file and line, files in path order.
///
/// A line is Yes when a node of it is Yes, No when every node that has it
/// (among its [weak lines](Icfg::weak_lines) too) is No, else Maybe. A
/// line only some node's weak lines have is listed (Maybe or No), never
/// Yes: the instruction may carry another statement's location.
pub fn by_line(g: &Icfg, labels: &[Label]) -> Vec<FileLines> {
    // For each (file, line): (any yes, all no).
    let mut acc: BTreeMap<(FileId, u32), (bool, bool)> = BTreeMap::new();
    for n in g.nodes() {
        let Some(file) = g.file_of(n) else { continue };
        let l = labels[n.index()];
        for &line in g.lines(n) {
            let e = acc.entry((file, line)).or_insert((false, true));
            e.0 |= l == Label::Yes;
            e.1 &= l == Label::No;
        }
        for line in g.weak_lines(n) {
            let e = acc.entry((file, line)).or_insert((false, true));
            e.1 &= l == Label::No;
        }
    }
    let mut files: BTreeMap<FileId, BTreeMap<u32, Label>> = BTreeMap::new();
    for ((file, line), (any_yes, all_no)) in acc {
        let l = if any_yes {
            Label::Yes
        } else if all_no {
            Label::No
        } else {
            Label::Maybe
        };
        files.entry(file).or_default().insert(line, l);
    }
    let mut out: Vec<FileLines> = files
        .into_iter()
        .map(|(file, lines)| FileLines { file, lines })
        .collect();
    out.sort_by(|a, b| g.file_path(a.file).cmp(g.file_path(b.file)));
    out
}

/// What [`by_line`] derives from the graph alone, computed once and kept
/// (for many label vectors of one graph, as `postmortem batch` has): the
/// source lines in output order and, per node, the lines it has and its
/// weak lines. [`LineIndex::by_line`] then costs one pass over the
/// nodes' lines and gives what [`by_line`] gives.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    /// Every (file, line) some node has (or has as a weak line), files in
    /// path order, lines ascending.
    keys: Vec<(FileId, u32)>,
    /// Per node, where its lines start in `slots` (one more at the end).
    starts: Vec<u32>,
    /// Per node, where its weak lines start in `slots` (its own lines
    /// are `slots[starts[n]..weak[n]]`, its weak ones
    /// `slots[weak[n]..starts[n + 1]]`).
    weak: Vec<u32>,
    /// Positions in `keys`.
    slots: Vec<u32>,
}

impl LineIndex {
    /// The index of `g`'s lines.
    pub fn new(g: &Icfg) -> LineIndex {
        let mut keys: Vec<(FileId, u32)> = Vec::new();
        for n in g.nodes() {
            let Some(file) = g.file_of(n) else { continue };
            keys.extend(g.lines(n).iter().map(|&l| (file, l)));
            keys.extend(g.weak_lines(n).map(|l| (file, l)));
        }
        keys.sort_unstable_by(|a, b| {
            g.file_path(a.0)
                .cmp(g.file_path(b.0))
                .then(a.0.cmp(&b.0))
                .then(a.1.cmp(&b.1))
        });
        keys.dedup();
        let slot = |k: (FileId, u32)| -> u32 {
            keys.binary_search_by(|x| {
                g.file_path(x.0)
                    .cmp(g.file_path(k.0))
                    .then(x.0.cmp(&k.0))
                    .then(x.1.cmp(&k.1))
            })
            .expect("every key listed") as u32
        };
        let mut starts = Vec::with_capacity(g.num_nodes() + 1);
        let mut weak = Vec::with_capacity(g.num_nodes());
        let mut slots = Vec::new();
        for n in g.nodes() {
            starts.push(slots.len() as u32);
            if let Some(file) = g.file_of(n) {
                slots.extend(g.lines(n).iter().map(|&l| slot((file, l))));
                weak.push(slots.len() as u32);
                slots.extend(g.weak_lines(n).map(|l| slot((file, l))));
            } else {
                weak.push(slots.len() as u32);
            }
        }
        starts.push(slots.len() as u32);
        LineIndex {
            keys,
            starts,
            weak,
            slots,
        }
    }

    /// [`by_line`] of `labels` (one per node of the graph this index was
    /// made from).
    pub fn by_line(&self, labels: &[Label]) -> Vec<FileLines> {
        let mut any_yes = vec![false; self.keys.len()];
        let mut all_no = vec![true; self.keys.len()];
        for (n, &l) in labels.iter().enumerate().take(self.weak.len()) {
            let (a, w, b) = (
                self.starts[n] as usize,
                self.weak[n] as usize,
                self.starts[n + 1] as usize,
            );
            for &k in &self.slots[a..w] {
                any_yes[k as usize] |= l == Label::Yes;
                all_no[k as usize] &= l == Label::No;
            }
            for &k in &self.slots[w..b] {
                all_no[k as usize] &= l == Label::No;
            }
        }
        let mut out: Vec<FileLines> = Vec::new();
        let mut i = 0;
        while i < self.keys.len() {
            let file = self.keys[i].0;
            let j = i + self.keys[i..].iter().take_while(|k| k.0 == file).count();
            let lines = (i..j)
                .map(|k| {
                    let l = if any_yes[k] {
                        Label::Yes
                    } else if all_no[k] {
                        Label::No
                    } else {
                        Label::Maybe
                    };
                    (self.keys[k].1, l)
                })
                .collect();
            out.push(FileLines { file, lines });
            i = j;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::icfg::{IcfgBuilder, NodeKind, NodeSpec};

    #[test]
    fn line_rules() {
        let mut b = IcfgBuilder::new();
        let f = b.function("main");
        b.set_function_file(f, "m.c");
        let mut add = |id: &str, lines: &[u32]| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind: NodeKind::Statement,
                func: f,
                label: id,
                lines,
            })
            .unwrap()
        };
        let a = add("a", &[1]);
        let c = add("c", &[1, 2]);
        let d = add("d", &[2]);
        let e = add("e", &[3]);
        let x = add("x", &[]);
        let mut b2 = b;
        b2.set_start(a);
        for (p, q) in [(a, c), (c, d), (d, e), (e, x)] {
            b2.add_flow_edge(p, q);
        }
        let g = b2.build().unwrap();
        // line 1: yes + maybe -> yes; line 2: maybe + no -> maybe; line 3: no -> no
        let labels = vec![Label::Yes, Label::Maybe, Label::No, Label::No, Label::Yes];
        let s = by_line(&g, &labels);
        assert_eq!(LineIndex::new(&g).by_line(&labels), s);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].lines.get(&1), Some(&Label::Yes));
        assert_eq!(s[0].lines.get(&2), Some(&Label::Maybe));
        assert_eq!(s[0].lines.get(&3), Some(&Label::No));
        assert_eq!(s[0].with(Label::No).collect::<Vec<_>>(), vec![3]);
        assert_eq!(
            Counts::of(&labels),
            Counts {
                yes: 2,
                no: 2,
                maybe: 1
            }
        );
    }

    /// The index gives what `by_line` gives, on random graphs: functions
    /// in several files (and none), nodes with no, one or several lines,
    /// weak lines, random labels.
    #[test]
    fn line_index_equals_by_line() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |m: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as u32
        };
        let mut lines_seen = 0;
        for _ in 0..300 {
            let mut b = IcfgBuilder::new();
            let mut nodes = Vec::new();
            for k in 0..1 + next(4) {
                let f = b.function(&format!("f{k}"));
                if next(4) != 0 {
                    b.set_function_file(f, ["b.c", "a.c", "c.h"][next(3) as usize]);
                }
                for i in 0..1 + next(8) {
                    let lines: Vec<u32> = (0..next(3)).map(|_| 1 + next(12)).collect();
                    let id = format!("n{k}_{i}");
                    let n = b
                        .add_node(NodeSpec {
                            ext_id: &id,
                            kind: NodeKind::Statement,
                            func: f,
                            label: &id,
                            lines: &lines,
                        })
                        .unwrap();
                    if next(3) == 0 {
                        b.add_weak_line(n, 1 + next(12));
                    }
                    nodes.push(n);
                }
            }
            b.set_start(nodes[0]);
            for w in nodes.windows(2) {
                b.add_flow_edge(w[0], w[1]);
            }
            let g = b.build().unwrap();
            let index = LineIndex::new(&g);
            for _ in 0..5 {
                let labels: Vec<Label> = (0..g.num_nodes())
                    .map(|_| [Label::Yes, Label::No, Label::Maybe][next(3) as usize])
                    .collect();
                let want = by_line(&g, &labels);
                lines_seen += want.iter().map(|f| f.lines.len()).sum::<usize>();
                assert_eq!(index.by_line(&labels), want);
            }
        }
        assert!(lines_seen > 1000, "{lines_seen}");
    }
}
