//! Election: never two leaders among live sessions, and a new leader soon
//! after the leader's process is killed.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use super::{Check, Facts, Timeline};
use crate::resource::{Ev, Record};

struct Term<'a> {
    w: &'a str,
    start: Instant,
    end: Instant,
}

/// Leadership terms from `LEADER on/off`, each ended early where its worker
/// was paused, killed or crashed. A term that starts just after its worker
/// was resumed is left out: a paused leader learns of its expired session
/// only once it runs again; so is one reported while its worker was paused
/// or dead (the line was on the wire).
fn terms<'a>(records: &'a [Record], timeline: &Timeline, facts: &Facts) -> (Vec<Term<'a>>, usize) {
    let mut open: HashMap<&str, Instant> = HashMap::new();
    let mut terms = Vec::new();
    let mut excused = 0;
    for r in records {
        match &r.ev {
            Ev::Leader { w, on: true } if !open.contains_key(w.as_str()) => {
                // Sent before a pause or a kill, recorded after it: no term.
                if timeline.just_resumed(w, r.t) || timeline.out_of_play(w, r.t) {
                    excused += 1;
                } else {
                    open.insert(w, r.t);
                }
            }
            Ev::Leader { w, on: false }
            | Ev::Paused { w }
            | Ev::Killed { w }
            | Ev::Exited { w, .. } => {
                if let Some(start) = open.remove(w.as_str()) {
                    terms.push(Term { w, start, end: r.t });
                }
            }
            _ => {}
        }
    }
    for (w, start) in open {
        terms.push(Term {
            w,
            start,
            end: facts.end,
        });
    }
    terms.sort_by_key(|t| t.start);
    (terms, excused)
}

pub fn single_leader(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let (terms, excused) = terms(records, timeline, facts);
    let mut problems = Vec::new();
    let mut active: Vec<&Term> = Vec::new();
    let mut most = 0;
    for t in &terms {
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
    let summary = format!(
        "terms={} most-at-once={most} terms-excused-after-pause={excused}",
        terms.len()
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
