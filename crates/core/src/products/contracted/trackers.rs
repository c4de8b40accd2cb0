//! Trackers: the subsequence constraints over locations.

use super::*;

/// A subsequence constraint over locations: `locs[i]` are the locations
/// where element `i` can be matched. `alts[i]` is what matching it means
/// in nodes: one entry per original constraint the tracker stands for
/// (identical trackers are merged; entry `k` is the same constraint at
/// every position), each an ordered sequence of node sets (consecutive
/// elements in one contracted location are merged into one position).
#[derive(Default)]
pub(super) struct Tracker {
    pub(super) locs: Vec<Vec<LocId>>,
    pub(super) alts: Vec<Vec<Vec<Vec<u32>>>>,
}

/// Trackers over locations, each element with the node sets it stands
/// for (one node of each must be visited where the element is
/// matched): one per UTL vector (its elements in components that are
/// not trivial nor fully silent) and per trace; consecutive identical
/// contracted elements merged, then identical trackers.
pub(super) fn trackers(places: &Locations<'_, '_>, sp: &Split) -> Vec<Tracker> {
    let sccs = &places.st.core.sccs;
    let mut raw: Vec<Tracker> = Vec::new();
    for vec in &sp.vectors {
        let mut t = Tracker::default();
        for &e in vec {
            let c = sccs.comp(e).expect("a live element");
            if !sccs.is_trivial(c) && !places.whole(c) {
                t.locs.push(vec![places.loc_of(e)]);
                t.alts.push(vec![vec![vec![e]]]);
            }
        }
        if !t.locs.is_empty() {
            raw.push(t);
        }
    }
    for elems in &sp.traces {
        let mut t = Tracker::default();
        for e in elems {
            let nodes: Vec<u32> = e
                .nodes()
                .iter()
                .map(|x| x.as_u32())
                .filter(|&v| places.alive(v))
                .collect();
            let mut locs: Vec<LocId> = nodes.iter().map(|&v| places.loc_of(v)).collect();
            locs.sort_unstable();
            locs.dedup();
            t.locs.push(locs);
            t.alts.push(vec![vec![nodes]]);
        }
        raw.push(t);
    }
    // Merge consecutive identical single-location elements that are
    // contracted locations (one visit matches them all), then trackers
    // with the same locations (they move together).
    for t in &mut raw {
        let mut m = Tracker::default();
        for (locs, alts) in t.locs.drain(..).zip(t.alts.drain(..)) {
            if locs.len() == 1 && places.sub_of(locs[0]).is_some() && m.locs.last() == Some(&locs) {
                // Before trackers are merged, one constraint per position.
                m.alts.last_mut().expect("parallel")[0].extend(alts.into_iter().flatten());
            } else {
                m.locs.push(locs);
                m.alts.push(alts);
            }
        }
        *t = m;
    }
    raw.sort_by(|a, b| a.locs.cmp(&b.locs));
    let mut trackers: Vec<Tracker> = Vec::new();
    for t in raw {
        match trackers.last_mut() {
            Some(last) if last.locs == t.locs => {
                for (a, b) in last.alts.iter_mut().zip(t.alts) {
                    a.extend(b);
                }
            }
            _ => trackers.push(t),
        }
    }
    trackers
}
