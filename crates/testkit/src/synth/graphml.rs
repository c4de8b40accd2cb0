//! The GraphML writer (csi-cc dialect).

use super::model::*;
use std::io::{self, Write};

pub(super) const GRAPHML_HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">
  <key id="nature"      for="graph" attr.name="nature"     attr.type="string"/>
  <key id="label"       for="node" attr.name="label"       attr.type="string"/>
  <key id="kind"        for="node" attr.name="kind"        attr.type="string"> <default>declaration</default> </key>
  <key id="syntax"      for="node" attr.name="syntax"      attr.type="string"/>
  <key id="basic-block" for="node" attr.name="basic-block" attr.type="string"/>
  <key id="file"        for="node" attr.name="file"        attr.type="string"/>
  <key id="procedure"   for="node" attr.name="procedure"   attr.type="string"/>
  <key id="lines"       for="node" attr.name="lines"       attr.type="string"/>
  <key id="call-id"     for="node" attr.name="call-id"     attr.type="string"/>
  <key id="call-name"   for="node" attr.name="call-name"   attr.type="string"/>
  <key id="alocs-used"  for="node" attr.name="alocs-used"  attr.type="string"/>
  <key id="alocs-defd"  for="node" attr.name="alocs-defd"  attr.type="string"/>
  <key id="alocs-mayd"  for="node" attr.name="alocs-mayd"  attr.type="string"/>
  <key id="csi-label"   for="node" attr.name="csi-label"   attr.type="string"/>
  <key id="type"        for="edge" attr.name="type"        attr.type="string"> <default>flow</default> </key>
  <key id="when"        for="edge" attr.name="when"        attr.type="string"> <default>true</default> </key>
  <key id="scope"       for="edge" attr.name="scope"       attr.type="string"> <default>intraprocedural</default> </key>
  <graph id="CFG" edgedefault="directed">
    <data key="nature">CFG</data>
"#;

pub(super) fn mix(a: u32, b: u32) -> u64 {
    let mut z = ((a as u64) << 32 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z ^= z >> 29;
    z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^ (z >> 32)
}

pub(super) fn write_entry_exit<W: Write>(
    w: &mut W,
    f: &Func,
    file: Option<&str>,
) -> io::Result<()> {
    let (n, name) = (f.num, &f.name);
    write!(
        w,
        "    <node id=\"n:-{n}:1\">\n      <data key=\"label\">entry: {name}</data>\n      \
         <data key=\"basic-block\">function_entry</data>\n      <data key=\"kind\">entry</data>\n      \
         <data key=\"lines\">( 0 )</data>\n"
    )?;
    if let Some(file) = file {
        writeln!(w, "      <data key=\"file\">{file}</data>")?;
    }
    write!(
        w,
        "      <data key=\"procedure\">{name}</data>\n    </node>\n    <node id=\"n:-{n}:2\">\n      \
         <data key=\"label\">exit: {name}</data>\n      <data key=\"basic-block\">function_exit</data>\n      \
         <data key=\"kind\">exit</data>\n      <data key=\"lines\">( 0 )</data>\n    </node>\n"
    )
}

pub(super) fn write_graphml<W: Write>(p: &Program, w: &mut W) -> io::Result<()> {
    w.write_all(GRAPHML_HEAD.as_bytes())?;
    for &fi in &p.order {
        write_function(p, &p.funcs[fi as usize], w)?;
    }
    w.write_all(b"  </graph>\n</graphml>\n")
}

/// One function's nodes and edges: a declaration's node, a stub's entry
/// and exit, or a defined function's entry, exit and statements.
pub(super) fn write_function<W: Write>(p: &Program, f: &Func, w: &mut W) -> io::Result<()> {
    let n = f.num;
    writeln!(w, "    <!-- cfg -{n} {} -->", f.name)?;
    match f.kind {
        FKind::Decl => {
            return write!(
                w,
                "    <node id=\"n:-{n}:1\">\n      <data key=\"label\">declaration: {}</data>\n      \
                 <data key=\"procedure\">{}</data>\n    </node>\n",
                f.name, f.name
            );
        }
        FKind::Stub => {
            write_entry_exit(w, f, None)?;
            return writeln!(w, "    <edge source=\"n:-{n}:1\" target=\"n:-{n}:2\"/>");
        }
        FKind::Defined => {}
    }
    write_entry_exit(w, f, Some(&p.files[f.file as usize]))?;
    writeln!(w, "    <edge source=\"n:-{n}:1\" target=\"n:-{n}:3\"/>")?;
    for b in f.blocks.0..f.blocks.1 {
        let blk = &p.blocks[b as usize];
        let mut ci = blk.calls.0;
        for off in 0..blk.stmts {
            let call = if ci < blk.calls.1 && p.calls[ci as usize].offset == off {
                ci += 1;
                Some(&p.calls[ci as usize - 1])
            } else {
                None
            };
            write_statement(p, w, n, b, off, call)?;
            write_statement_edges(p, w, n, b, off, call)?;
        }
    }
    Ok(())
}

/// The node of statement `off` of block `b` of the function numbered `n`
/// (a call site when `call` is given).
pub(super) fn write_statement<W: Write>(
    p: &Program,
    w: &mut W,
    n: u32,
    b: u32,
    off: u32,
    call: Option<&Call>,
) -> io::Result<()> {
    let blk = &p.blocks[b as usize];
    let label = LABELS[blk.label as usize];
    let id = 3 + blk.first_stmt + off;
    let h = mix(n, id);
    let line = blk.line + off * 2 / 3;
    w.write_all(b"    <node id=\"n:-")?;
    write!(w, "{n}:{id}\">\n      <data key=\"label\">  ")?;
    let last = off + 1 == blk.stmts;
    if let Some(c) = call {
        if c.ordinal == 0 {
            w.write_all(b"%call")?;
        } else {
            write!(w, "%call{}", c.ordinal)?;
        }
    } else if last {
        w.write_all(match blk.term {
            Term::Return => b"ret",
            Term::Switch { .. } => b"switch",
            _ => b"br",
        })?;
    } else {
        let l = EXPR_LABELS[(h % EXPR_LABELS.len() as u64) as usize];
        if l == "%" {
            write!(w, "%{}", (h >> 16) % 200)?;
        } else {
            w.write_all(l.as_bytes())?;
        }
    }
    w.write_all(b"</data>\n      <data key=\"basic-block\">")?;
    w.write_all(label.as_bytes())?;
    if blk.label_n > 0 {
        write!(w, "{}", blk.label_n)?;
    }
    w.write_all(b"</data>\n      <data key=\"kind\">")?;
    w.write_all(if call.is_some() {
        b"call-site"
    } else {
        b"expression"
    })?;
    write!(w, "</data>\n      <data key=\"lines\">({line})</data>\n")?;
    if let Some(c) = call {
        writeln!(w, "      <data key=\"csi-label\">{}</data>", c.ordinal)?;
    }
    w.write_all(b"    </node>\n")
}

/// The edges of statement `off` of block `b` of the function numbered
/// `n`: flow to the next statement (from a block's last, to the first
/// statements of its successors or the exit) and, for a call, to the
/// callees' entries.
pub(super) fn write_statement_edges<W: Write>(
    p: &Program,
    w: &mut W,
    n: u32,
    b: u32,
    off: u32,
    call: Option<&Call>,
) -> io::Result<()> {
    let blk = &p.blocks[b as usize];
    let id = 3 + blk.first_stmt + off;
    if off + 1 != blk.stmts {
        writeln!(
            w,
            "    <edge source=\"n:-{n}:{id}\" target=\"n:-{n}:{}\"/>",
            id + 1
        )?;
    } else {
        let mut res = Ok(());
        p.for_succs(b, |s| {
            if res.is_err() {
                return;
            }
            let t = if s == EXIT {
                2
            } else {
                3 + p.blocks[s as usize].first_stmt
            };
            res = writeln!(
                w,
                "    <edge source=\"n:-{n}:{id}\" target=\"n:-{n}:{t}\"/>"
            );
        });
        res?;
    }
    if let Some(c) = call {
        for &t in p.targets_of(c) {
            write!(
                w,
                "    <edge source=\"n:-{n}:{id}\" target=\"n:-{}:1\">\n      \
                 <data key=\"type\">control</data>\n      \
                 <data key=\"scope\">interprocedural</data>\n    </edge>\n",
                p.funcs[t as usize].num
            )?;
        }
    }
    Ok(())
}
