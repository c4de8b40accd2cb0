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
    /// The solver. The default, `best`, suits almost every use; the others
    /// trade precision for speed or exist for comparison. `utl`:
    /// unreliable trace languages over the
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
    /// is skipped). 0: no product at all (the labels of the polynomial
    /// passes only).
    #[arg(long, value_name = "N", default_value_t = 4_000_000,
          value_parser = parse_states, allow_hyphen_values = true)]
    pub max_states: usize,
    /// The time the whole run may take, in seconds (a decimal number), as
    /// timeout(1) means it: a deadline every search of the run shares
    /// (loading the inputs counts too). A search past it stops and its
    /// answer degrades soundly, as for --max-states, with the reason
    /// listed; the run then ends, in the time it takes to write the
    /// output. 0: no search time at all (the labels of the polynomial
    /// passes; a query gives up). Default: no limit. (batch: each crash
    /// gets this long.)
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout,
          allow_hyphen_values = true)]
    pub timeout: Option<f64>,
    /// Memory budget of the run, in bytes, or with a suffix K, M, G
    /// (powers of 1024), e.g. `2G`: every search stops when the whole
    /// process has allocated more (checked as it grows), and each
    /// exploration's own tables are bounded by it too. Past it the answer
    /// degrades soundly, as for --max-states, and the output says so.
    /// Default: a quarter of the machine's RAM (MemTotal in
    /// /proc/meminfo), at most 4G, and at most a third of the address-
    /// space limit (ulimit -v) when there is one. Also bounds the graph
    /// file's size, and by default that of a report, backtrace or log
    /// (see --max-input-size).
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes,
          allow_hyphen_values = true)]
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
    /// The time the evidence from a core (its variables' values, the
    /// stack residue's consequences) may add, as a multiple of the
    /// analysis without it (at least 0.1 s): the residue's refinement
    /// against the whole analysis so far, the values against the
    /// recovery alone. Each value is a stage of its own, and most decide
    /// little; one that cannot finish in what is left does not start. A
    /// stage past it keeps the sound
    /// labels it had; the values not staged are listed. 0: no budget,
    /// every value staged (the labels then do not depend on the
    /// machine's speed; `suggest` always stages every value, since its
    /// guarantees compare analyses).
    #[arg(long, value_name = "FACTOR", value_parser = parse_factor, allow_hyphen_values = true,
          default_value_t = postmortem_core::staged::VALUE_BUDGET_FACTOR)]
    pub value_budget: f64,
    /// Take the stack residue of a core and the nodes the Local labels
    /// prove ran each into one more whole recovery with the rest of the
    /// report, instead of marking those nodes Yes with the nodes that
    /// surely ran before them in their activation. Slower (on the
    /// harness's Lua cores, twice the time); it decides what joint
    /// reasoning adds (alternatives ruled out, code of callees): 2% more
    /// of the labels that values and residue decide there.
    #[arg(long)]
    pub full_evidence: bool,
}

/// The longest `--timeout`: about 31 years (longer is no limit: leave the
/// option out).
const MAX_TIMEOUT_S: f64 = 1e9;

/// `--value-budget`: a finite multiple, 0 or more.
fn parse_factor(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(f) if (0.0..=1e6).contains(&f) => Ok(f),
        _ => Err(format!(
            "not a factor: {s:?} (a number from 0 to 1000000, e.g. 0.5; 0: no budget)"
        )),
    }
}

/// `--timeout`: a finite number of seconds, 0 or more.
pub fn parse_timeout(s: &str) -> Result<f64, String> {
    let t: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("not a number of seconds: {s:?} (e.g. 2.5)"))?;
    if t.is_nan() {
        return Err(
            "NaN is not a number of seconds (e.g. 2.5; leave --timeout out for no limit)".into(),
        );
    }
    if t < 0.0 {
        return Err(format!(
            "{s} is negative: give 0 or more seconds (0: no search at all; leave --timeout out for no limit)"
        ));
    }
    if t > MAX_TIMEOUT_S {
        return Err(format!(
            "{s} seconds is more than the longest limit, {MAX_TIMEOUT_S:e} s: leave --timeout out for no limit"
        ));
    }
    Ok(t)
}

/// `--max-states`: a whole number, 0 or more.
pub fn parse_states(s: &str) -> Result<usize, String> {
    s.trim().parse::<usize>().map_err(|_| {
        format!("not a number of states: {s:?} (a whole number, 0 or more, e.g. 4000000)")
    })
}

/// `123`, `64K`, `512M`, `2G` (powers of 1024) to bytes.
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        // `inf`, `NaN`: numbers, refused below.
        Some((_, c)) if c.is_ascii_alphabetic() && t.parse::<f64>().is_ok() => (t, 1),
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
    if !(n.is_finite() && n * mult as f64 >= 1.0) {
        return Err(format!(
            "not a positive size: {s:?} (a finite number of bytes, at least 1, e.g. 2G)"
        ));
    }
    Ok((n * mult as f64).min(usize::MAX as f64) as usize)
}

/// The default memory budget: a quarter of the machine's RAM (from
/// /proc/meminfo), at most 4 GiB (a shared machine runs other work), and
/// at most a third of the address-space limit, so that the growth between
/// two checks (a table doubling) still fits below it: an allocation that
/// fails aborts the process.
pub fn default_memory_budget() -> usize {
    static BUDGET: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BUDGET.get_or_init(memory_budget)
}

/// [`default_memory_budget`], computed.
fn memory_budget() -> usize {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("MemTotal:"))?.to_owned();
        line.split_whitespace().nth(1)?.parse::<usize>().ok()
    });
    let ram = match total_kib {
        Some(k) if k > 0 => k.saturating_mul(1024) / 4,
        _ => 4 << 30,
    };
    ram.min(4 << 30)
        .min(address_space_limit().map_or(usize::MAX, |a| a / 3))
}

/// The soft limit of the process's address space (`ulimit -v`,
/// `prlimit --as`), if any.
fn address_space_limit() -> Option<usize> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur as usize)
}

/// The bytes the process has allocated: mimalloc's committed memory (the
/// global allocator, see `main.rs`), for [`postmortem_core::memory`].
fn allocated() -> usize {
    let mut commit = 0usize;
    let null = std::ptr::null_mut();
    // SAFETY: every out-parameter is optional (null) but `current_commit`,
    // a valid pointer to a usize.
    unsafe {
        libmimalloc_sys::mi_process_info(null, null, null, null, null, &mut commit, null, null);
    }
    commit
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
    /// The run's deadline (`--timeout` from now), for
    /// [`postmortem_core::budget::with_deadline`].
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.timeout
            .map(|t| std::time::Instant::now() + Duration::from_secs_f64(t))
    }

    /// How `analyze`, `suggest` and `batch` stage values: `threads` value
    /// stages at once, within `--value-budget`.
    pub fn staging(&self, threads: usize) -> postmortem_core::staged::Staging {
        postmortem_core::staged::Staging {
            threads,
            value_budget: (self.value_budget > 0.0).then_some(self.value_budget),
            marked: !self.full_evidence,
            ..Default::default()
        }
    }

    /// `--max-memory`, or [`default_memory_budget`].
    pub fn memory_budget(&self) -> usize {
        self.max_memory.unwrap_or_else(default_memory_budget)
    }

    /// The configured solver `name`, answering for the whole process
    /// (signal handlers and threads included, see
    /// `postmortem_core::concurrency`).
    pub fn build(&self, name: SolverName) -> Box<dyn Solver + Send + Sync> {
        // The whole run's budget: every search checks the process's
        // allocations against it.
        postmortem_core::budget::install(allocated, self.memory_budget());
        let fsa = Fsa {
            limits: FsaLimits {
                max_states: self.max_states,
                coarse_states: self.max_states,
                // Finite and at most MAX_TIMEOUT_S (parse_timeout); 0 is
                // a deadline already past: every search stops at once and
                // the answer degrades soundly.
                timeout: self.timeout.map(Duration::from_secs_f64),
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
