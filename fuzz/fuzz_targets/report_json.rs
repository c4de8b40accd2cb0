//! Any text into the report reader, against a small fixed graph: it must
//! never panic, and its errors must be one line naming the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use postmortem_core::Icfg;
use std::sync::OnceLock;

const GRAPH: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="kind" for="node" attr.name="kind"><default>declaration</default></key>
  <key id="procedure" for="node" attr.name="procedure"/>
  <key id="type" for="edge" attr.name="type"><default>flow</default></key>
  <key id="scope" for="edge" attr.name="scope"><default>intraprocedural</default></key>
  <graph id="CFG" edgedefault="directed">
    <node id="n:-1:1"><data key="kind">entry</data><data key="procedure">main</data></node>
    <node id="n:-1:2"><data key="kind">exit</data></node>
    <node id="n:-1:3"><data key="kind">call-site</data></node>
    <node id="n:-1:4"><data key="kind">expression</data></node>
    <edge source="n:-1:1" target="n:-1:3"/>
    <edge source="n:-1:3" target="n:-1:4"/>
    <edge source="n:-1:4" target="n:-1:2"/>
    <edge source="n:-1:3" target="n:-2:1"><data key="type">control</data><data key="scope">interprocedural</data></edge>
    <node id="n:-2:1"><data key="kind">entry</data><data key="procedure">f</data></node>
    <node id="n:-2:2"><data key="kind">exit</data></node>
    <node id="n:-2:3"><data key="kind">expression</data></node>
    <edge source="n:-2:1" target="n:-2:3"/>
    <edge source="n:-2:3" target="n:-2:2"/>
  </graph>
</graphml>
"#;

fn graph() -> &'static Icfg {
    static G: OnceLock<Icfg> = OnceLock::new();
    G.get_or_init(|| postmortem_formats::read_graphml(GRAPH.as_bytes(), "fixed.graphml").expect("valid graph"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match postmortem_formats::read_report_str(text, "fuzz.json", graph()) {
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "{msg:?}");
            assert!(msg.starts_with("fuzz.json: "), "{msg:?}");
        }
        Ok(r) => {
            assert!(r.crash.is_some());
            for n in r.mentioned_nodes() {
                assert!(n.index() < graph().num_nodes());
            }
        }
    }
});
