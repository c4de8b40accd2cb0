//! Parses GraphML files and prints their size and the time taken:
//! `cargo run --release -p postmortem-formats --example parse_graphml -- FILE...`

use std::time::Instant;

fn main() {
    let mut failed = false;
    for arg in std::env::args().skip(1) {
        let t = Instant::now();
        match postmortem_formats::read_graphml_path(arg.as_ref()) {
            Ok(g) => println!(
                "{arg}: {} nodes, {} edges, {} functions, parsed in {:.2?} (graph heap {:.1} MB)",
                g.num_nodes(),
                g.num_edges(),
                g.functions().len(),
                t.elapsed(),
                g.heap_bytes() as f64 / 1e6
            ),
            Err(e) => {
                eprintln!("{e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
