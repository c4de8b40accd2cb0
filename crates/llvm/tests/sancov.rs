//! SanitizerCoverage flags from real clang-14 output map to exactly one IR
//! block each (`src/sancov.rs`), for `func` and `bb` instrumentation. The
//! binary-side check of the order (pc table and symbol table) is in the
//! CLI's tests. Fails (never skips) without clang-14.

mod common;
use common::{tool, TempDir};
use postmortem_core::NodeKind;
use postmortem_llvm::load_path;
use std::collections::HashSet;
use std::path::Path;

fn source() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cli/tests/data/sancov/crash.c")
        .display()
        .to_string()
}

fn build(dir: &Path, mode: &str, opt: &str) -> postmortem_llvm::Loaded {
    let bc = dir.join(format!("crash-{mode}{opt}.bc"));
    let out = tool("clang-14")
        .args(["-g", opt, "-emit-llvm", "-c"])
        .arg(format!(
            "-fsanitize-coverage={mode},inline-bool-flag,pc-table"
        ))
        .arg(source())
        .arg("-o")
        .arg(&bc)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    load_path(&bc).unwrap()
}

#[test]
fn every_flag_maps_to_exactly_one_block() {
    let tmp = TempDir::new("sancov");
    for (mode, opt) in [
        ("func", "-O0"),
        ("bb", "-O0"),
        ("func", "-O2"),
        ("bb", "-O2"),
    ] {
        let loaded = build(&tmp.0, mode, opt);
        let g = &loaded.icfg;
        let map = loaded.sancov.expect("the module has sancov arrays");
        assert_eq!(map.unmapped, 0, "{mode} {opt}: {}", map.summary());
        assert_eq!(map.inexact, 0, "{mode} {opt}: {}", map.summary());
        let total: usize = map.arrays.iter().map(|a| a.len).sum();
        assert_eq!(total, map.flags.len());
        let mut blocks = HashSet::new();
        for (i, f) in map.flags.iter().enumerate() {
            assert!(f.exact, "{mode} {opt}: flag {i}");
            assert!(
                blocks.insert((f.function.clone(), f.block.clone())),
                "{mode} {opt}: two flags on block {} of {}",
                f.block,
                f.function
            );
            let ran = f.ran.expect("a set flag names a node");
            assert!(f.not_ran.contains(&ran));
            assert_eq!(g.function(g.func_of(ran)).name.as_ref(), f.function);
            for &n in &f.not_ran {
                assert_eq!(g.func_of(n), g.func_of(ran));
            }
            // The first flag of each array is the function's entry.
            let a = &map.arrays[f.array];
            if a.first_flag == i {
                let entry = g.function(g.func_of(ran)).entry.unwrap();
                assert!(
                    f.not_ran.contains(&entry),
                    "{mode}: flag {i} is not {}'s entry",
                    f.function
                );
                assert_eq!(g.kind(entry), NodeKind::Entry);
            }
        }
        let funcs: HashSet<String> = map
            .arrays
            .iter()
            .map(|a| a.function.clone().unwrap())
            .collect();
        assert_eq!(funcs.len(), map.arrays.len(), "one array per function");
        if mode == "func" {
            assert!(map.arrays.iter().all(|a| a.len == 1));
        } else {
            assert!(map.flags.len() > 2 * map.arrays.len(), "{}", map.summary());
        }
        // At -O2 the static functions are inlined into main.
        let expected: &[&str] = if opt == "-O0" {
            &["main", "deep", "check", "square", "cube"]
        } else {
            &["main"]
        };
        for name in expected {
            assert!(funcs.contains(*name), "{mode} {opt}: no array for {name}");
        }
    }
}
