//! The simulated run: exploration, dive and crash (see the module doc of
//! `synth`).

use super::config::SynthConfig;
use super::model::*;
use crate::rng::Rng;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Mode {
    /// Random branches, callees explore too (within bounds).
    Explore,
    /// Cheap path only; callees run cheap too.
    Cheap,
    /// Heading for the crash depth.
    Dive,
}

#[derive(Clone, Copy)]
pub(super) struct Frame {
    pub(super) func: u32,
    pub(super) block: u32,
    /// Next statement (offset in the block) to execute.
    pub(super) pos: u32,
    /// Next call (index into `calls`) of the block not yet executed.
    pub(super) next_call: u32,
    pub(super) mode: Mode,
    pub(super) loop_base: u32,
    /// The call that created this frame (NONE for main).
    pub(super) via: u32,
}

pub(super) struct DivePlan {
    pub(super) frame: usize,
    /// Blocks still to enter, last first (pop order).
    pub(super) path: Vec<u32>,
    pub(super) call: u32,
}

pub(super) struct Run {
    pub(super) executed: Vec<bool>,
    /// Pending calls at the crash, outermost first: (call, callee function).
    pub(super) stack: Vec<(u32, u32)>,
    /// (function, local statement index).
    pub(super) crash: (u32, u32),
    pub(super) steps: u64,
    /// Every node executed, as (function, local index), if recorded.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) trace: Option<Vec<(u32, u32)>>,
}

pub(super) struct Sim<'p> {
    pub(super) p: &'p Program,
    pub(super) visited: Vec<u32>,
    pub(super) parent: Vec<u32>,
    pub(super) stamp: u32,
    pub(super) queue: Vec<u32>,
}

pub(super) const START: u32 = u32::MAX - 1;

impl Sim<'_> {
    pub(super) fn qualifies(&self, ci: u32, need: u32) -> bool {
        let c = &self.p.calls[ci as usize];
        self.p.targets_of(c).iter().any(|&t| {
            let f = &self.p.funcs[t as usize];
            f.kind == FKind::Defined && f.height >= need
        })
    }

    /// A shortest intraprocedural route from the frame's position to a call
    /// whose callee can reach `need` more frames.
    pub(super) fn find_dive(&mut self, fr: &Frame, need: u32) -> Option<(Vec<u32>, u32)> {
        let p = self.p;
        let b = &p.blocks[fr.block as usize];
        for ci in fr.next_call..b.calls.1 {
            if self.qualifies(ci, need) {
                return Some((Vec::new(), ci));
            }
        }
        self.stamp += 1;
        let stamp = self.stamp;
        self.queue.clear();
        let mut q = std::mem::take(&mut self.queue);
        p.for_succs(fr.block, |s| {
            if s != EXIT && self.visited[s as usize] != stamp {
                self.visited[s as usize] = stamp;
                self.parent[s as usize] = START;
                q.push(s);
            }
        });
        let mut head = 0;
        let mut found = None;
        'bfs: while head < q.len() {
            let x = q[head];
            head += 1;
            let (c0, c1) = p.blocks[x as usize].calls;
            for ci in c0..c1 {
                if self.qualifies(ci, need) {
                    found = Some((x, ci));
                    break 'bfs;
                }
            }
            p.for_succs(x, |s| {
                if s != EXIT && self.visited[s as usize] != stamp {
                    self.visited[s as usize] = stamp;
                    self.parent[s as usize] = x;
                    q.push(s);
                }
            });
        }
        self.queue = q;
        let (x, ci) = found?;
        let mut path = vec![x];
        let mut cur = x;
        while self.parent[cur as usize] != START {
            cur = self.parent[cur as usize];
            path.push(cur);
        }
        Some((path, ci))
    }
}

pub(super) fn simulate(p: &Program, cfg: &SynthConfig, record: bool) -> Run {
    let mut r = Runner::new(p, cfg, record);
    let crash = loop {
        r.start_diving_when_due();
        let depth = r.stack.len() - 1;
        let fr = r.stack[depth];
        if fr.mode == Mode::Dive && !r.plan_dive(depth, &fr) {
            continue;
        }
        let b = &p.blocks[fr.block as usize];
        let crashing = fr.mode == Mode::Dive && depth == r.target;
        let more_calls = fr.next_call < b.calls.1;
        if crashing {
            if let Some(c) = r.crash_in(&fr, more_calls) {
                break c;
            }
        }
        if more_calls {
            r.call(depth, &fr, crashing);
        } else {
            r.end_block(depth, &fr, crashing);
        }
    };
    Run {
        executed: r.executed,
        stack: r.stack[1..].iter().map(|f| (f.via, f.func)).collect(),
        crash,
        steps: r.steps,
        trace: r.trace,
    }
}

/// The state of [`simulate`]'s run: one step per block visit or call.
pub(super) struct Runner<'p> {
    pub(super) p: &'p Program,
    pub(super) cfg: &'p SynthConfig,
    pub(super) rng: Rng,
    pub(super) sim: Sim<'p>,
    /// The crash depth.
    pub(super) target: usize,
    /// Executed call sites after which the run dives to the crash.
    pub(super) switch_at: usize,
    pub(super) max_iter: u32,
    pub(super) trace: Option<Vec<(u32, u32)>>,
    pub(super) executed: Vec<bool>,
    pub(super) n_exec: usize,
    pub(super) steps: u64,
    /// Activations per function.
    pub(super) active: Vec<u32>,
    /// Explorations per function.
    pub(super) explored: Vec<u32>,
    /// Probability of a conditional's taken arm, per depth.
    pub(super) arm_p: Vec<f64>,
    /// Loop iteration counters of the frames, in stack order.
    pub(super) loops: Vec<u8>,
    pub(super) stack: Vec<Frame>,
    pub(super) diving: bool,
    pub(super) plan: Option<DivePlan>,
    /// Statements left to walk in the crashing frame.
    pub(super) walk: Option<u32>,
}

impl<'p> Runner<'p> {
    pub(super) fn new(p: &'p Program, cfg: &'p SynthConfig, record: bool) -> Runner<'p> {
        // ARM_P0 * ARM_DECAY^depth, by repeated products (portable, unlike powi).
        let mut arm_p = vec![ARM_P0];
        for _ in 0..cfg.explore_depth.max(1) {
            let last = *arm_p.last().unwrap();
            arm_p.push(last * ARM_DECAY);
        }
        let mut r = Runner {
            p,
            cfg,
            rng: Rng::with_stream(cfg.seed, 2),
            sim: Sim {
                p,
                visited: vec![0; p.blocks.len()],
                parent: vec![0; p.blocks.len()],
                stamp: 0,
                queue: Vec::new(),
            },
            target: p.depth,
            switch_at: cfg.coverage + cfg.coverage / 10,
            max_iter: cfg.max_loop_iterations.min(255),
            trace: if record { Some(Vec::new()) } else { None },
            executed: vec![false; p.calls.len()],
            n_exec: 0,
            steps: 0,
            active: vec![0u32; p.funcs.len()],
            explored: vec![0u32; p.funcs.len()],
            arm_p,
            loops: Vec::new(),
            stack: Vec::new(),
            diving: false,
            plan: None,
            walk: None,
        };
        if let Some(t) = &mut r.trace {
            t.push((0, 1));
        }
        r.steps += 1;
        r.push(0, NONE, Mode::Explore);
        r
    }

    /// Enters function `f` from call site `via`.
    pub(super) fn push(&mut self, f: u32, via: u32, mode: Mode) {
        let p = self.p;
        let func = &p.funcs[f as usize];
        let base = self.loops.len() as u32;
        self.loops
            .resize(self.loops.len() + func.nloops as usize, 0);
        self.active[f as usize] += 1;
        let b0 = func.blocks.0;
        self.stack.push(Frame {
            func: f,
            block: b0,
            pos: 0,
            next_call: p.blocks[b0 as usize].calls.0,
            mode,
            loop_base: base,
            via,
        });
    }

    /// Records statements `from..to` of block `b` of function `f`.
    pub(super) fn rec(&mut self, f: u32, b: u32, from: u32, to: u32) {
        if let Some(t) = &mut self.trace {
            for off in from..to {
                t.push((f, self.p.local(b, off)));
            }
        }
    }

    /// After enough coverage (or steps), every exploring frame dives.
    pub(super) fn start_diving_when_due(&mut self) {
        if !self.diving && (self.n_exec >= self.switch_at || self.steps >= self.cfg.max_steps) {
            self.diving = true;
            for fr in self.stack.iter_mut() {
                if fr.mode == Mode::Explore {
                    fr.mode = Mode::Dive;
                }
            }
        }
    }

    /// A diving frame plans its way to a call deep enough; false (the
    /// frame turned cheap) when it is too deep or has none.
    pub(super) fn plan_dive(&mut self, depth: usize, fr: &Frame) -> bool {
        if depth > self.target {
            self.stack[depth].mode = Mode::Cheap;
            self.plan = None;
            return false;
        }
        if depth < self.target && !matches!(&self.plan, Some(d) if d.frame == depth) {
            match self.sim.find_dive(fr, (self.target - depth - 1) as u32) {
                Some((path, call)) => {
                    self.plan = Some(DivePlan {
                        frame: depth,
                        path,
                        call,
                    })
                }
                None => {
                    self.stack[depth].mode = Mode::Cheap;
                    self.plan = None;
                    return false;
                }
            }
        }
        true
    }

    /// In the crashing frame: walks a random number of statements and
    /// crashes there, if it comes before the next call (or the return).
    pub(super) fn crash_in(&mut self, fr: &Frame, more_calls: bool) -> Option<(u32, u32)> {
        let p = self.p;
        let b = &p.blocks[fr.block as usize];
        let rng = &mut self.rng;
        let k = *self
            .walk
            .get_or_insert_with(|| rng.below_u64(CRASH_WALK + 1) as u32);
        let stop = if more_calls {
            p.calls[fr.next_call as usize].offset
        } else {
            b.stmts
        };
        let avail = stop - fr.pos;
        if k < avail || (!more_calls && matches!(b.term, Term::Return)) {
            let off = if k < avail { fr.pos + k } else { b.stmts - 1 };
            self.rec(fr.func, fr.block, fr.pos, off + 1);
            self.steps += (off + 1 - fr.pos) as u64;
            return Some((fr.func, p.local(fr.block, off)));
        }
        self.walk = Some(k - avail);
        None
    }

    /// The frame's next call: a target by the frame's mode, entered.
    pub(super) fn call(&mut self, depth: usize, fr: &Frame, crashing: bool) {
        let p = self.p;
        let ci = fr.next_call;
        let c = p.calls[ci as usize];
        self.rec(fr.func, fr.block, fr.pos, c.offset + 1);
        self.steps += (c.offset + 1 - fr.pos) as u64;
        {
            let f = &mut self.stack[depth];
            f.pos = c.offset + 1;
            f.next_call += 1;
        }
        if !self.executed[ci as usize] {
            self.executed[ci as usize] = true;
            self.n_exec += 1;
        }
        let ts = p.targets_of(&c);
        let (t, mode) = match fr.mode {
            Mode::Dive if !crashing && self.plan.as_ref().is_some_and(|d| d.call == ci) => {
                let need = (self.target - depth - 1) as u32;
                let ok: Vec<u32> = ts
                    .iter()
                    .copied()
                    .filter(|&t| {
                        let f = &p.funcs[t as usize];
                        f.kind == FKind::Defined && f.height >= need
                    })
                    .collect();
                (ok[self.rng.index(ok.len())], Mode::Dive)
            }
            Mode::Explore => {
                let t = ts[self.rng.index(ts.len())];
                let seen = self.explored[t as usize];
                let m = if depth + 1 < self.cfg.explore_depth
                    && self.active[t as usize] < self.cfg.recursion_bound
                    && (seen < FRESH_EXPLORATIONS
                        || self.rng.chance_f(FRESH_EXPLORATIONS as f64 / seen as f64))
                {
                    self.explored[t as usize] = seen.saturating_add(1);
                    Mode::Explore
                } else {
                    Mode::Cheap
                };
                (t, m)
            }
            _ => (ts[self.rng.index(ts.len())], Mode::Cheap),
        };
        match p.funcs[t as usize].kind {
            FKind::Decl => {}
            FKind::Stub => {
                if let Some(tr) = &mut self.trace {
                    tr.push((t, 1));
                    tr.push((t, 2));
                }
                self.steps += 2;
            }
            FKind::Defined => {
                if let Some(tr) = &mut self.trace {
                    tr.push((t, 1));
                }
                self.steps += 1;
                self.push(t, ci, mode);
                if mode == Mode::Dive {
                    self.plan = None;
                }
            }
        }
    }

    /// The end of the frame's block: the next block by the frame's mode,
    /// or the return.
    pub(super) fn end_block(&mut self, depth: usize, fr: &Frame, crashing: bool) {
        let p = self.p;
        let b = &p.blocks[fr.block as usize];
        self.rec(fr.func, fr.block, fr.pos, b.stmts);
        self.steps += (b.stmts - fr.pos) as u64;
        let next = match fr.mode {
            Mode::Cheap => p.cheap_succ(fr.block),
            Mode::Dive if crashing => p.cheap_succ(fr.block),
            Mode::Dive => self
                .plan
                .as_mut()
                .and_then(|d| d.path.pop())
                .expect("dive path"),
            Mode::Explore => self.explore_succ(depth, fr),
        };
        if let Term::Loop { exit, id, .. } = b.term {
            if next == exit && fr.mode != Mode::Explore {
                self.loops[(fr.loop_base + id) as usize] = 0;
            }
        }
        if next == EXIT {
            if let Some(t) = &mut self.trace {
                t.push((fr.func, 2));
            }
            self.steps += 1;
            self.active[fr.func as usize] -= 1;
            self.loops.truncate(fr.loop_base as usize);
            self.stack.pop();
            assert!(!self.stack.is_empty(), "synthetic run returned from main");
            return;
        }
        let f = &mut self.stack[depth];
        f.block = next;
        f.pos = 0;
        f.next_call = p.blocks[next as usize].calls.0;
    }

    /// An exploring frame's random successor block (or [`EXIT`]).
    pub(super) fn explore_succ(&mut self, depth: usize, fr: &Frame) -> u32 {
        let p = self.p;
        match p.blocks[fr.block as usize].term {
            Term::Goto(n) => n,
            Term::Return => EXIT,
            Term::Cond { take, skip } => {
                if self
                    .rng
                    .chance_f(self.arm_p[depth.min(self.arm_p.len() - 1)])
                {
                    take
                } else {
                    skip
                }
            }
            Term::Switch { start, len } => {
                p.arms[(start + self.rng.below_u64(len as u64) as u32) as usize]
            }
            Term::Loop { body, exit, id } => {
                if fr.block == p.driver_header && depth == 0 {
                    body
                } else {
                    let c = &mut self.loops[(fr.loop_base + id) as usize];
                    if (*c as u32) < self.max_iter && self.rng.chance_f(LOOP_P) {
                        *c += 1;
                        body
                    } else {
                        *c = 0;
                        exit
                    }
                }
            }
            Term::Open => unreachable!(),
        }
    }
}
