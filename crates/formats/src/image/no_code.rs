//! The graph's lines on which the binary has no code: code generation
//! drops the locations of some instructions (and optimised code more), so
//! a line the graph labels from the IR may have no row in the binary's
//! line table. No debugger sees such a line run; the writers say so
//! beside its label ([`postmortem_core::line_notes`]).

use crate::image::buildcheck::Compiled;
use postmortem_core::locate::{same_file, PathMap};
use postmortem_core::{FileId, Icfg, NodeKind};
use std::collections::HashSet;

/// The (file, line) pairs of `g` (lines and weak lines of its nodes)
/// that have no code in the binary: no row in `c`'s line table, and no
/// inlined call (whose code is its callee's rows); only in files the
/// line table has rows of (by path after `paths`, else by file name):
/// files the binary does not name are not judged. Function entries'
/// lines are left out (the declaration: the binary's code for the entry
/// is at the opening `{`). Sorted.
pub fn lines_without_code(g: &Icfg, c: &Compiled, paths: &PathMap) -> Vec<(FileId, u32)> {
    let base = |p: &str| p.rsplit(['/', '\\']).next().unwrap_or(p).to_string();
    let bin_files: Vec<String> = c.files().iter().map(|p| paths.apply(p)).collect();
    // Each graph file's files of the binary.
    let matched: Vec<Vec<u32>> = (0..g.num_files())
        .map(|i| {
            let gf = g.file_path(FileId::new(i));
            let by_path: Vec<u32> = (0..bin_files.len() as u32)
                .filter(|&b| same_file(&bin_files[b as usize], gf))
                .collect();
            if !by_path.is_empty() {
                return by_path;
            }
            (0..bin_files.len() as u32)
                .filter(|&b| base(&bin_files[b as usize]) == base(gf))
                .collect()
        })
        .collect();
    // Lines with code: rows, and calls whose callee was inlined (their
    // code is the callee's rows).
    let rows: HashSet<(u32, u32)> = c
        .rows()
        .iter()
        .map(|&(f, l, _)| (f, l))
        .chain(c.inlined_calls().iter().copied())
        .collect();
    let mut out = Vec::new();
    for n in g.nodes() {
        let Some(file) = g.file_of(n) else { continue };
        if g.kind(n) == NodeKind::Entry {
            continue;
        }
        let m = &matched[file.index()];
        if m.is_empty() {
            continue;
        }
        for l in g.lines(n).iter().copied().chain(g.weak_lines(n)) {
            if !m.iter().any(|&b| rows.contains(&(b, l))) {
                out.push((file, l));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use postmortem_core::icfg::{IcfgBuilder, NodeSpec};

    #[test]
    fn lines_without_rows_or_inlined_calls_have_no_code() {
        let mut b = IcfgBuilder::new();
        let f = b.function("f");
        b.set_function_file(f, "/src/f.c");
        let h = b.function("h");
        b.set_function_file(h, "/src/h.c");
        let mut add = |id: &str, kind: NodeKind, func, lines: &[u32]| {
            b.add_node(NodeSpec {
                ext_id: id,
                kind,
                func,
                label: id,
                lines,
            })
            .unwrap()
        };
        let e = add("e", NodeKind::Entry, f, &[1]);
        let s = add("s", NodeKind::Statement, f, &[2, 3, 4]);
        let x = add("x", NodeKind::Exit, f, &[5]);
        let he = add("he", NodeKind::Entry, h, &[1]);
        let hs = add("hs", NodeKind::Statement, h, &[2]);
        b.add_weak_line(s, 6);
        b.add_weak_line(s, 7);
        b.set_start(e);
        b.add_flow_edge(e, s);
        b.add_flow_edge(s, x);
        b.add_flow_edge(he, hs);
        let g = b.build().unwrap();
        let mut c = Compiled::default();
        // The binary names f.c by another directory: matched by name.
        let file = c.file("/build/f.c");
        let func = c.function("f");
        for line in [2, 4, 7] {
            c.row(file, line, func);
        }
        c.inlined_call(file, 3);
        let f_c = g.function(f).file.unwrap();
        // Entry line 1 left out; 3 is an inlined call; 5 and weak line 6
        // have no code; h.c is not the binary's: not judged.
        assert_eq!(
            lines_without_code(&g, &c, &PathMap::default()),
            vec![(f_c, 5), (f_c, 6)]
        );
    }
}
