//! Generic views of `llvm-ir` instructions that the crate does not offer:
//! every operand of an instruction or terminator, every constant nested in
//! a constant, and opcode names. The matches are exhaustive, so a new
//! `llvm-ir` variant is a compile error here rather than a silently
//! missed function address.

use either::Either;
use llvm_ir::{Constant, ConstantRef, Instruction, Operand, Terminator};

/// Calls `f` on every operand of `inst`, except the callee of a call (the
/// caller looks at that one itself).
pub(crate) fn instruction_operands<'a>(inst: &'a Instruction, f: &mut impl FnMut(&'a Operand)) {
    use Instruction as I;
    match inst {
        I::Add(x) => bin(f, &x.operand0, &x.operand1),
        I::Sub(x) => bin(f, &x.operand0, &x.operand1),
        I::Mul(x) => bin(f, &x.operand0, &x.operand1),
        I::UDiv(x) => bin(f, &x.operand0, &x.operand1),
        I::SDiv(x) => bin(f, &x.operand0, &x.operand1),
        I::URem(x) => bin(f, &x.operand0, &x.operand1),
        I::SRem(x) => bin(f, &x.operand0, &x.operand1),
        I::And(x) => bin(f, &x.operand0, &x.operand1),
        I::Or(x) => bin(f, &x.operand0, &x.operand1),
        I::Xor(x) => bin(f, &x.operand0, &x.operand1),
        I::Shl(x) => bin(f, &x.operand0, &x.operand1),
        I::LShr(x) => bin(f, &x.operand0, &x.operand1),
        I::AShr(x) => bin(f, &x.operand0, &x.operand1),
        I::FAdd(x) => bin(f, &x.operand0, &x.operand1),
        I::FSub(x) => bin(f, &x.operand0, &x.operand1),
        I::FMul(x) => bin(f, &x.operand0, &x.operand1),
        I::FDiv(x) => bin(f, &x.operand0, &x.operand1),
        I::FRem(x) => bin(f, &x.operand0, &x.operand1),
        I::FNeg(x) => f(&x.operand),
        I::ExtractElement(x) => bin(f, &x.vector, &x.index),
        I::InsertElement(x) => {
            bin(f, &x.vector, &x.element);
            f(&x.index)
        }
        I::ShuffleVector(x) => bin(f, &x.operand0, &x.operand1),
        I::ExtractValue(x) => f(&x.aggregate),
        I::InsertValue(x) => bin(f, &x.aggregate, &x.element),
        I::Alloca(x) => f(&x.num_elements),
        I::Load(x) => f(&x.address),
        I::Store(x) => bin(f, &x.address, &x.value),
        I::Fence(_) => {}
        I::CmpXchg(x) => {
            bin(f, &x.address, &x.expected);
            f(&x.replacement)
        }
        I::AtomicRMW(x) => bin(f, &x.address, &x.value),
        I::GetElementPtr(x) => {
            f(&x.address);
            x.indices.iter().for_each(&mut *f)
        }
        I::Trunc(x) => f(&x.operand),
        I::ZExt(x) => f(&x.operand),
        I::SExt(x) => f(&x.operand),
        I::FPTrunc(x) => f(&x.operand),
        I::FPExt(x) => f(&x.operand),
        I::FPToUI(x) => f(&x.operand),
        I::FPToSI(x) => f(&x.operand),
        I::UIToFP(x) => f(&x.operand),
        I::SIToFP(x) => f(&x.operand),
        I::PtrToInt(x) => f(&x.operand),
        I::IntToPtr(x) => f(&x.operand),
        I::BitCast(x) => f(&x.operand),
        I::AddrSpaceCast(x) => f(&x.operand),
        I::ICmp(x) => bin(f, &x.operand0, &x.operand1),
        I::FCmp(x) => bin(f, &x.operand0, &x.operand1),
        I::Phi(x) => x.incoming_values.iter().for_each(|(o, _)| f(o)),
        I::Select(x) => {
            bin(f, &x.condition, &x.true_value);
            f(&x.false_value)
        }
        I::Freeze(x) => f(&x.operand),
        I::Call(x) => x.arguments.iter().for_each(|(o, _)| f(o)),
        I::VAArg(x) => f(&x.arg_list),
        I::LandingPad(_) => {}
        I::CatchPad(x) => {
            f(&x.catch_switch);
            x.args.iter().for_each(&mut *f)
        }
        I::CleanupPad(x) => {
            f(&x.parent_pad);
            x.args.iter().for_each(&mut *f)
        }
    }
}

fn bin<'a>(f: &mut impl FnMut(&'a Operand), a: &'a Operand, b: &'a Operand) {
    f(a);
    f(b);
}

/// Calls `f` on every operand of `term`, except the callee of an `invoke`
/// or `callbr`.
pub(crate) fn terminator_operands<'a>(term: &'a Terminator, f: &mut impl FnMut(&'a Operand)) {
    use Terminator as T;
    match term {
        T::Ret(x) => x.return_operand.iter().for_each(&mut *f),
        T::Br(_) | T::Unreachable(_) => {}
        T::CondBr(x) => f(&x.condition),
        T::Switch(x) => f(&x.operand),
        T::IndirectBr(x) => f(&x.operand),
        T::Invoke(x) => x.arguments.iter().for_each(|(o, _)| f(o)),
        T::Resume(x) => f(&x.operand),
        T::CleanupRet(x) => f(&x.cleanup_pad),
        T::CatchRet(x) => f(&x.catch_pad),
        T::CatchSwitch(x) => f(&x.parent_pad),
        T::CallBr(x) => x.arguments.iter().for_each(|(o, _)| f(o)),
    }
}

/// The callee operand of a call-like instruction, if it is not inline
/// assembly.
pub(crate) fn callee(
    function: &Either<llvm_ir::instruction::InlineAssembly, Operand>,
) -> Option<&Operand> {
    match function {
        Either::Left(_) => None,
        Either::Right(op) => Some(op),
    }
}

/// Calls `f` on `c` and every constant nested in it (aggregate elements and
/// constant-expression operands), with an explicit stack.
pub(crate) fn walk_constant<'a>(c: &'a ConstantRef, f: &mut impl FnMut(&'a Constant)) {
    let mut stack: Vec<&'a ConstantRef> = vec![c];
    while let Some(c) = stack.pop() {
        let c: &'a Constant = c.as_ref();
        f(c);
        use Constant as C;
        match c {
            C::Int { .. }
            | C::Float(_)
            | C::Null(_)
            | C::AggregateZero(_)
            | C::Undef(_)
            | C::Poison(_)
            | C::BlockAddress
            | C::GlobalReference { .. }
            | C::TokenNone => {}
            C::Struct { values, .. } => stack.extend(values),
            C::Array { elements, .. } => stack.extend(elements),
            C::Vector(v) => stack.extend(v),
            C::Add(x) => stack.extend([&x.operand0, &x.operand1]),
            C::Sub(x) => stack.extend([&x.operand0, &x.operand1]),
            C::Mul(x) => stack.extend([&x.operand0, &x.operand1]),
            C::UDiv(x) => stack.extend([&x.operand0, &x.operand1]),
            C::SDiv(x) => stack.extend([&x.operand0, &x.operand1]),
            C::URem(x) => stack.extend([&x.operand0, &x.operand1]),
            C::SRem(x) => stack.extend([&x.operand0, &x.operand1]),
            C::And(x) => stack.extend([&x.operand0, &x.operand1]),
            C::Or(x) => stack.extend([&x.operand0, &x.operand1]),
            C::Xor(x) => stack.extend([&x.operand0, &x.operand1]),
            C::Shl(x) => stack.extend([&x.operand0, &x.operand1]),
            C::LShr(x) => stack.extend([&x.operand0, &x.operand1]),
            C::AShr(x) => stack.extend([&x.operand0, &x.operand1]),
            C::FAdd(x) => stack.extend([&x.operand0, &x.operand1]),
            C::FSub(x) => stack.extend([&x.operand0, &x.operand1]),
            C::FMul(x) => stack.extend([&x.operand0, &x.operand1]),
            C::FDiv(x) => stack.extend([&x.operand0, &x.operand1]),
            C::FRem(x) => stack.extend([&x.operand0, &x.operand1]),
            C::ExtractElement(x) => stack.extend([&x.vector, &x.index]),
            C::InsertElement(x) => stack.extend([&x.vector, &x.element, &x.index]),
            C::ShuffleVector(x) => stack.extend([&x.operand0, &x.operand1, &x.mask]),
            C::ExtractValue(x) => stack.push(&x.aggregate),
            C::InsertValue(x) => stack.extend([&x.aggregate, &x.element]),
            C::GetElementPtr(x) => {
                stack.push(&x.address);
                stack.extend(&x.indices)
            }
            C::Trunc(x) => stack.push(&x.operand),
            C::ZExt(x) => stack.push(&x.operand),
            C::SExt(x) => stack.push(&x.operand),
            C::FPTrunc(x) => stack.push(&x.operand),
            C::FPExt(x) => stack.push(&x.operand),
            C::FPToUI(x) => stack.push(&x.operand),
            C::FPToSI(x) => stack.push(&x.operand),
            C::UIToFP(x) => stack.push(&x.operand),
            C::SIToFP(x) => stack.push(&x.operand),
            C::PtrToInt(x) => stack.push(&x.operand),
            C::IntToPtr(x) => stack.push(&x.operand),
            C::BitCast(x) => stack.push(&x.operand),
            C::AddrSpaceCast(x) => stack.push(&x.operand),
            C::ICmp(x) => stack.extend([&x.operand0, &x.operand1]),
            C::FCmp(x) => stack.extend([&x.operand0, &x.operand1]),
            C::Select(x) => stack.extend([&x.condition, &x.true_value, &x.false_value]),
        }
    }
}

/// `c` with pointer casts (`bitcast`, `addrspacecast`) stripped.
pub(crate) fn strip_casts(mut c: &Constant) -> &Constant {
    loop {
        c = match c {
            Constant::BitCast(x) => x.operand.as_ref(),
            Constant::AddrSpaceCast(x) => x.operand.as_ref(),
            _ => return c,
        }
    }
}

/// The LLVM opcode name of an instruction.
pub(crate) fn opcode(inst: &Instruction) -> &'static str {
    macro_rules! names {
        ($($v:ident => $s:literal),* $(,)?) => {
            match inst { $(Instruction::$v(_) => $s,)* }
        };
    }
    names! {
        Add => "add", Sub => "sub", Mul => "mul", UDiv => "udiv", SDiv => "sdiv", URem => "urem",
        SRem => "srem", And => "and", Or => "or", Xor => "xor", Shl => "shl", LShr => "lshr",
        AShr => "ashr", FAdd => "fadd", FSub => "fsub", FMul => "fmul", FDiv => "fdiv",
        FRem => "frem", FNeg => "fneg", ExtractElement => "extractelement",
        InsertElement => "insertelement", ShuffleVector => "shufflevector",
        ExtractValue => "extractvalue", InsertValue => "insertvalue", Alloca => "alloca",
        Load => "load", Store => "store", Fence => "fence", CmpXchg => "cmpxchg",
        AtomicRMW => "atomicrmw", GetElementPtr => "getelementptr", Trunc => "trunc",
        ZExt => "zext", SExt => "sext", FPTrunc => "fptrunc", FPExt => "fpext",
        FPToUI => "fptoui", FPToSI => "fptosi", UIToFP => "uitofp", SIToFP => "sitofp",
        PtrToInt => "ptrtoint", IntToPtr => "inttoptr", BitCast => "bitcast",
        AddrSpaceCast => "addrspacecast", ICmp => "icmp", FCmp => "fcmp", Phi => "phi",
        Select => "select", Freeze => "freeze", Call => "call", VAArg => "va_arg",
        LandingPad => "landingpad", CatchPad => "catchpad", CleanupPad => "cleanuppad",
    }
}

/// The LLVM opcode name of a terminator.
pub(crate) fn term_opcode(term: &Terminator) -> &'static str {
    match term {
        Terminator::Ret(_) => "ret",
        Terminator::Br(_) | Terminator::CondBr(_) => "br",
        Terminator::Switch(_) => "switch",
        Terminator::IndirectBr(_) => "indirectbr",
        Terminator::Invoke(_) => "invoke",
        Terminator::Resume(_) => "resume",
        Terminator::Unreachable(_) => "unreachable",
        Terminator::CleanupRet(_) => "cleanupret",
        Terminator::CatchRet(_) => "catchret",
        Terminator::CatchSwitch(_) => "catchswitch",
        Terminator::CallBr(_) => "callbr",
    }
}
