//! LCOV tracefile output (`--format lcov`), so that editor coverage
//! plugins and `genhtml` show the analysis in place.
//!
//! Encoding of the three labels (per source line, as summarised by
//! [`postmortem_core::summary::by_line`]):
//!
//! | label | records | shown as |
//! | --- | --- | --- |
//! | Yes | `DA:<line>,1` | covered |
//! | No | `DA:<line>,0` | not covered |
//! | Maybe | `DA:<line>,1` and `BRDA:<line>,0,0,0` | partially covered (a line that ran with a branch never taken) |
//!
//! A Maybe line is *not* known to have run: the "hit" count of 1 only
//! makes coverage tools draw it as partial. Lines without a statement get
//! no record. Per file: `TN:postmortem`, `SF:` (the graph's path after the
//! `--path-map` rewriting), the `BRDA` records, `BRF` (Maybe lines), `BRH:0`,
//! the `DA` records, `LF` (labelled lines), `LH` (Yes + Maybe lines), and
//! `end_of_record`.

use postmortem_core::locate::PathMap;
use postmortem_core::summary::by_line;
use postmortem_core::{Icfg, Label};
use std::io::{self, Write};

/// Writes the tracefile.
pub fn write_lcov(
    out: &mut dyn Write,
    g: &Icfg,
    labels: &[Label],
    paths: &PathMap,
) -> io::Result<()> {
    for fl in by_line(g, labels) {
        let path = paths.apply(g.file_path(fl.file));
        writeln!(out, "TN:postmortem")?;
        writeln!(out, "SF:{}", crate::error::one_line(&path))?;
        let maybe: Vec<u32> = fl.with(Label::Maybe).collect();
        for l in &maybe {
            writeln!(out, "BRDA:{l},0,0,0")?;
        }
        if !maybe.is_empty() {
            writeln!(out, "BRF:{}", maybe.len())?;
            writeln!(out, "BRH:0")?;
        }
        let mut hit = 0;
        for (&l, &label) in &fl.lines {
            let count = u8::from(label != Label::No);
            hit += usize::from(count);
            writeln!(out, "DA:{l},{count}")?;
        }
        writeln!(out, "LF:{}", fl.lines.len())?;
        writeln!(out, "LH:{hit}")?;
        writeln!(out, "end_of_record")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::annotate::tests::sample;

    #[test]
    fn yes_no_maybe_encoding() {
        let (g, labels) = sample();
        let mut m = PathMap::new();
        m.push("/nonexistent", "/src");
        let mut out = Vec::new();
        write_lcov(&mut out, &g, &labels, &m).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "TN:postmortem\nSF:/src/b.c\nDA:7,0\nLF:1\nLH:0\nend_of_record\n\
             TN:postmortem\nSF:src/a.c\nBRDA:2,0,0,0\nBRF:1\nBRH:0\nDA:1,1\nDA:2,1\nDA:4,0\nLF:3\nLH:2\nend_of_record\n"
        );
    }
}
