//! Choosing and configuring a solver.

use clap::{Args, ValueEnum};
use postmortem_core::concurrency::ProcessWide;
use postmortem_core::cs::{Cs, CsLimits};
use postmortem_core::fsa::{Fsa, FsaLimits};
use postmortem_core::utl::Utl;
use postmortem_core::Solver;
use std::time::Duration;

/// Which solver, and its limits.
#[derive(Args, Clone)]
pub struct SolverArgs {
    /// The solver. `utl`: unreliable trace languages over the
    /// context-insensitive ICFG (PLDI 2017, section 4.2); polynomial, but
    /// ambiguous sets, reliable traces and regular queries are weakened or
    /// refused. `fsa`: any regular constraint and query, exactly, by
    /// exploring the product of the ICFG with one automaton per constraint.
    /// `cs`: context-sensitive: `fsa`'s labels refined with calls and
    /// returns matched and the crash stack exactly the pending calls, then
    /// by one pass over the product with every other constraint (a stack
    /// that fits no valid path is an impossible report). `best`: the
    /// same, but when the stack fits no valid path (a backtrace frame the
    /// reader could not place, say) it keeps `fsa`'s labels and says so.
    #[arg(long, value_enum, default_value_t = SolverName::Best)]
    pub solver: SolverName,
    /// fsa: give up after this many product states, in the contracted
    /// product and in the full one (answers then degrade soundly to Maybe /
    /// the UTL answer, and the output says so). cs, best: the same bound
    /// on the frame graph (past it, fsa's labels are kept) and on the
    /// bulk pass's product (at most a million states; past it, that pass
    /// is skipped).
    #[arg(long, value_name = "N", default_value_t = 4_000_000)]
    pub max_states: usize,
    /// fsa: give up after this many seconds per exploration (same
    /// degradation).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// fsa: memory budget of each product exploration, in bytes, or with a
    /// suffix K, M, G (powers of 1024), e.g. `2G`. Default: half the
    /// machine's RAM (MemTotal in /proc/meminfo; 4G if unreadable). When
    /// it would be exceeded the answer degrades soundly, as for
    /// --max-states.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub max_memory: Option<usize>,
    /// cs, best: decide every node the bulk pass leaves open, exactly in
    /// the context-sensitive semantics (by searches of the
    /// context-sensitive product, each valid path found clearing many
    /// nodes at once). The bulk pass uses observations of single nodes
    /// and ambiguous obsNo sets pairwise, which on the paper's failures
    /// already decides what this decides; it is for the rare joint case.
    /// Slower: each search costs about as much as the bulk pass. Its
    /// searches together build at most twice --max-states states (and stop
    /// at --timeout); past that the nodes left are Maybe and the output
    /// says so. Queries are always exact.
    #[arg(long)]
    pub exact: bool,
}

/// `123`, `64K`, `512M`, `2G` (powers of 1024) to bytes.
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m: usize = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                'B' => 1,
                _ => return Err(format!("unknown size suffix in {s:?} (use K, M or G)")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {s:?} (e.g. 2G, 512M)"))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(format!("not a positive size: {s:?}"));
    }
    Ok((n * mult as f64).min(usize::MAX as f64) as usize)
}

/// Half the machine's RAM, from /proc/meminfo; 4 GiB if unreadable.
pub fn default_memory_budget() -> usize {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("MemTotal:"))?.to_owned();
        line.split_whitespace().nth(1)?.parse::<usize>().ok()
    });
    match total_kib {
        Some(k) if k > 0 => k.saturating_mul(1024) / 2,
        _ => 4 << 30,
    }
}

/// A solver by name.
#[derive(Copy, Clone, ValueEnum, PartialEq, Eq, Debug)]
pub enum SolverName {
    /// Unreliable trace languages (polynomial, one pass for all nodes).
    Utl,
    /// Finite automata (any regular constraint or query).
    Fsa,
    /// Context-sensitive (matched calls and returns, exact stack) over fsa.
    Cs,
    /// cs, falling back to fsa where the stack fits no valid path.
    Best,
}

impl SolverArgs {
    /// `--max-memory`, or half the machine's RAM.
    pub fn memory_budget(&self) -> usize {
        self.max_memory.unwrap_or_else(default_memory_budget)
    }

    /// The configured solver `name`, answering for the whole process
    /// (signal handlers and threads included, see
    /// `postmortem_core::concurrency`).
    pub fn build(&self, name: SolverName) -> Box<dyn Solver> {
        let fsa = Fsa {
            limits: FsaLimits {
                max_states: self.max_states,
                coarse_states: self.max_states,
                timeout: self
                    .timeout
                    .filter(|t| t.is_finite() && *t > 0.0)
                    .map(Duration::from_secs_f64),
                max_memory: self.memory_budget(),
                ..FsaLimits::default()
            },
        };
        let cs = |best| Cs {
            base: fsa.clone(),
            limits: CsLimits {
                max_states: self.max_states,
                timeout: fsa.limits.timeout,
                max_memory: fsa.limits.max_memory,
                ..CsLimits::default()
            },
            best,
            exact: self.exact,
        };
        match name {
            SolverName::Utl => Box::new(ProcessWide(Utl::default())),
            SolverName::Fsa => Box::new(ProcessWide(fsa.clone())),
            SolverName::Cs => Box::new(ProcessWide(cs(false))),
            SolverName::Best => Box::new(ProcessWide(cs(true))),
        }
    }
}
