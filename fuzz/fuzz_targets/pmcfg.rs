//! The `.pmcfg` binary cache decoder: arbitrary bytes never panic, and a
//! decoded graph's accessors never panic either.
#![no_main]
use libfuzzer_sys::fuzz_target;
use postmortem_core::Icfg;

fuzz_target!(|data: &[u8]| {
    if let Ok(g) = Icfg::decode(data) {
        for n in g.nodes() {
            let _ = (g.kind(n), g.ext_id(n), g.lines(n), g.succs(n).count(), g.preds(n).count());
        }
        let _ = g.encode();
    }
});
