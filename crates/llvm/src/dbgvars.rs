//! Which `alloca` holds which source variable: the `llvm.dbg.declare`
//! calls, which `llvm-ir` 0.11 keeps only as opaque metadata operands.
//!
//! The module is parsed a second time through LLVM's C API (`llvm-sys`,
//! the copy `llvm-ir` links), the whole module this time, since the calls
//! are in the bodies. Each `llvm.dbg.declare(metadata ptr %a, metadata
//! !DILocalVariable(name: "x", line: 12, ...), ...)` gives the alloca `%a`
//! by its position in its function (block index, instruction index: the
//! positions `llvm-ir` keeps, terminators last) and the variable's name and
//! declaration line. Nothing else is read.

use std::collections::HashMap;

/// A declared local variable: its source name and declaration line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    /// The source name.
    pub name: String,
    /// The declaration line (0 when unknown).
    pub line: u32,
    /// For a variable of a function inlined here, the call it was
    /// inlined at (line, column: the innermost `inlinedAt` of the
    /// declaration's location), which tells its copies apart when the
    /// function is inlined twice.
    pub inlined_at: Option<(u32, u32)>,
}

/// For each defined function (by its IR name), the declared variables of
/// its allocas, by (block index, instruction index).
pub type DeclaredVars = HashMap<String, HashMap<(usize, usize), Declared>>;

/// Per defined function, per instruction position (block index,
/// instruction index, terminators last), the call sites its code was
/// inlined at, innermost first: (file name, line) of each `inlinedAt`
/// location of its `!dbg`. Only instructions with such a chain are listed.
pub type InlinedAt = HashMap<String, Chains>;

/// One function's part of [`InlinedAt`].
pub type Chains = HashMap<(usize, usize), Vec<(String, u32)>>;

/// Reads the declared variables of a module (bitcode or textual IR).
/// Empty if LLVM cannot read the bytes (the main parse reports that).
/// Also returns the inline chains of every instruction ([`InlinedAt`]),
/// from the same parse.
pub(crate) fn read_all(bytes: &[u8], bitcode: bool) -> (DeclaredVars, InlinedAt) {
    use llvm_sys::bit_reader::LLVMParseBitcodeInContext2;
    use llvm_sys::core::*;
    use llvm_sys::ir_reader::LLVMParseIRInContext;
    let mut out = DeclaredVars::new();
    let mut inlined = InlinedAt::new();
    // SAFETY: plain LLVM C API use. The context outlives the module; the
    // memory buffer is consumed by the IR parser (and disposed by us for
    // bitcode, which does not take it); module and context are disposed
    // exactly once; strings LLVM returns are copied before disposal.
    unsafe {
        let ctx = LLVMContextCreate();
        let buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(
            bytes.as_ptr() as *const _,
            bytes.len(),
            c"module".as_ptr(),
        );
        let mut module = std::ptr::null_mut();
        let failed = if bitcode {
            let r = LLVMParseBitcodeInContext2(ctx, buf, &mut module);
            LLVMDisposeMemoryBuffer(buf);
            r != 0
        } else {
            let mut msg = std::ptr::null_mut();
            let r = LLVMParseIRInContext(ctx, buf, &mut module, &mut msg);
            if !msg.is_null() {
                LLVMDisposeMessage(msg);
            }
            r != 0
        };
        if failed || module.is_null() {
            LLVMContextDispose(ctx);
            return (out, inlined);
        }
        let mut f = LLVMGetFirstFunction(module);
        while !f.is_null() {
            if LLVMIsDeclaration(f) == 0 {
                let vars = function_vars(f);
                if !vars.is_empty() {
                    out.insert(value_name(f), vars);
                }
                let chains = function_inlined(f);
                if !chains.is_empty() {
                    inlined.insert(value_name(f), chains);
                }
            }
            f = LLVMGetNextFunction(f);
        }
        LLVMDisposeModule(module);
        LLVMContextDispose(ctx);
    }
    (out, inlined)
}

/// The inline chains of `f`'s instructions (see [`InlinedAt`]).
unsafe fn function_inlined(f: llvm_sys::prelude::LLVMValueRef) -> Chains {
    use llvm_sys::core::*;
    use llvm_sys::debuginfo::*;
    let mut out = HashMap::new();
    let mut bb = LLVMGetFirstBasicBlock(f);
    let mut bi = 0usize;
    while !bb.is_null() {
        let mut i = LLVMGetFirstInstruction(bb);
        let mut ii = 0usize;
        while !i.is_null() {
            let loc = LLVMInstructionGetDebugLoc(i);
            let mut chain = Vec::new();
            let mut at = if loc.is_null() {
                loc
            } else {
                LLVMDILocationGetInlinedAt(loc)
            };
            // A chain is short; the bound only guards against a cycle.
            while !at.is_null() && chain.len() < 64 {
                let line = LLVMDILocationGetLine(at);
                let scope = LLVMDILocationGetScope(at);
                let file = if scope.is_null() {
                    std::ptr::null_mut()
                } else {
                    LLVMDIScopeGetFile(scope)
                };
                if !file.is_null() && line != 0 {
                    let mut len = 0u32;
                    let p = LLVMDIFileGetFilename(file, &mut len);
                    if !p.is_null() {
                        let name = std::slice::from_raw_parts(p as *const u8, len as usize);
                        chain.push((String::from_utf8_lossy(name).into_owned(), line));
                    }
                }
                at = LLVMDILocationGetInlinedAt(at);
            }
            if !chain.is_empty() {
                out.insert((bi, ii), chain);
            }
            i = LLVMGetNextInstruction(i);
            ii += 1;
        }
        bb = LLVMGetNextBasicBlock(bb);
        bi += 1;
    }
    out
}

/// The name of a value, copied.
unsafe fn value_name(v: llvm_sys::prelude::LLVMValueRef) -> String {
    let mut len = 0usize;
    let p = llvm_sys::core::LLVMGetValueName2(v, &mut len);
    if p.is_null() {
        return String::new();
    }
    let s = std::slice::from_raw_parts(p as *const u8, len);
    String::from_utf8_lossy(s).into_owned()
}

/// The declared variables of one function's allocas.
unsafe fn function_vars(f: llvm_sys::prelude::LLVMValueRef) -> HashMap<(usize, usize), Declared> {
    use llvm_sys::core::*;
    let mut pos: HashMap<llvm_sys::prelude::LLVMValueRef, (usize, usize)> = HashMap::new();
    let mut declares = Vec::new();
    let mut bb = LLVMGetFirstBasicBlock(f);
    let mut bi = 0usize;
    while !bb.is_null() {
        let mut i = LLVMGetFirstInstruction(bb);
        let mut ii = 0usize;
        while !i.is_null() {
            if !LLVMIsAAllocaInst(i).is_null() {
                pos.insert(i, (bi, ii));
            } else if !LLVMIsACallInst(i).is_null() {
                let callee = LLVMGetCalledValue(i);
                if !callee.is_null() && value_name(callee) == "llvm.dbg.declare" {
                    declares.push(i);
                }
            }
            i = LLVMGetNextInstruction(i);
            ii += 1;
        }
        bb = LLVMGetNextBasicBlock(bb);
        bi += 1;
    }
    let mut out = HashMap::new();
    for call in declares {
        let Some(alloca) = wrapped_value(LLVMGetOperand(call, 0)) else {
            continue;
        };
        let Some(&at) = pos.get(&alloca) else {
            continue;
        };
        let var = LLVMGetOperand(call, 1);
        let Some(name) = variable_name(var) else {
            continue;
        };
        let line = llvm_sys::debuginfo::LLVMDIVariableGetLine(LLVMValueAsMetadata(var));
        let loc = llvm_sys::debuginfo::LLVMInstructionGetDebugLoc(call);
        let inlined = if loc.is_null() {
            loc
        } else {
            llvm_sys::debuginfo::LLVMDILocationGetInlinedAt(loc)
        };
        let inlined_at = (!inlined.is_null()).then(|| {
            (
                llvm_sys::debuginfo::LLVMDILocationGetLine(inlined),
                llvm_sys::debuginfo::LLVMDILocationGetColumn(inlined),
            )
        });
        out.insert(
            at,
            Declared {
                name,
                line,
                inlined_at,
            },
        );
    }
    out
}

/// The value wrapped by a `metadata ptr %a` operand.
unsafe fn wrapped_value(
    md: llvm_sys::prelude::LLVMValueRef,
) -> Option<llvm_sys::prelude::LLVMValueRef> {
    use llvm_sys::core::*;
    if md.is_null() || LLVMIsAMDNode(md).is_null() || LLVMGetMDNodeNumOperands(md) != 1 {
        return None;
    }
    let mut v = [std::ptr::null_mut()];
    LLVMGetMDNodeOperands(md, v.as_mut_ptr());
    (!v[0].is_null()).then_some(v[0])
}

/// The `name:` of a `DILocalVariable` operand (its operand 1, an
/// `MDString`).
unsafe fn variable_name(md: llvm_sys::prelude::LLVMValueRef) -> Option<String> {
    use llvm_sys::core::*;
    if md.is_null() || LLVMIsAMDNode(md).is_null() {
        return None;
    }
    let n = LLVMGetMDNodeNumOperands(md) as usize;
    if n < 2 {
        return None;
    }
    let mut ops = vec![std::ptr::null_mut(); n];
    LLVMGetMDNodeOperands(md, ops.as_mut_ptr());
    if ops[1].is_null() {
        return None;
    }
    let mut len = 0u32;
    let p = LLVMGetMDString(ops[1], &mut len);
    if p.is_null() {
        return None;
    }
    let s = std::slice::from_raw_parts(p as *const u8, len as usize);
    Some(String::from_utf8_lossy(s).into_owned())
}
