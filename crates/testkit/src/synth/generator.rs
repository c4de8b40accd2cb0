//! The program generator: layers, function bodies of structured control
//! flow, calls and recursion (see the module doc of `synth`).

use super::config::SynthConfig;
use super::model::*;
use crate::rng::Rng;
use std::collections::HashSet;

/// The structured constructs of a function body (see `Gen::region`).
#[derive(Clone, Copy)]
pub(super) enum Construct {
    Plain,
    IfThen,
    IfElse,
    While,
    For,
    EarlyReturn,
    Switch,
    And,
    DoWhile,
}

/// The constructs in the order of `Gen::pick_construct`'s weights.
pub(super) const CONSTRUCTS: [Construct; 9] = [
    Construct::Plain,
    Construct::IfThen,
    Construct::IfElse,
    Construct::While,
    Construct::For,
    Construct::EarlyReturn,
    Construct::Switch,
    Construct::And,
    Construct::DoWhile,
];

pub(super) struct Gen<'c> {
    pub(super) cfg: &'c SynthConfig,
    pub(super) rng: Rng,
    pub(super) funcs: Vec<Func>,
    pub(super) defined: usize,
    pub(super) blocks: Vec<Block>,
    pub(super) arms: Vec<u32>,
    pub(super) calls: Vec<Call>,
    pub(super) targets: Vec<u32>,
    /// Prefix sums of popularity weights over all functions.
    pub(super) pref: Vec<f64>,
    pub(super) layer_start: Vec<usize>,
    pub(super) called: Vec<bool>,
    pub(super) pool: Vec<u32>,
    pub(super) cheap: Vec<u32>,
    pub(super) cheap_pref: Vec<f64>,
    pub(super) spine_cursor: usize,
    // Per-function shaping state.
    pub(super) label_used: [bool; LABELS.len()],
    pub(super) label_counter: u32,
    pub(super) nloops: u32,
    pub(super) driver_header: u32,
    pub(super) stmts_mean_extra: f64,
    /// Whether `region` may place early returns (not in `main`, whose
    /// driver loop must not be left).
    pub(super) early_returns: bool,
}

pub(super) fn build_program(cfg: &SynthConfig) -> Program {
    let mut rng = Rng::with_stream(cfg.seed, 1);
    let nf = cfg.functions.max(2);
    let extra = (cfg.crash_depth / 4).max(2);
    let nlayers = (cfg.crash_depth + 1 + extra).min(nf).max(2);
    let depth = cfg.crash_depth.min(nlayers - 1);
    let layer_start = layer_starts(nf, nlayers);
    let nfiles = cfg.files.max(1);
    let funcs = declare_functions(cfg, &mut rng, &layer_start, nfiles);
    let pref = popularity(&mut rng, funcs.len());
    let sizes = block_budgets(cfg, &mut rng, nf);

    let stmts_mean_extra = (cfg.statements as f64 / cfg.blocks.max(1) as f64 - 1.0).max(0.0);
    let nfuncs = funcs.len();
    let mut g = Gen {
        cfg,
        rng,
        funcs,
        defined: nf,
        blocks: Vec::with_capacity(cfg.blocks + 16),
        arms: Vec::new(),
        calls: Vec::new(),
        targets: Vec::new(),
        pref,
        layer_start,
        called: vec![false; nfuncs],
        pool: Vec::new(),
        cheap: Vec::new(),
        cheap_pref: vec![0.0],
        spine_cursor: 0,
        label_used: [false; LABELS.len()],
        label_counter: 0,
        nloops: 0,
        driver_header: NONE,
        stmts_mean_extra,
        early_returns: true,
    };
    g.build_bodies(&sizes, nlayers, nfiles);
    g.add_recursion();
    g.compute_heights();
    let order = g.csi_order();
    Program {
        funcs: g.funcs,
        defined: nf,
        blocks: g.blocks,
        arms: g.arms,
        calls: g.calls,
        targets: g.targets,
        files: file_names(nfiles),
        order,
        driver_header: g.driver_header,
        depth,
    }
}

/// Layer sizes: main alone in layer 0, deeper layers get more functions.
/// Returns each layer's first function (and the end).
pub(super) fn layer_starts(nf: usize, nlayers: usize) -> Vec<usize> {
    let mut layer_size = vec![1usize; nlayers];
    let weights: Vec<f64> = (1..nlayers).map(|l| pow_eighths(l as f64, 6)).collect();
    let wsum: f64 = weights.iter().sum();
    let spare = nf - nlayers;
    let mut given = 0;
    for l in 1..nlayers {
        let k = (spare as f64 * weights[l - 1] / wsum).floor() as usize;
        layer_size[l] += k;
        given += k;
    }
    let mut l = nlayers - 1;
    while given < spare {
        layer_size[l] += 1;
        given += 1;
        l = if l == 1 { nlayers - 1 } else { l - 1 };
    }
    let mut layer_start = vec![0usize; nlayers + 1];
    for l in 0..nlayers {
        layer_start[l + 1] = layer_start[l] + layer_size[l];
    }
    layer_start
}

/// Functions: defined (in layer order, named and placed in files),
/// library stubs, declarations.
pub(super) fn declare_functions(
    cfg: &SynthConfig,
    rng: &mut Rng,
    layer_start: &[usize],
    nfiles: usize,
) -> Vec<Func> {
    let nlayers = layer_start.len() - 1;
    let nf = layer_start[nlayers];
    let mut names = HashSet::new();
    let mut funcs = Vec::with_capacity(nf + cfg.library_functions + cfg.declarations);
    for l in 0..nlayers {
        for i in layer_start[l]..layer_start[l + 1] {
            let name = if i == 0 {
                "main".to_string()
            } else {
                let base = format!(
                    "{}_{}",
                    NAME_PREFIX[rng.index(NAME_PREFIX.len())],
                    NAME_STEM[rng.index(NAME_STEM.len())]
                );
                if names.contains(&base) {
                    format!("{base}_{i}")
                } else {
                    base
                }
            };
            names.insert(name.clone());
            let file = if i == 0 { 0 } else { rng.index(nfiles) as u32 };
            funcs.push(Func::new(name, FKind::Defined, l as u32, file));
        }
    }
    for i in 0..cfg.library_functions {
        let name = lib_name(&LIB_NAMES, i);
        funcs.push(Func::new(name, FKind::Stub, nlayers as u32, 0));
    }
    for i in 0..cfg.declarations {
        let name = lib_name(&DECL_NAMES, i);
        funcs.push(Func::new(name, FKind::Decl, nlayers as u32, 0));
    }
    funcs
}

/// Popularity prefix sums: heavy-tailed, so a few functions are called
/// from hundreds of sites.
pub(super) fn popularity(rng: &mut Rng, n: usize) -> Vec<f64> {
    let mut pref = Vec::with_capacity(n + 1);
    pref.push(0.0);
    let mut acc = 0.0;
    for _ in 0..n {
        acc += rng.heavy(7, 2000.0);
        pref.push(acc);
    }
    pref
}

/// Block budgets: heavy-tailed function sizes summing to `cfg.blocks`.
pub(super) fn block_budgets(cfg: &SynthConfig, rng: &mut Rng, nf: usize) -> Vec<usize> {
    let main_blocks = (cfg.blocks / nf).clamp(6, 40);
    let mut sizes = vec![0usize; nf];
    sizes[0] = main_blocks;
    let rest = cfg.blocks.saturating_sub(main_blocks).max(nf - 1);
    let w: Vec<f64> = (1..nf).map(|_| rng.heavy(5, 300.0)).collect();
    let ws: f64 = w.iter().sum();
    let mut total = main_blocks;
    for i in 1..nf {
        sizes[i] = ((rest as f64 * w[i - 1] / ws).round() as usize).max(1);
        total += sizes[i];
    }
    // Correct the rounding drift on the largest function.
    let (big, _) = sizes
        .iter()
        .enumerate()
        .skip(1)
        .max_by_key(|(_, s)| **s)
        .unwrap();
    if total > cfg.blocks {
        let d = (total - cfg.blocks).min(sizes[big] - 1);
        sizes[big] -= d;
    } else {
        sizes[big] += cfg.blocks - total;
    }
    sizes
}

/// The source files' names.
pub(super) fn file_names(nfiles: usize) -> Vec<String> {
    (0..nfiles)
        .map(|i| {
            let stem = if i == 0 {
                "main".to_string()
            } else if i <= FILE_STEM.len() {
                FILE_STEM[i - 1].to_string()
            } else {
                format!(
                    "{}-{}",
                    FILE_STEM[(i - 1) % FILE_STEM.len()],
                    (i - 1) / FILE_STEM.len()
                )
            };
            format!("/synth/gcc-like/gcc/{stem}.c")
        })
        .collect()
}

impl Gen<'_> {
    /// Function bodies, bottom-up: callees are complete (cost known)
    /// before their callers.
    pub(super) fn build_bodies(&mut self, sizes: &[usize], nlayers: usize, nfiles: usize) {
        let mut file_line = vec![1u32; nfiles];
        for l in (0..nlayers).rev() {
            let cheap_snapshot = self.cheap.len();
            self.spine_cursor = self.layer_start[(l + 1).min(nlayers)];
            let (a, b) = (self.layer_start[l], self.layer_start[l + 1]);
            for (fi, &size) in sizes.iter().enumerate().take(b).skip(a) {
                self.build_function(fi, size, &mut file_line);
                self.assign_calls(fi, cheap_snapshot);
                let cost = self.cheap_cost(fi);
                self.funcs[fi].cost = cost;
                if cost <= CHEAP_COST_CAP && fi != 0 {
                    self.cheap.push(fi as u32);
                    let w = self.pref[fi + 1] - self.pref[fi];
                    let last = *self.cheap_pref.last().unwrap();
                    self.cheap_pref.push(last + w);
                }
            }
            for fi in self.layer_start[l]..self.layer_start[l + 1] {
                if !self.called[fi] && fi != 0 {
                    self.pool.push(fi as u32);
                }
            }
        }
    }

    /// Heights over downward calls (higher index = same or lower layer).
    pub(super) fn compute_heights(&mut self) {
        for fi in (0..self.defined).rev() {
            let (a, b) = self.funcs[fi].calls;
            let mut h = 0;
            for c in &self.calls[a as usize..b as usize] {
                for &t in &self.targets[c.targets.0 as usize..c.targets.1 as usize] {
                    let tf = &self.funcs[t as usize];
                    if tf.kind == FKind::Defined && tf.layer > self.funcs[fi].layer {
                        h = h.max(tf.height + 1);
                    }
                }
            }
            self.funcs[fi].height = h;
        }
    }

    /// csi-cc numbering: defined functions grouped by file, then library.
    pub(super) fn csi_order(&mut self) -> Vec<u32> {
        let nf = self.defined;
        let mut order: Vec<u32> = (0..nf as u32).collect();
        order.sort_by_key(|&f| (self.funcs[f as usize].file, f));
        order.extend(nf as u32..self.funcs.len() as u32);
        for (k, &f) in order.iter().enumerate() {
            self.funcs[f as usize].num = k as u32 + 1;
        }
        order
    }
}

pub(super) fn lib_name(list: &[&str], i: usize) -> String {
    if i < list.len() {
        list[i].to_string()
    } else {
        format!("{}_{}", list[i % list.len()], i / list.len())
    }
}

impl Func {
    pub(super) fn new(name: String, kind: FKind, layer: u32, file: u32) -> Func {
        Func {
            name,
            kind,
            layer,
            file,
            num: 0,
            blocks: (0, 0),
            calls: (0, 0),
            nloops: 0,
            nstmts: 0,
            line: 0,
            cost: match kind {
                FKind::Stub => 2,
                _ => 0,
            },
            height: 0,
        }
    }
}

impl Gen<'_> {
    pub(super) fn new_block(&mut self, optional: bool, label: u8) -> u32 {
        let n = if self.label_used[label as usize] {
            self.label_counter += 1;
            self.label_counter
        } else {
            self.label_used[label as usize] = true;
            0
        };
        self.blocks.push(Block {
            term: Term::Open,
            optional,
            label,
            label_n: n,
            stmts: 0,
            first_stmt: 0,
            calls: (0, 0),
            line: 0,
        });
        (self.blocks.len() - 1) as u32
    }

    pub(super) fn set(&mut self, b: u32, t: Term) {
        debug_assert!(matches!(self.blocks[b as usize].term, Term::Open));
        self.blocks[b as usize].term = t;
    }

    /// A sub-region size in `1..=avail`, skewed towards small.
    pub(super) fn sub(&mut self, avail: usize) -> usize {
        let a = avail.clamp(1, 64) as u64;
        let x = self.rng.below_u64(a);
        let y = self.rng.below_u64(a);
        (1 + x * y / a) as usize
    }

    pub(super) fn new_loop_id(&mut self) -> u32 {
        self.nloops += 1;
        self.nloops - 1
    }

    /// Appends `left` blocks of structured code after the open block `cur`;
    /// returns the new open block.
    pub(super) fn region(&mut self, mut cur: u32, mut left: usize, opt: bool, depth: u32) -> u32 {
        while left > 0 {
            let (next, used) = match self.pick_construct(left, depth) {
                Construct::Plain => self.plain(cur, opt),
                Construct::IfThen => self.if_then(cur, left, opt, depth),
                Construct::IfElse => self.if_else(cur, left, opt, depth),
                Construct::While => self.while_loop(cur, left, opt, depth),
                Construct::For => self.for_loop(cur, left, opt, depth),
                Construct::EarlyReturn => self.early_return(cur, opt),
                Construct::Switch => self.switch(cur, left, opt, depth),
                Construct::And => self.and_then(cur, left, opt, depth),
                Construct::DoWhile => self.do_while(cur, left, opt, depth),
            };
            cur = next;
            left -= used;
        }
        cur
    }

    /// The next construct of a region with `left` blocks to go at nesting
    /// `depth`: a weighted choice among those that fit.
    pub(super) fn pick_construct(&mut self, left: usize, depth: u32) -> Construct {
        // In the order of CONSTRUCTS.
        let mut w = [30u32, 0, 0, 0, 0, 0, 0, 0, 0];
        if depth < 8 && left >= 2 {
            w[1] = 30;
            if self.early_returns {
                w[5] = 8;
            }
        }
        if depth < 6 && left >= 3 {
            w[2] = 15;
            w[3] = 8;
            w[7] = 8;
            w[8] = 3;
        }
        if depth < 6 && left >= 4 {
            w[4] = 12;
        }
        if depth < 6 && left >= 5 {
            w[6] = 4;
        }
        let sum: u32 = w.iter().sum();
        let mut x = self.rng.below_u64(sum as u64) as u32;
        let mut choice = 0;
        while x >= w[choice] {
            x -= w[choice];
            choice += 1;
        }
        CONSTRUCTS[choice]
    }

    // The constructs of `region`: each appends itself after the open block
    // `cur` and returns the new open block and how many blocks it used.

    /// One more block.
    pub(super) fn plain(&mut self, cur: u32, opt: bool) -> (u32, usize) {
        let nb = self.new_block(opt, L_IF_END);
        self.set(cur, Term::Goto(nb));
        (nb, 1)
    }

    /// `if (c) { ... }`.
    pub(super) fn if_then(&mut self, cur: u32, left: usize, opt: bool, depth: u32) -> (u32, usize) {
        let t = self.sub(left - 1);
        let tb = self.new_block(true, L_IF_THEN);
        let tend = self.region(tb, t - 1, true, depth + 1);
        let j = self.new_block(opt, L_IF_END);
        self.set(tend, Term::Goto(j));
        self.set(cur, Term::Cond { take: tb, skip: j });
        (j, t + 1)
    }

    /// `if (c) { ... } else { ... }`.
    pub(super) fn if_else(&mut self, cur: u32, left: usize, opt: bool, depth: u32) -> (u32, usize) {
        let t = self.sub(left - 2);
        let e = self.sub(left - 1 - t);
        let tb = self.new_block(true, L_IF_THEN);
        let tend = self.region(tb, t - 1, true, depth + 1);
        let eb = self.new_block(opt, L_IF_ELSE);
        let eend = self.region(eb, e - 1, opt, depth + 1);
        let j = self.new_block(opt, L_IF_END);
        self.set(tend, Term::Goto(j));
        self.set(eend, Term::Goto(j));
        self.set(cur, Term::Cond { take: tb, skip: eb });
        (j, t + e + 1)
    }

    /// `while (c) { ... }`.
    pub(super) fn while_loop(
        &mut self,
        cur: u32,
        left: usize,
        opt: bool,
        depth: u32,
    ) -> (u32, usize) {
        let b = self.sub(left - 2);
        let h = self.new_block(opt, L_WHILE_COND);
        self.set(cur, Term::Goto(h));
        let bb = self.new_block(true, L_WHILE_BODY);
        let bend = self.region(bb, b - 1, true, depth + 1);
        self.set(bend, Term::Goto(h));
        let x = self.new_block(opt, L_WHILE_END);
        let id = self.new_loop_id();
        self.set(
            h,
            Term::Loop {
                body: bb,
                exit: x,
                id,
            },
        );
        (x, b + 2)
    }

    /// `for (...; c; inc) { ... }`.
    pub(super) fn for_loop(
        &mut self,
        cur: u32,
        left: usize,
        opt: bool,
        depth: u32,
    ) -> (u32, usize) {
        let b = self.sub(left - 3);
        let h = self.new_block(opt, L_FOR_COND);
        self.set(cur, Term::Goto(h));
        let bb = self.new_block(true, L_FOR_BODY);
        let bend = self.region(bb, b - 1, true, depth + 1);
        let inc = self.new_block(true, L_FOR_INC);
        self.set(bend, Term::Goto(inc));
        self.set(inc, Term::Goto(h));
        let x = self.new_block(opt, L_FOR_END);
        let id = self.new_loop_id();
        self.set(
            h,
            Term::Loop {
                body: bb,
                exit: x,
                id,
            },
        );
        (x, b + 3)
    }

    /// `if (c) return;`.
    pub(super) fn early_return(&mut self, cur: u32, opt: bool) -> (u32, usize) {
        let r = self.new_block(true, L_IF_THEN);
        self.set(r, Term::Return);
        let n = self.new_block(opt, L_IF_END);
        self.set(cur, Term::Cond { take: r, skip: n });
        (n, 2)
    }

    /// `switch` with k arms, the last the default (large switches in
    /// large regions).
    pub(super) fn switch(&mut self, cur: u32, left: usize, opt: bool, depth: u32) -> (u32, usize) {
        let mut k = 3 + self.rng.index(4);
        if left > 200 && self.rng.chance_f(0.3) {
            k = 8 + self.rng.index((left / 6).min(60));
        }
        let k = k.min(left - 1);
        let budget = if left > 200 {
            k + self.rng.index(left - k)
        } else {
            (k + self.sub(left - 1)).min(left - 1)
        };
        // Split `budget` into k arms of at least one block.
        let mut arm_sizes = vec![1usize; k];
        for _ in k..budget {
            let i = self.rng.index(k);
            arm_sizes[i] += 1;
        }
        let mut entries = Vec::with_capacity(k);
        let mut ends = Vec::with_capacity(k);
        for (i, &s) in arm_sizes.iter().enumerate() {
            let last = i + 1 == k;
            let (o, lab) = if last {
                (opt, L_SW_DEFAULT)
            } else {
                (true, L_SW_BB)
            };
            let a = self.new_block(o, lab);
            let aend = self.region(a, s - 1, o, depth + 1);
            entries.push(a);
            ends.push(aend);
        }
        let j = self.new_block(opt, L_SW_EPILOG);
        for e in ends {
            self.set(e, Term::Goto(j));
        }
        let start = self.arms.len() as u32;
        self.arms.extend_from_slice(&entries);
        self.set(
            cur,
            Term::Switch {
                start,
                len: k as u32,
            },
        );
        (j, budget + 1)
    }

    /// `if (a && b) { ... }`.
    pub(super) fn and_then(
        &mut self,
        cur: u32,
        left: usize,
        opt: bool,
        depth: u32,
    ) -> (u32, usize) {
        let t = self.sub(left - 2);
        let lb = self.new_block(true, L_LAND);
        let tb = self.new_block(true, L_IF_THEN);
        let tend = self.region(tb, t - 1, true, depth + 1);
        let j = self.new_block(opt, L_IF_END);
        self.set(tend, Term::Goto(j));
        self.set(lb, Term::Cond { take: tb, skip: j });
        self.set(cur, Term::Cond { take: lb, skip: j });
        (j, t + 2)
    }

    /// `do { ... } while (c);`.
    pub(super) fn do_while(
        &mut self,
        cur: u32,
        left: usize,
        opt: bool,
        depth: u32,
    ) -> (u32, usize) {
        let b = self.sub(left - 2);
        let bb = self.new_block(opt, L_DO_BODY);
        self.set(cur, Term::Goto(bb));
        let bend = self.region(bb, b - 1, opt, depth + 1);
        let c = self.new_block(opt, L_DO_COND);
        self.set(bend, Term::Goto(c));
        let x = self.new_block(opt, L_DO_END);
        let id = self.new_loop_id();
        self.set(
            c,
            Term::Loop {
                body: bb,
                exit: x,
                id,
            },
        );
        (x, b + 2)
    }

    /// Shapes function `fi` with `nblocks` blocks and its statements, and
    /// records its call slots (callees assigned by [`Gen::assign_calls`]).
    pub(super) fn build_function(&mut self, fi: usize, nblocks: usize, file_line: &mut [u32]) {
        let (start, end) = self.shape_blocks(fi, nblocks);

        // Statements and call slots.
        let bottom = self.funcs[fi].layer as usize + 1 >= self.layer_start.len() - 1;
        let has_lib = self.cfg.library_functions + self.cfg.declarations > 0;
        let may_call = !bottom || has_lib;
        let file = self.funcs[fi].file as usize;
        let fline = file_line[file] + 1 + self.rng.below_u64(8) as u32;
        let (mut nst, mut slots) = self.place_statements(start, end, fline, may_call);
        // Every function above the bottom needs an optional call slot for
        // its spine call (or, failing that, any call slot).
        let spine = if bottom {
            None
        } else {
            Some(self.spine_slot(start, end, &mut slots, &mut nst))
        };
        let cstart = self.calls.len() as u32;
        self.add_calls(fi, start, end, &slots, spine);
        let f = &mut self.funcs[fi];
        f.blocks = (start, end);
        f.calls = (cstart, self.calls.len() as u32);
        f.nloops = self.nloops;
        f.nstmts = nst;
        f.line = fline;
        file_line[file] = fline + nst * 2 / 3 + 4;
    }

    /// The blocks of function `fi`, `nblocks` of them (at least 4 for
    /// `main`): `start..end` of [`Gen::blocks`], the last one returning.
    pub(super) fn shape_blocks(&mut self, fi: usize, nblocks: usize) -> (u32, u32) {
        self.label_used = [false; LABELS.len()];
        self.label_counter = 0;
        self.nloops = 0;
        let start = self.blocks.len() as u32;
        let entry = self.new_block(false, L_ENTRY);
        let last = if fi == 0 {
            self.driver(entry, nblocks)
        } else {
            self.region(entry, nblocks - 1, false, 0)
        };
        self.set(last, Term::Return);
        let end = self.blocks.len() as u32;
        self.blocks[last as usize].label = L_RETURN;
        self.blocks[last as usize].label_n = 0;
        (start, end)
    }

    /// `main`'s body after `entry`: a little set-up, then the driver loop
    /// (no early returns in it). Returns the block after the loop.
    pub(super) fn driver(&mut self, entry: u32, nblocks: usize) -> u32 {
        let nblocks = nblocks.max(4);
        let pre = (nblocks - 4).min(2);
        let mut cur = entry;
        for _ in 0..pre {
            let nb = self.new_block(false, L_IF_END);
            self.set(cur, Term::Goto(nb));
            cur = nb;
        }
        let h = self.new_block(false, L_WHILE_COND);
        self.set(cur, Term::Goto(h));
        let body = self.new_block(true, L_WHILE_BODY);
        self.early_returns = false;
        let bend = self.region(body, nblocks - pre - 4, true, 1);
        self.early_returns = true;
        self.set(bend, Term::Goto(h));
        let x = self.new_block(false, L_WHILE_END);
        let id = self.new_loop_id();
        self.set(h, Term::Loop { body, exit: x, id });
        self.driver_header = h;
        x
    }

    /// Gives blocks `start..end` their statements (lines from `fline`) and,
    /// when the function `may_call`, picks call slots (block, offset)
    /// among the statements before each block's last. Returns the number
    /// of statements and the slots, sorted.
    pub(super) fn place_statements(
        &mut self,
        start: u32,
        end: u32,
        fline: u32,
        may_call: bool,
    ) -> (u32, Vec<(u32, u32)>) {
        let mut nst = 0u32;
        let mut slots: Vec<(u32, u32)> = Vec::new(); // (block, offset)
        for b in start..end {
            let s = 1 + self.rng.geometric(self.stmts_mean_extra, 200) as u32;
            let blk = &mut self.blocks[b as usize];
            blk.stmts = s;
            blk.first_stmt = nst;
            blk.line = fline + 1 + nst * 2 / 3;
            nst += s;
            if may_call {
                for off in 0..s - 1 {
                    if self.rng.permille(self.cfg.call_permille) {
                        slots.push((b, off));
                    }
                }
            }
        }
        (nst, slots)
    }

    /// The slot of the spine call of a function with blocks `start..end`:
    /// an optional call slot if there is one, else a new slot in an
    /// optional block (growing a one-statement block, `nst` counts it),
    /// else any slot.
    pub(super) fn spine_slot(
        &mut self,
        start: u32,
        end: u32,
        slots: &mut Vec<(u32, u32)>,
        nst: &mut u32,
    ) -> (u32, u32) {
        let opt_slots: Vec<usize> = (0..slots.len())
            .filter(|&i| self.blocks[slots[i].0 as usize].optional)
            .collect();
        if !opt_slots.is_empty() {
            return slots[opt_slots[self.rng.index(opt_slots.len())]];
        }
        let opt_blocks: Vec<u32> = (start..end)
            .filter(|&b| self.blocks[b as usize].optional)
            .collect();
        if opt_blocks.is_empty() && !slots.is_empty() {
            return slots[self.rng.index(slots.len())];
        }
        let b = if opt_blocks.is_empty() {
            start + self.rng.below_u64((end - start) as u64) as u32
        } else {
            opt_blocks[self.rng.index(opt_blocks.len())]
        };
        if self.blocks[b as usize].stmts == 1 {
            // Grow the block by one statement.
            self.blocks[b as usize].stmts = 2;
            for bb in b + 1..end {
                self.blocks[bb as usize].first_stmt += 1;
            }
            *nst += 1;
        }
        let off = self.rng.below_u64(self.blocks[b as usize].stmts as u64 - 1) as u32;
        if !slots.contains(&(b, off)) {
            slots.push((b, off));
            slots.sort_unstable();
        }
        (b, off)
    }

    /// Records the calls of function `fi` at `slots` (sorted), block by
    /// block; the one at `spine` is its spine call.
    pub(super) fn add_calls(
        &mut self,
        fi: usize,
        start: u32,
        end: u32,
        slots: &[(u32, u32)],
        spine: Option<(u32, u32)>,
    ) {
        let cstart = self.calls.len() as u32;
        let mut si = 0;
        for b in start..end {
            let c0 = self.calls.len() as u32;
            while si < slots.len() && slots[si].0 == b {
                let (_, off) = slots[si];
                self.calls.push(Call {
                    func: fi as u32,
                    block: b,
                    offset: off,
                    targets: (0, 0),
                    spine: spine == Some((b, off)),
                    ordinal: self.calls.len() as u32 - cstart,
                });
                si += 1;
            }
            self.blocks[b as usize].calls = (c0, self.calls.len() as u32);
        }
    }

    pub(super) fn pick_weighted(&mut self, a: usize, b: usize) -> u32 {
        debug_assert!(a < b);
        let lo = self.pref[a];
        let hi = self.pref[b];
        let x = lo + self.rng.unit() * (hi - lo);
        let i = self.pref[a..=b].partition_point(|&p| p <= x);
        (a + i.saturating_sub(1)).min(b - 1) as u32
    }

    pub(super) fn pick_cheap(&mut self, n: usize) -> u32 {
        let hi = self.cheap_pref[n];
        let x = self.rng.unit() * hi;
        let i = self.cheap_pref[..=n].partition_point(|&p| p <= x);
        self.cheap[i.saturating_sub(1).min(n - 1)]
    }

    pub(super) fn pick_lib(&mut self) -> Option<u32> {
        let (s, d) = (self.cfg.library_functions, self.cfg.declarations);
        if s + d == 0 {
            return None;
        }
        let decl = d > 0 && (s == 0 || self.rng.chance_f(DECLARATION_SHARE));
        let (base, n) = if decl {
            (self.defined + s, d)
        } else {
            (self.defined, s)
        };
        let u = self.rng.unit();
        Some((base + ((n as f64 * u * u) as usize).min(n - 1)) as u32)
    }

    pub(super) fn pick_uncalled(&mut self) -> Option<u32> {
        while !self.pool.is_empty() {
            let i = self.rng.index(self.pool.len());
            let f = self.pool.swap_remove(i);
            if !self.called[f as usize] {
                return Some(f);
            }
        }
        None
    }

    pub(super) fn pick_spine(&mut self, layer: usize) -> u32 {
        let (a, b) = (self.layer_start[layer], self.layer_start[layer + 1]);
        while self.spine_cursor < b && self.called[self.spine_cursor] {
            self.spine_cursor += 1;
        }
        if self.spine_cursor < b {
            self.spine_cursor as u32
        } else {
            self.pick_weighted(a, b)
        }
    }

    pub(super) fn assign_calls(&mut self, fi: usize, cheap_snapshot: usize) {
        let layer = self.funcs[fi].layer as usize;
        let nlayers = self.layer_start.len() - 1;
        let lower = self.layer_start[(layer + 1).min(nlayers)];
        let bottom = layer + 1 >= nlayers;
        let (c0, c1) = self.funcs[fi].calls;
        for ci in c0..c1 {
            let c = self.calls[ci as usize];
            let t0 = self.targets.len() as u32;
            let optional = self.blocks[c.block as usize].optional;
            if c.spine {
                let t = self.pick_spine(layer + 1);
                self.targets.push(t);
            } else {
                let lib = if bottom || self.rng.chance_f(LIBRARY_SHARE) {
                    self.pick_lib()
                } else {
                    None
                };
                if let Some(t) = lib {
                    self.targets.push(t);
                } else if !optional {
                    let t = if cheap_snapshot > 0 {
                        self.pick_cheap(cheap_snapshot)
                    } else if let Some(t) = self.pick_lib() {
                        t
                    } else {
                        self.pick_weighted(lower, self.defined)
                    };
                    self.targets.push(t);
                } else if self.rng.permille(self.cfg.indirect_permille) {
                    let k = 2 + self.rng.index(6);
                    for _ in 0..k {
                        let t = self.pick_weighted(lower, self.defined);
                        if !self.targets[t0 as usize..].contains(&t) {
                            self.targets.push(t);
                        }
                    }
                } else {
                    let t = if self.rng.chance_f(UNCALLED_SHARE) {
                        self.pick_uncalled()
                    } else {
                        None
                    };
                    let t = t.unwrap_or_else(|| self.pick_weighted(lower, self.defined));
                    self.targets.push(t);
                }
            }
            for k in t0 as usize..self.targets.len() {
                let t = self.targets[k] as usize;
                self.called[t] = true;
            }
            self.calls[ci as usize].targets = (t0, self.targets.len() as u32);
        }
    }

    /// Steps to run function `fi` along its cheap path.
    pub(super) fn cheap_cost(&self, fi: usize) -> u64 {
        let f = &self.funcs[fi];
        let mut b = f.blocks.0;
        let mut cost = 2u64;
        loop {
            let blk = &self.blocks[b as usize];
            cost = cost.saturating_add(blk.stmts as u64);
            for c in &self.calls[blk.calls.0 as usize..blk.calls.1 as usize] {
                let m = self.targets[c.targets.0 as usize..c.targets.1 as usize]
                    .iter()
                    .map(|&t| self.funcs[t as usize].cost)
                    .max()
                    .unwrap_or(0);
                cost = cost.saturating_add(m);
            }
            b = match blk.term {
                Term::Goto(n) => n,
                Term::Cond { skip, .. } => skip,
                Term::Switch { start, len } => self.arms[(start + len - 1) as usize],
                Term::Loop { exit, .. } => exit,
                Term::Return => return cost,
                Term::Open => unreachable!(),
            };
        }
    }

    /// Turns some optional direct calls into recursive ones: self calls, or
    /// calls back up to one of the function's callers.
    pub(super) fn add_recursion(&mut self) {
        let nf = self.defined;
        let mut callers: Vec<Vec<u32>> = vec![Vec::new(); nf];
        for c in &self.calls {
            if c.targets.1 - c.targets.0 == 1 {
                let t = self.targets[c.targets.0 as usize] as usize;
                if t < nf && t != c.func as usize {
                    callers[t].push(c.func);
                }
            }
        }
        for (fi, fcallers) in callers.iter().enumerate().skip(1) {
            if !self.rng.permille(self.cfg.recursion_permille) {
                continue;
            }
            let (c0, c1) = self.funcs[fi].calls;
            let cands: Vec<u32> = (c0..c1)
                .filter(|&ci| {
                    let c = &self.calls[ci as usize];
                    c.targets.1 - c.targets.0 == 1
                        && !c.spine
                        && self.blocks[c.block as usize].optional
                        && (self.targets[c.targets.0 as usize] as usize) < nf
                })
                .collect();
            if cands.is_empty() {
                continue;
            }
            let ci = cands[self.rng.index(cands.len())] as usize;
            let mut target = fi as u32;
            if !self.rng.chance_f(SELF_RECURSION_SHARE) {
                let cs: Vec<u32> = fcallers.iter().copied().filter(|&g| g != 0).collect();
                if !cs.is_empty() {
                    let g = cs[self.rng.index(cs.len())];
                    // Only if g still calls fi (its slot may have been
                    // retargeted meanwhile).
                    let (g0, g1) = self.funcs[g as usize].calls;
                    let still = self.calls[g0 as usize..g1 as usize].iter().any(|c| {
                        self.targets[c.targets.0 as usize..c.targets.1 as usize]
                            .contains(&(fi as u32))
                    });
                    if still {
                        target = g;
                    }
                }
            }
            let t0 = self.calls[ci].targets.0 as usize;
            self.targets[t0] = target;
        }
    }
}
