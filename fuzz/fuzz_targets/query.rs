//! The query language: arbitrary text, as a formula and as a regex, over a
//! small fixed graph, never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;
use postmortem_core::query::{compile, compile_regex};
use postmortem_testkit::testgen::{random_icfg, GraphShape, Rng};

fuzz_target!(|data: &[u8]| {
    let g = random_icfg(&mut Rng::new(7), &GraphShape::default());
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = compile(&g, s);
        let _ = compile_regex(&g, s);
    }
});
