//! The reader of lldb's `bt` output.

use super::*;

/// `frame #3: ...` (after an optional `* `) -> (3, rest).
pub(super) fn lldb_frame_start(l: &str) -> Option<(u32, &str)> {
    let l = l.strip_prefix('*').map(str::trim_start).unwrap_or(l);
    let rest = l.strip_prefix("frame #")?;
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    let n = digits(&rest[..end])?;
    let after = rest[end..].strip_prefix(':')?;
    Some((n, after.trim()))
}

/// `* thread #2, ...` -> (2, selected).
pub(super) fn lldb_thread_header(l: &str) -> Option<(u32, bool)> {
    let (selected, l) = match l.strip_prefix('*') {
        Some(r) => (true, r.trim_start()),
        None => (false, l),
    };
    let rest = l.strip_prefix("thread #")?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    Some((digits(&rest[..end])?, selected))
}

pub(super) fn parse_lldb(text: &str) -> Result<Backtrace, ParseError> {
    let mut stacks: Vec<Stack> = Vec::new();
    let mut thread = None;
    let mut selected = None;
    let mut notes = Vec::new();
    for raw in text.lines() {
        let l = raw.trim();
        if let Some((t, sel)) = lldb_thread_header(l) {
            thread = Some(t);
            if sel {
                selected = Some(t);
            }
            stacks.push(Stack {
                thread,
                frames: Vec::new(),
            });
            continue;
        }
        if let Some((n, rest)) = lldb_frame_start(l) {
            let frame = parse_lldb_frame(n, rest);
            match stacks.last_mut() {
                Some(s) if n != 0 || s.frames.is_empty() => s.frames.push(frame),
                _ => stacks.push(Stack {
                    thread,
                    frames: vec![frame],
                }),
            }
        }
    }
    if selected.is_none()
        && stacks.len() > 1
        && stacks
            .iter()
            .all(|s| s.thread.is_none() || s.thread == thread)
    {
        let frames = take_last(stacks, &mut notes);
        return Ok(Backtrace {
            format: BacktraceFormat::Lldb,
            frames,
            notes,
        });
    }
    let frames = choose(stacks, selected, "lldb thread", &mut notes)?;
    Ok(Backtrace {
        format: BacktraceFormat::Lldb,
        frames,
        notes,
    })
}

/// `0x0000555555555131 prog`foo(p=0x0) at a.c:12:5` and friends.
pub(super) fn parse_lldb_frame(n: u32, body: &str) -> RawFrame {
    let mut f = RawFrame {
        index: Some(n),
        ..RawFrame::default()
    };
    let (address, rest) = leading_address(body.trim());
    f.address = address;
    let Some((module, mut rest)) = rest.split_once('`') else {
        if !rest.is_empty() {
            f.module = Some(rest.to_string());
        }
        return f;
    };
    if !module.trim().is_empty() {
        f.module = Some(module.trim().to_string());
    }
    if let Some(i) = rest.rfind(" at ") {
        if let Some((file, line, col)) = parse_location(&rest[i + 4..]) {
            f.file = Some(file);
            f.line = Some(line);
            f.column = col.filter(|&c| c != 0);
            rest = &rest[..i];
        }
    }
    // `foo + 128`: an offset into a function without line information.
    if let Some(i) = rest.rfind(" + ") {
        if digits(rest[i + 3..].trim()).is_some() {
            rest = &rest[..i];
        }
    }
    // `outer [inlined] inner(...)`: the frame is the inlined function.
    if let Some(i) = rest.rfind(" [inlined] ") {
        rest = &rest[i + 11..];
    }
    // `Shape::area(this=0x0) const`: qualifiers after the arguments.
    let mut core = rest.trim_end();
    while let Some(c) = ["const", "volatile", "&&", "&"]
        .iter()
        .find_map(|q| core.strip_suffix(q))
    {
        if !c.ends_with([' ', ')']) {
            break;
        }
        core = c.trim_end();
    }
    let (name, group) = split_trailing_group(core);
    // Argument values (`p=0x0`) go; C++ parameter types (`(int)`) stay.
    let name = match group {
        Some(g) if g == "()" || g.contains('=') => name,
        _ => rest.trim(),
    };
    f.function = clean_name(name);
    f
}
