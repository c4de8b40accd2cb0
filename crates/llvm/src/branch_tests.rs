//! Branch tests of the variables of the [`VarMap`](crate::values): the
//! branches whose condition is a load of a kept variable, through only
//! `sext`/`zext`/`trunc`, compared with a constant (`postmortem_formats::vars::Test`).
//!
//! **The argument.** A test is a `load` of the variable's address in
//! basic block K whose value flows, through only `sext`, `zext` and
//! `trunc` instructions of K, into K's terminator: `br i1 (icmp pred v,
//! C)` or `(icmp pred C, v)` with C a constant integer or null, `br i1
//! (trunc v to i1)` (a `bool`), or `switch v`; the `br`'s condition may
//! also be such an `icmp` seen through C's truth values (`icmp ne/eq X,
//! 0` of an `icmp` widened by `zext`/`sext`, as clang makes of
//! `if (l_unlikely(n == 0))`; `eq` swaps the successors: [`peel`]).
//! Required: the load is
//! neither volatile nor atomic; between the load and the terminator no
//! instruction of K can write memory (no `store`, no call other than
//! `llvm.dbg.*`, no `atomicrmw`/`cmpxchg`): a callee could store a
//! global, and for a local the rule is kept as simple; the successors'
//! first nodes differ, and the graph has the flow edges from the branch's
//! node B (the last node of K: the terminator is lowered last) to each of
//! them. On a real run, let V be the variable's value at the crash. Any
//! execution of B after which no store to the variable happens (for a
//! local: in its activation; a function whose locals are read is not
//! recursive, else the value only constrains its own frame) loaded V:
//! the variable's stores are all in the graph (its address does not
//! escape), the ones in K before the load are before it, and nothing
//! between the load and the branch can write it. So the branch went to
//! the successor the comparison gives for V, whose first node is the
//! next node of the path after B, unless the path ends in B (the crash
//! in K: `vars::constraints` leaves out tests whose B is a crash
//! candidate).
//!
//! **Left out** (no test is recorded): functions that may be optimised
//! (no `optnone`: a load may have been speculated or merged, see
//! `lower::optimised`); the locals of a function that calls `setjmp`
//! and its kin (a `longjmp` back into the function: the argument would
//! still hold for memory, but it is not worth the doubt); `invoke` and
//! every terminator other than `br` and `switch` (C++ unwinding never
//! passes between a load and a `br` with no call between them). Code a
//! signal handler or another thread may run is handled where the
//! constraints are solved (`ProcessWide` drops the tests).

use llvm_ir::{Constant, Function, Instruction, Name, Operand, Terminator, Type};
use postmortem_core::{Icfg, NodeId};
use postmortem_formats::vars::{Cast, Pred, Test, TestKind};
use std::collections::HashMap;
use std::ops::Range;

/// A variable as the scan knows it: its IR name (the global's or the
/// `alloca`'s) and the byte offset of the field.
pub(crate) type Key = (String, u64);

/// Whether `f` calls a function that may return twice (`setjmp`...).
pub(crate) fn calls_setjmp(f: &Function) -> bool {
    f.basic_blocks.iter().flat_map(|b| &b.instrs).any(|i| {
        let Instruction::Call(c) = i else {
            return false;
        };
        match c.function.as_ref().right() {
            Some(Operand::ConstantOperand(k)) => matches!(k.as_ref(),
                Constant::GlobalReference { name: Name::Name(n), .. } if crate::libc::SETJMP_NAMES.contains(&n.as_str())),
            _ => false,
        }
    })
}

/// The tests of one function, by variable: `resolve` names the variable
/// a load's address is (None: not a kept variable). `ranges` are the
/// function's blocks' node ranges. Nothing for a function that may be
/// optimised.
pub(crate) fn tests_of(
    f: &Function,
    ranges: Option<&Vec<Range<u32>>>,
    g: &Icfg,
    resolve: &dyn Fn(&Operand) -> Option<Key>,
) -> HashMap<Key, Vec<Test>> {
    let mut out: HashMap<Key, Vec<Test>> = HashMap::new();
    let Some(ranges) = ranges else {
        return out;
    };
    if crate::lower::optimised(f) || ranges.len() != f.basic_blocks.len() {
        return out;
    }
    let index = crate::sancov::block_index(f);
    let first = |name: &Name| -> Option<u32> {
        let r = ranges.get(*index.get(name)?)?;
        (!r.is_empty()).then_some(r.start)
    };
    for (bi, bb) in f.basic_blocks.iter().enumerate() {
        let r = &ranges[bi];
        if r.is_empty() {
            continue;
        }
        let branch = r.end - 1;
        let found = match &bb.term {
            Terminator::CondBr(x) => (|| {
                let (mut then_node, mut else_node) = (first(&x.true_dest)?, first(&x.false_dest)?);
                let (cond, negated) = peel(&bb.instrs, &x.condition);
                if negated {
                    std::mem::swap(&mut then_node, &mut else_node);
                }
                let (load, casts, pred, constant, swapped) = condition(&bb.instrs, &cond)?;
                Some((
                    load,
                    casts,
                    TestKind::Cmp {
                        pred,
                        constant,
                        swapped,
                        then_node,
                        else_node,
                    },
                ))
            })(),
            Terminator::Switch(x) => (|| {
                let (load, casts) = chain(&bb.instrs, &x.operand)?;
                let mut cases = Vec::with_capacity(x.dests.len());
                for (c, dest) in &x.dests {
                    cases.push((int_constant(c)?, first(dest)?));
                }
                Some((
                    load,
                    casts,
                    TestKind::Switch {
                        cases,
                        default: first(&x.default_dest)?,
                    },
                ))
            })(),
            _ => None,
        };
        let Some((load, casts, kind)) = found else {
            continue;
        };
        let Instruction::Load(l) = &bb.instrs[load] else {
            continue;
        };
        if l.volatile || l.atomicity.is_some() || writes_after(&bb.instrs[load + 1..]) {
            continue;
        }
        let Some(key) = resolve(&l.address) else {
            continue;
        };
        let t = Test {
            branch,
            load_bits: 0, // the variable's width, set by the caller
            casts,
            kind,
        };
        let succs = t.successors();
        let edges = succs.iter().all(|&s| {
            g.succs(NodeId::new(branch as usize))
                .any(|(n, _)| n.as_u32() == s)
        });
        if succs.len() < 2 || !edges {
            continue;
        }
        out.entry(key).or_default().push(t);
    }
    out
}

/// Whether an instruction of `rest` may write memory.
fn writes_after(rest: &[Instruction]) -> bool {
    rest.iter().any(|i| match i {
        Instruction::Store(_) | Instruction::AtomicRMW(_) | Instruction::CmpXchg(_) => true,
        Instruction::Call(c) => !matches!(c.function.as_ref().right(),
            Some(Operand::ConstantOperand(k)) if matches!(k.as_ref(),
                Constant::GlobalReference { name: Name::Name(n), .. } if n.starts_with("llvm.dbg."))),
        Instruction::VAArg(_) => true,
        _ => false,
    })
}

/// The instruction of `instrs` that defines `op`.
fn def<'i>(instrs: &'i [Instruction], op: &Operand) -> Option<(usize, &'i Instruction)> {
    let Operand::LocalOperand { name, .. } = op else {
        return None;
    };
    instrs
        .iter()
        .enumerate()
        .find(|(_, i)| i.try_get_result() == Some(name))
}

/// Bits of an integer type, 64 for a pointer.
fn bits(t: &Type) -> Option<u32> {
    match t {
        Type::IntegerType { bits } if *bits <= 64 => Some(*bits),
        Type::PointerType { .. } => Some(64),
        _ => None,
    }
}

/// `op` as a load of the block through casts only: the load's index and
/// the casts, in order.
pub(crate) fn chain(instrs: &[Instruction], op: &Operand) -> Option<(usize, Vec<Cast>)> {
    let mut casts = Vec::new();
    let mut op = op.clone();
    for _ in 0..8 {
        let (i, inst) = def(instrs, &op)?;
        let (next, cast) = match inst {
            Instruction::Load(_) => {
                casts.reverse();
                return Some((i, casts));
            }
            Instruction::SExt(x) => (&x.operand, Cast::Sext(bits(&x.to_type)?)),
            Instruction::ZExt(x) => (&x.operand, Cast::Zext(bits(&x.to_type)?)),
            Instruction::Trunc(x) => (&x.operand, Cast::Trunc(bits(&x.to_type)?)),
            _ => return None,
        };
        casts.push(cast);
        op = next.clone();
    }
    None
}

/// A constant integer or null.
fn int_constant(c: &Constant) -> Option<u64> {
    match c {
        Constant::Int { bits, value } if *bits <= 64 => Some(*value),
        Constant::Null(_) => Some(0),
        _ => None,
    }
}

fn const_operand(op: &Operand) -> Option<u64> {
    match op {
        Operand::ConstantOperand(c) => int_constant(c),
        _ => None,
    }
}

/// The comparison a condition tests, through C's truth values: clang
/// turns `if (l_unlikely(n == 0))` (a macro `(x) != 0`, or
/// `__builtin_expect`'s argument) into `icmp ne (sext (zext (icmp ne
/// (zext (icmp eq n, 0)), 0))), 0`. Each `icmp ne X, 0` (or `eq`,
/// negated) whose X is an `i1` comparison widened by `zext`/`sext` only
/// is that comparison (all pure, so no write comes between). Returns the
/// innermost condition and whether it is negated.
pub(crate) fn peel(instrs: &[Instruction], cond: &Operand) -> (Operand, bool) {
    let (mut op, mut negated) = (cond.clone(), false);
    for _ in 0..8 {
        let Some((_, Instruction::ICmp(c))) = def(instrs, &op) else {
            break;
        };
        let eq = match c.predicate {
            llvm_ir::IntPredicate::EQ => true,
            llvm_ir::IntPredicate::NE => false,
            _ => break,
        };
        let other = match (const_operand(&c.operand0), const_operand(&c.operand1)) {
            (_, Some(0)) => &c.operand0,
            (Some(0), _) => &c.operand1,
            _ => break,
        };
        let mut inner = other.clone();
        let mut widened = false;
        loop {
            inner = match def(instrs, &inner) {
                Some((_, Instruction::ZExt(x))) => x.operand.clone(),
                Some((_, Instruction::SExt(x))) => x.operand.clone(),
                _ => break,
            };
            widened = true;
        }
        if !widened || !matches!(def(instrs, &inner), Some((_, Instruction::ICmp(_)))) {
            break;
        }
        op = inner;
        negated ^= eq;
    }
    (op, negated)
}

/// A branch condition on a load: `icmp` of the chain and a constant (either
/// side), or the chain itself (an `i1`, tested as `!= 0`).
#[allow(clippy::type_complexity)]
fn condition(
    instrs: &[Instruction],
    cond: &Operand,
) -> Option<(usize, Vec<Cast>, Pred, u64, bool)> {
    if let Some((_, Instruction::ICmp(c))) = def(instrs, cond) {
        let pred = match c.predicate {
            llvm_ir::IntPredicate::EQ => Pred::Eq,
            llvm_ir::IntPredicate::NE => Pred::Ne,
            llvm_ir::IntPredicate::UGT => Pred::Ugt,
            llvm_ir::IntPredicate::UGE => Pred::Uge,
            llvm_ir::IntPredicate::ULT => Pred::Ult,
            llvm_ir::IntPredicate::ULE => Pred::Ule,
            llvm_ir::IntPredicate::SGT => Pred::Sgt,
            llvm_ir::IntPredicate::SGE => Pred::Sge,
            llvm_ir::IntPredicate::SLT => Pred::Slt,
            llvm_ir::IntPredicate::SLE => Pred::Sle,
        };
        if let Some(k) = const_operand(&c.operand1) {
            let (load, casts) = chain(instrs, &c.operand0)?;
            return Some((load, casts, pred, k, false));
        }
        let k = const_operand(&c.operand0)?;
        let (load, casts) = chain(instrs, &c.operand1)?;
        return Some((load, casts, pred, k, true));
    }
    let (load, casts) = chain(instrs, cond)?;
    // Only an `i1` (a truncated `bool`) is a condition by itself.
    if casts.last() != Some(&Cast::Trunc(1)) {
        return None;
    }
    Some((load, casts, Pred::Ne, 0, false))
}
