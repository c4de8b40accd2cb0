//! SanitizerCoverage flags (`-fsanitize-coverage=func|bb,inline-bool-flag,pc-table`)
//! mapped to the ICFG nodes they cover.
//!
//! # What clang-14 emits
//!
//! Per instrumented function, one private global `@__sancov_gen_.N` of type
//! `[K x i1]` in section `__sancov_bools` (and a parallel `[2K x i64*]` pc
//! table in `__sancov_pcs`: function address with flag 1 for the entry,
//! block addresses with flag 0 for the others). Flag `k` is set by
//!
//! ```text
//! L:  %v = load i1, i1* getelementptr (@__sancov_gen_.N, 0, k)   ; covered block, cut here
//!     %c = icmp eq i1 %v, false
//!     br i1 %c, label %S, label %T
//! S:  store i1 true, i1* getelementptr (@__sancov_gen_.N, 0, k)
//!     br label %T
//! T:  ...the rest of the covered block
//! ```
//!
//! (`SplitBlockAndInsertIfThen` at the covered block's first insertion
//! point). The flag is set iff `L` ran at least once: the first time `L`
//! runs the flag is clear, so `S` runs and sets it; nothing else writes it.
//!
//! # Constraints (see [`SancovFlag`])
//!
//! * **Set**: the first node of `L` ran (a node is entered when its block
//!   starts). In the fallback (a store outside the pattern above, e.g. after
//!   later optimisation), the first node of the store's block ran.
//! * **Clear**: no node of `L`, `S` and `T` ran (`T` only when all its
//!   predecessors are `L` and `S`, as `SplitBlockAndInsertIfThen` leaves
//!   it), and for the entry block, the function's `entry` node. In the
//!   fallback nothing is concluded from a clear flag (counted in
//!   [`SancovMap::inexact`]).
//!
//! The flag order here is the order the `__sancov_gen_` arrays of section
//! `__sancov_bools` are emitted into the object file: module order, grouped
//! by comdat (see `section_order`); the binary reader checks it against the linked
//! binary's pc table and symbol table before using any flag.

use llvm_ir::constant::Constant;
use llvm_ir::module::GlobalVariable;
use llvm_ir::{Function, Instruction, Module, Name, Operand, Terminator, Type};
use postmortem_core::{Icfg, NodeId};
use std::collections::HashMap;

pub use postmortem_formats::image::sancov::{
    FlagConstraints, SancovArray, SancovFlag, SancovMap, BOOLS_SECTION, PCS_SECTION,
};
use std::ops::Range;

/// The ICFG nodes each basic block produced, recorded by the lowering:
/// function name -> one node id range per block, in block order.
pub(crate) type BlockNodes = HashMap<String, Vec<Range<u32>>>;

fn array_len(g: &GlobalVariable) -> Option<usize> {
    let ty = match g.ty.as_ref() {
        Type::PointerType { pointee_type, .. } => pointee_type.as_ref(),
        t => t,
    };
    match ty {
        Type::ArrayType { num_elements, .. } => Some(*num_elements),
        _ => None,
    }
}

/// `(array global, index)` of a pointer to an element of a flag array:
/// `getelementptr (@G, 0, k)`, `bitcast @G` or `@G` itself (k = 0).
pub(crate) fn flag_ref(op: &Operand) -> Option<(&Name, usize)> {
    let Operand::ConstantOperand(c) = op else {
        return None;
    };
    flag_ref_const(c.as_ref())
}

fn flag_ref_const(c: &Constant) -> Option<(&Name, usize)> {
    match c {
        Constant::GlobalReference { name, .. } => Some((name, 0)),
        Constant::BitCast(b) => match b.operand.as_ref() {
            Constant::GlobalReference { name, .. } => Some((name, 0)),
            _ => None,
        },
        Constant::GetElementPtr(g) => {
            let Constant::GlobalReference { name, .. } = g.address.as_ref() else {
                return None;
            };
            let idx: Vec<u64> = g
                .indices
                .iter()
                .map(|i| match i.as_ref() {
                    Constant::Int { value, .. } => Some(*value),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            match idx.as_slice() {
                [0, k] => Some((name, *k as usize)),
                [0] => Some((name, 0)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Each basic block's index in `f`, by name.
pub(crate) fn block_index(f: &Function) -> HashMap<&Name, usize> {
    f.basic_blocks
        .iter()
        .enumerate()
        .map(|(i, b)| (&b.name, i))
        .collect()
}

/// The successor blocks of a terminator (none for one that leaves the
/// function).
pub(crate) fn successors(t: &Terminator) -> Vec<&Name> {
    match t {
        Terminator::Br(x) => vec![&x.dest],
        Terminator::CondBr(x) => vec![&x.true_dest, &x.false_dest],
        Terminator::Switch(x) => {
            let mut v: Vec<&Name> = x.dests.iter().map(|(_, n)| n).collect();
            v.push(&x.default_dest);
            v
        }
        Terminator::IndirectBr(x) => x.possible_dests.iter().collect(),
        Terminator::Invoke(x) => vec![&x.return_label, &x.exception_label],
        Terminator::CallBr(x) => vec![&x.return_label],
        Terminator::CleanupRet(x) => x.unwind_dest.iter().collect(),
        Terminator::CatchRet(x) => vec![&x.successor],
        Terminator::CatchSwitch(x) => {
            let mut v: Vec<&Name> = x.catch_handlers.iter().collect();
            v.extend(x.default_unwind_dest.iter());
            v
        }
        _ => vec![],
    }
}

fn block_name(n: &Name) -> String {
    match n {
        Name::Name(s) => format!("%{s}"),
        Name::Number(k) => format!("%{k}"),
    }
}

/// The `__sancov_bools` arrays of `m` in the order a binary holds them.
/// The object file has one `__sancov_bools` section per comdat group (and
/// one for the arrays without a comdat), created at its first array in
/// module order, each holding its arrays in module order; the linker keeps
/// the sections' order. So the arrays are grouped by comdat, the groups in
/// order of first appearance. The groups matter after `llvm-link`: two
/// files' `static` functions of one name (bzip2's `myfeof`) keep one
/// comdat name (`$myfeof`, `nodeduplicate`), and the second's array sits
/// in the first's section, before arrays that precede it in the module.
fn section_order<'m>(m: &'m Module, comdats: &HashMap<String, usize>) -> Vec<&'m GlobalVariable> {
    let mut groups: Vec<Vec<&GlobalVariable>> = Vec::new();
    let mut index: HashMap<Option<usize>, usize> = HashMap::new();
    for gv in &m.global_vars {
        if gv.section.as_deref() != Some(BOOLS_SECTION) {
            continue;
        }
        // `llvm-ir` keeps no comdat names: the declaration scan numbers
        // them. Without its numbers (a module lowered with default
        // declarations) this is module order; the binary check catches a
        // difference.
        let key = match &gv.name {
            Name::Name(s) => comdats.get(s.as_str()).copied(),
            Name::Number(k) => comdats.get(&k.to_string()).copied(),
        };
        let i = *index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[i].push(gv);
    }
    groups.into_iter().flatten().collect()
}

/// Finds the flag arrays of `m` and maps each flag to the nodes of its
/// block. None when the module has no `__sancov_bools` array.
pub(crate) fn scan(
    m: &Module,
    comdats: &HashMap<String, usize>,
    blocks: &BlockNodes,
    g: &Icfg,
) -> Option<SancovMap> {
    let mut map = SancovMap::default();
    let mut by_name: HashMap<&Name, usize> = HashMap::new();
    for gv in section_order(m, comdats) {
        let len = array_len(gv).unwrap_or(1);
        by_name.insert(&gv.name, map.arrays.len());
        let global = match &gv.name {
            Name::Name(s) => s.to_string(),
            Name::Number(k) => k.to_string(),
        };
        map.arrays.push(SancovArray {
            global,
            function: None,
            len,
            first_flag: map.flags.len(),
        });
        map.flags.extend((0..len).map(|_| SancovFlag {
            array: map.arrays.len() - 1,
            function: String::new(),
            block: String::new(),
            ran: None,
            not_ran: Vec::new(),
            exact: false,
        }));
    }
    if map.arrays.is_empty() {
        return None;
    }
    // Stores per flag: (function, block index).
    let mut stores: Vec<Vec<(&Function, usize)>> = vec![Vec::new(); map.flags.len()];
    for f in &m.functions {
        for (bi, bb) in f.basic_blocks.iter().enumerate() {
            for inst in &bb.instrs {
                let Instruction::Store(s) = inst else {
                    continue;
                };
                let Some((name, k)) = flag_ref(&s.address) else {
                    continue;
                };
                let Some(&a) = by_name.get(name) else {
                    continue;
                };
                if k < map.arrays[a].len {
                    stores[map.arrays[a].first_flag + k].push((f, bi));
                }
            }
        }
    }
    for (i, st) in stores.iter().enumerate() {
        let [(f, si)] = st.as_slice() else {
            map.unmapped += 1;
            continue;
        };
        let Some(ranges) = blocks.get(&f.name) else {
            map.unmapped += 1;
            continue;
        };
        let a = map.flags[i].array;
        map.arrays[a].function.get_or_insert_with(|| f.name.clone());
        let flag = &mut map.flags[i];
        flag.function = f.name.clone();
        let nodes = |b: usize| ranges[b].clone().map(|n| NodeId::new(n as usize));
        let entry = g
            .function_by_name(&f.name)
            .and_then(|fid| g.function(fid).entry);
        match pattern(f, *si) {
            Some((l, t)) => {
                flag.exact = true;
                flag.block = block_name(&f.basic_blocks[l].name);
                flag.ran = nodes(l).next();
                flag.not_ran.extend(nodes(l));
                flag.not_ran.extend(nodes(*si));
                if let Some(t) = t {
                    flag.not_ran.extend(nodes(t));
                }
                if l == 0 {
                    flag.not_ran.extend(entry);
                }
            }
            None => {
                map.inexact += 1;
                flag.block = block_name(&f.basic_blocks[*si].name);
                flag.ran = nodes(*si).next();
            }
        }
    }
    Some(map)
}

/// For the store block `s`: `(L, Some(T))` when `s` and its single
/// predecessor `L` have clang's shape (L loads the same flag and
/// branches to `s` or `T`; `s` only stores and branches to `T`), with `T`
/// only when every predecessor of `T` is `L` or `s`.
fn pattern(f: &Function, s: usize) -> Option<(usize, Option<usize>)> {
    let index = block_index(f);
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); f.basic_blocks.len()];
    for (i, b) in f.basic_blocks.iter().enumerate() {
        for n in successors(&b.term) {
            if let Some(&j) = index.get(n) {
                preds[j].push(i);
            }
        }
    }
    let sb = &f.basic_blocks[s];
    // S: exactly the store, then `br T`.
    let [Instruction::Store(store)] = sb.instrs.as_slice() else {
        return None;
    };
    let Terminator::Br(sbr) = &sb.term else {
        return None;
    };
    let t = *index.get(&sbr.dest)?;
    let [l] = preds[s].as_slice() else {
        return None;
    };
    let lb = &f.basic_blocks[*l];
    let Terminator::CondBr(c) = &lb.term else {
        return None;
    };
    if index.get(&c.true_dest) != Some(&s) || index.get(&c.false_dest) != Some(&t) {
        return None;
    }
    let target = flag_ref(&store.address)?;
    let loads = lb.instrs.iter().any(|i| match i {
        Instruction::Load(ld) => flag_ref(&ld.address) == Some(target),
        _ => false,
    });
    if !loads {
        return None;
    }
    let t_only = preds[t].iter().all(|&p| p == *l || p == s) && t != *l && t != s;
    Some((*l, t_only.then_some(t)))
}
