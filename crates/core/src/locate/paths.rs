//! Paths: normalised components, suffix matching, prefix rewriting.

/// Path prefix rewriting (`--path-map FROM=TO`), applied to every path
/// before paths are compared.
///
/// A rule applies when `FROM` is a prefix of the path at a component
/// boundary (`/build` applies to `/build/a.c`, not to `/builds/a.c`); the
/// longest applicable `FROM` wins.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathMap {
    rules: Vec<(String, String)>,
}

/// A `--path-map` rule that is not `FROM=TO` with a non-empty `FROM`
/// (the rule as given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathMapError(pub String);

impl std::fmt::Display for PathMapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "path map `{}` is not of the form FROM=TO (with a non-empty FROM)",
            self.0
        )
    }
}

impl std::error::Error for PathMapError {}

impl PathMap {
    /// No rewriting.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a rule.
    pub fn push(&mut self, from: &str, to: &str) {
        self.rules.push((from.to_string(), to.to_string()));
    }

    /// Parses and adds a rule written `FROM=TO` (the first `=` splits it).
    pub fn push_spec(&mut self, spec: &str) -> Result<(), PathMapError> {
        match spec.split_once('=') {
            Some((from, to)) if !from.is_empty() => {
                self.push(from, to);
                Ok(())
            }
            _ => Err(PathMapError(spec.to_string())),
        }
    }

    /// The rules, in the order given.
    pub fn rules(&self) -> &[(String, String)] {
        &self.rules
    }

    /// Rewrites `path` with the longest applicable rule, if any.
    pub fn apply(&self, path: &str) -> String {
        let mut best: Option<&(String, String)> = None;
        for r in &self.rules {
            let from = r.0.trim_end_matches(['/', '\\']);
            let applies = if from.is_empty() {
                // `FROM` was `/`: every absolute path.
                path.starts_with('/')
            } else {
                path.strip_prefix(from)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '\\']))
            };
            if applies && best.is_none_or(|b| b.0.len() < r.0.len()) {
                best = Some(r);
            }
        }
        match best {
            None => path.to_string(),
            Some((from, to)) => {
                let from = from.trim_end_matches(['/', '\\']);
                let rest = &path[from.len()..];
                let rest = rest.trim_start_matches(['/', '\\']);
                if rest.is_empty() {
                    to.clone()
                } else if to.is_empty() {
                    rest.to_string()
                } else if to.ends_with(['/', '\\']) {
                    format!("{to}{rest}")
                } else {
                    format!("{to}/{rest}")
                }
            }
        }
    }
}

/// The normalised components of a path: separators `/` and `\`, no `.`
/// components, `x/..` folded, leading `..` components dropped (they say
/// nothing about the suffix).
pub fn path_components(path: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for c in path.split(['/', '\\']) {
        match c {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|l| *l != "..") {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    let lead = out.iter().take_while(|c| **c == "..").count();
    out.drain(..lead);
    out
}

/// Do two paths name the same file, judged by suffix? True when the
/// components of one end the components of the other (and neither is
/// empty).
pub fn same_file(a: &str, b: &str) -> bool {
    suffix_match(&path_components(a), &path_components(b))
}

pub(super) fn suffix_match(a: &[&str], b: &[&str]) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let n = a.len().min(b.len());
    a[a.len() - n..] == b[b.len() - n..]
}
