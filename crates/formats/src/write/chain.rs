//! `postmortem why`: from the crash back to the statements that made the
//! faulting value (issue 36), ranked. It reads what the analysis put in
//! the fault ([`Fault::causes`]: the definitions that can have left each
//! suspect's value, the stores that did not run and the branches that
//! kept them from running, the branches that tested the value and let
//! it through) and orders it for a developer, most likely root cause
//! first (a heuristic order; the labels are not):
//!
//! 1. a definition that made the value on every execution the report
//!    allows (the only one that can have left it; followed back through
//!    copies and calls, [`crate::origins`]) and that stored this very
//!    constant (`return NULL;`): Yes;
//! 2. a branch that ran and never went to a store that would have set
//!    another value, or that tested the value and went on toward the
//!    crash (a check that let it through), or that tested another
//!    pointer for NULL where a call's NULL result was never tested (a
//!    check of the wrong variable?), or that ended a loop storing one
//!    element of an array per pass (a bound one short?), or that
//!    compared an index past an array's end with its bound (unless the
//!    array is a block allocated at run time: then with 5): Yes;
//!    A call that may have freed the memory a dangling pointer points
//!    to (the same field or variable passed to `free`, or to a function
//!    through a pointer) ranks here when it ran, after them when it may
//!    have; so do, one class lower, the calls that can free memory made
//!    just before a call that passed the dangling pointer on;
//! 3. the other definitions that made it on every execution (a value
//!    computed at run time, perhaps from the input: the check after it is
//!    the likelier bug): Yes;
//! 4. a definition that made it on some of them: Maybe; first those that
//!    can only have made this value (`= NULL`) and the bounds of loops
//!    that store one element of an array per pass (an element the loop
//!    did not reach keeps another value), then computed ones, each
//!    field's followed by the branches that may have kept its stores
//!    from running when its value is 0 (a skipped initialisation: the
//!    zeroing allocation's 0 was left); the branches that may have kept
//!    a callee from writing an out-parameter rank with those that can
//!    only have made the value (an early return);
//! 5. a branch that may have run and never went to such a store, or
//!    tested the value, or that may have kept a store of another value
//!    from running (a field's initialisation under a wrong condition),
//!    and a definition that may have stored what a function outside the
//!    program returned (`p = malloc(n)`: what took it unchecked is the
//!    likelier bug): Maybe.
//!
//! A definition that only carried the value (a copy, a call's argument,
//! a parameter) ranks no higher than the best of the definitions it
//! carried it from (except for the bound of an index past the end: a
//! right value passed where it does not belong is as likely, so the
//! carriers rank by their own class); one the walk could not follow (an indirect caller,
//! the program's arguments) comes last. Within a rank, the definitions furthest back along
//! the value's way first (where it was made: `return NULL;` in the
//! callee, before the store of the call's result that carried it to the
//! crash), then in the order of the suspects of the fault.

use crate::image::fault::{Cause, Fault, MadeBy};
use serde::Serialize;
use std::io::{self, Write};

/// One statement blamed for the faulting value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Suspect {
    /// 1 for the first.
    pub rank: usize,
    /// The statement: ``the store at kv.c:30``, ``the branch at kv.c:27``,
    /// ``its initial value``.
    pub at: String,
    /// The variable whose value it is about: ``` `e` = 0x0 (frame #0 `get`) ```.
    pub variable: String,
    /// `yes`: on every execution the report allows; `maybe`: on some.
    pub label: &'static str,
    /// Why it is blamed, and so why it ranks there.
    pub reason: String,
    /// Its node, for links (none for a global's initial value).
    #[serde(skip)]
    pub node: Option<postmortem_core::NodeId>,
}

/// A suspect of cause `c`: the statement `at`, Yes when `yes`.
fn blame(
    c: &Cause,
    at: impl Into<String>,
    yes: bool,
    reason: String,
    node: Option<postmortem_core::NodeId>,
) -> Suspect {
    Suspect {
        rank: 0,
        at: at.into(),
        variable: c.variable.clone(),
        label: if yes { "yes" } else { "maybe" },
        reason,
        node,
    }
}

/// The suspects of `f`, ranked (see the module docs), at most `max`.
pub fn suspects(f: &Fault, max: usize) -> Vec<Suspect> {
    // (rank class, how deep along the value's way, suspect).
    let mut ranked: Vec<(u8, usize, Suspect)> = Vec::new();
    for c in &f.causes {
        let n = c.made_by.len();
        for m in &c.made_by {
            let reason = if m.on == "every" {
                "the only definition that can have left this value on an execution the report allows"
                    .to_string()
            } else if n == 1 {
                "the only definition that can have left this value, on some executions the report allows"
                    .to_string()
            } else {
                format!("one of {n} definitions that can have left this value")
            };
            definition(&mut ranked, c, m, reason, 0);
        }
        for k in &c.guards {
            let ran = k.ran == "yes";
            // The bound of an index into a block allocated at run time (a
            // pointer from a field or a call): the block's size is as
            // likely wrong, so the bound comes after the definitions.
            let allocated = k.bound.is_some() && f.instruction.is_some() && !f.operands.is_empty();
            ranked.push((
                if ran && !allocated { 1 } else { 5 },
                0,
                blame(c, k.branch.clone(), ran, match (&k.tested, &k.bound) {
                        (_, Some(b)) => format!(
                            "{} {b} and went on toward the crash: the bound that let the index reach this value",
                            if ran { "it compared" } else { "if it ran, it compared" },
                        ),
                        (None, _) => format!(
                            "{} the variable already holding this value and went on toward the crash: a check that let it through",
                            if ran { "it tested" } else { "if it ran, it tested" },
                        ),
                        (Some((other, holder)), _) if other.starts_with("field ") => format!(
                            "{} {other} for NULL, and nothing on the way to the crash tested {holder} of the same object, which was NULL: a check of the wrong field?",
                            if ran { "it tested" } else { "if it ran, it tested" },
                        ),
                        (Some((other, holder)), _) => format!(
                            "{} `{other}` for NULL, and nothing on the way to the crash tested `{holder}` (a call's result, carried to the NULL pointer): a check of the wrong variable?",
                            if ran { "it tested" } else { "if it ran, it tested" },
                        ),
                    }, k.node),
            ));
        }
        for k in &c.skipped_by {
            let ran = k.ran == "yes";
            ranked.push((
                if ran { 1 } else { 5 },
                0,
                blame(
                    c,
                    k.branch.clone(),
                    ran,
                    format!(
                        "{} and never went to {}, which would have set another value",
                        if ran { "it ran" } else { "if it ran, it" },
                        k.store
                    ),
                    k.branch_node,
                ),
            ));
        }
        for k in &c.freed_by {
            let ran = k.ran == "yes";
            let (class, reason) = match &k.before {
                None => (
                    if ran { 1 } else { 2 },
                    format!(
                        "{} passed the same pointer to {}, and the access faulted at an address no longer mapped: if that freed the memory before the access, a use after free",
                        if ran { "it" } else { "if it ran, it" },
                        k.callee
                    ),
                ),
                Some(site) => (
                    if ran { 2 } else { 4 },
                    format!(
                        "{} {} just before {site}, which passed the pointer on, and it can free memory; the access faulted at an address no longer mapped: if it freed the memory, a use after free",
                        if ran { "it called" } else { "if it ran, it called" },
                        k.callee
                    ),
                ),
            };
            ranked.push((class, 0, blame(c, k.call.clone(), ran, reason, k.node)));
        }
        for k in &c.may_skip {
            ranked.push((
                5,
                0,
                blame(c, k.branch.clone(), false, format!(
                        "{} may have kept {} from running, which writes a value other than this one: had it been the last write before the crash, the value would differ",
                        if k.ran == "yes" { "it ran and" } else { "if it ran, it" },
                        k.store
                    ), k.branch_node),
            ));
        }
    }
    // Stable: within a rank, the deepest first (where the value was
    // made, before the copies that carried it), then the suspects' order.
    ranked.sort_by_key(|(r, depth, _)| (*r, std::cmp::Reverse(*depth)));
    // A statement blamed twice (for two suspects, or along two ways)
    // keeps its best place.
    let mut seen = std::collections::HashSet::new();
    ranked.retain(|(_, _, s)| seen.insert(s.at.clone()));
    ranked
        .into_iter()
        .take(max)
        .enumerate()
        .map(|(i, (_, _, mut s))| {
            s.rank = i + 1;
            s
        })
        .collect()
}

/// The rank class of definition `m` (module docs, 1-4). A definition
/// that only carried the value from statements further back (a copy, a
/// call's argument, a parameter: `from` names them) ranks no higher than
/// the best of those, after them (the deepest first): the statement
/// that made the value is likelier the bug than the ones that passed it
/// on.
fn class(m: &MadeBy) -> u8 {
    class_with(m, true)
}

/// [`class`], with `lowered`: whether a carrier ranks no higher than its
/// sources (for a bound of an index, [`Cause::carriers_first`], it ranks
/// by its own class).
fn class_with(m: &MadeBy, lowered: bool) -> u8 {
    // What the walk could not follow (an indirect caller, the program's
    // arguments, an asynchronous call) is no statement to look at: last.
    if crate::origins::not_followed(&m.at) {
        return 6;
    }
    let own = match (m.on == "every", m.exact) {
        (true, true) => 0,
        (true, false) => 2,
        (false, true) => 3,
        (false, false) => 4,
    };
    // A parameter whose value came only from where the walk cannot
    // follow (the program's arguments): from outside, last. As a source,
    // such a definition does not lower what carried its value on.
    let followed: Vec<u8> = m
        .from
        .iter()
        .filter(|d| d.node.is_some() && d.at != crate::origins::UNSEEN)
        .map(class)
        .collect();
    if m.via.is_some()
        && !m.from.is_empty()
        && m.from.iter().all(|d| crate::origins::not_followed(&d.at))
    {
        return 6;
    }
    // A value that may have come straight from the C library (`p =
    // malloc(n)`, `return getenv(k);`): had the library returned it, the
    // bug is more likely what took it unchecked; after the other maybes.
    if m.on != "every"
        && m.via
            .as_deref()
            .is_some_and(|v| v.ends_with(crate::origins::OUTSIDE))
    {
        return own.max(5);
    }
    let sources = followed.into_iter().filter(|&c| c < 6 && lowered).min();
    sources.map_or(own, |s| own.max(s))
}

/// Adds the definition `m` (`depth` steps back along the value's way)
/// and the ones behind it.
fn definition(
    ranked: &mut Vec<(u8, usize, Suspect)>,
    c: &Cause,
    m: &MadeBy,
    reason: String,
    depth: usize,
) {
    if m.at == crate::origins::COMPUTED || m.at == crate::origins::UNSET {
        return;
    }
    if m.at == crate::origins::UNSEEN || m.at == crate::origins::NOT_WRITTEN {
        // Not a suspect itself; the branches that may have kept the
        // field's (the out-parameter's) stores from running, leaving its
        // value, are: after the stores (pushed before this), as they may
        // be the ones to fix.
        // An out-parameter its callee did not write is the likelier
        // story than a value computed and stored through it: with the
        // definitions that can only have made the value.
        let (left, class) = if m.at == crate::origins::UNSEEN {
            (
                "the field kept what a write before them left (a skipped initialisation?)",
                4,
            )
        } else {
            ("the caller's variable kept its earlier value (an early return that left the out-parameter unset?)", 3)
        };
        for k in &m.skipped {
            let ran = k.ran == "yes";
            ranked.push((
                class,
                depth,
                blame(
                    c,
                    k.branch.clone(),
                    false,
                    format!(
                        "{} may have kept {} from running, so that {left}",
                        if ran { "it ran and" } else { "if it ran, it" },
                        k.store
                    ),
                    k.branch_node,
                ),
            ));
        }
        return;
    }
    let every = m.on == "every";
    ranked.push((
        class_with(m, !c.carriers_first),
        depth,
        Suspect {
            rank: 0,
            at: m.at.clone(),
            variable: c.variable.clone(),
            label: if every { "yes" } else { "maybe" },
            reason,
            node: m.node,
        },
    ));
    // Before the computed values of the loop's stores: an element the
    // loop did not reach is the likelier cause of a NULL than a call in
    // it that returned one. And the check that let an index through is
    // likelier wrong than how the index was computed.
    let loops = m.bound.iter().map(|k| {
        let ran = k.ran == "yes";
        (k, format!(
            "{} the loop whose passes store one element each at {}: an element the loop did not reach keeps another value (a loop bound one short?)",
            if ran { "it ended" } else { "if it ran, it ended" },
            k.store.strip_prefix("the store at ").unwrap_or(&k.store)
        ))
    });
    let checks = m.index_bounds.iter().map(|k| {
        let ran = k.ran == "yes";
        (k, format!(
            "{} the index of the element whose address {} made with its bound: the check that let the index through",
            if ran { "it compared" } else { "if it ran, it compared" },
            k.store
        ))
    });
    for (k, reason) in loops.chain(checks) {
        let ran = k.ran == "yes";
        ranked.push((
            if ran { 1 } else { 3 },
            depth + 1,
            blame(c, k.branch.clone(), ran, reason, k.branch_node),
        ));
    }
    for k in &m.chosen_by {
        ranked.push((
            class(m).max(3),
            depth + 1,
            blame(c, k.at.clone(), false, format!(
                    "it stored {}, and the program calls that function only through pointers: it chose the function in which {} made the value (the wrong function?)",
                    k.via.as_deref().unwrap_or("a function's address"),
                    m.at
                ), k.node),
        ));
    }
    let Some(via) = &m.via else {
        return;
    };
    let n = m.from.len();
    let verb = if m.at.starts_with("the call") || m.at.starts_with("the argument") {
        "passed"
    } else if m.at.starts_with("the return") {
        "returned"
    } else if m.at.starts_with("the parameter") {
        "held"
    } else {
        "wrote"
    };
    for d in &m.from {
        let reason = if d.on == "every" {
            format!(
                "the value {} {verb} is {via}, and this is the only definition that can have made it",
                m.at
            )
        } else if n == 1 {
            format!(
                "the value {} {verb} is {via}, and this is the only definition that can have made it there (on some executions)",
                m.at
            )
        } else {
            format!(
                "the value {} {verb} is {via}, and this is one of {n} definitions that can have made it",
                m.at
            )
        };
        definition(ranked, c, d, reason, depth + 1);
    }
}

/// The chain as text: the crash, then one line per suspect.
pub fn write_text(out: &mut dyn Write, f: &Fault, suspects: &[Suspect]) -> io::Result<()> {
    writeln!(out, "crash:  {}", f.line())?;
    if suspects.is_empty() {
        writeln!(
            out,
            "why:    no statement found that made the faulting value (it is traced when the \
             faulting instruction, in the program, used a variable the crash's statement loads, \
             a struct field loaded through a pointer or a call's result, or when a library \
             faulted near address 0 on a pointer the program passed; a value computed otherwise, \
             such as an address from a wrong index, is not traced)"
        )?;
        return Ok(());
    }
    writeln!(out, "why:")?;
    let width = suspects.iter().map(|s| s.at.len()).max().unwrap_or(0);
    for s in suspects {
        writeln!(
            out,
            "  {:>2}. {:<5} {:<width$}  {}: {}",
            s.rank, s.label, s.at, s.variable, s.reason
        )?;
    }
    Ok(())
}

/// The chain as JSON: `{"fault": ..., "suspects": [...]}`.
pub fn write_json(out: &mut dyn Write, f: &Fault, suspects: &[Suspect]) -> io::Result<()> {
    #[derive(Serialize)]
    struct Doc<'a> {
        fault: &'a Fault,
        suspects: &'a [Suspect],
    }
    serde_json::to_writer_pretty(&mut *out, &Doc { fault: f, suspects })?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::fault::{Guard, Skipped};

    #[test]
    fn definitions_on_every_execution_and_branches_that_ran_come_first() {
        let f = Fault {
            signal: "SIGSEGV".into(),
            causes: vec![Cause {
                variable: "`e` = 0x0".into(),
                made_by: vec![
                    MadeBy {
                        at: "the store at a.c:3".into(),
                        on: "some".into(),
                        via: Some("the result of `f`".into()),
                        from: vec![MadeBy {
                            at: "the return at a.c:9".into(),
                            on: "some".into(),
                            ..MadeBy::default()
                        }],
                        ..MadeBy::default()
                    },
                    MadeBy {
                        at: "its initial value".into(),
                        on: "some".into(),
                        ..MadeBy::default()
                    },
                    MadeBy {
                        at: "the store at a.c:7".into(),
                        on: "some".into(),
                        exact: true,
                        ..MadeBy::default()
                    },
                ],
                not_run: vec!["the store at a.c:5".into()],
                skipped_by: vec![Skipped {
                    store: "the store at a.c:5".into(),
                    branch: "the branch at a.c:4".into(),
                    ran: "yes".into(),
                    branch_node: None,
                }],
                guards: vec![Guard {
                    branch: "the branch at a.c:2".into(),
                    ran: "maybe".into(),
                    ..Guard::default()
                }],
                ..Cause::default()
            }],
            ..Fault::default()
        };
        let s = suspects(&f, 10);
        let order: Vec<(&str, &str)> = s.iter().map(|s| (s.at.as_str(), s.label)).collect();
        assert_eq!(
            order,
            vec![
                ("the branch at a.c:4", "yes"),
                // A store of the very value, before computed ones.
                ("the store at a.c:7", "maybe"),
                // Where the value was made, before the store that kept it.
                ("the return at a.c:9", "maybe"),
                ("the store at a.c:3", "maybe"),
                ("its initial value", "maybe"),
                // A check that may have let it through, last.
                ("the branch at a.c:2", "maybe"),
            ]
        );
        assert!(
            s[2].reason
                .starts_with("the value the store at a.c:3 wrote is the result of `f`"),
            "{}",
            s[2].reason
        );
        assert_eq!(
            s.iter().map(|s| s.rank).collect::<Vec<_>>(),
            vec![1, 2, 3, 4, 5, 6]
        );
        assert_eq!(suspects(&f, 1).len(), 1);
    }

    /// A definition on every execution that only passed the value on
    /// (the call, whose argument was a field's load) ranks after the
    /// field's store it came from, which made it on some: the maker
    /// first, then the carriers, the deepest first.
    #[test]
    fn carriers_rank_after_the_definitions_they_carried_from() {
        let store = MadeBy {
            at: "the store at a.c:17".into(),
            on: "some".into(),
            node: Some(postmortem_core::NodeId::new(3)),
            ..MadeBy::default()
        };
        let call = MadeBy {
            at: "the call at a.c:18".into(),
            on: "every".into(),
            node: Some(postmortem_core::NodeId::new(4)),
            via: Some("a load of field 1 of `job`".into()),
            from: vec![
                store,
                MadeBy {
                    at: crate::origins::UNSEEN.into(),
                    on: "some".into(),
                    ..MadeBy::default()
                },
            ],
            ..MadeBy::default()
        };
        let f = Fault {
            signal: "SIGSEGV".into(),
            causes: vec![Cause {
                variable: "`p` = 0x0".into(),
                made_by: vec![MadeBy {
                    at: "the parameter `p` at a.c:8".into(),
                    on: "every".into(),
                    node: Some(postmortem_core::NodeId::new(5)),
                    via: Some("what the calls of `run` passed (argument 1)".into()),
                    from: vec![call],
                    ..MadeBy::default()
                }],
                ..Cause::default()
            }],
            ..Fault::default()
        };
        let order: Vec<(String, &str)> = suspects(&f, 10)
            .into_iter()
            .map(|s| (s.at, s.label))
            .collect();
        assert_eq!(
            order,
            [
                ("the store at a.c:17".to_string(), "maybe"),
                ("the call at a.c:18".to_string(), "yes"),
                ("the parameter `p` at a.c:8".to_string(), "yes"),
            ]
        );
    }

    /// A definition the walk could not follow (an indirect caller) is no
    /// statement: it ranks after the statements.
    #[test]
    fn definitions_not_followed_rank_last() {
        let f = Fault {
            signal: "SIGSEGV".into(),
            causes: vec![Cause {
                variable: "`p` = 0x0".into(),
                made_by: vec![
                    MadeBy {
                        at: crate::origins::UNLISTED_CALL.into(),
                        on: "some".into(),
                        ..MadeBy::default()
                    },
                    MadeBy {
                        at: "the store at a.c:3".into(),
                        on: "some".into(),
                        node: Some(postmortem_core::NodeId::new(2)),
                        ..MadeBy::default()
                    },
                ],
                ..Cause::default()
            }],
            ..Fault::default()
        };
        let order: Vec<String> = suspects(&f, 10).into_iter().map(|s| s.at).collect();
        assert_eq!(order, ["the store at a.c:3", crate::origins::UNLISTED_CALL]);
    }

    /// The suspects of the kinds a field's, an array's and a callback's
    /// values bring: a call that freed the dangling pointer's field and a
    /// loop's bound that ran come first, then the store that chose the
    /// function which made the value (deeper than that store), then a
    /// branch that may have skipped a store of another value. A
    /// statement blamed twice is listed once, at its best place. A
    /// parameter whose value came only from the program's arguments is
    /// last.
    #[test]
    fn frees_bounds_choices_and_skips_rank_in_their_classes() {
        use crate::image::fault::Freed;
        let node = |k| Some(postmortem_core::NodeId::new(k));
        let bound = Skipped {
            store: "the store at a.c:8".into(),
            branch: "the branch at a.c:7".into(),
            ran: "yes".into(),
            branch_node: node(7),
        };
        let f = Fault {
            signal: "SIGSEGV".into(),
            causes: vec![Cause {
                variable: "`p` = 0x0".into(),
                made_by: vec![
                    MadeBy {
                        at: "the store at a.c:8".into(),
                        on: "some".into(),
                        node: node(8),
                        bound: Some(bound.clone()),
                        ..MadeBy::default()
                    },
                    MadeBy {
                        at: "the store at a.c:10".into(),
                        on: "some".into(),
                        node: node(10),
                        exact: true,
                        chosen_by: vec![MadeBy {
                            at: "the store at a.c:16".into(),
                            on: "some".into(),
                            node: node(16),
                            via: Some("the address of `init_none` in field 1 of `params`".into()),
                            ..MadeBy::default()
                        }],
                        ..MadeBy::default()
                    },
                    MadeBy {
                        at: "the parameter `argc` at a.c:20".into(),
                        on: "every".into(),
                        node: node(20),
                        via: Some("what the calls of `main` passed (argument 1)".into()),
                        from: vec![MadeBy {
                            at: crate::origins::PROGRAM_ARGS.into(),
                            on: "every".into(),
                            ..MadeBy::default()
                        }],
                        ..MadeBy::default()
                    },
                ],
                freed_by: vec![Freed {
                    call: "the call at a.c:9".into(),
                    callee: "`free`".into(),
                    ran: "maybe".into(),
                    node: node(9),
                    before: None,
                }],
                may_skip: vec![Skipped {
                    store: "the store at a.c:13".into(),
                    branch: "the branch at a.c:12".into(),
                    ran: "yes".into(),
                    branch_node: node(12),
                }],
                ..Cause::default()
            }],
            ..Fault::default()
        };
        let mut twice = f.clone();
        twice.causes.push(f.causes[0].clone());
        for f in [&f, &twice] {
            let order: Vec<String> = suspects(f, 10).into_iter().map(|s| s.at).collect();
            assert_eq!(
                order,
                [
                    "the branch at a.c:7",
                    "the call at a.c:9",
                    "the store at a.c:16",
                    "the store at a.c:10",
                    "the store at a.c:8",
                    "the branch at a.c:12",
                    crate::origins::PROGRAM_ARGS,
                    "the parameter `argc` at a.c:20",
                ]
            );
        }
    }

    /// A carrier (the call that passed the value, on every execution)
    /// ranks after the computed store it carried the value from, except
    /// for the bound of an index past the end, where it ranks first.
    #[test]
    fn a_bounds_carriers_rank_by_their_own_class() {
        let call = MadeBy {
            at: "the call at a.c:450".into(),
            on: "every".into(),
            node: Some(postmortem_core::NodeId::new(4)),
            via: Some("a load of field 31 of `EState`".into()),
            from: vec![MadeBy {
                at: "the store at a.c:230".into(),
                on: "some".into(),
                node: Some(postmortem_core::NodeId::new(3)),
                ..MadeBy::default()
            }],
            ..MadeBy::default()
        };
        let cause = Cause {
            variable: "`n` = 25508".into(),
            made_by: vec![call],
            ..Cause::default()
        };
        let order = |carriers_first| {
            let f = Fault {
                signal: "SIGSEGV".into(),
                causes: vec![Cause {
                    carriers_first,
                    ..cause.clone()
                }],
                ..Fault::default()
            };
            suspects(&f, 10)
                .into_iter()
                .map(|s| s.at)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            order(false),
            ["the store at a.c:230", "the call at a.c:450"]
        );
        assert_eq!(order(true), ["the call at a.c:450", "the store at a.c:230"]);
    }
}
