//! Loading a control-flow graph from any supported file.

use crate::Failure;
use postmortem_core::Icfg;
use std::path::Path;

/// Reads a control-flow graph: csi-cc GraphML (optionally gzip-compressed).
pub fn load_graph(path: &Path) -> Result<Icfg, Failure> {
    postmortem_formats::graphml::read_graphml_path(path).map_err(Failure::input)
}
