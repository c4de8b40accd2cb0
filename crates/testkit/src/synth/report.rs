//! The failure report writer (csi-grissom JSON): the stack of the run,
//! coverage observations, reliable traces and ambiguous entries.

use super::config::SynthConfig;
use super::model::*;
use super::simulator::Run;
use crate::rng::Rng;
use std::collections::HashMap;
use std::io::{self, Write};

/// Writes the report; returns the numbers of obsYes and obsNo entries.
pub(super) fn write_report<W: Write>(
    p: &Program,
    run: &Run,
    cfg: &SynthConfig,
    w: &mut W,
) -> io::Result<(usize, usize)> {
    let mut r = ReportWriter {
        p,
        run,
        cfg,
        rng: Rng::with_stream(cfg.seed, 3),
        w,
    };
    let (yes, no): (Vec<u32>, Vec<u32>) =
        (0..p.calls.len() as u32).partition(|&c| run.executed[c as usize]);
    let yes = sample(&mut r.rng, yes, cfg.coverage);
    let no = sample(&mut r.rng, no, cfg.obs_no);
    let ncalls = p.calls.len();
    r.w.write_all(b"{\"obsYes\": [")?;
    r.covered(&yes)?;
    let mut n_yes = yes.len();
    if let (true, Some(trace)) = (cfg.reliable_trace > 0, &run.trace) {
        if r.reliable_trace(trace, n_yes)? {
            n_yes += 1;
        }
    }
    if let (true, Some(trace)) = (cfg.ambiguous_vector > 0 && ncalls > 1, &run.trace) {
        if r.ambiguous_vector(trace, n_yes)? {
            n_yes += 1;
        }
    }
    let (cf, cl) = run.crash;
    write!(
        r.w,
        "], \"crash\": [\"n:-{}:{cl}\"], \"obsNo\": [",
        p.funcs[cf as usize].num
    )?;
    for (i, &c) in no.iter().enumerate() {
        let (n, l) = r.call_id(c);
        let sep = if i == 0 { "" } else { ", " };
        write!(r.w, "{sep}[\"n:-{n}:{l}\"]")?;
    }
    let mut n_no = no.len();
    if cfg.ambiguous_no > 0 {
        n_no += r.ambiguous_no(n_no)?;
    }
    r.w.write_all(b"], \"stack\": [")?;
    for (i, &(c, f)) in run.stack.iter().enumerate() {
        let (n, l) = r.call_id(c);
        let sep = if i == 0 { "" } else { ", " };
        write!(
            r.w,
            "{sep}{{\"call\": [\"n:-{n}:{l}\"], \"entry\": [\"n:-{}:1\"]}}",
            p.funcs[f as usize].num
        )?;
    }
    r.w.write_all(b"]}")?;
    Ok((n_yes, n_no))
}

/// The first `k` elements of a random permutation of `v` (partial
/// Fisher–Yates).
pub(super) fn sample(rng: &mut Rng, mut v: Vec<u32>, k: usize) -> Vec<u32> {
    let k = k.min(v.len());
    for i in 0..k {
        let j = i + rng.index(v.len() - i);
        v.swap(i, j);
    }
    v.truncate(k);
    v
}

/// The state of [`write_report`]: the run it reports, and the report's
/// random stream, which its parts draw from in turn.
pub(super) struct ReportWriter<'a, W> {
    pub(super) p: &'a Program,
    pub(super) run: &'a Run,
    pub(super) cfg: &'a SynthConfig,
    pub(super) rng: Rng,
    pub(super) w: &'a mut W,
}

impl<W: Write> ReportWriter<'_, W> {
    /// A call site as (function number, local statement index).
    pub(super) fn call_id(&self, c: u32) -> (u32, u32) {
        let c = &self.p.calls[c as usize];
        (self.p.funcs[c.func as usize].num, self.p.call_local(c))
    }

    /// A call site other than `c` (for "c or some other call site").
    pub(super) fn other_call(&mut self, c: u32) -> u32 {
        let ncalls = self.p.calls.len();
        let mut o = self.rng.index(ncalls) as u32;
        if o == c {
            o = (o + 1) % ncalls as u32;
        }
        o
    }

    /// The unreliable `obsYes` entries of the covered call sites `yes`,
    /// the first `cfg.ambiguous` of them ambiguous.
    pub(super) fn covered(&mut self, yes: &[u32]) -> io::Result<()> {
        let ncalls = self.p.calls.len();
        for (i, &c) in yes.iter().enumerate() {
            let (n, l) = self.call_id(c);
            let sep = if i == 0 { "" } else { ", " };
            if i < self.cfg.ambiguous && ncalls > 1 {
                // "c or some other call site ran" (c did).
                let o = self.other_call(c);
                let (on, ol) = self.call_id(o);
                write!(
                    self.w,
                    "{sep}{{\"reliable\": false, \"entries\": [[\"n:-{n}:{l}\", \"n:-{on}:{ol}\"]]}}"
                )?;
            } else {
                write!(
                    self.w,
                    "{sep}{{\"reliable\": false, \"entries\": [[\"n:-{n}:{l}\"]]}}"
                )?;
            }
        }
        Ok(())
    }

    /// Every call site by its (function, local index).
    pub(super) fn calls_by_loc(&self) -> HashMap<(u32, u32), u32> {
        let p = self.p;
        (0..p.calls.len() as u32)
            .map(|c| {
                (
                    (p.calls[c as usize].func, p.call_local(&p.calls[c as usize])),
                    c,
                )
            })
            .collect()
    }

    /// The reliable trace: every occurrence in the run's `trace` of some
    /// rarely executed call sites, `cfg.reliable_trace` occurrences in
    /// all (fewer if they do not add up). Returns whether it was written
    /// (after `n_yes` entries).
    pub(super) fn reliable_trace(
        &mut self,
        trace: &[(u32, u32)],
        n_yes: usize,
    ) -> io::Result<bool> {
        let ncalls = self.p.calls.len();
        // Occurrences of every call site in the run.
        let by_loc = self.calls_by_loc();
        let mut count = vec![0usize; ncalls];
        for loc in trace {
            if let Some(&c) = by_loc.get(loc) {
                count[c as usize] += 1;
            }
        }
        // Pick rarely executed sites until they add up to the length.
        let mut order: Vec<u32> = (0..ncalls as u32)
            .filter(|&c| (1..=8).contains(&count[c as usize]))
            .collect();
        order = sample(&mut self.rng, order.clone(), order.len());
        let mut traced = vec![false; ncalls];
        let mut total = 0;
        for c in order {
            if total + count[c as usize] > self.cfg.reliable_trace {
                continue;
            }
            traced[c as usize] = true;
            total += count[c as usize];
            if total == self.cfg.reliable_trace {
                break;
            }
        }
        let entries: Vec<String> = trace
            .iter()
            .filter_map(|loc| by_loc.get(loc).copied().filter(|&c| traced[c as usize]))
            .map(|c| {
                let (n, l) = self.call_id(c);
                format!("[\"n:-{n}:{l}\"]")
            })
            .collect();
        if entries.is_empty() {
            return Ok(false);
        }
        let sep = if n_yes == 0 { "" } else { ", " };
        write!(
            self.w,
            "{sep}{{\"reliable\": true, \"entries\": [{}]}}",
            entries.join(", ")
        )?;
        Ok(true)
    }

    /// An unreliable ordered vector of two-site sets: a sorted sample of
    /// `cfg.ambiguous_vector` call occurrences of the run's `trace`, each
    /// with some other call site. Returns whether it was written (after
    /// `n_yes` entries).
    pub(super) fn ambiguous_vector(
        &mut self,
        trace: &[(u32, u32)],
        n_yes: usize,
    ) -> io::Result<bool> {
        // Call occurrences of the run, in order; a sorted sample of them.
        let by_loc = self.calls_by_loc();
        let occ: Vec<u32> = trace
            .iter()
            .filter_map(|loc| by_loc.get(loc).copied())
            .collect();
        let mut idx = sample(
            &mut self.rng,
            (0..occ.len() as u32).collect(),
            self.cfg.ambiguous_vector,
        );
        idx.sort_unstable();
        let entries: Vec<String> = idx
            .iter()
            .map(|&i| {
                let c = occ[i as usize];
                let o = self.other_call(c);
                let ((n, l), (on, ol)) = (self.call_id(c), self.call_id(o));
                format!("[\"n:-{n}:{l}\", \"n:-{on}:{ol}\"]")
            })
            .collect();
        if entries.is_empty() {
            return Ok(false);
        }
        let sep = if n_yes == 0 { "" } else { ", " };
        write!(
            self.w,
            "{sep}{{\"reliable\": false, \"entries\": [{}]}}",
            entries.join(", ")
        )?;
        Ok(true)
    }

    /// Coverage bits standing for several call sites of one function: at
    /// least one of them (the first, which never ran) did not run.
    /// `cfg.ambiguous_no` such `obsNo` sets (fewer if fewer call sites
    /// never ran), after `n_no` entries; returns how many.
    pub(super) fn ambiguous_no(&mut self, n_no: usize) -> io::Result<usize> {
        let p = self.p;
        let ncalls = p.calls.len();
        let never: Vec<u32> = (0..ncalls as u32)
            .filter(|&c| !self.run.executed[c as usize])
            .collect();
        let k = self.cfg.ambiguous_no.min(never.len());
        let picked = sample(&mut self.rng, never.clone(), k);
        let mut written = 0;
        for c in picked {
            let f = &p.funcs[p.calls[c as usize].func as usize];
            let mut set = vec![c];
            let others = 1 + self.rng.index(2);
            for _ in 0..others {
                let span = (f.calls.1 - f.calls.0) as usize;
                let o = if span > 1 {
                    f.calls.0 + self.rng.index(span) as u32
                } else {
                    self.rng.index(ncalls) as u32
                };
                if !set.contains(&o) {
                    set.push(o);
                }
            }
            if set.len() < 2 {
                let o = (c + 1) % ncalls as u32;
                if o != c {
                    set.push(o);
                }
            }
            let ids: Vec<String> = set
                .iter()
                .map(|&x| {
                    let (n, l) = self.call_id(x);
                    format!("\"n:-{n}:{l}\"")
                })
                .collect();
            let sep = if n_no + written == 0 { "" } else { ", " };
            write!(self.w, "{sep}[{}]", ids.join(", "))?;
            written += 1;
        }
        Ok(written)
    }
}
