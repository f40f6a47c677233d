//! Barriers: a barrier's waiters are released once it is removed (soon) and
//! never while it is up; a double-barrier member enters only once
//! `member_count` members could have had their nodes at the same moment.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use super::work_queue::{phase, redelivery_limit};
use super::{Check, Facts, Timeline};
use crate::resource::{Ev, Record};

/// How far before the reference moment a fault of the waiter's still excuses
/// a late release (a reconnection under way when the barrier came down).
const BEFORE: Duration = Duration::from_secs(1);

/// A waiter whose own deadline falls this shortly after the removal may time
/// out first: not judged.
const DEADLINE_MARGIN: Duration = Duration::from_secs(1);

struct Wait<'a> {
    w: &'a str,
    path: &'a str,
    start: Instant,
    timeout: Duration,
    /// When and how it ended, as its worker reported.
    end: Option<(Instant, &'a str)>,
}

#[derive(Default)]
struct Removal<'a> {
    by: &'a str,
    start: Option<Instant>,
    done: Option<Instant>,
}

/// Per worker, when its client said SUSPENDED or LOST (disconnected).
fn disconnections(records: &[Record]) -> HashMap<&str, Vec<Instant>> {
    let mut cut: HashMap<&str, Vec<Instant>> = HashMap::new();
    for r in records {
        if let Ev::Client { w, state } = &r.ev {
            if state == "SUSPENDED" || state == "LOST" {
                cut.entry(w).or_default().push(r.t);
            }
        }
    }
    cut
}

/// Every waiter of a barrier reports its release within session + 2 s of
/// the moment the barrier's removal completed (or of the start of its wait,
/// if it began afterwards), unless its own deadline came first, or it was
/// paused, killed, disconnected or hit by a fault (a server kill too) from
/// just before that moment until the bound. Judged only when the bound ends
/// before the finish. A waiter released before the removal began was
/// released while the barrier was up: always a violation.
pub fn release(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    const NAME: &str = "barrier-release";
    let limit = redelivery_limit(facts.session);
    let finish = phase(records, "finish").unwrap_or(facts.end);
    let mut removals: HashMap<&str, Removal<'_>> = HashMap::new();
    let mut waits: Vec<Wait> = Vec::new();
    let mut open: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for r in records {
        match &r.ev {
            Ev::BarrierRemove { w, path, how } => {
                let removal = removals.entry(path).or_default();
                removal.by = w;
                match how.as_str() {
                    "start" => {
                        removal.start.get_or_insert(r.t);
                    }
                    "ok" => {
                        removal.done.get_or_insert(r.t);
                    }
                    _ => {}
                }
            }
            Ev::BarrierWait {
                w,
                waiter,
                path,
                timeout_ms,
            } => {
                open.insert((w, waiter, path), waits.len());
                waits.push(Wait {
                    w,
                    path,
                    start: r.t,
                    timeout: Duration::from_millis(*timeout_ms),
                    end: None,
                });
            }
            Ev::BarrierWaited {
                w,
                waiter,
                path,
                how,
            } => {
                if let Some(at) = open.remove(&(w.as_str(), waiter.as_str(), path.as_str())) {
                    waits[at].end = Some((r.t, how));
                }
            }
            _ => {}
        }
    }
    let disconnected = disconnections(records);
    let mut problems = Vec::new();
    let (mut judged, mut before_removal, mut unjudged) = (0, 0, 0);
    let mut excused: BTreeMap<&str, usize> = BTreeMap::new();
    let mut slowest = Duration::ZERO;
    for wait in &waits {
        let removal = removals.get(wait.path);
        if let Some((t, "released")) = wait.end {
            if removal
                .and_then(|r| r.start)
                .is_none_or(|started| t < started)
            {
                problems.push(format!(
                    "{} waited on {} from {} and was released at {} while it was up (removal {})",
                    wait.w,
                    wait.path,
                    facts.at(wait.start),
                    facts.at(t),
                    removal
                        .and_then(|r| r.start)
                        .map_or("never begun".to_string(), |s| format!(
                            "begun at {}",
                            facts.at(s)
                        ))
                ));
                continue;
            }
        }
        let Some(done) = removal.and_then(|r| r.done) else {
            continue;
        };
        if wait.end.is_some_and(|(t, _)| t <= done) {
            // Ended while the removal was under way.
            before_removal += 1;
            continue;
        }
        let from = wait.start.max(done);
        let until = from + limit;
        if wait.start + wait.timeout < from + DEADLINE_MARGIN {
            unjudged += 1;
            continue;
        }
        if let Some((t, "released")) = wait.end {
            if t <= until {
                judged += 1;
                slowest = slowest.max(t - from);
                continue;
            }
        }
        if until > finish {
            unjudged += 1;
            continue;
        }
        let since = from.checked_sub(BEFORE).unwrap_or(from);
        let excuse = timeline
            .fault_overlapping(Some(wait.w), since, until)
            .or_else(|| {
                timeline
                    .cut_after(wait.w, since)
                    .filter(|cut| *cut <= until)
                    .map(|_| "cut")
            })
            .or_else(|| {
                disconnected
                    .get(wait.w)
                    .is_some_and(|d| d.iter().any(|t| *t >= since && *t <= until))
                    .then_some("disconnected")
            });
        if let Some(kind) = excuse {
            *excused.entry(kind).or_insert(0) += 1;
            continue;
        }
        judged += 1;
        let outcome = match wait.end {
            Some((t, how)) => format!("{how} at {}", facts.at(t)),
            None => "no answer".to_string(),
        };
        problems.push(format!(
            "{} waited on {} from {} (timeout {:.1}s); removed by {} at {}; not released within {:.1}s: {outcome}",
            wait.w,
            wait.path,
            facts.at(wait.start),
            wait.timeout.as_secs_f64(),
            removal.map_or("?", |r| r.by),
            facts.at(done),
            limit.as_secs_f64()
        ));
    }
    let removed = removals.values().filter(|r| r.done.is_some()).count();
    let excused: Vec<String> = excused.iter().map(|(k, n)| format!("{k}:{n}")).collect();
    let summary = format!(
        "removals={removed} waits={} judged={judged} slowest-release={:.2}s limit={:.1}s ended-during-removal={before_removal} excused=[{}] unjudged-deadline-or-finish={unjudged}",
        waits.len(),
        slowest.as_secs_f64(),
        limit.as_secs_f64(),
        excused.join(" ")
    );
    Check::new(NAME, problems, summary)
}

#[derive(Default)]
struct Member {
    /// The first `ENTERING`: its node cannot exist before.
    entering: Option<Instant>,
    entered: Option<Instant>,
    /// The last moment its node may have existed (see `quorum`).
    end: Option<Instant>,
}

/// No member of a round reports `ENTERED` unless, at some moment before,
/// `member_count` members of that round could have had their nodes at once.
/// A member's node can exist only from its `ENTERING` on, and until: the
/// report that its enter timed out or failed, or that its leave ended (both
/// withdraw the node, confirmed, before they return); the end of the run for
/// a cancelled enter or leave (withdrawn in the background); its session's
/// expiry (session + 2 s) after its worker was killed, or the end of the run
/// if a server was killed meanwhile (an expiry can be put off by a leader
/// election). Paused members keep their nodes until they report.
pub fn quorum(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    const NAME: &str = "dbarrier-quorum";
    let need = facts.dbarrier_members as usize;
    let expiry = facts.session + Duration::from_secs(2);
    let mut rounds: BTreeMap<u64, BTreeMap<&str, Member>> = BTreeMap::new();
    let mut killed: HashMap<&str, Instant> = HashMap::new();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut handed: std::collections::HashSet<(&str, u64)> = Default::default();
    let mut problems = Vec::new();
    for r in records {
        match &r.ev {
            Ev::DRound { w, round } => {
                handed.insert((w, *round));
            }
            Ev::DBar { w, round, what } => {
                if !handed.contains(&(w.as_str(), *round)) {
                    problems.push(format!(
                        "{} {w} reports {what} in round {round}, which it was not handed",
                        facts.at(r.t)
                    ));
                }
                let m = rounds.entry(*round).or_default().entry(w).or_default();
                let kind = what.split(':').next().unwrap_or(what);
                *outcomes.entry(kind.to_string()).or_insert(0) += 1;
                match kind {
                    "ENTERING" => {
                        m.entering.get_or_insert(r.t);
                    }
                    "ENTERED" => m.entered = Some(r.t),
                    "ENTER_TIMEOUT" | "ENTER_ERROR" | "LEFT" | "LEAVE_TIMEOUT" | "LEAVE_ERROR" => {
                        m.end = Some(r.t)
                    }
                    "ENTER_CANCELLED" | "LEAVE_CANCELLED" => m.end = Some(facts.end),
                    _ => {}
                }
            }
            Ev::Killed { w } | Ev::Exited { w, .. } => {
                killed.insert(w, r.t);
            }
            _ => {}
        }
    }
    let end_of = |w: &str, m: &Member| -> Instant {
        if let Some(end) = m.end {
            return end;
        }
        match killed.get(w) {
            Some(at) if !timeline.fault_overlapping_kind("server_kill", *at, *at + expiry) => {
                (*at + expiry).min(facts.end)
            }
            _ => facts.end,
        }
    };
    let (mut opened, mut entered) = (0, 0);
    for (round, members) in &rounds {
        let spans: Vec<(&str, Instant, Instant)> = members
            .iter()
            .filter_map(|(w, m)| Some((*w, m.entering?, end_of(w, m))))
            .collect();
        let mut first = true;
        for (w, m) in members {
            let Some(at) = m.entered else {
                continue;
            };
            entered += 1;
            if first {
                opened += 1;
                first = false;
            }
            // The most nodes that can have existed at once up to `at`: the
            // count peaks at some member's ENTERING.
            let most = spans
                .iter()
                .filter(|(_, from, _)| *from <= at)
                .map(|(_, from, _)| {
                    spans
                        .iter()
                        .filter(|(_, f, e)| f <= from && e >= from)
                        .count()
                })
                .max()
                .unwrap_or(0);
            if most < need {
                let seen: Vec<String> = spans
                    .iter()
                    .map(|(w, from, end)| format!("{w} [{} – {}]", facts.at(*from), facts.at(*end)))
                    .collect();
                problems.push(format!(
                    "{w} entered round {round} at {} though at most {most} of {need} members could have had nodes by then: {}",
                    facts.at(at),
                    seen.join(", ")
                ));
            }
        }
    }
    let outcomes: Vec<String> = outcomes.iter().map(|(k, n)| format!("{k}={n}")).collect();
    let summary =
        format!(
        "members={need} rounds-handed={} rounds-joined={} opened={opened} entered={entered} [{}]",
        handed.iter().map(|(_, k)| k).collect::<std::collections::HashSet<_>>().len(),
        rounds.len(),
        outcomes.join(" ")
    );
    Check::new(NAME, problems, summary)
}
