//! Pass 2: every defined function's entry and exit nodes, made before any
//! body so that call edges can be added in any order.

use super::index::ModuleIndex;
use super::{add_node, file_of, locate, FnId, Located};
use crate::{FrontendReport, LlvmError};
use llvm_ir::Terminator;
use postmortem_core::{IcfgBuilder, NodeId, NodeKind};

/// The output of pass 2: (entry, exit) of each defined function, by
/// [`FnId`].
pub(super) struct Ends {
    ends: Vec<Option<(NodeId, NodeId)>>,
}

impl Ends {
    /// Makes the entry and exit node of every defined function of `ix` in
    /// `b`; counts the functions without debug info in `report`.
    pub(super) fn make(
        ix: &ModuleIndex<'_>,
        b: &mut IcfgBuilder,
        path: &str,
        report: &mut FrontendReport,
    ) -> Result<Ends, LlvmError> {
        let mut ends = Vec::new();
        for i in ix.ids() {
            let Some(f) = ix.info(i).def else {
                ends.push(None);
                continue;
            };
            let func = b.function(&f.name);
            let mut lines = Vec::new();
            match &f.debugloc {
                Some(loc) => {
                    b.set_function_file(func, &file_of(loc));
                    if loc.line != 0 {
                        lines.push(loc.line);
                    }
                }
                None => report.functions_without_debug_info += 1,
            }
            let label = format!("entry: {}", f.name);
            let entry = add_node(
                b,
                path,
                &format!("{}:entry", f.name),
                NodeKind::Entry,
                func,
                &label,
                &lines,
            )?;
            // The exit's lines: where the function returns.
            let mut ret_lines = Vec::new();
            let mut ret_col = 0;
            let mut ret_cols = Vec::new();
            for bb in &f.basic_blocks {
                if let Terminator::Ret(r) = &bb.term {
                    if let Located::At(line, col) = locate(f, r.debugloc.as_ref()) {
                        ret_lines.push(line);
                        ret_cols.push(col);
                        if ret_col == 0 {
                            ret_col = col;
                        }
                    }
                }
            }
            ret_lines.sort_unstable();
            ret_lines.dedup();
            let label = format!("exit: {}", f.name);
            let exit = add_node(
                b,
                path,
                &format!("{}:exit", f.name),
                NodeKind::Exit,
                func,
                &label,
                &ret_lines,
            )?;
            if ret_col != 0 {
                b.set_column(exit, ret_col);
            }
            // Its instructions are the `ret`s: a crash at another column
            // of their line is not in it (as for the bodies' nodes, only
            // in unoptimised functions).
            if !super::bodies::optimised(f) {
                for c in ret_cols.into_iter().filter(|&c| c != 0) {
                    b.add_instruction_column(exit, c);
                }
            }
            ends.push(Some((entry, exit)));
        }
        Ok(Ends { ends })
    }

    /// The entry node of `i`, if it is defined.
    pub(super) fn entry(&self, i: FnId) -> Option<NodeId> {
        self.ends[i.index()].map(|(e, _)| e)
    }

    /// The (entry, exit) nodes of `i`, if it is defined.
    pub(super) fn of(&self, i: FnId) -> Option<(NodeId, NodeId)> {
        self.ends[i.index()]
    }
}
