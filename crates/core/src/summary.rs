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
}
