//! Queue: every acknowledged item delivered exactly once, and the documented
//! bound on overtaking in the calm (fault-free, no cancellation) phase.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use zkrecipes::CLAIM_WINDOW;

use super::{Check, Facts, Overtaken};
use crate::resource::{Ev, Record};

/// A take dropped this shortly before its worker was killed may still have
/// had its item's give-back under way: the item went with the process.
const GIVE_BACK_GRACE: Duration = Duration::from_millis(300);

/// How long before a detected disconnection a claim may have been sent and
/// applied without its reply coming back (detection takes ~1.2 s with a 3 s
/// session); before a pause, only what was on the wire.
const DETECT_MARGIN: Duration = Duration::from_secs(2);
const PAUSE_MARGIN: Duration = Duration::from_millis(200);

/// A take as the driver saw it: when it started and ended, how many items
/// it could claim at once, and how it ended when no item came back.
struct Take<'a> {
    w: &'a str,
    start: Instant,
    end: Instant,
    up_to: usize,
    how: Option<&'a str>,
}

impl Take<'_> {
    /// Failed with SESSION_EXPIRED: its outcome is unknown by the contract
    /// (a claim applied in the session's last moment lost its marker with it).
    fn expired(&self) -> bool {
        self.how == Some("error:SESSION_EXPIRED")
    }
    /// Dropped mid-way: the item goes back, unless the session ended first.
    fn cancelled(&self) -> bool {
        self.how == Some("cancelled")
    }
}

/// Every acknowledged `OFFER` is taken exactly once (by a worker, or by the
/// driver's drain at the end); no id twice; an id never acknowledged
/// (offer failed, or its producer was killed before reporting) at most once.
///
/// Acknowledged items missing at the end are excused only up to the number
/// of items that takes with an unknown outcome could have claimed (a batch:
/// its size), by the contract or by the harness: takes under way in a worker
/// when it was killed, or dropped just before (the give-back was under way);
/// takes that failed with SESSION_EXPIRED; and takes dropped while their
/// session was ending (from just before it was cut off, by a pause or a
/// disconnection, to the moment it was reported lost): a claim sent then
/// and applied has lost its marker with the session (documented as unknown).
/// The claim of a take that waited for an item goes out at its end, so
/// what counts is that the take was under way then, not when it began.
pub fn exactly_once(records: &[Record], facts: &Facts) -> Check {
    let mut acked: HashSet<&str> = HashSet::new();
    let mut failed: HashSet<&str> = HashSet::new();
    let mut got: HashMap<&str, u32> = HashMap::new();
    let mut killed: HashSet<&str> = HashSet::new();
    let mut open: HashMap<(&str, &str), (Instant, usize)> = HashMap::new();
    let mut takes: Vec<Take> = Vec::new();
    // Since when each worker is cut off (paused or disconnected), and how
    // far before that its claims may have been on the wire.
    let mut cut: HashMap<&str, (Instant, Duration)> = HashMap::new();
    // Per worker, the spans in which a session of it was ending: from its
    // cut (less the margin) to the moment it was reported lost.
    let mut ending: HashMap<&str, Vec<(Instant, Instant)>> = HashMap::new();
    let mut at_kill = 0usize;
    for r in records {
        match &r.ev {
            Ev::Offer { id, .. } => {
                acked.insert(id);
            }
            Ev::OfferFail { id } => {
                failed.insert(id);
            }
            Ev::Taking { w, task, up_to } => {
                open.insert((w, task), (r.t, *up_to));
            }
            Ev::Got { id, w, task, .. } => {
                *got.entry(id).or_insert(0) += 1;
                if let Some((start, up_to)) = open.remove(&(w.as_str(), task.as_str())) {
                    takes.push(Take {
                        w,
                        start,
                        end: r.t,
                        up_to,
                        how: None,
                    });
                }
            }
            Ev::Taken { w, task, how } => {
                if let Some((start, up_to)) = open.remove(&(w.as_str(), task.as_str())) {
                    takes.push(Take {
                        w,
                        start,
                        end: r.t,
                        up_to,
                        how: Some(how),
                    });
                }
            }
            Ev::Paused { w } => {
                cut.entry(w).or_insert((r.t, PAUSE_MARGIN));
            }
            // A pause shorter than the session cannot have expired it.
            Ev::Resumed { w }
                if cut
                    .get(w.as_str())
                    .is_some_and(|(at, _)| r.t.duration_since(*at) < facts.session) =>
            {
                cut.remove(w.as_str());
            }
            Ev::Client { w, state } if state == "SUSPENDED" => {
                cut.entry(w).or_insert((r.t, DETECT_MARGIN));
            }
            Ev::Client { w, state } if state == "RECONNECTED" || state == "CONNECTED" => {
                cut.remove(w.as_str());
            }
            Ev::Client { w, state } if state == "LOST" => {
                let (at, margin) = cut.remove(w.as_str()).unwrap_or((r.t, DETECT_MARGIN));
                let from = at.checked_sub(margin).unwrap_or(at);
                ending.entry(w).or_default().push((from, r.t));
            }
            Ev::Killed { w } | Ev::Exited { w, .. } => {
                killed.insert(w);
                at_kill += open
                    .iter()
                    .filter(|((o, _), _)| o == w)
                    .map(|(_, (_, up_to))| up_to)
                    .sum::<usize>();
                open.retain(|(o, _), _| o != w);
                at_kill += takes
                    .iter()
                    // Expired takes are all counted below.
                    .filter(|t| t.w == w && t.cancelled())
                    .filter(|t| r.t.duration_since(t.start) <= GIVE_BACK_GRACE)
                    .map(|t| t.up_to)
                    .sum::<usize>();
            }
            _ => {}
        }
    }
    let while_ending = |t: &Take| {
        ending.get(t.w).is_some_and(|spans| {
            spans
                .iter()
                .any(|(from, to)| t.start <= *to && t.end >= *from)
        })
    };
    let at_expiry: usize = takes
        .iter()
        .filter(|t| t.expired() || (t.cancelled() && while_ending(t)))
        .map(|t| t.up_to)
        .sum();
    let budget = at_kill + at_expiry;
    let drained = facts.drained.len();
    for id in &facts.drained {
        *got.entry(id).or_insert(0) += 1;
    }
    let mut problems = Vec::new();
    let mut twice: Vec<_> = got.iter().filter(|(_, n)| **n > 1).collect();
    twice.sort();
    for (id, n) in &twice {
        problems.push(format!("{id} delivered {n} times"));
    }
    let mut missing: Vec<&str> = acked
        .iter()
        .filter(|id| !got.contains_key(*id))
        .copied()
        .collect();
    missing.sort();
    if missing.len() > budget {
        problems.push(format!(
            "{} acknowledged item(s) never delivered (only {} takes had an unknown outcome): {}",
            missing.len(),
            budget,
            missing
                .iter()
                .take(10)
                .copied()
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    let producer = |id: &str| id.rsplit_once('-').map_or("", |(w, _)| w).to_string();
    let mut phantoms = 0;
    for id in got.keys() {
        if !acked.contains(id) && !failed.contains(id) && !killed.contains(producer(id).as_str()) {
            phantoms += 1;
            problems.push(format!("{id} delivered but never offered"));
        }
    }
    let unacked_got = got.keys().filter(|id| !acked.contains(*id)).count();
    let summary = format!(
        "acked={} delivered={} drained={drained} twice={} missing={} unknown-outcome-takes={budget}[at-kill={at_kill} at-expiry={at_expiry}] offer-failed={} unacked-delivered={unacked_got} phantoms={phantoms}",
        acked.len(),
        got.values().map(|n| *n as usize).sum::<usize>(),
        twice.len(),
        missing.len(),
        failed.len(),
    );
    Check::new("queue-exactly-once", problems, summary)
}

/// For items offered in the calm phase, how many later items (by sequence)
/// were delivered before each (by the wall-clock time the take returned in
/// the worker): at most `CLAIM_WINDOW × consumers`. The documented bound is
/// `(CLAIM_WINDOW - 1)` per consumer; the extra one per consumer task covers
/// the observation (a take that returned a moment after another's).
pub fn order(records: &[Record], facts: &Facts) -> Check {
    let calm = records
        .iter()
        .position(|r| matches!(r.ev, Ev::Phase("calm")));
    let mut seq: HashMap<&str, i64> = HashMap::new();
    let mut calm_items: HashSet<&str> = HashSet::new();
    let mut deliveries: Vec<(u64, usize, &str)> = Vec::new();
    for (at, r) in records.iter().enumerate() {
        match &r.ev {
            Ev::Offer { id, seq: s } => {
                seq.insert(id, *s);
                if calm.is_some_and(|c| at > c) {
                    calm_items.insert(id);
                }
            }
            Ev::Got { id, at_us, .. } => deliveries.push((*at_us, at, id)),
            _ => {}
        }
    }
    deliveries.sort();
    // Only items with a known sequence can overtake or be overtaken; items
    // offered before the calm phase have lower sequences than calm ones.
    let ordered: Vec<(&str, i64)> = deliveries
        .iter()
        .filter(|(_, _, id)| calm_items.contains(id))
        .filter_map(|(_, _, id)| seq.get(id).map(|s| (*id, *s)))
        .collect();
    let bound = CLAIM_WINDOW * facts.consumers;
    let mut worst = Overtaken::default();
    for (at, (id, s)) in ordered.iter().enumerate() {
        let overtaken = ordered[..at].iter().filter(|(_, other)| other > s).count();
        worst.see(overtaken, id);
    }
    let problems = worst.past(bound, "later items");
    let summary = format!(
        "calm-items-delivered={} consumers={} worst-overtaking={} bound={bound}",
        ordered.len(),
        facts.consumers,
        worst.by
    );
    Check::new("queue-order", problems, summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(start: Instant) -> Facts {
        Facts {
            session: Duration::from_secs(3),
            started: start,
            end: start + Duration::from_secs(30),
            drained: Vec::new(),
            orphans: Ok((0, Vec::new())),
            hung: Vec::new(),
            failed_exits: Vec::new(),
            consumers: 1,
            work: Ok(Default::default()),
            counters: Vec::new(),
            sem_leases: 1,
            dbarrier_members: 1,
            secure: false,
        }
    }

    fn at(start: Instant, ms: u64, ev: Ev) -> Record {
        Record {
            t: start + Duration::from_millis(ms),
            ev,
        }
    }

    fn offers(start: Instant, n: usize) -> Vec<Record> {
        (0..n)
            .map(|i| {
                at(
                    start,
                    0,
                    Ev::Offer {
                        id: format!("p-{i}"),
                        seq: i as i64,
                    },
                )
            })
            .collect()
    }

    fn taking(up_to: usize) -> Ev {
        Ev::Taking {
            w: "w1".into(),
            task: "c0".into(),
            up_to,
        }
    }

    fn taken(how: &str) -> Ev {
        Ev::Taken {
            w: "w1".into(),
            task: "c0".into(),
            how: how.into(),
        }
    }

    /// A batched claim cut by a session expiry may have taken its whole
    /// batch: five items missing after a batch of five failed that way.
    #[test]
    fn a_batch_that_failed_with_session_expired_excuses_its_size_only() {
        let start = Instant::now();
        for (up_to, pass) in [(5, true), (4, false)] {
            let mut records = offers(start, 5);
            records.push(at(start, 10, taking(up_to)));
            records.push(at(start, 20, taken("error:SESSION_EXPIRED")));
            let check = exactly_once(&records, &facts(start));
            assert_eq!(check.pass, pass, "up to {up_to}: {}", check.summary);
        }
    }

    /// A take that waited for its item began long before its worker was
    /// paused, and its claim went out just before: dropped once the session
    /// was lost, its outcome is unknown. One dropped before the cut is not.
    #[test]
    fn a_take_dropped_while_its_session_ended_is_excused_by_when_it_ran_not_began() {
        let start = Instant::now();
        for (dropped_at, pass) in [(5_100, true), (500, false)] {
            let mut records = offers(start, 1);
            records.push(at(start, 10, taking(1)));
            records.push(at(start, dropped_at, taken("cancelled")));
            records.push(at(start, 1_000, Ev::Paused { w: "w1".into() }));
            records.push(at(
                start,
                5_000,
                Ev::Client {
                    w: "w1".into(),
                    state: "LOST".into(),
                },
            ));
            records.sort_by_key(|r| r.t);
            let check = exactly_once(&records, &facts(start));
            assert_eq!(
                check.pass, pass,
                "dropped at {dropped_at} ms: {}",
                check.summary
            );
        }
    }
}
