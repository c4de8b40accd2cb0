//! Both readers never panic: on arbitrary bytes, and on arbitrary
//! mutations of valid small inputs (plain and gzip-compressed).

use flate2::write::GzEncoder;
use flate2::Compression;
use postmortem_core::Icfg;
use postmortem_formats::{read_graphml, read_report_str};
use proptest::prelude::*;
use std::io::Write;
use std::sync::OnceLock;

const GRAPH: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="kind" for="node" attr.name="kind"><default>declaration</default></key>
  <key id="label" for="node" attr.name="label"/>
  <key id="procedure" for="node" attr.name="procedure"/>
  <key id="file" for="node" attr.name="file"/>
  <key id="lines" for="node" attr.name="lines"/>
  <key id="type" for="edge" attr.name="type"><default>flow</default></key>
  <key id="scope" for="edge" attr.name="scope"><default>intraprocedural</default></key>
  <key id="ps" for="graph" attr.name="program-start"/>
  <graph id="CFG" edgedefault="directed">
    <data key="ps">n:-1:1</data>
    <node id="n:-1:1"><data key="kind">entry</data><data key="procedure">main</data><data key="file">m.c</data><data key="lines">( 0 )</data></node>
    <node id="n:-1:2"><data key="kind">exit</data></node>
    <edge source="n:-1:1" target="n:-1:3"/>
    <node id="n:-1:3"><data key="kind">call-site</data><data key="lines">(3 4)</data><data key="label"> call f &amp; g </data></node>
    <node id="n:-1:4"><data key="kind">call-site</data></node>
    <edge source="n:-1:3" target="n:-1:4"/>
    <edge source="n:-1:4" target="n:-1:2"/>
    <edge source="n:-1:3" target="n:-2:1"><data key="type">control</data><data key="scope">interprocedural</data></edge>
    <edge source="n:-1:4" target="n:-3:1"><data key="type">control</data><data key="scope">interprocedural</data></edge>
    <edge source="n:-1:3" target="n:-1:2"><data key="type">data</data></edge>
    <node id="n:-2:1"><data key="kind">entry</data><data key="procedure">f</data></node>
    <node id="n:-2:2"><data key="kind">exit</data></node>
    <node id="n:-2:3"><data key="lines">(9)</data><![CDATA[x]]></node>
    <edge source="n:-2:1" target="n:-2:3"/>
    <edge source="n:-2:3" target="n:-2:2"/>
    <node id="n:-3:1"><data key="kind">entry</data><data key="procedure">printf</data></node>
  </graph>
</graphml>
"#;

const REPORT: &str = r#"{"stack": [{"call": ["n:-1:3"], "entry": ["n:-2:1"]}],
 "crash": ["n:-2:3", "n:-2:2"],
 "obsYes": [{"reliable": false, "entries": [["n:-1:1"], ["n:-1:3", "n:-1:4"]]}],
 "obsNo": [["n:-1:4"], ["n:-2:2"]]}"#;

fn graph() -> &'static Icfg {
    static G: OnceLock<Icfg> = OnceLock::new();
    G.get_or_init(|| read_graphml(GRAPH.as_bytes(), "g.graphml").expect("the seed graph is valid"))
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// One edit of a byte string.
#[derive(Clone, Debug)]
enum Edit {
    Delete { at: usize, len: usize },
    Insert { at: usize, bytes: Vec<u8> },
    Replace { at: usize, byte: u8 },
    Duplicate { at: usize, len: usize, to: usize },
    Truncate { at: usize },
}

/// Fragments that make mutations likelier to hit interesting paths.
const TOKENS: &[&str] = &[
    "<",
    ">",
    "/>",
    "</",
    "\"",
    "&",
    ";",
    "&amp;",
    "&lol;",
    "<![CDATA[",
    "]]>",
    "<!DOCTYPE x [<!ENTITY a \"b\">]>",
    "<node id=\"n:-1:9\"/>",
    "<edge source=\"n:-1:1\" target=\"n:-2:9\"/>",
    "<data key=\"kind\">entry</data>",
    "<data key=\"ps\">n:-3:1</data>",
    "<graph>",
    "</graph>",
    "n:-1:1",
    "n:-2:1",
    ":",
    "(",
    ")",
    "0",
    "99999999999999999999",
    "\"n:-9:999\"",
    "[",
    "]",
    "{",
    "}",
    ",",
    "null",
    "true",
    "\"crash\"",
    "\"crashstack\"",
    "1e999",
    "-",
    "\u{0}",
    "\u{feff}",
    "\u{fffd}",
];

fn edit() -> impl Strategy<Value = Edit> {
    let bytes = prop_oneof![
        prop::collection::vec(any::<u8>(), 1..8),
        prop::sample::select(TOKENS).prop_map(|t| t.as_bytes().to_vec()),
    ];
    prop_oneof![
        (any::<usize>(), 1..64usize).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), bytes).prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Edit::Replace { at, byte }),
        (any::<usize>(), 1..200usize, any::<usize>()).prop_map(|(at, len, to)| Edit::Duplicate {
            at,
            len,
            to
        }),
        any::<usize>().prop_map(|at| Edit::Truncate { at }),
    ]
}

fn apply(mut v: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let n = v.len();
        match e {
            Edit::Delete { at, len } if n > 0 => {
                let a = at % n;
                let b = (a + len).min(n);
                v.drain(a..b);
            }
            Edit::Insert { at, bytes } => {
                let a = at % (n + 1);
                v.splice(a..a, bytes.iter().copied());
            }
            Edit::Replace { at, byte } if n > 0 => v[at % n] = *byte,
            Edit::Duplicate { at, len, to } if n > 0 => {
                let a = at % n;
                let chunk = v[a..(a + len).min(n)].to_vec();
                let t = to % (n + 1);
                v.splice(t..t, chunk);
            }
            Edit::Truncate { at } => v.truncate(at % (n + 1)),
            _ => {}
        }
    }
    v
}

fn try_graph(bytes: &[u8]) {
    if let Err(e) = read_graphml(bytes, "fuzz.graphml") {
        let msg = e.to_string();
        assert!(
            !msg.contains('\n') && msg.starts_with("fuzz.graphml: "),
            "{msg}"
        );
    }
}

fn try_report(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    if let Err(e) = read_report_str(&text, "fuzz.json", graph()) {
        let msg = e.to_string();
        assert!(
            !msg.contains('\n') && msg.starts_with("fuzz.json: "),
            "{msg}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        try_graph(&bytes);
        try_report(&bytes);
        let mut gz = vec![0x1f, 0x8b];
        gz.extend_from_slice(&bytes);
        try_graph(&gz);
    }

    #[test]
    fn mutated_graphml_never_panics(edits in prop::collection::vec(edit(), 1..6)) {
        let doc = apply(GRAPH.as_bytes().to_vec(), &edits);
        try_graph(&doc);
        try_graph(&gzip(&doc));
    }

    #[test]
    fn mutated_gzip_never_panics(edits in prop::collection::vec(edit(), 1..4)) {
        try_graph(&apply(gzip(GRAPH.as_bytes()), &edits));
    }

    #[test]
    fn mutated_report_never_panics(edits in prop::collection::vec(edit(), 1..6)) {
        try_report(&apply(REPORT.as_bytes().to_vec(), &edits));
    }

    #[test]
    fn random_json_never_panics(v in json_value()) {
        try_report(v.to_string().as_bytes());
        let wrapped = serde_json::json!({"crash": ["n:-1:1"], "obsYes": [v.clone()], "obsNo": [v.clone()], "stack": [v]});
        try_report(wrapped.to_string().as_bytes());
    }
}

/// Random JSON built from the report's vocabulary.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let key = prop::sample::select(vec![
        "crash",
        "crashstack",
        "stack",
        "obsYes",
        "obsNo",
        "call",
        "entry",
        "reliable",
        "entries",
        "x",
    ]);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        any::<i64>().prop_map(|i| Value::Number(i.into())),
        prop::sample::select(vec![
            "n:-1:1", "n:-1:3", "n:-2:1", "n:-2:3", "n:-9:999", "", "n:-3:1"
        ])
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

#[test]
fn seeds_are_valid() {
    let g = graph();
    assert_eq!(g.num_nodes(), 7);
    read_report_str(REPORT, "r.json", g).unwrap();
}
