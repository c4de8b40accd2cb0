//! Prints the graph the front-end builds for a `.ll` or `.bc` file: one
//! line per node (id, kind, lines, column, label, call note) followed by
//! its successors. For looking at what the lowering does.
//!
//!     cargo run -p postmortem-llvm --example dump -- prog.ll

use postmortem_core::EdgeKind;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: dump FILE.ll|FILE.bc");
        std::process::exit(2);
    };
    let loaded = match postmortem_llvm::load_path(path.as_ref()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("dump: {e}");
            std::process::exit(2);
        }
    };
    let g = &loaded.icfg;
    for n in g.nodes() {
        let f = g.function(g.func_of(n));
        let file = f.file.map(|x| g.file_path(x)).unwrap_or("?");
        let succs: Vec<String> = g
            .succs(n)
            .map(|(s, k)| {
                let k = match k {
                    EdgeKind::Local => "",
                    EdgeKind::Call => "call ",
                    EdgeKind::Return => "ret ",
                };
                format!("{k}{}", g.ext_id(s))
            })
            .collect();
        let note = g
            .call_note(n)
            .map(|c| format!(" {:?} {:?}", c.external_callees, c.string_args))
            .unwrap_or_default();
        println!(
            "{:<24} {:<9} {}:{:?} col {:?} [{}]{} -> {}",
            g.ext_id(n),
            g.kind(n).as_str(),
            file,
            g.lines(n),
            g.column(n),
            g.label(n),
            note,
            succs.join(", ")
        );
    }
    println!("start {}", g.ext_id(g.start()));
    eprintln!("{}", loaded.report.summary());
}
