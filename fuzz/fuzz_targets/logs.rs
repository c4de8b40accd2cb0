//! Log matching: the first part of the input is used as a format string
//! (as a program's printf call would carry), the rest as the log text.
//! Neither the format-to-regex conversion nor the matcher may panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use postmortem_core::{IcfgBuilder, NodeKind, NodeSpec};
use postmortem_formats::logs::{format_regex, line_patterns, LogConfig, LogMatcher};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let (format, log) = s.split_once('\u{0}').unwrap_or((s, s));
    let _ = format_regex(format);
    let _ = line_patterns(format, true);
    let mut b = IcfgBuilder::new();
    let f = b.function("main");
    let e = b.add_node(NodeSpec { ext_id: "e", kind: NodeKind::Entry, func: f, label: "", lines: &[1] }).unwrap();
    let c = b.add_node(NodeSpec { ext_id: "c", kind: NodeKind::CallSite, func: f, label: "", lines: &[2] }).unwrap();
    let x = b.add_node(NodeSpec { ext_id: "x", kind: NodeKind::Exit, func: f, label: "", lines: &[3] }).unwrap();
    b.add_flow_edge(e, c);
    b.add_flow_edge(c, x);
    b.add_external_callee(c);
    b.add_external_callee_name(c, "printf");
    b.add_string_arg(c, format);
    let g = b.build().unwrap();
    let m = LogMatcher::new(&g, &LogConfig::default());
    let _ = m.match_text(log);
});
