//! Variables' values read from a core ([`read`]): the globals of the
//! front-end's [`VarMap`] by their symbols, and the locals of every frame
//! of the binary on the crash stack by their DWARF locations.
//!
//! Only what is certain is read:
//! * a global by its ELF symbol (unique name, a data object of at least
//!   the variable's size), at the load base plus the symbol's address,
//!   when the core holds those bytes (a field of a struct or an array at
//!   its byte offset, inside the symbol's size);
//! * a local by `DW_AT_location` `DW_OP_fbreg k` in a function whose
//!   `DW_AT_frame_base` is `DW_OP_reg6` (rbp: clang at `-O0`, or with
//!   `-fno-omit-frame-pointer`) and that starts with `push rbp; mov rbp,
//!   rsp`, at the frame's rbp recovered by the frame-pointer walk (the
//!   same walk as the unwinder's), plus a field's byte offset (the field
//!   is matched by its variable's name). Location lists (optimised code) are not
//!   read. The variable is matched to the front-end's by function, name
//!   and declaration line, and only when that key is unique in both; a
//!   variable of a function inlined more than once (`always_inline`, at
//!   `-O0` too) by the call it was inlined at as well (the IR's
//!   `inlinedAt`, DWARF's `DW_AT_call_line` and `DW_AT_call_column`).
//! * not the crash frame's locals when the crash pc is in its prologue or
//!   at its `ret` (rbp is the caller's there).

use crate::image::native::{self, Binary, Core};
use crate::vars::{Observed, VarMap};
use addr2line::gimli;
use object::{Object, ObjectSection, ObjectSymbol};
use std::borrow::Cow;
use std::collections::HashMap;

/// One physical frame of the binary: its function's symbol, and its rbp.
struct PhysFrame {
    function: String,
    rbp: u64,
    index: usize,
}

/// The values the core holds for the map's variables, with notes on what
/// could not be read.
pub fn read(core: &Core, bin: &Binary, base: u64, map: &VarMap) -> (Vec<Observed>, Vec<String>) {
    let (out, notes, _) = read_with_frames(core, bin, base, map);
    (out, notes)
}

/// [`read`], and the frames whose locals were looked for: each one's
/// physical frame number ([`Observed::frame`]) and function symbol,
/// innermost first.
pub fn read_with_frames(
    core: &Core,
    bin: &Binary,
    base: u64,
    map: &VarMap,
) -> (Vec<Observed>, Vec<String>, Vec<(u32, String)>) {
    let mut notes = Vec::new();
    let mut out = Vec::new();
    let mut walked = Vec::new();
    let Ok(file) = object::File::parse(bin.data()) else {
        return (
            out,
            vec!["the binary is not readable as ELF".into()],
            walked,
        );
    };
    globals(core, &file, base, map, &mut out, &mut notes);
    match frames(core, bin, base) {
        Ok((frames, stopped)) => {
            walked = frames
                .iter()
                .map(|f| (f.index as u32, f.function.clone()))
                .collect();
            if frames
                .iter()
                .any(|f| map.locals_of(&f.function).next().is_some())
            {
                let wanted: std::collections::HashSet<&str> =
                    frames.iter().map(|f| f.function.as_str()).collect();
                match locations(&file, &wanted) {
                    Ok(locs) => locals(core, &frames, &locs, map, &mut out),
                    Err(e) => notes.push(format!("local variables not read: {e}")),
                }
            }
            if let Some(f) = stopped {
                notes.push(format!(
                    "local variables not read in `{f}` and the frames below it on the stack: \
                     `{f}` has no frame pointer (optimised code keeps locals in registers, \
                     described by DWARF location lists, which are not read)"
                ));
            }
        }
        Err(e) => notes.push(format!("local variables not read: {e}")),
    }
    (out, notes, walked)
}

/// The values of the map's globals alone (no frame is read: for a stack
/// whose contents cannot be trusted).
pub fn read_globals(
    core: &Core,
    bin: &Binary,
    base: u64,
    map: &VarMap,
) -> (Vec<Observed>, Vec<String>) {
    let mut notes = Vec::new();
    let mut out = Vec::new();
    let Ok(file) = object::File::parse(bin.data()) else {
        return (out, vec!["the binary is not readable as ELF".into()]);
    };
    globals(core, &file, base, map, &mut out, &mut notes);
    (out, notes)
}

fn value(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

fn globals(
    core: &Core,
    file: &object::File<'_>,
    base: u64,
    map: &VarMap,
    out: &mut Vec<Observed>,
    notes: &mut Vec<String>,
) {
    if map.globals().next().is_none() {
        return;
    }
    // Data symbols by name; None when the name is not unique.
    let mut syms: HashMap<&str, Option<(u64, u64)>> = HashMap::new();
    for s in file.symbols() {
        if s.kind() != object::SymbolKind::Data || s.address() == 0 {
            continue;
        }
        let Ok(name) = s.name() else { continue };
        syms.entry(name)
            .and_modify(|e| *e = None)
            .or_insert(Some((s.address(), s.size())));
    }
    let mut missing = 0;
    for (i, v, symbol) in map.globals() {
        let Some(Some((addr, size))) = syms.get(symbol) else {
            missing += 1;
            continue;
        };
        // The field (or the whole variable) must lie inside the symbol.
        if *size < u64::from(v.offset) + u64::from(v.bytes) {
            missing += 1;
            continue;
        }
        let at = base.wrapping_add(*addr).wrapping_add(u64::from(v.offset));
        match core.mem(at, u64::from(v.bytes)) {
            Some(b) => out.push(Observed {
                var: i,
                value: value(b),
                place: "global".into(),
                frame: None,
                address: Some(at),
            }),
            None => missing += 1,
        }
    }
    if missing > 0 {
        notes.push(format!(
            "{missing} global variables not read (no unique symbol, or not in the core)"
        ));
    }
}

/// The binary's frames on the crash stack with their rbp, innermost first
/// (the frame-pointer walk of [`native::unwind`]).
/// Why the locals of the crash stack's frames are not read.
#[derive(Debug, thiserror::Error)]
enum LocalsError {
    /// The core has no registers of the crashing thread.
    #[error("no registers in the core")]
    NoRegisters,
    /// The crash frame's function does not keep a frame pointer.
    #[error(
        "`{0}` (the crash frame) and the frames below it on the stack: `{0}` has no frame \
         pointer (optimised code keeps locals in registers, described by DWARF location \
         lists, which are not read)"
    )]
    NoFramePointer(String),
    /// A frame's saved rbp or return address is not in the core.
    #[error("the stack is not in the core")]
    StackNotInCore,
    /// The crash is in a library whose frames could not be unwound
    /// ([`native::unwind_libraries`]'s message).
    #[error("{0}")]
    Libraries(#[from] native::LibError),
    /// The binary's DWARF could not be read.
    #[error("{0}")]
    Dwarf(#[from] gimli::Error),
}

/// Also the function of the binary where the walk stopped for want of a
/// frame pointer, if it did.
fn frames(
    core: &Core,
    bin: &Binary,
    base: u64,
) -> Result<(Vec<PhysFrame>, Option<String>), LocalsError> {
    let regs = core.regs.ok_or(LocalsError::NoRegisters)?;
    let rel = |a: u64| a.wrapping_sub(base);
    let mut out = Vec::new();
    // The physical frame number of the first frame walked, as
    // `native::unwind` numbers them: 1 when the crash frame is skipped.
    let mut first = 0;
    // (rbp of the innermost frame of the binary, its pc), or where to start.
    let (mut rbp, mut pc) = match bin.func_at(rel(regs.rip)) {
        Some(f) => {
            let pc = rel(regs.rip);
            let at_ret = bin.bytes_at(pc, 1) == Some(&[0xc3][..]);
            if !native::has_frame_pointer(bin, f) {
                return Err(LocalsError::NoFramePointer(f.name.clone()));
            }
            if pc - f.addr <= 1 || at_ret {
                // rbp is the caller's: the crash frame's locals are not read.
                let ret = core.word(if pc - f.addr == 1 {
                    regs.rsp + 8
                } else {
                    regs.rsp
                });
                let ret = ret.ok_or(LocalsError::StackNotInCore)?;
                first = 1;
                (regs.rbp, rel(ret).wrapping_sub(1))
            } else {
                (regs.rbp, pc)
            }
        }
        None => match native::bad_call_return(core, bin, base) {
            // A call through a bad pointer: the callee pushed nothing.
            Some(ret) => (regs.rbp, rel(ret).wrapping_sub(1)),
            None => {
                let (ret, _, rbp) = native::unwind_libraries(core, regs)?;
                (rbp, rel(ret).wrapping_sub(1))
            }
        },
    };
    for index in first..100_000 {
        let Some(f) = bin.func_at(pc) else {
            return Ok((out, None));
        };
        if !native::has_frame_pointer(bin, f) {
            return Ok((out, Some(f.name.clone())));
        }
        out.push(PhysFrame {
            function: f.name.clone(),
            rbp,
            index,
        });
        let ret = core
            .word(rbp.wrapping_add(8))
            .ok_or(LocalsError::StackNotInCore)?;
        let next = core.word(rbp).ok_or(LocalsError::StackNotInCore)?;
        if next <= rbp {
            return Ok((out, None));
        }
        rbp = next;
        pc = rel(ret).wrapping_sub(1);
    }
    Ok((out, None))
}

/// The rbp-relative locals of the binary, by (function, name,
/// declaration line): each copy's frame offset, with the call it was
/// inlined at (line, column) for a variable of an inlined function.
type Locations = HashMap<(String, String, u32), Vec<(Option<(u32, u32)>, i64)>>;

/// The [`Locations`] of the functions named in `wanted` (the stack's:
/// a program's other locals are most of its debug information, and
/// keeping them all took a third of the time SQLite's core was read in).
fn locations(
    file: &object::File<'_>,
    wanted: &std::collections::HashSet<&str>,
) -> Result<Locations, LocalsError> {
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, gimli::Error> {
        Ok(file
            .section_by_name(id.name())
            .and_then(|s| s.uncompressed_data().ok())
            .unwrap_or(Cow::Borrowed(&[])))
    };
    let sections = gimli::DwarfSections::load(load)?;
    let dwarf = sections.borrow(|s| gimli::EndianSlice::new(s, gimli::RunTimeEndian::Little));
    let mut out = Locations::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        unit_locations(&dwarf, &unit, wanted, &mut out)?;
    }
    Ok(out)
}

type Slice<'a> = gimli::EndianSlice<'a, gimli::RunTimeEndian>;

fn unit_locations(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
    wanted: &std::collections::HashSet<&str>,
    out: &mut Locations,
) -> gimli::Result<()> {
    let mut entries = unit.entries();
    // The enclosing subprogram: (depth, name when its frame base is rbp).
    let mut sub: Option<(isize, Option<String>)> = None;
    // The enclosing inlined calls, innermost last: (depth, call line and
    // column).
    let mut inlined: Vec<(isize, (u32, u32))> = Vec::new();
    while let Some(e) = entries.next_dfs()? {
        let depth = e.depth();
        if matches!(sub, Some((d, _)) if depth <= d) {
            sub = None;
        }
        while inlined.last().is_some_and(|&(d, _)| depth <= d) {
            inlined.pop();
        }
        let tag = e.tag();
        if tag == gimli::DW_TAG_inlined_subroutine {
            let udata = |a| e.attr_value(a).and_then(|v| v.udata_value()).unwrap_or(0) as u32;
            inlined.push((
                depth,
                (
                    udata(gimli::DW_AT_call_line),
                    udata(gimli::DW_AT_call_column),
                ),
            ));
            continue;
        }
        if tag == gimli::DW_TAG_subprogram {
            let name = e
                .attr_value(gimli::DW_AT_linkage_name)
                .or_else(|| e.attr_value(gimli::DW_AT_name))
                .and_then(|v| dwarf.attr_string(unit, v).ok())
                .map(|s| s.to_string_lossy())
                .filter(|n| wanted.contains(n.as_ref()))
                .map(|n| n.into_owned());
            let rbp_based = match e.attr_value(gimli::DW_AT_frame_base) {
                Some(gimli::AttributeValue::Exprloc(x)) => {
                    let ops = operations(x, unit.encoding());
                    matches!(ops.as_deref(), Some([gimli::Operation::Register { register }]) if register.0 == 6)
                }
                _ => false,
            };
            sub = Some((depth, name.filter(|_| rbp_based)));
            continue;
        }
        if tag != gimli::DW_TAG_variable && tag != gimli::DW_TAG_formal_parameter {
            continue;
        }
        let Some((_, Some(function))) = &sub else {
            continue;
        };
        let Some(gimli::AttributeValue::Exprloc(x)) = e.attr_value(gimli::DW_AT_location) else {
            continue;
        };
        let ops = operations(x, unit.encoding());
        let Some([gimli::Operation::FrameOffset { offset }]) = ops.as_deref() else {
            continue;
        };
        let offset = *offset;
        // A variable of a function inlined here (clang inlines
        // `always_inline` functions at `-O0` too) names itself through
        // its abstract origin, the inlined function's own variable.
        let origin = match e.attr_value(gimli::DW_AT_abstract_origin) {
            Some(gimli::AttributeValue::UnitRef(o)) => unit.entry(o).ok(),
            _ => None,
        };
        let named = origin.as_ref().unwrap_or(e);
        let Some(name) = named
            .attr_value(gimli::DW_AT_name)
            .and_then(|v| dwarf.attr_string(unit, v).ok())
            .map(|s| s.to_string_lossy().into_owned())
        else {
            continue;
        };
        let line = match named.attr_value(gimli::DW_AT_decl_line) {
            Some(v) => v.udata_value().unwrap_or(0) as u32,
            None => 0,
        };
        let call = inlined.last().map(|&(_, c)| c);
        out.entry((function.clone(), name, line))
            .or_default()
            .push((call, offset));
    }
    Ok(())
}

fn operations(
    x: gimli::Expression<Slice<'_>>,
    encoding: gimli::Encoding,
) -> Option<Vec<gimli::Operation<Slice<'_>>>> {
    let mut it = x.operations(encoding);
    let mut v = Vec::new();
    while let Ok(Some(op)) = it.next() {
        v.push(op);
        if v.len() > 4 {
            return None;
        }
    }
    Some(v)
}

fn locals(
    core: &Core,
    frames: &[PhysFrame],
    locs: &Locations,
    map: &VarMap,
    out: &mut Vec<Observed>,
) {
    // Keys that are not unique among the front-end's variables: by
    // function, name and line, and with the call an inlined copy was
    // inlined at.
    type Key<'a> = (&'a str, &'a str, u32);
    // Only the stack's functions are looked up.
    let on_stack: std::collections::HashSet<&str> =
        frames.iter().map(|f| f.function.as_str()).collect();
    let mut count: HashMap<Key<'_>, usize> = HashMap::new();
    let mut count_at: HashMap<(Key<'_>, Option<(u32, u32)>), usize> = HashMap::new();
    for v in &map.vars {
        if let crate::vars::VarScope::Local {
            function,
            line,
            inlined_at,
            ..
        } = &v.scope
        {
            if !on_stack.contains(function.as_str()) {
                continue;
            }
            *count.entry((function, &v.name, *line)).or_insert(0) += 1;
            *count_at
                .entry(((function, &v.name, *line), *inlined_at))
                .or_insert(0) += 1;
        }
    }
    for f in frames {
        for (i, v, line) in map.locals_of(&f.function) {
            let at = match v.scope {
                crate::vars::VarScope::Local { inlined_at, .. } => inlined_at,
                crate::vars::VarScope::Global { .. } => None,
            };
            let key = (f.function.as_str(), v.name.as_str(), line);
            // A field is found by its variable's name, at its offset.
            let Some(copies) = locs.get(&(f.function.clone(), v.base_name().to_string(), line))
            else {
                continue;
            };
            // The one copy on both sides; else, of a function inlined
            // more than once, the copy of the same call.
            let off = if count[&key] == 1 && copies.len() == 1 {
                copies[0].1
            } else if count_at[&(key, at)] == 1 && at.is_some() {
                match copies.iter().filter(|c| c.0 == at).collect::<Vec<_>>()[..] {
                    [one] => one.1,
                    _ => continue,
                }
            } else {
                continue;
            };
            let addr = f
                .rbp
                .wrapping_add(off as u64)
                .wrapping_add(u64::from(v.offset));
            if let Some(b) = core.mem(addr, u64::from(v.bytes)) {
                out.push(Observed {
                    var: i,
                    value: value(b),
                    place: format!("frame #{} `{}`", f.index, f.function),
                    frame: Some(f.index as u32),
                    address: Some(addr),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors say what they said as strings (issue 38).
    #[test]
    fn locals_errors_keep_their_messages() {
        assert_eq!(
            LocalsError::NoRegisters.to_string(),
            "no registers in the core"
        );
        assert_eq!(
            LocalsError::NoFramePointer("f".into()).to_string(),
            "`f` (the crash frame) and the frames below it on the stack: `f` has no frame \
             pointer (optimised code keeps locals in registers, described by DWARF location \
             lists, which are not read)"
        );
        assert_eq!(
            LocalsError::StackNotInCore.to_string(),
            "the stack is not in the core"
        );
        assert_eq!(
            LocalsError::Libraries(native::LibError("why".into())).to_string(),
            "why"
        );
    }
}
