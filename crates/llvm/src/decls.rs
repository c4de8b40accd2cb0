//! Which declared (body-less) functions carry the `noreturn` or the
//! `returns_twice` attribute.
//!
//! `llvm-ir` 0.11 keeps function attributes for definitions and call sites
//! but not for declarations, so this module reads them on its own:
//!
//! * bitcode: a *lazy* LLVM module (`LLVMGetBitcodeModuleInContext2`) reads
//!   the module-level records only, never the function bodies, so it costs
//!   a few milliseconds even for sqlite;
//! * textual IR: a line scan of `declare` lines (inline `noreturn`, or an
//!   attribute group `#N`) and of `attributes #N = { ... }` lines, the form
//!   in which LLVM prints both.
//!
//! clang copies `noreturn` onto every direct call site anyway; this covers
//! IR from other producers and hand-written IR.

use std::collections::HashSet;

/// Attributes of declarations that `llvm-ir` does not keep.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeclAttributes {
    /// Declarations that never return.
    pub noreturn: HashSet<String>,
    /// Declarations that may return twice (`setjmp` and its family).
    pub returns_twice: HashSet<String>,
    /// For each global variable of section `__sancov_bools` that is in a
    /// comdat, the comdat as a small number (equal numbers, one comdat;
    /// `llvm-ir` 0.11 keeps no comdat names). The binary's flag order
    /// follows the comdats (see `sancov::section_order`).
    pub sancov_comdats: std::collections::HashMap<String, usize>,
    /// The source variables of allocas (`llvm.dbg.declare`), read from the
    /// whole module (see `dbgvars.rs`).
    pub declared: crate::dbgvars::DeclaredVars,
    /// The inline chains of the instructions (see
    /// [`crate::dbgvars::InlinedAt`]).
    pub inlined_at: crate::dbgvars::InlinedAt,
}

/// The comdat of a `__sancov_bools` global in textual IR: `comdat($name)`,
/// or a bare `comdat` (the global's own name). `@name = ... section
/// "__sancov_bools", comdat($f), align 1` -> (name, f).
fn sancov_comdat(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix('@')?;
    if !line.contains("section \"__sancov_bools\"") {
        return None;
    }
    let (name, after) = if let Some(q) = rest.strip_prefix('"') {
        let end = q.find('"')?;
        (unescape(&q[..end]), &q[end + 1..])
    } else {
        let end = rest.find([' ', '='])?;
        (rest[..end].to_string(), &rest[end..])
    };
    let at = after.find(", comdat")?;
    let tail = &after[at + ", comdat".len()..];
    let comdat = if let Some(t) = tail.strip_prefix("($") {
        let t = t.strip_prefix('"').unwrap_or(t);
        let end = t.find(['"', ')'])?;
        unescape(&t[..end])
    } else {
        name.clone()
    };
    Some((name, comdat))
}

/// Names of declarations with `noreturn` and with `returns_twice` in
/// textual IR.
pub(crate) fn from_text(text: &str) -> DeclAttributes {
    let mut groups: Vec<(&str, &str)> = Vec::new();
    let mut decls: Vec<(String, Vec<&str>)> = Vec::new();
    let mut sancov_comdats = std::collections::HashMap::new();
    let mut comdat_ids: std::collections::HashMap<String, usize> = Default::default();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some((global, comdat)) = sancov_comdat(t) {
            let n = comdat_ids.len();
            let id = *comdat_ids.entry(comdat).or_insert(n);
            sancov_comdats.insert(global, id);
        } else if let Some(rest) = t.strip_prefix("attributes ") {
            // attributes #3 = { noreturn nounwind "frame-pointer"="all" }
            let Some((group, body)) = rest.split_once('=') else {
                continue;
            };
            groups.push((group.trim(), body));
        } else if t.starts_with("declare ") {
            if let Some(d) = parse_declare(t) {
                decls.push(d);
            }
        }
    }
    let with = |word: &str| -> HashSet<String> {
        let in_group: HashSet<&str> = groups
            .iter()
            .filter(|(_, body)| has_word(body, word))
            .map(|(g, _)| *g)
            .collect();
        decls
            .iter()
            .filter(|(_, attrs)| attrs.iter().any(|a| *a == word || in_group.contains(a)))
            .map(|(name, _)| name.clone())
            .collect()
    };
    DeclAttributes {
        noreturn: with("noreturn"),
        returns_twice: with("returns_twice"),
        sancov_comdats,
        declared: Default::default(),
        inlined_at: Default::default(),
    }
}

/// `noreturn` as a whole word outside string attributes (`"noreturn"="x"`
/// would be a different, string attribute).
fn has_word(s: &str, word: &str) -> bool {
    let mut in_str = false;
    let mut tok_start = None;
    let bytes = s.as_bytes();
    for (i, &b) in bytes
        .iter()
        .enumerate()
        .chain(std::iter::once((bytes.len(), &b' ')))
    {
        if b == b'"' {
            in_str = !in_str;
            tok_start = None;
            continue;
        }
        if in_str {
            continue;
        }
        let word_char = b.is_ascii_alphanumeric() || b == b'_';
        match (word_char, tok_start) {
            (true, None) => tok_start = Some(i),
            (false, Some(st)) => {
                if &s[st..i] == word {
                    return true;
                }
                tok_start = None;
            }
            _ => {}
        }
    }
    false
}

/// `declare <ret> @name(<params>) <attrs...>` -> (name, attribute tokens
/// after the parameter list).
fn parse_declare(line: &str) -> Option<(String, Vec<&str>)> {
    let at = line.find('@')?;
    let rest = &line[at + 1..];
    let (name, after) = if let Some(q) = rest.strip_prefix('"') {
        let end = q.find('"')?;
        (unescape(&q[..end]), &q[end + 1..])
    } else {
        let end = rest.find('(')?;
        (rest[..end].to_string(), &rest[end..])
    };
    // Skip the parameter list (types may nest parentheses).
    let mut depth = 0usize;
    let mut close = None;
    for (i, c) in after.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let tail = &after[close? + 1..];
    let tail = tail.split(';').next().unwrap_or("");
    Some((name, tail.split_whitespace().collect()))
}

/// LLVM's `\XX` escapes in quoted names.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Names of declarations with `noreturn` and with `returns_twice` in a
/// bitcode file's bytes, read from a lazily loaded LLVM module. `None` if
/// LLVM cannot read the bytes (the main parse then reports the error).
pub(crate) fn from_bitcode(bytes: &[u8]) -> Option<DeclAttributes> {
    use llvm_sys::bit_reader::LLVMGetBitcodeModuleInContext2;
    use llvm_sys::core::*;
    use llvm_sys::LLVMAttributeFunctionIndex;
    let mut out = DeclAttributes::default();
    // SAFETY: plain LLVM C API use. The context outlives the module; the
    // lazy module takes ownership of the memory buffer (on success and on
    // failure), so the buffer is never disposed here; the module and the
    // context are disposed exactly once; every string LLVM returns is
    // copied before the module goes away.
    unsafe {
        let ctx = LLVMContextCreate();
        let buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(
            bytes.as_ptr().cast(),
            bytes.len(),
            c"bitcode".as_ptr(),
        );
        let mut module = std::ptr::null_mut();
        if LLVMGetBitcodeModuleInContext2(ctx, buf, &mut module) != 0 {
            LLVMContextDispose(ctx);
            return None;
        }
        let noreturn = LLVMGetEnumAttributeKindForName(c"noreturn".as_ptr(), "noreturn".len());
        let twice =
            LLVMGetEnumAttributeKindForName(c"returns_twice".as_ptr(), "returns_twice".len());
        let mut f = LLVMGetFirstFunction(module);
        while !f.is_null() {
            if LLVMIsDeclaration(f) != 0 {
                let has =
                    |k| !LLVMGetEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, k).is_null();
                let (nr, rt) = (has(noreturn), has(twice));
                if nr || rt {
                    let mut len = 0usize;
                    let p = LLVMGetValueName2(f, &mut len);
                    if !p.is_null() {
                        let name = std::slice::from_raw_parts(p.cast::<u8>(), len);
                        let name = String::from_utf8_lossy(name).into_owned();
                        if rt {
                            out.returns_twice.insert(name.clone());
                        }
                        if nr {
                            out.noreturn.insert(name);
                        }
                    }
                }
            }
            f = LLVMGetNextFunction(f);
        }
        // The comdats of the flag arrays, told apart by identity (the C
        // API has no getter for a comdat's name).
        let mut ids: std::collections::HashMap<usize, usize> = Default::default();
        let mut g = LLVMGetFirstGlobal(module);
        while !g.is_null() {
            let mut len = 0usize;
            let sec = LLVMGetSection(g);
            let is_bools =
                !sec.is_null() && std::ffi::CStr::from_ptr(sec).to_bytes() == b"__sancov_bools";
            let comdat = llvm_sys::comdat::LLVMGetComdat(g);
            if is_bools && !comdat.is_null() {
                let p = LLVMGetValueName2(g, &mut len);
                if !p.is_null() {
                    let name = std::slice::from_raw_parts(p.cast::<u8>(), len);
                    let name = String::from_utf8_lossy(name).into_owned();
                    let n = ids.len();
                    let id = *ids.entry(comdat as usize).or_insert(n);
                    out.sancov_comdats.insert(name, id);
                }
            }
            g = LLVMGetNextGlobal(g);
        }
        LLVMDisposeModule(module);
        LLVMContextDispose(ctx);
    }
    Some(out)
}

/// Attribute groups referenced by name (for tests).
#[cfg(test)]
fn groups(text: &str) -> std::collections::HashMap<String, bool> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("attributes "))
        .filter_map(|r| r.split_once('='))
        .map(|(g, b)| (g.trim().to_string(), has_word(b, "noreturn")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sancov_arrays_are_numbered_by_comdat() {
        let ll = r#"
$f = comdat nodeduplicate
@__sancov_gen_ = private global [1 x i1] zeroinitializer, section "__sancov_bools", comdat($f), align 1
@__sancov_gen_.1 = private constant [2 x i64*] [i64* null, i64* null], section "__sancov_pcs", comdat($f), align 8
@__sancov_gen_.2 = private global [2 x i1] zeroinitializer, section "__sancov_bools", comdat($g), align 1
@__sancov_gen_.3 = private global [1 x i1] zeroinitializer, section "__sancov_bools", comdat($f), align 1
@g = global i32 0, comdat, section "__sancov_bools"
@"quoted name" = private global [1 x i1] zeroinitializer, section "__sancov_bools", comdat($"g"), align 1
@__sancov_gen_.4 = private global [1 x i1] zeroinitializer, section "__sancov_bools", align 1
"#;
        let c = from_text(ll).sancov_comdats;
        assert_eq!(c["__sancov_gen_"], c["__sancov_gen_.3"]);
        assert_eq!(c["__sancov_gen_.2"], c["g"]);
        assert_eq!(c["quoted name"], c["g"]);
        assert_ne!(c["__sancov_gen_"], c["__sancov_gen_.2"]);
        assert!(!c.contains_key("__sancov_gen_.1") && !c.contains_key("__sancov_gen_.4"));
    }

    #[test]
    fn text_scan_finds_inline_and_grouped_noreturn() {
        let ll = r#"
declare void @exit(i32 noundef) #3
declare void (i32)* @signal(i32 noundef, void (i32)* noundef) #1
declare void @fatal(i8*) noreturn nounwind
declare void @"weird\22name"() #3 ; comment noreturn
declare i32 @printf(i8* noundef, ...) #1
declare void @s() "noreturn"="no"
declare i32 @_setjmp(i8*) #2
attributes #2 = { nounwind returns_twice }
attributes #1 = { "frame-pointer"="all" }
attributes #3 = { noreturn nounwind "frame-pointer"="all" }
"#;
        let got = from_text(ll);
        let mut noreturn: Vec<_> = got.noreturn.into_iter().collect();
        noreturn.sort();
        assert_eq!(noreturn, vec!["exit", "fatal", "weird\"name"]);
        assert_eq!(got.returns_twice, HashSet::from(["_setjmp".to_string()]));
        assert_eq!(groups(ll).get("#3"), Some(&true));
        assert_eq!(groups(ll).get("#1"), Some(&false));
    }
}
