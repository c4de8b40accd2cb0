//! The budgets every search checks besides its own limits: the process's
//! memory, shared by every search of a run, and a deadline of the work
//! the current thread is doing (a value stage's share of the run, see
//! [`crate::staged`]).
//!
//! **Memory.**
//! Each search bounds its own tables by estimates (states times bytes per
//! state), but a run holds more than one search's tables: the base
//! solver's labels, a value stage beside another on a second thread,
//! edge lists that grow faster than states. So the binary reports what
//! the whole process has allocated ([`install`]: a probe of its
//! allocator, read at the searches' periodic limit checks) against one
//! budget (`--max-memory`), and a search past it stops as it stops at
//! any limit: its caller keeps the sound labels it had and lists what it
//! gave up. Without a probe (a library user, a test), only the searches'
//! own estimates apply.
//!
//! The budget must be reached long before the address space is: an
//! allocation that fails aborts the process. The binary's default leaves
//! room for the growth between two checks (a table doubling).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

static PROBE: OnceLock<fn() -> usize> = OnceLock::new();
static BUDGET: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Installs the probe of the bytes the process has allocated (once; a
/// later call keeps the first probe) and sets the budget.
pub fn install(probe: fn() -> usize, budget: usize) {
    let _ = PROBE.set(probe);
    BUDGET.store(budget, Ordering::Relaxed);
}

/// The process's budget in bytes (`usize::MAX`: none).
pub fn budget() -> usize {
    BUDGET.load(Ordering::Relaxed)
}

/// The bytes the process has allocated, when a probe is installed.
pub fn in_use() -> Option<usize> {
    PROBE.get().map(|p| p())
}

/// `Some(budget)` when the process has allocated more than its budget:
/// the search that asks stops.
pub fn exceeded() -> Option<usize> {
    over(in_use(), budget())
}

fn over(in_use: Option<usize>, budget: usize) -> Option<usize> {
    (budget != usize::MAX && in_use? > budget).then_some(budget)
}

/// The message of a search stopped by [`exceeded`].
pub fn exceeded_message(budget: usize) -> String {
    format!(
        "the process's memory budget ({} MiB, --max-memory)",
        budget >> 20
    )
}

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// The current thread's deadline, if any.
pub fn deadline() -> Option<Instant> {
    DEADLINE.with(Cell::get)
}

/// Runs `f` with the thread's deadline set to `d` (the earlier of `d` and
/// any deadline already set), then restores the one before. A thread a
/// search spawns runs its part under [`deadline`] the same way.
pub fn with_deadline<T>(d: Option<Instant>, f: impl FnOnce() -> T) -> T {
    let before = deadline();
    let now = match (before, d) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    DEADLINE.with(|c| c.set(now));
    let out = f();
    DEADLINE.with(|c| c.set(before));
    out
}

/// Whether the thread's deadline has passed: the search that asks stops,
/// as at its own time limit.
pub fn past_deadline() -> bool {
    deadline().is_some_and(|d| Instant::now() > d)
}

/// Why a search must stop now, if it must: the process's memory budget
/// or the thread's deadline (for messages).
pub fn stop() -> Option<String> {
    if let Some(b) = exceeded() {
        return Some(exceeded_message(b));
    }
    past_deadline().then(|| "the time budget of this stage".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_exceeded_only_past_it_with_a_probe() {
        assert_eq!(over(None, 1), None);
        assert_eq!(over(Some(3 << 30), 2 << 30), Some(2 << 30));
        assert_eq!(over(Some(2 << 30), 2 << 30), None);
        assert_eq!(over(Some(usize::MAX - 1), usize::MAX), None);
    }

    #[test]
    fn deadlines_nest_and_are_restored() {
        assert!(!past_deadline());
        let past = Instant::now() - std::time::Duration::from_secs(1);
        let later = Instant::now() + std::time::Duration::from_secs(3600);
        with_deadline(Some(later), || {
            assert!(!past_deadline());
            with_deadline(Some(past), || assert!(past_deadline()));
            // An inner deadline never extends an outer one.
            with_deadline(None, || assert_eq!(deadline(), Some(later)));
            assert!(!past_deadline());
        });
        assert_eq!(deadline(), None);
    }
}
