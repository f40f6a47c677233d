//! Election: never two leaders among live sessions, and a new leader soon
//! after the leader's process is killed.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use super::{Check, Facts, Timeline};
use crate::resource::{Ev, Record};

pub(super) struct Term<'a> {
    pub w: &'a str,
    /// The fencing token it led with (0 for the election, which has none).
    pub token: i64,
    pub start: Instant,
    pub end: Instant,
}

/// The terms of one kind of leadership, and what was left out of them.
pub(super) struct Terms<'a> {
    /// Sorted by start.
    pub terms: Vec<Term<'a>>,
    /// "on" lines left out: sent before a pause or a kill, recorded after it.
    pub excused: usize,
    /// An "on" with another token while a term of that worker was open:
    /// (when, worker, the open term's token, the new token). The open term
    /// ends there and a new one begins.
    pub retokened: Vec<(Instant, &'a str, i64, i64)>,
}

/// Leadership terms from "on"/"off" lines (`leadership` reads a record as
/// (worker, `Some(token)` for on, `None` for off)), each ended early where
/// its worker was paused, killed or crashed. A term that starts just after
/// its worker was resumed is left out: a paused leader learns of its expired
/// session only once it runs again; so is one reported while its worker was
/// paused or dead (the line was on the wire).
pub(super) fn terms_of<'a>(
    records: &'a [Record],
    timeline: &Timeline,
    facts: &Facts,
    leadership: impl Fn(&'a Ev) -> Option<(&'a str, Option<i64>)>,
) -> Terms<'a> {
    let mut open: HashMap<&str, (Instant, i64)> = HashMap::new();
    let mut terms = Vec::new();
    let mut excused = 0;
    let mut retokened = Vec::new();
    for r in records {
        let (w, on) = match &r.ev {
            Ev::Paused { w } | Ev::Killed { w } | Ev::Exited { w, .. } => (w.as_str(), None),
            ev => match leadership(ev) {
                Some(said) => said,
                None => continue,
            },
        };
        match (on, open.get(w).copied()) {
            (Some(token), None) => {
                // Sent before a pause or a kill, recorded after it: no term.
                if timeline.just_resumed(w, r.t) || timeline.out_of_play(w, r.t) {
                    excused += 1;
                } else {
                    open.insert(w, (r.t, token));
                }
            }
            (Some(token), Some((start, was))) => {
                if token != was {
                    retokened.push((r.t, w, was, token));
                    terms.push(Term {
                        w,
                        token: was,
                        start,
                        end: r.t,
                    });
                    open.insert(w, (r.t, token));
                }
            }
            (None, _) => {
                if let Some((start, token)) = open.remove(w) {
                    terms.push(Term {
                        w,
                        token,
                        start,
                        end: r.t,
                    });
                }
            }
        }
    }
    for (w, (start, token)) in open {
        terms.push(Term {
            w,
            token,
            start,
            end: facts.end,
        });
    }
    terms.sort_by_key(|t| t.start);
    Terms {
        terms,
        excused,
        retokened,
    }
}

/// Every term that starts while another is in force, and the most terms in
/// force at once.
pub(super) fn overlaps(terms: &[Term], facts: &Facts) -> (Vec<String>, usize) {
    let mut problems = Vec::new();
    let mut active: Vec<&Term> = Vec::new();
    let mut most = 0;
    for t in terms {
        active.retain(|a| a.end > t.start);
        for a in &active {
            problems.push(format!(
                "{} leads from {} while {} leads [{} – {}]",
                t.w,
                facts.at(t.start),
                a.w,
                facts.at(a.start),
                facts.at(a.end)
            ));
        }
        active.push(t);
        most = most.max(active.len());
    }
    (problems, most)
}

pub fn single_leader(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let terms = terms_of(records, timeline, facts, |ev| match ev {
        Ev::Leader { w, on } => Some((w.as_str(), on.then_some(0))),
        _ => None,
    });
    let (problems, most) = overlaps(&terms.terms, facts);
    let summary = format!(
        "terms={} most-at-once={most} terms-excused-after-pause={}",
        terms.terms.len(),
        terms.excused
    );
    Check::new("election-single-leader", problems, summary)
}

/// After the leader's process is killed, another started member leads
/// within `liveness_limit` — judged when no other fault began
/// meanwhile and some other member was started at the time.
pub fn failover(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let limit = super::liveness_limit(facts.session);
    let mut leading: HashSet<&str> = HashSet::new();
    let mut started: HashSet<&str> = HashSet::new();
    let mut paused: HashSet<&str> = HashSet::new();
    let mut kills: Vec<(usize, &str, Instant)> = Vec::new();
    for (at, r) in records.iter().enumerate() {
        match &r.ev {
            Ev::Leader { w, on } => {
                if *on {
                    leading.insert(w);
                } else {
                    leading.remove(w.as_str());
                }
            }
            Ev::Elect { w, started: true } => {
                started.insert(w);
            }
            Ev::Elect { w, started: false } => {
                started.remove(w.as_str());
            }
            Ev::Paused { w } => {
                paused.insert(w);
            }
            Ev::Resumed { w } => {
                paused.remove(w.as_str());
            }
            Ev::Killed { w } => {
                let others = started.iter().any(|o| *o != w && !paused.contains(o));
                let quiet =
                    !timeline.fault_starts_within(r.t, r.t + limit) && r.t + limit <= facts.end;
                if leading.remove(w.as_str()) && others && quiet {
                    kills.push((at, w, r.t));
                }
                started.remove(w.as_str());
            }
            _ => {}
        }
    }
    let mut problems = Vec::new();
    let mut worst = Duration::ZERO;
    for (at, w, killed) in &kills {
        let next = records[at + 1..].iter().find_map(|r| match &r.ev {
            Ev::Leader { w: other, on: true } if other != w => Some(r.t),
            _ => None,
        });
        let took = next.map_or(facts.end.saturating_duration_since(*killed), |t| {
            t - *killed
        });
        worst = worst.max(took);
        if took > limit {
            problems.push(format!(
                "leader {w} killed at {}: no new leader for {:.1}s",
                facts.at(*killed),
                took.as_secs_f64()
            ));
        }
    }
    let summary = format!(
        "leader-kills-judged={} slowest-failover={:.1}s limit={:.1}s",
        kills.len(),
        worst.as_secs_f64(),
        limit.as_secs_f64()
    );
    Check::new("election-failover", problems, summary)
}
