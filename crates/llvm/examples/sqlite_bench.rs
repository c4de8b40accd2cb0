//! The front-end on a real ~250k-line C program: the sqlite3 amalgamation.
//!
//! Compiles `sqlite3.c` with `clang-14 -g -O0 -emit-llvm -c`, then measures
//! the front-end's build time and peak memory (VmHWM), the binary cache's
//! size and load time, and runs the UTL solver once on an "anywhere"
//! report (no crash location) to check that the graph is sane.
//!
//!     cargo run --release -p postmortem-llvm --example sqlite_bench -- [sqlite3.c | sqlite3.bc]
//!
//! Without an argument it looks for the amalgamation that the crates.io
//! package `libsqlite3-sys` ships (fetch it once with a throwaway crate
//! depending on `libsqlite3-sys = { version = "*", features = ["bundled"] }`
//! and `cargo fetch`) under `~/.cargo/registry/src`.

use postmortem_core::utl::Utl;
use postmortem_core::{Label, NodeKind, Report, Solver};
use postmortem_formats::pmcfg;
use std::path::{Path, PathBuf};

/// The amalgamation is a library: a small driver gives it a `main`, linked
/// in with llvm-link-14 as the crate docs describe for multi-file programs.
const DRIVER: &str = r#"#include "sqlite3.h"
#include <stdio.h>

static int row(void *user, int n, char **values, char **names) {
  (void)user; (void)names;
  for (int i = 0; i < n; i++)
    printf("%s%s", i ? "|" : "", values[i] ? values[i] : "NULL");
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  sqlite3 *db;
  char *err = 0;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
    fprintf(stderr, "cannot open: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  int rc = sqlite3_exec(db, argc > 1 ? argv[1] : "select 1", row, 0, &err);
  if (rc != SQLITE_OK) {
    fprintf(stderr, "error: %s\n", err);
    sqlite3_free(err);
  }
  sqlite3_close(db);
  return rc;
}
"#;

use std::process::Command;
use std::time::Instant;

fn vm_hwm_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn find_amalgamation() -> Option<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let src = home.join("registry/src");
    let mut found = Vec::new();
    for index in std::fs::read_dir(src).ok()?.flatten() {
        for pkg in std::fs::read_dir(index.path()).ok()?.flatten() {
            let p = pkg.path().join("sqlite3/sqlite3.c");
            if pkg
                .file_name()
                .to_string_lossy()
                .starts_with("libsqlite3-sys-")
                && p.is_file()
            {
                found.push(p);
            }
        }
    }
    found.sort();
    found.pop()
}

fn main() {
    let input = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .or_else(find_amalgamation);
    let Some(input) = input else {
        eprintln!("sqlite_bench: no sqlite3.c given and none found under ~/.cargo/registry/src (see the example's docs)");
        std::process::exit(2);
    };
    let tmp = std::env::temp_dir().join(format!("postmortem-sqlite-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let bc = if input.extension().is_some_and(|e| e == "c") {
        let lines = std::fs::read_to_string(&input)
            .map(|s| s.lines().count())
            .unwrap_or(0);
        let include = input.parent().unwrap_or(Path::new("."));
        std::fs::write(tmp.join("driver.c"), DRIVER).unwrap();
        let clang = |src: &Path, out: &Path| {
            let st = Command::new("clang-14")
                .args(["-g", "-O0", "-emit-llvm", "-c", "-I"])
                .arg(include)
                .arg(src)
                .arg("-o")
                .arg(out)
                .status()
                .expect("clang-14 is needed (apt-get install clang-14)");
            assert!(st.success(), "clang-14 failed on {}", src.display());
        };
        let t = Instant::now();
        clang(&input, &tmp.join("sqlite3.bc"));
        let compile = t.elapsed().as_secs_f64();
        clang(&tmp.join("driver.c"), &tmp.join("driver.bc"));
        let bc = tmp.join("prog.bc");
        let st = Command::new("llvm-link-14")
            .arg(tmp.join("sqlite3.bc"))
            .arg(tmp.join("driver.bc"))
            .arg("-o")
            .arg(&bc)
            .status()
            .expect("llvm-link-14 is needed (apt-get install llvm-14)");
        assert!(st.success(), "llvm-link-14 failed");
        println!(
            "source            {} ({lines} lines) + a 27-line driver with main",
            input.display()
        );
        println!("clang-14 -O0 -g   {compile:.2} s");
        bc
    } else {
        input.clone()
    };
    println!(
        "input             {:.1} MiB",
        std::fs::metadata(&bc).unwrap().len() as f64 / 1048576.0
    );

    let t = Instant::now();
    let loaded = postmortem_llvm::load_path(&bc).unwrap_or_else(|e| panic!("{e}"));
    let build = t.elapsed().as_secs_f64();
    let peak = vm_hwm_mib();
    let g = loaded.icfg;
    println!("front-end build   {build:.2} s");
    println!("peak memory       {peak:.0} MiB (VmHWM)");
    println!(
        "graph             {} nodes, {} edges, {} functions, {} call sites, {} files, {:.1} MiB heap",
        g.num_nodes(),
        g.num_edges(),
        g.functions().len(),
        g.num_call_sites(),
        g.num_files(),
        g.heap_bytes() as f64 / 1048576.0
    );
    println!("note              {}", loaded.report.summary());

    let cache = tmp.join("sqlite3.pmcfg");
    let t = Instant::now();
    std::fs::write(&cache, pmcfg::encode(&g)).unwrap();
    let write = t.elapsed().as_secs_f64();
    let size = std::fs::metadata(&cache).unwrap().len();
    let t = Instant::now();
    let bytes = std::fs::read(&cache).unwrap();
    let h = pmcfg::decode(&bytes).unwrap();
    let load = t.elapsed().as_secs_f64();
    println!(
        "cache             {:.1} MiB, written in {:.0} ms, loaded in {:.0} ms",
        size as f64 / 1048576.0,
        write * 1e3,
        load * 1e3
    );
    assert!(pmcfg::encode(&h) == bytes, "cache round trip differs");

    let t = Instant::now();
    let rec = Utl::default()
        .recover(&h, &Report::default())
        .expect("an anywhere report is possible");
    let solve = t.elapsed().as_secs_f64();
    let count = |l: Label| rec.labels.iter().filter(|&&x| x == l).count();
    println!(
        "utl (anywhere)    {:.0} ms: {} yes, {} no, {} maybe",
        solve * 1e3,
        count(Label::Yes),
        count(Label::No),
        count(Label::Maybe)
    );
    // Sanity: main's entry runs; functions never called from main are No.
    assert_eq!(rec.labels[h.start().index()], Label::Yes);
    let unreachable_entries = h
        .functions()
        .iter()
        .filter_map(|f| f.entry)
        .filter(|&e| rec.labels[e.index()] == Label::No && h.kind(e) == NodeKind::Entry)
        .count();
    println!(
        "functions         {unreachable_entries} of {} never reachable from main",
        h.functions().len()
    );
    let _ = std::fs::remove_dir_all(&tmp);
}
