//! Service discovery, from what the workers' caches told (`DISC <w> add|del <id>`) and what
//! each registrant said of its own instance (`up`, `down`, `session`, `back`):
//!
//! - `disc-stale`: a killed worker's instance leaves every other cache that held it within the
//!   session timeout and 2 s of the kill;
//! - `disc-missed`: an instance registered (`up`) and live for the session timeout and 2 s is in
//!   every other cache by then;
//! - `disc-back`: a registrant's instance is made again within 2 s of the new session that
//!   follows an expiry.
//!
//! Each is judged only where nothing else explains a delay: no fault on either worker (or the
//! ensemble) in the window, neither cut off (paused, killed, told SUSPENDED) in it, and the run
//! not over before its end.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use super::{Check, Facts, Timeline};
use crate::resource::{Ev, Record};

/// The bound past the session timeout, for both checks.
const GRACE: Duration = Duration::from_secs(2);

struct Disc<'a> {
    t: Instant,
    w: &'a str,
    what: &'a str,
    id: Option<&'a str>,
}

fn discs(records: &[Record]) -> Vec<Disc<'_>> {
    records
        .iter()
        .filter_map(|r| match &r.ev {
            Ev::Disc { w, what, id } => Some(Disc {
                t: r.t,
                w,
                what,
                id: id.as_deref(),
            }),
            _ => None,
        })
        .collect()
}

/// Why `[from, to]` is not judged for `w`, if something explains a delay there.
fn excused(timeline: &Timeline, facts: &Facts, w: &str, from: Instant, to: Instant) -> bool {
    to > facts.end
        || timeline.fault_overlapping(Some(w), from, to).is_some()
        || timeline.cut_after(w, from).is_some_and(|cut| cut <= to)
}

pub fn stale(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let discs = discs(records);
    let kills: Vec<(Instant, &str)> = records
        .iter()
        .filter_map(|r| match &r.ev {
            Ev::Killed { w } => Some((r.t, w.as_str())),
            _ => None,
        })
        .collect();
    let bound = facts.session + GRACE;
    let mut problems = Vec::new();
    let (mut judged, mut excused_count, mut slowest) = (0, 0, Duration::ZERO);
    for (killed_at, victim) in kills {
        // Which caches held the victim's instance at the kill.
        let mut holding: HashMap<&str, bool> = HashMap::new();
        for d in discs
            .iter()
            .filter(|d| d.t <= killed_at && d.id == Some(victim))
        {
            match d.what {
                "add" => holding.insert(d.w, true),
                "del" => holding.insert(d.w, false),
                _ => None,
            };
        }
        let deadline = killed_at + bound;
        for observer in holding.iter().filter(|(_, held)| **held).map(|(o, _)| *o) {
            if observer == victim {
                continue;
            }
            let removed = discs.iter().find(|d| {
                d.t > killed_at && d.w == observer && d.id == Some(victim) && d.what == "del"
            });
            if excused(timeline, facts, observer, killed_at, deadline) {
                excused_count += 1;
                continue;
            }
            judged += 1;
            match removed {
                Some(d) if d.t <= deadline => slowest = slowest.max(d.t - killed_at),
                Some(d) => problems.push(format!(
                    "{observer}'s cache held killed {victim}'s instance until {} ({:.3}s after the kill at {}, bound {bound:?})",
                    facts.at(d.t),
                    (d.t - killed_at).as_secs_f64(),
                    facts.at(killed_at)
                )),
                None => problems.push(format!(
                    "{observer}'s cache never let go of killed {victim}'s instance (killed at {})",
                    facts.at(killed_at)
                )),
            }
        }
    }
    let summary = format!(
        "judged={judged} excused={excused_count} slowest={:.3}s bound={:.1}s",
        slowest.as_secs_f64(),
        bound.as_secs_f64()
    );
    Check::new("disc-stale", problems, summary)
}

/// Whether `o`'s cache holds `w`'s instance at `t`, by the last add or del it told before.
fn held_at(discs: &[Disc], o: &str, w: &str, t: Instant) -> bool {
    discs
        .iter()
        .rfind(|d| d.t <= t && d.w == o && d.id == Some(w))
        .is_some_and(|d| d.what == "add")
}

pub fn missed(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let discs = discs(records);
    let spawned: HashMap<&str, Instant> = records
        .iter()
        .filter_map(|r| match &r.ev {
            Ev::Spawned { w } => Some((w.as_str(), r.t)),
            _ => None,
        })
        .collect();
    let observers: BTreeSet<&str> = discs
        .iter()
        .filter(|d| d.id.is_some())
        .map(|d| d.w)
        .collect();
    let bound = facts.session + GRACE;
    let mut problems = Vec::new();
    let (mut judged, mut excused_count, mut slowest) = (0, 0, Duration::ZERO);
    for up in discs.iter().filter(|d| matches!(d.what, "up" | "back")) {
        let deadline = up.t + bound;
        // Not live for the whole bound: unregistered, or its registrant gone or cut off.
        let withdrawn = discs
            .iter()
            .any(|d| d.w == up.w && d.what == "down" && d.t > up.t && d.t <= deadline);
        if withdrawn || excused(timeline, facts, up.w, up.t, deadline) {
            continue;
        }
        for &o in observers.iter().filter(|o| **o != up.w) {
            if spawned.get(o).is_none_or(|at| *at > up.t) {
                continue;
            }
            if excused(timeline, facts, o, up.t, deadline) {
                excused_count += 1;
                continue;
            }
            judged += 1;
            if held_at(&discs, o, up.w, up.t) {
                continue;
            }
            let added = discs
                .iter()
                .find(|d| d.t > up.t && d.w == o && d.id == Some(up.w) && d.what == "add");
            match added {
                Some(d) if d.t <= deadline => slowest = slowest.max(d.t - up.t),
                _ => problems.push(format!(
                    "{o}'s cache missed {}'s instance, registered at {} (bound {bound:?}){}",
                    up.w,
                    facts.at(up.t),
                    added.map_or(String::new(), |d| format!(
                        ", added only at {}",
                        facts.at(d.t)
                    ))
                )),
            }
        }
    }
    let summary = format!(
        "judged={judged} excused={excused_count} slowest-add={:.3}s bound={:.1}s",
        slowest.as_secs_f64(),
        bound.as_secs_f64()
    );
    Check::new("disc-missed", problems, summary)
}

pub fn back(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let discs = discs(records);
    let mut problems = Vec::new();
    let (mut judged, mut excused_count, mut slowest) = (0, 0, Duration::ZERO);
    let registrants: BTreeSet<&str> = discs.iter().map(|d| d.w).collect();
    for w in registrants {
        let own: Vec<&Disc> = discs
            .iter()
            .filter(|d| d.w == w && d.id.is_none())
            .collect();
        for (at, session) in own.iter().enumerate().filter(|(_, d)| d.what == "session") {
            let deadline = session.t + GRACE;
            // The instance made again, or its registration changed by the worker itself.
            let answered = own[at + 1..]
                .iter()
                .find(|d| matches!(d.what, "back" | "down" | "up"));
            if excused(timeline, facts, w, session.t, deadline) {
                excused_count += 1;
                continue;
            }
            judged += 1;
            match answered {
                Some(d) if d.t <= deadline => slowest = slowest.max(d.t - session.t),
                Some(d) => problems.push(format!(
                    "{w}'s instance came back {:.3}s after its new session at {} (bound {GRACE:?})",
                    (d.t - session.t).as_secs_f64(),
                    facts.at(session.t)
                )),
                None => problems.push(format!(
                    "{w}'s instance never came back after its new session at {}",
                    facts.at(session.t)
                )),
            }
        }
    }
    let summary = format!(
        "judged={judged} excused={excused_count} slowest={:.3}s",
        slowest.as_secs_f64()
    );
    Check::new("disc-back", problems, summary)
}
