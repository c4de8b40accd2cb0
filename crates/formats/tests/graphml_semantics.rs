//! The exact GraphML semantics, on small hand-written documents.

use flate2::write::GzEncoder;
use flate2::Compression;
use postmortem_core::{EdgeKind, Icfg, NodeId, NodeKind};
use postmortem_formats::{read_graphml, read_graphml_path};
use std::io::Write;

/// Key ids differ from attribute names; kind defaults to `declaration`,
/// edge type to `flow`, scope to `intraprocedural`.
const DOC: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="k0" for="node" attr.name="kind"> <default>declaration</default> </key>
  <key id="k1" for="node" attr.name="label"/>
  <key id="k2" for="node" attr.name="procedure"/>
  <key id="k3" for="node" attr.name="file"/>
  <key id="k4" for="node" attr.name="lines"/>
  <key id="k5" for="node" attr.name="call-name"/>
  <key id="t" for="edge" attr.name="type"> <default>flow</default> </key>
  <key id="s" for="edge" attr.name="scope"> <default>intraprocedural</default> </key>
  <key id="ps" for="graph" attr.name="program-start"/>
  <graph id="CFG" edgedefault="directed">
    <!--START-->
    <!-- cfg -1 main -->
    <node id="n:-1:1">
      <data key="k1">  entry: main </data>
      <data key="k0">entry</data>
      <data key="k4">( 0 )</data>
      <data key="k3">src/main.c</data>
      <data key="k2">main</data>
    </node>
    <edge source="n:-1:1" target="n:-1:3"/>
    <node id="n:-1:2"><data key="k0">exit</data><data key="k1">exit: main</data></node>
    <node id="n:-1:3"><data key="k0">call-site</data><data key="k4">(12 13)</data><data key="k1">  call f</data></node>
    <node id="n:-1:4"><data key="k0">call-site</data><data key="k4">(14)</data><data key="k5">printf</data></node>
    <node id="n:-1:5"><data key="k0">expression</data><data key="k4">(15)</data><data key="k1">x = 1 &amp;&amp; y &lt; 2</data></node>
    <edge source="n:-1:3" target="n:-1:4"/>
    <edge source="n:-1:4" target="n:-1:5"><data key="t">flow</data></edge>
    <edge source="n:-1:5" target="n:-1:2"/>
    <edge source="n:-1:3" target="n:-2:1"><data key="t">control</data><data key="s">interprocedural</data></edge>
    <edge source="n:-1:4" target="n:-3:1"><data key="s">interprocedural</data><data key="t">control</data></edge>
    <edge source="n:-1:3" target="n:-1:5"><data key="t">data</data></edge>
    <edge source="n:-1:4" target="n:-1:2"><data key="t">control</data></edge>
    <edge source="n:-1:1" target="n:-1:5"><data key="t">control</data></edge>
    <!-- cfg -2 f -->
    <node id="n:-2:1"><data key="k0">entry</data><data key="k2">f</data><data key="k3">src/f.c</data></node>
    <node id="n:-2:2"><data key="k0">exit</data></node>
    <node id="n:-2:3"><data key="k4">(7)</data><data key="k1"><![CDATA[ a<b ]]></data></node>
    <edge source="n:-2:1" target="n:-2:3"/>
    <edge source="n:-2:3" target="n:-2:2"/>
    <!-- cfg -3 printf: a declaration, no flow edges -->
    <node id="n:-3:1"><data key="k0">entry</data><data key="k2">printf</data></node>
    <node id="n:-3:2"><data key="k0">exit</data></node>
    <node id="n:-4:9"/>
    <edge source="n:-4:9" target="n:-3:1"><data key="t">data</data></edge>
  </graph>
</graphml>
"#;

fn parse(doc: &str) -> Icfg {
    read_graphml(doc.as_bytes(), "test.graphml").unwrap_or_else(|e| panic!("{e}"))
}

fn id(g: &Icfg, s: &str) -> NodeId {
    g.lookup(s)
        .unwrap_or_else(|| panic!("{s} is not in the model"))
}

fn succs(g: &Icfg, s: &str) -> Vec<(String, EdgeKind)> {
    let mut v: Vec<_> = g
        .succs(id(g, s))
        .map(|(t, k)| (g.ext_id(t).to_string(), k))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn check_doc(g: &Icfg) {
    // Declarations (no flow edge) are dropped.
    assert_eq!(g.num_nodes(), 8);
    for decl in ["n:-3:1", "n:-3:2", "n:-4:9"] {
        assert_eq!(g.lookup(decl), None, "{decl}");
    }
    // Functions named by their entries' procedure, with their files.
    let names: Vec<&str> = g.functions().iter().map(|f| &*f.name).collect();
    assert_eq!(names, ["main", "f"]);
    let main = g.func_of(id(g, "n:-1:5"));
    assert_eq!(&*g.function(main).name, "main");
    assert_eq!(
        g.file_of(id(g, "n:-1:3")).map(|f| g.file_path(f)),
        Some("src/main.c")
    );
    assert_eq!(
        g.file_of(id(g, "n:-2:3")).map(|f| g.file_path(f)),
        Some("src/f.c")
    );
    assert_eq!(g.function(main).entry, Some(id(g, "n:-1:1")));
    assert_eq!(g.function(main).exit, Some(id(g, "n:-1:2")));
    // Kinds: entry/exit/call-site, anything else (incl. the default
    // `declaration` of a node with flow edges) is a statement.
    assert_eq!(g.kind(id(g, "n:-1:1")), NodeKind::Entry);
    assert_eq!(g.kind(id(g, "n:-1:2")), NodeKind::Exit);
    assert_eq!(g.kind(id(g, "n:-1:3")), NodeKind::CallSite);
    assert_eq!(g.kind(id(g, "n:-1:5")), NodeKind::Statement);
    assert_eq!(g.kind(id(g, "n:-2:3")), NodeKind::Statement);
    // Lines (0 dropped) and trimmed labels, with entities and CDATA.
    assert_eq!(g.lines(id(g, "n:-1:1")), &[] as &[u32]);
    assert_eq!(g.lines(id(g, "n:-1:3")), &[12, 13]);
    assert_eq!(g.lines(id(g, "n:-2:3")), &[7]);
    assert_eq!(g.lines(id(g, "n:-2:2")), &[] as &[u32]);
    assert_eq!(g.label(id(g, "n:-1:1")), "entry: main");
    assert_eq!(g.label(id(g, "n:-1:3")), "call f");
    assert_eq!(g.label(id(g, "n:-1:5")), "x = 1 && y < 2");
    assert_eq!(g.label(id(g, "n:-2:3")), "a<b");
    assert_eq!(g.label(id(g, "n:-2:2")), "");
    // A call into the program goes through the callee and returns.
    assert_eq!(succs(g, "n:-1:3"), [("n:-2:1".to_string(), EdgeKind::Call)]);
    assert_eq!(
        g.return_sites(id(g, "n:-1:3"))
            .map(|r| g.ext_id(r))
            .collect::<Vec<_>>(),
        ["n:-1:4"]
    );
    assert_eq!(
        succs(g, "n:-2:2"),
        [("n:-1:4".to_string(), EdgeKind::Return)]
    );
    // A call to a declaration (library code) just flows on.
    assert_eq!(
        succs(g, "n:-1:4"),
        [("n:-1:5".to_string(), EdgeKind::Local)]
    );
    // Data and intraprocedural control edges are ignored.
    assert_eq!(
        succs(g, "n:-1:1"),
        [("n:-1:3".to_string(), EdgeKind::Local)]
    );
    assert_eq!(
        succs(g, "n:-1:5"),
        [("n:-1:2".to_string(), EdgeKind::Local)]
    );
    assert_eq!(g.num_edges(), 7);
}

#[test]
fn exact_semantics_and_main_as_default_start() {
    let g = parse(DOC);
    check_doc(&g);
    assert_eq!(g.ext_id(g.start()), "n:-1:1");
}

#[test]
fn program_start_is_honoured() {
    let doc = DOC.replace("<!--START-->", r#"<data key="ps"> n:-2:1 </data>"#);
    let g = parse(&doc);
    check_doc(&g);
    assert_eq!(g.ext_id(g.start()), "n:-2:1");
}

#[test]
fn program_start_default_is_honoured() {
    let doc = DOC.replace(
        r#"<key id="ps" for="graph" attr.name="program-start"/>"#,
        r#"<key id="ps" for="graph" attr.name="program-start"><default>n:-2:1</default></key>"#,
    );
    assert_eq!(parse(&doc).ext_id(parse(&doc).start()), "n:-2:1");
}

#[test]
fn program_start_must_name_a_cfg_node() {
    for bad in ["n:-3:1", "n:-7:7"] {
        let doc = DOC.replace("<!--START-->", &format!(r#"<data key="ps">{bad}</data>"#));
        let e = read_graphml(doc.as_bytes(), "test.graphml")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("test.graphml: line ") && e.contains(bad) && e.contains("program-start"),
            "{e}"
        );
    }
}

#[test]
fn gzip_input_is_decompressed() {
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(DOC.as_bytes()).unwrap();
    let gz = enc.finish().unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b]);
    let g = read_graphml(&gz[..], "test.graphml.gz").unwrap();
    check_doc(&g);
    // And from a `.graphml.gz` file.
    let path = std::env::temp_dir().join(format!(
        "postmortem-formats-test-{}.graphml.gz",
        std::process::id()
    ));
    std::fs::write(&path, &gz).unwrap();
    let g = read_graphml_path(&path);
    std::fs::remove_file(&path).unwrap();
    check_doc(&g.unwrap());
    // A reader handing out one byte at a time still sees the magic.
    let slow = std::io::BufReader::with_capacity(1, &gz[..]);
    check_doc(&read_graphml(slow, "slow.gz").unwrap());
    let slow = std::io::BufReader::with_capacity(1, DOC.as_bytes());
    check_doc(&read_graphml(slow, "slow").unwrap());
}

/// Keys are looked up by id, never by name; declared defaults apply to
/// their domain only.
#[test]
fn key_ids_are_indirections_and_defaults_apply() {
    let doc = r#"<graphml>
  <key id="label" for="node" attr.name="kind"><default>call-site</default></key>
  <key id="kind" for="node" attr.name="label"/>
  <key id="name" for="node" attr.name="procedure"/>
  <key id="x" for="edge" attr.name="type"><default>control</default></key>
  <key id="y" for="edge" attr.name="scope"><default>interprocedural</default></key>
  <key id="z" for="edge" attr.name="kind"><default>entry</default></key>
  <graph>
    <node id="n:-5:1"><data key="label">entry</data><data key="kind">the entry</data><data key="name">go</data></node>
    <node id="n:-5:2"><data key="kind">a call</data></node>
    <node id="n:-5:3"><data key="label">exit</data></node>
    <edge source="n:-5:1" target="n:-5:2"><data key="x">flow</data></edge>
    <edge source="n:-5:2" target="n:-5:3"><data key="x">flow</data><data key="y">intraprocedural</data></edge>
    <edge source="n:-5:2" target="n:-5:1"/>
  </graph>
</graphml>"#;
    let g = parse(doc);
    assert_eq!(g.num_nodes(), 3);
    let (e, c, x) = (id(&g, "n:-5:1"), id(&g, "n:-5:2"), id(&g, "n:-5:3"));
    assert_eq!(
        (g.kind(e), g.kind(c), g.kind(x)),
        (NodeKind::Entry, NodeKind::CallSite, NodeKind::Exit)
    );
    assert_eq!(g.label(e), "the entry");
    assert_eq!(g.label(c), "a call");
    assert_eq!(&*g.function(g.func_of(e)).name, "go");
    assert_eq!(g.start(), e, "the only entry");
    // The bare edge is, by the declared defaults, a call (a recursive one).
    assert_eq!(g.succs(c).collect::<Vec<_>>(), [(e, EdgeKind::Call)]);
    assert_eq!(g.return_sites(c).collect::<Vec<_>>(), [x]);
    assert_eq!(g.succs(x).collect::<Vec<_>>(), [(x, EdgeKind::Return)]);
}

/// A function without an entry is named by its id; same procedure names
/// stay distinct functions.
#[test]
fn function_naming_fallbacks() {
    let doc = r#"<graphml>
  <key id="kind" for="node" attr.name="kind"/>
  <key id="procedure" for="node" attr.name="procedure"/>
  <graph>
    <node id="n:-1:1"><data key="kind">entry</data><data key="procedure">main</data></node>
    <node id="n:-1:2"><data key="kind">exit</data></node>
    <node id="n:-2:1"><data key="kind">entry</data><data key="procedure">helper</data></node>
    <node id="n:-2:2"><data key="kind">exit</data></node>
    <node id="n:-3:1"><data key="kind">entry</data><data key="procedure">helper</data></node>
    <node id="n:-3:2"><data key="kind">exit</data></node>
    <node id="n:-77:4"/><node id="n:-77:5"/>
    <edge source="n:-1:1" target="n:-1:2"/>
    <edge source="n:-2:1" target="n:-2:2"/>
    <edge source="n:-3:1" target="n:-3:2"/>
    <edge source="n:-77:4" target="n:-77:5"/>
  </graph>
</graphml>"#;
    let g = parse(doc);
    let names: Vec<&str> = g.functions().iter().map(|f| &*f.name).collect();
    assert_eq!(names, ["main", "helper", "helper [-3]", "-77"]);
    assert_eq!(g.functions()[3].entry, None);
    assert_eq!(g.ext_id(g.start()), "n:-1:1");
}

/// Huge numbers in node ids are just text.
#[test]
fn huge_numbers_in_ids_are_text() {
    let doc = r#"<graphml><key id="kind" for="node" attr.name="kind"/><graph>
      <node id="n:-99999999999999999999999999:1"><data key="kind">entry</data></node>
      <node id="n:-99999999999999999999999999:18446744073709551617"/>
      <edge source="n:-99999999999999999999999999:1" target="n:-99999999999999999999999999:18446744073709551617"/>
    </graph></graphml>"#;
    let g = parse(doc);
    assert_eq!(g.num_nodes(), 2);
    assert_eq!(&*g.functions()[0].name, "-99999999999999999999999999");
}

/// A DOCTYPE without entity declarations is harmless.
#[test]
fn plain_doctype_is_accepted() {
    let doc = DOC.replacen(
        "<graphml",
        "<!DOCTYPE graphml SYSTEM \"graphml.dtd\">\n<graphml",
        1,
    );
    check_doc(&parse(&doc));
}

/// A UTF-8 byte-order mark is fine.
#[test]
fn byte_order_mark_is_accepted() {
    let doc = format!("\u{feff}{DOC}");
    check_doc(&parse(&doc));
}

/// Many key declarations (past the linear-scan fast path) still resolve.
#[test]
fn many_keys_resolve() {
    let extra: String = (0..100)
        .map(|i| format!("<key id=\"x{i}\" for=\"node\" attr.name=\"x{i}\"/>\n"))
        .collect();
    let doc = DOC.replacen("<key id=\"k0\"", &format!("{extra}<key id=\"k0\""), 1);
    check_doc(&parse(&doc));
}

/// Attributes the fast path leaves to quick_xml: entity references,
/// spaces around `=`, single quotes.
#[test]
fn unusual_attribute_syntax() {
    let doc = DOC
        .replace(r#"<node id="n:-1:5">"#, r#"<node id = 'n:-1:5' >"#)
        .replace(
            r#"source="n:-1:5" target="n:-1:2""#,
            r#"source="n:-1&#x3a;5" target='n:-1:2'"#,
        )
        .replace(r#"<data key="k1">x = 1"#, r#"<data key = "k1">x = 1"#);
    check_doc(&parse(&doc));
}

/// The fuzzers' seed inputs (fuzz/seeds) are valid.
#[test]
fn fuzz_seeds_are_valid() {
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let mut graphs = 0;
    for entry in std::fs::read_dir(seeds.join("graphml")).unwrap() {
        let path = entry.unwrap().path();
        read_graphml_path(&path).unwrap_or_else(|e| panic!("{e}"));
        graphs += 1;
    }
    assert!(graphs >= 2);
    // The `pmcfg` target's seeds decode at this cache version.
    for entry in std::fs::read_dir(seeds.join("pmcfg")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        postmortem_formats::pmcfg::decode(&bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    let g = read_graphml_path(&seeds.join("graphml/small.graphml")).unwrap();
    for entry in std::fs::read_dir(seeds.join("report_json")).unwrap() {
        let path = entry.unwrap().path();
        postmortem_formats::read_report_path(&path, &g).unwrap_or_else(|e| panic!("{e}"));
    }
    // The `pmreport` target's seeds: any `--report` format (a Sentry event).
    for entry in std::fs::read_dir(seeds.join("pmreport")).unwrap() {
        let path = entry.unwrap().path();
        let (kind, _) = postmortem_formats::any_report::read_any_report(
            &path,
            &g,
            &Default::default(),
            &Default::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        if path.file_name().is_some_and(|n| n == "sentry.json") {
            assert_eq!(kind, postmortem_formats::any_report::ReportKind::Sentry);
        }
    }
}
