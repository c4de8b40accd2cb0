//! The configuration of a synthetic program and of its run, and what
//! was generated.

/// Parameters of a synthetic program and of its failing run.
///
/// Sizes are targets: the generator hits `functions` exactly and the block
/// and statement counts within a few percent.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthConfig {
    /// Seed of every pseudo-random choice; same config, same bytes.
    pub seed: u64,
    /// Number of defined functions (with bodies), `main` included.
    pub functions: usize,
    /// Number of basic blocks over all defined functions.
    pub blocks: usize,
    /// Number of statement nodes (call sites included) in the bodies of
    /// defined functions, not counting the per-function entry/exit nodes.
    pub statements: usize,
    /// Number of pending calls (frames of the report's `stack`) at the
    /// crash. Capped by what the number of functions allows (see
    /// [`SynthStats::stack_depth`] for the depth actually used).
    pub crash_depth: usize,
    /// Number of `obsYes` entries (executed call sites) to report, if the
    /// run executed at least that many distinct call sites.
    pub coverage: usize,
    /// Number of `obsNo` entries (call sites that never ran) to report, if
    /// that many exist.
    pub obs_no: usize,
    /// Number of source files the functions are spread over.
    pub files: usize,
    /// Number of library stubs (an `entry` flowing straight to its `exit`).
    pub library_functions: usize,
    /// Number of bare declarations (no flow edges) that some calls target.
    pub declarations: usize,
    /// Share, in ‰, of non-terminator statements that are call sites.
    pub call_permille: u32,
    /// Share, in ‰, of optional call sites that are indirect (2 to 7
    /// possible callees).
    pub indirect_permille: u32,
    /// Share, in ‰, of functions given a recursive call (direct or mutual).
    pub recursion_permille: u32,
    /// During exploration, a callee that already has this many activations
    /// on the stack runs in cheap mode (no further recursion).
    pub recursion_bound: u32,
    /// During exploration, the most times a loop body runs per entry into
    /// the loop (at most 255).
    pub max_loop_iterations: u32,
    /// During exploration, frames this deep and deeper run in cheap mode.
    pub explore_depth: usize,
    /// Statement budget of the exploration phase.
    pub max_steps: u64,
    /// Length of a reliable call trace to add to `obsYes` (0: none): every
    /// occurrence, in order, of a set of call sites chosen so that they
    /// occurred about this many times in the run.
    pub reliable_trace: usize,
    /// Number of `obsYes` entries made ambiguous: "this call site or that
    /// other one ran" (the first one did).
    pub ambiguous: usize,
    /// Number of ambiguous `obsNo` sets of 2 or 3 call sites, "at least one
    /// of these never ran", as a coverage bit that stands for several
    /// statements gives: one call site that never ran plus one or two
    /// others of the same function (that may have run).
    pub ambiguous_no: usize,
    /// Length of an ordered `obsYes` vector of two-node sets taken from
    /// the run (0: none): each element is a call site that ran, in order,
    /// or some other call site.
    pub ambiguous_vector: usize,
}

impl SynthConfig {
    /// A program the size of gcc in the PLDI 2017 evaluation: ~2,300
    /// functions, ~140k basic blocks, ~700k statement nodes, a crash stack
    /// 30 deep and ~11k executed call sites reported (plus as many that did
    /// not run).
    pub fn gcc_like() -> Self {
        SynthConfig {
            seed: 2017,
            functions: 2_300,
            blocks: 142_000,
            statements: 700_000,
            crash_depth: 30,
            coverage: 11_000,
            obs_no: 11_000,
            files: 180,
            library_functions: 150,
            declarations: 40,
            call_permille: 70,
            indirect_permille: 30,
            recursion_permille: 120,
            recursion_bound: 3,
            max_loop_iterations: 4,
            explore_depth: 20,
            max_steps: 100_000_000,
            reliable_trace: 0,
            ambiguous: 0,
            ambiguous_no: 0,
            ambiguous_vector: 0,
        }
    }

    /// The coverage-like ambiguity mix (issue 9) on [`SynthConfig::gcc_like`]
    /// scaled by `factor`: ambiguous `obsNo` sets of 2–3 call sites (535 at
    /// 113k nodes, scaled), ambiguous `obsYes` elements, an ordered vector
    /// of 10 two-node sets and a reliable trace of 16 calls.
    /// `coverage_mix(400.0 / 2300.0)` is the ~110k-node program of the
    /// issue, `coverage_mix(1.0)` the gcc-sized one.
    pub fn coverage_mix(factor: f64) -> Self {
        let base = Self::gcc_like().scaled(factor);
        let f = |n: f64| ((n * factor * 2300.0 / 400.0).round() as usize).max(1);
        SynthConfig {
            coverage: f(67.0),
            obs_no: f(1335.0),
            ambiguous_no: f(535.0),
            ambiguous: f(20.0),
            ambiguous_vector: 10,
            reliable_trace: 16,
            ..base
        }
    }

    /// [`SynthConfig::gcc_like`] with 100 ambiguous observations and a
    /// reliable trace of about 50 calls (the FSA solver's benchmark).
    pub fn gcc_fsa() -> Self {
        SynthConfig {
            reliable_trace: 50,
            ambiguous: 100,
            ..Self::gcc_like()
        }
    }

    /// A program of a few hundred nodes, for tests.
    pub fn small(seed: u64) -> Self {
        SynthConfig {
            seed,
            functions: 14,
            blocks: 70,
            statements: 300,
            crash_depth: 4,
            coverage: 10,
            obs_no: 10,
            files: 2,
            library_functions: 4,
            declarations: 2,
            call_permille: 150,
            indirect_permille: 50,
            recursion_permille: 200,
            recursion_bound: 2,
            max_loop_iterations: 3,
            explore_depth: 8,
            max_steps: 20_000,
            reliable_trace: 0,
            ambiguous: 0,
            ambiguous_no: 0,
            ambiguous_vector: 0,
        }
    }

    /// [`SynthConfig::small`] in the coverage-like ambiguity mode: many
    /// ambiguous `obsNo` sets for its size, ambiguous `obsYes` elements, an
    /// ordered vector of two-node sets and a reliable trace.
    pub fn small_coverage(seed: u64) -> Self {
        SynthConfig {
            obs_no: 12,
            ambiguous_no: 40,
            ambiguous: 4,
            ambiguous_vector: 4,
            reliable_trace: 4,
            ..Self::small(seed)
        }
    }

    /// This configuration with every size (functions, blocks, statements,
    /// coverage, `obs_no`, files, library functions, declarations and the
    /// step budget) multiplied by `factor`; depths, shares and bounds are
    /// kept. `gcc_like().scaled(0.05)` is a 1/20th-size gcc.
    pub fn scaled(&self, factor: f64) -> Self {
        let s = |n: usize, min: usize| ((n as f64 * factor).round() as usize).max(min);
        SynthConfig {
            functions: s(self.functions, 2),
            blocks: s(self.blocks, 1),
            statements: s(self.statements, 1),
            coverage: s(self.coverage, 0),
            obs_no: s(self.obs_no, 0),
            files: s(self.files, 1),
            library_functions: s(self.library_functions, 0),
            declarations: s(self.declarations, 0),
            max_steps: ((self.max_steps as f64 * factor) as u64).max(10_000),
            ..self.clone()
        }
    }
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig::gcc_like()
    }
}

/// What [`generate`] produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SynthStats {
    /// GraphML nodes: statements, entry/exit nodes, stubs and declarations.
    pub nodes: usize,
    /// Basic blocks of the defined functions.
    pub blocks: usize,
    /// Defined functions (`main` included; stubs and declarations not).
    pub functions: usize,
    /// Call-site nodes.
    pub call_sites: usize,
    /// Frames in the report's `stack` (pending calls at the crash).
    pub stack_depth: usize,
    /// Entries in the report's `obsYes`.
    pub obs_yes: usize,
    /// Entries in the report's `obsNo`.
    pub obs_no: usize,
    /// Statement nodes (entry/exit nodes included) the run executed.
    pub executed_steps: usize,
}
