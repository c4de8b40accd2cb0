//! Hostile and broken inputs: every one is an `Err` whose message is one
//! line naming the input; none panics.

use flate2::write::GzEncoder;
use flate2::Compression;
use postmortem_core::Icfg;
use postmortem_formats::{
    read_graphml, read_graphml_path, read_report_path, read_report_str, FormatError,
};
use std::io::Write;
use std::path::Path;

const SMALL: &str = r#"<?xml version="1.0"?>
<graphml>
  <key id="kind" for="node" attr.name="kind"/>
  <key id="procedure" for="node" attr.name="procedure"/>
  <key id="type" for="edge" attr.name="type"/>
  <key id="scope" for="edge" attr.name="scope"/>
  <graph id="CFG">
    <node id="n:-1:1"><data key="kind">entry</data><data key="procedure">main</data></node>
    <node id="n:-1:2"><data key="kind">exit</data></node>
    <node id="n:-1:3"><data key="kind">call-site</data></node>
    <node id="n:-1:4"/>
    <edge source="n:-1:1" target="n:-1:3"/>
    <edge source="n:-1:3" target="n:-1:4"/>
    <edge source="n:-1:4" target="n:-1:2"/>
    <node id="n:-2:1"><data key="kind">entry</data><data key="procedure">f</data></node>
    <node id="n:-2:2"><data key="kind">exit</data></node>
    <edge source="n:-2:1" target="n:-2:2"/>
    <edge source="n:-1:3" target="n:-2:1"><data key="type">control</data><data key="scope">interprocedural</data></edge>
  </graph>
</graphml>
"#;

fn small() -> Icfg {
    read_graphml(SMALL.as_bytes(), "small.graphml").unwrap()
}

/// Checks the error's message and returns it.
fn check(e: FormatError, name: &str) -> String {
    let msg = e.to_string();
    assert!(
        !msg.contains('\n') && !msg.contains('\r'),
        "not one line: {msg:?}"
    );
    assert!(
        msg.starts_with(&format!("{name}: ")),
        "does not name {name}: {msg}"
    );
    assert_eq!(e.file(), name);
    msg
}

fn graph_err(doc: &[u8]) -> String {
    let e = read_graphml(doc, "bad.graphml").expect_err("accepted a bad graph");
    check(e, "bad.graphml")
}

fn report_err(text: &str) -> String {
    let e = read_report_str(text, "data.json", &small()).expect_err("accepted a bad report");
    check(e, "data.json")
}

#[test]
fn the_small_graph_is_fine() {
    let g = small();
    assert_eq!(g.num_nodes(), 6);
    read_report_str(
        r#"{"crash": ["n:-1:4"], "stack": [], "obsYes": [], "obsNo": []}"#,
        "data.json",
        &g,
    )
    .unwrap();
}

#[test]
fn truncated_xml() {
    for cut in (1..SMALL.len() - 12).step_by(7) {
        let msg = graph_err(&SMALL.as_bytes()[..cut]);
        assert!(!msg.is_empty());
    }
    let msg = graph_err(&SMALL.as_bytes()[..SMALL.find("<edge source=\"n:-1:3\"").unwrap() + 10]);
    assert!(msg.contains("line 13"), "{msg}");
    let msg = graph_err(SMALL.replace("</graph>", "").as_bytes());
    assert!(msg.contains("malformed XML"), "{msg}");
}

const BILLION_LAUGHS: &str = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ELEMENT lolz (#PCDATA)>
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<lolz>&lol9;</lolz>
"#;

#[test]
fn billion_laughs_is_refused() {
    let msg = graph_err(BILLION_LAUGHS.as_bytes());
    assert!(msg.contains("entities"), "{msg}");
    // The same bomb inside a GraphML document.
    let doc = BILLION_LAUGHS.replace(
        "<lolz>&lol9;</lolz>",
        &SMALL
            .replacen("<?xml version=\"1.0\"?>", "", 1)
            .replace("<graph id=\"CFG\">", "<graph>&lol9;"),
    );
    assert!(graph_err(doc.as_bytes()).contains("entities"));
    // Without the DOCTYPE, the references are unknown entities.
    let doc = SMALL.replace(
        r#"<node id="n:-1:4"/>"#,
        r#"<node id="n:-1:4"><data key="kind">&lol9;</data></node>"#,
    );
    let msg = graph_err(doc.as_bytes());
    assert!(msg.contains("lol9"), "{msg}");
    let doc = SMALL.replace(r#"<node id="n:-1:4"/>"#, r#"<node id="&lol9;"/>"#);
    assert!(graph_err(doc.as_bytes()).contains("lol9"));
    // Parameter entities too.
    let doc = format!("<!DOCTYPE g [<!ENTITY % p \"x\"> %p;]>{SMALL}").replacen(
        "<?xml version=\"1.0\"?>",
        "",
        1,
    );
    assert!(graph_err(doc.as_bytes()).contains("entities"));
}

#[test]
fn bad_node_ids_in_edges() {
    let doc = SMALL.replace(r#"target="n:-2:2"/>"#, r#"target="n:-9:999"/>"#);
    let msg = graph_err(doc.as_bytes());
    assert!(
        msg.contains("undefined node id \"n:-9:999\"") && msg.contains("line 17"),
        "{msg}"
    );
    let doc = SMALL.replace(
        r#"source="n:-1:1""#,
        r#"source="n:-1:999999999999999999999999""#,
    );
    assert!(graph_err(doc.as_bytes()).contains("n:-1:999999999999999999999999"));
    // Duplicate definitions.
    let doc = SMALL.replace(
        r#"<node id="n:-1:4"/>"#,
        r#"<node id="n:-1:4"/><node id="n:-1:4"/>"#,
    );
    let msg = graph_err(doc.as_bytes());
    assert!(msg.contains("defined twice"), "{msg}");
    // Ids not of the form n:<function>:<index>.
    let doc = SMALL.replace("n:-1:4", "oops");
    assert!(graph_err(doc.as_bytes()).contains("n:<function-id>:<index>"));
    // Missing attributes.
    assert!(graph_err(
        SMALL
            .replace(r#"<node id="n:-1:4"/>"#, "<node/>")
            .as_bytes()
    )
    .contains("without an id"));
    assert!(
        graph_err(SMALL.replace(r#"source="n:-1:1" "#, "").as_bytes()).contains("without a source")
    );
}

#[test]
fn bad_graph_structure() {
    // Not GraphML, no graph, two graphs.
    assert!(graph_err(b"<svg/>").contains("<svg>"));
    assert!(graph_err(b"<graphml><key id='a'/></graphml>").contains("no <graph>"));
    assert!(graph_err(b"<graphml><graph/><graph/></graphml>").contains("more than one <graph>"));
    // No control-flow node at all.
    assert!(
        graph_err(b"<graphml><graph><node id='n:-1:1'/></graph></graphml>")
            .contains("no control-flow node")
    );
    // Undeclared key.
    assert!(graph_err(
        SMALL
            .replace(r#"<data key="procedure">f"#, r#"<data key="proc">f"#)
            .as_bytes()
    )
    .contains("undeclared key \"proc\""));
    // Bad lines.
    let doc = SMALL
        .replace(
            r#"<key id="kind" "#,
            r#"<key id="lines" for="node" attr.name="lines"/><key id="kind" "#,
        )
        .replace(
            r#"<node id="n:-1:4"/>"#,
            r#"<node id="n:-1:4"><data key="lines">(1 99999999999)</data></node>"#,
        );
    assert!(graph_err(doc.as_bytes()).contains("bad lines value"));
    // Call to a non-entry (model build error).
    let doc = SMALL.replace(
        r#"target="n:-2:1"><data key="type">control"#,
        r#"target="n:-2:2"><data key="type">control"#,
    );
    assert!(graph_err(doc.as_bytes()).contains("not a function entry"));
    // No way to pick a start.
    let doc = SMALL.replace(">main<", ">notmain<");
    assert!(graph_err(doc.as_bytes()).contains("cannot tell where the program starts"));
    // Two entries in one function.
    let doc = SMALL.replace(
        r#"<node id="n:-1:4"/>"#,
        r#"<node id="n:-1:4"><data key="kind">entry</data></node>"#,
    );
    assert!(graph_err(doc.as_bytes()).contains("second entry"));
    // Nested graph, text outside the root, two roots.
    assert!(graph_err(
        SMALL
            .replace(
                r#"<node id="n:-1:4"/>"#,
                r#"<node id="n:-1:4"><graph/></node>"#
            )
            .as_bytes()
    )
    .contains("nested"));
    assert!(graph_err(format!("{SMALL}trailing").as_bytes()).contains("outside"));
    assert!(graph_err(format!("{SMALL}<graphml/>").as_bytes()).contains("root"));
    // Garbage and invalid UTF-8.
    graph_err(b"\x00\x01\x02\xff\xfe garbage");
    graph_err(SMALL.replace("entry", "en\u{0}try").as_bytes());
    let mut latin1 = SMALL.as_bytes().to_vec();
    let at = SMALL.find(">main<").unwrap() + 1;
    latin1[at] = 0xe9;
    graph_err(&latin1);
    graph_err(b"   \n  ");
}

#[test]
fn empty_files() {
    assert_eq!(graph_err(b""), "bad.graphml: empty file");
    assert_eq!(report_err(""), "data.json: empty file");
    let gz = GzEncoder::new(Vec::new(), Compression::default())
        .finish()
        .unwrap();
    assert_eq!(graph_err(&gz), "bad.graphml: empty file");
    let dir =
        std::env::temp_dir().join(format!("postmortem-formats-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.graphml");
    std::fs::write(&empty, b"").unwrap();
    let name = empty.display().to_string();
    check(read_graphml_path(&empty).unwrap_err(), &name);
    check(read_report_path(&empty, &small()).unwrap_err(), &name);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn io_errors_name_the_path() {
    let p = Path::new("/nonexistent/dir/x.graphml");
    let msg = check(
        read_graphml_path(p).unwrap_err(),
        "/nonexistent/dir/x.graphml",
    );
    assert!(msg.contains("No such file"), "{msg}");
    check(
        read_report_path(Path::new("/nonexistent/data.json"), &small()).unwrap_err(),
        "/nonexistent/data.json",
    );
    // A directory.
    check(read_graphml_path(Path::new("/")).unwrap_err(), "/");
}

#[test]
fn corrupt_gzip() {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(SMALL.as_bytes()).unwrap();
    let gz = enc.finish().unwrap();
    for cut in [2, 5, 10, 20, gz.len() / 2, gz.len() - 4] {
        graph_err(&gz[..cut]);
    }
    let mut flipped = gz.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x55;
    graph_err(&flipped);
    graph_err(&[0x1f, 0x8b]);
    graph_err(&[0x1f]);
}

#[test]
fn bad_reports() {
    let unknown = report_err(r#"{"crash": ["n:-9:999"]}"#);
    assert_eq!(
        unknown,
        r#"data.json: $.crash[0]: unknown node id "n:-9:999""#
    );
    // Unknown ids everywhere, each with its path.
    let m = report_err(
        r#"{"crash": ["n:-1:4"], "stack": [{"call": ["n:-1:3"], "entry": ["n:-2:9"]}]}"#,
    );
    assert_eq!(
        m,
        r#"data.json: $.stack[0].entry[0]: unknown node id "n:-2:9""#
    );
    let m = report_err(r#"{"crash": ["n:-1:4"], "obsNo": [["n:-1:1"], ["n:-1:2", "nope"]]}"#);
    assert_eq!(m, r#"data.json: $.obsNo[1][1]: unknown node id "nope""#);
    // Wrong JSON types.
    assert_eq!(
        report_err(r#"{"crash": ["n:-1:4"], "obsYes": [{"reliable": "yes", "entries": []}]}"#),
        r#"data.json: $.obsYes[0].reliable: expected a boolean, found "yes""#
    );
    assert_eq!(
        report_err(r#"{"crash": null}"#),
        "data.json: $.crash: expected an array, found null"
    );
    assert_eq!(
        report_err(r#"{"crash": ["n:-1:4"], "obsYes": {}}"#),
        "data.json: $.obsYes: expected an array, found {}"
    );
    assert_eq!(
        report_err(r#"{"crash": ["n:-1:4"], "obsNo": [[true]]}"#),
        "data.json: $.obsNo[0][0]: expected a node id string, found true"
    );
    assert_eq!(
        report_err(r#"{"crash": ["n:-1:4"], "stack": [["n:-1:3"]]}"#),
        r#"data.json: $.stack[0]: expected an object, found ["n:-1:3"]"#
    );
    assert_eq!(
        report_err(r#"{"crash": ["n:-1:4"], "obsYes": [{"reliable": false}]}"#),
        r#"data.json: $.obsYes[0]: missing field "entries""#
    );
    assert_eq!(
        report_err(r#"{"crash": ["n:-1:4"], "obsYes": [{"entries": "n:-1:1"}]}"#),
        r#"data.json: $.obsYes[0].entries: expected an array, found "n:-1:1""#
    );
    // Top level.
    assert_eq!(
        report_err(r#"[{"crash": ["n:-1:4"]}]"#),
        r#"data.json: $: expected an object, found [{"crash":["n:-1:4"]}]"#
    );
    assert_eq!(
        report_err("42"),
        "data.json: $: expected an object, found 42"
    );
    assert_eq!(report_err("{}"), r#"data.json: $: missing field "crash""#);
    assert!(report_err(r#"{"crash": ["n:-1:4"], "obsyes": []}"#)
        .starts_with(r#"data.json: $.obsyes: unknown field "obsyes""#));
    assert!(report_err(r#"{"crash": ["n:-1:4"], "obsNo": [], "stack": [{"call": ["n:-1:3"], "entry": ["n:-2:1"], "x": 1}]}"#)
        .starts_with(r#"data.json: $.stack[0].x: unknown field "x""#));
    assert!(report_err(r#"{"crash": ["n:-1:4"], "a\nb": 1}"#)
        .starts_with(r#"data.json: $["a\nb"]: unknown field"#));
    // Empty sets, crash and crashstack.
    assert_eq!(
        report_err(r#"{"crash": []}"#),
        "data.json: $.crash: empty node set (a set must hold at least one node id)"
    );
    assert_eq!(
        report_err(r#"{"stack": [], "crashstack": [{"crash": ["n:-1:4"]}]}"#),
        r#"data.json: $.crashstack: both "stack" and "crashstack" are present"#
    );
    assert_eq!(
        report_err(r#"{"crashstack": [{"call": ["n:-1:3"], "entry": ["n:-2:1"]}]}"#),
        r#"data.json: $.crashstack[0].call: unknown field "call" (expected one of "crash")"#
    );
    // Huge numbers.
    assert_eq!(
        report_err(r#"{"crash": [123456789012345678901234567890]}"#),
        "data.json: $.crash[0]: expected a node id string, found 1.2345678901234568e+29"
    );
    assert!(report_err(r#"{"crash": [1e999]}"#).starts_with("data.json: invalid JSON: "));
    assert_eq!(
        report_err(r#"{"crash": ["n:-1:99999999999999999999999999"]}"#),
        r#"data.json: $.crash[0]: unknown node id "n:-1:99999999999999999999999999""#
    );
    // Long values are cut.
    let long = "x".repeat(500);
    let m = report_err(&format!(r#"{{"crash": ["{long}"]}}"#));
    assert!(m.len() < 200 && m.ends_with("..."), "{m}");
    // Broken JSON, deep nesting.
    assert!(report_err(r#"{"crash": ["n:-1:4"]"#).starts_with("data.json: invalid JSON: "));
    assert!(report_err(&"[".repeat(100_000)).starts_with("data.json: invalid JSON: "));
    assert!(report_err("\u{feff}{}").starts_with("data.json: invalid JSON: "));
}
