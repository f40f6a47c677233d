//! Work queue: every offered job acknowledged exactly once, moved to `dead/`
//! after `max_deliveries`, or still queued; delivery counts that count every
//! delivery and never go backwards; a job whose holder died, expired or gave
//! it back delivered again soon; no claim outliving its session and no job
//! held forever; the documented order bound in the calm phase.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use super::{Check, Facts, Overtaken, Timeline};
use crate::ops::work_queue::MAX_DELIVERIES;
use crate::resource::{Ev, Record};
use crate::sweep::WorkState;

/// How long after its holder died or expired (or it was given back) a job
/// must be delivered again: the session timeout (when the server drops the
/// claim of a dead holder) and two seconds.
pub fn redelivery_limit(session: Duration) -> Duration {
    session + Duration::from_secs(2)
}

struct Delivered<'a> {
    t: Instant,
    w: &'a str,
    count: u32,
    at_us: u64,
}

struct Settled<'a> {
    t: Instant,
    w: &'a str,
    count: u32,
    how: &'a str,
}

#[derive(Default)]
struct Job<'a> {
    /// When the offer was acknowledged, and the entry's name (its place in line).
    offered: Option<(Instant, &'a str)>,
    offer_failed: bool,
    deliveries: Vec<Delivered<'a>>,
    settles: Vec<Settled<'a>>,
}

impl Job<'_> {
    fn acks(&self) -> usize {
        self.settles.iter().filter(|s| s.how == "acked").count()
    }

    /// An ack whose outcome the contract leaves open: cancelled, cut by a
    /// lost connection or session (it may have been applied), or under way
    /// when its worker was killed.
    fn unknown_ack(&self, killed: &HashSet<&str>) -> bool {
        self.settles.iter().enumerate().any(|(at, s)| match s.how {
            "ackcancelled" | "ackfail:SESSION_EXPIRED" | "ackfail:CONNECTION_LOSS" => true,
            "acking" => {
                killed.contains(s.w)
                    && !self.settles[at + 1..]
                        .iter()
                        .any(|later| later.w == s.w && later.count == s.count)
            }
            _ => false,
        })
    }

    fn poison(id: &str) -> bool {
        id.ends_with('p')
    }
}

fn jobs(records: &[Record]) -> BTreeMap<&str, Job<'_>> {
    let mut jobs: BTreeMap<&str, Job> = BTreeMap::new();
    for r in records {
        match &r.ev {
            Ev::WqOffer { id, name } => jobs.entry(id).or_default().offered = Some((r.t, name)),
            Ev::WqOfferFail { id } => jobs.entry(id).or_default().offer_failed = true,
            Ev::WqGot {
                id,
                w,
                count,
                at_us,
            } => jobs.entry(id).or_default().deliveries.push(Delivered {
                t: r.t,
                w,
                count: *count,
                at_us: *at_us,
            }),
            Ev::WqSettle { id, w, count, how } => {
                jobs.entry(id).or_default().settles.push(Settled {
                    t: r.t,
                    w,
                    count: *count,
                    how,
                })
            }
            _ => {}
        }
    }
    jobs
}

fn killed(records: &[Record]) -> HashSet<&str> {
    records
        .iter()
        .filter_map(|r| match &r.ev {
            Ev::Killed { w } | Ev::Exited { w, .. } => Some(w.as_str()),
            _ => None,
        })
        .collect()
}

pub(super) fn phase(records: &[Record], name: &str) -> Option<Instant> {
    records
        .iter()
        .find(|r| matches!(r.ev, Ev::Phase(p) if p == name))
        .map(|r| r.t)
}

/// The check `name` that `judge` makes of the final state, or the check that says why that
/// state is missing.
fn on_state(facts: &Facts, name: &'static str, judge: impl FnOnce(&WorkState) -> Check) -> Check {
    match &facts.work {
        Ok(state) => judge(state),
        Err(why) => Check::new(name, vec![why.clone()], "cannot read the work queue".into()),
    }
}

/// Every acknowledged offer ends as exactly one of: acknowledged once, in
/// `dead/`, still queued. A job that is none of them must have had an ack
/// of unknown outcome; a job nobody offered (nor a killed producer, nor a
/// failed offer) is a phantom.
pub fn settled_once(records: &[Record], facts: &Facts) -> Check {
    const NAME: &str = "wq-exactly-once";
    on_state(facts, NAME, |state| {
        let jobs = jobs(records);
        let killed = killed(records);
        let queued: HashSet<&str> = state.queued.iter().map(|(id, _, _)| id.as_str()).collect();
        let dead: HashSet<&str> = state.dead.iter().map(String::as_str).collect();
        let mut problems = Vec::new();
        let (mut offered, mut acked, mut unknown, mut phantoms) = (0, 0, 0, 0);
        for (id, job) in &jobs {
            let (in_queue, in_dead, acks) = (queued.contains(id), dead.contains(id), job.acks());
            if job.offered.is_none() {
                let producer = id.rsplit_once("-j").map_or("", |(w, _)| w);
                if !job.offer_failed && !killed.contains(producer) {
                    phantoms += 1;
                    problems.push(format!("{id} delivered or queued but never offered"));
                }
                continue;
            }
            offered += 1;
            acked += usize::from(acks > 0);
            if acks > 1 {
                problems.push(format!("{id} acknowledged {acks} times"));
            }
            if acks > 0 && (in_queue || in_dead) {
                let place = if in_queue { "still queued" } else { "in dead/" };
                problems.push(format!("{id} acknowledged and {place}"));
            }
            if in_queue && in_dead {
                problems.push(format!("{id} both queued and in dead/"));
            }
            if acks == 0 && !in_queue && !in_dead {
                if job.unknown_ack(&killed) {
                    unknown += 1;
                } else {
                    problems.push(format!(
                        "{id} lost: never acknowledged, not queued, not in dead/ ({} deliveries)",
                        job.deliveries.len()
                    ));
                }
            }
        }
        let failed = jobs.values().filter(|j| j.offer_failed).count();
        let summary = format!(
            "offered={offered} acked={acked} dead={} queued={} gone-with-unknown-ack={unknown} offer-failed={failed} phantoms={phantoms}",
            dead.len(),
            queued.len()
        );
        Check::new(NAME, problems, summary)
    })
}

/// `delivery_count` counts every delivery: no two deliveries of a job share
/// one, each is within 1..=max_deliveries, none follows an acknowledged
/// delivery (an ack that succeeded deleted a job nobody else held), and a
/// job still queued has a version (its deliveries) no lower than any seen.
pub fn delivery_counts(records: &[Record], facts: &Facts) -> Check {
    const NAME: &str = "wq-delivery-count";
    on_state(facts, NAME, |state| {
        let jobs = jobs(records);
        let versions: HashMap<&str, i32> = state
            .queued
            .iter()
            .map(|(id, _, version)| (id.as_str(), *version))
            .collect();
        let dead: HashSet<&str> = state.dead.iter().map(String::as_str).collect();
        let mut problems = Vec::new();
        let (mut deliveries, mut redelivered, mut highest, mut dead_full) = (0, 0, 0, 0);
        for (id, job) in &jobs {
            let mut counts: Vec<u32> = job.deliveries.iter().map(|d| d.count).collect();
            deliveries += counts.len();
            counts.sort_unstable();
            let before = counts.len();
            counts.dedup();
            if counts.len() != before {
                problems.push(format!("{id}: two deliveries with one delivery_count"));
            }
            let top = counts.last().copied().unwrap_or(0);
            highest = highest.max(top);
            redelivered += usize::from(top > 1);
            if counts.first().is_some_and(|c| *c == 0) || top > MAX_DELIVERIES {
                problems.push(format!(
                    "{id}: delivery_count {top} outside 1..={MAX_DELIVERIES}"
                ));
            }
            for ack in job.settles.iter().filter(|s| s.how == "acked") {
                if let Some(later) = job.deliveries.iter().find(|d| d.count > ack.count) {
                    problems.push(format!(
                        "{id}: acknowledged by {} at delivery {} though {} got delivery {} (a late ack succeeded)",
                        ack.w, ack.count, later.w, later.count
                    ));
                }
            }
            if let Some(version) = versions.get(id) {
                if i64::from(*version) < i64::from(top) {
                    problems.push(format!(
                        "{id}: still queued with version {version} after delivery {top} (went backwards)"
                    ));
                }
            }
            if dead.contains(id) && top == MAX_DELIVERIES {
                dead_full += 1;
            }
        }
        let summary = format!(
            "deliveries={deliveries} jobs-redelivered={redelivered} highest-count={highest} dead-after-{MAX_DELIVERIES}-seen={dead_full}/{} queued-versions-checked={}",
            dead.len(),
            versions.len()
        );
        Check::new(NAME, problems, summary)
    })
}

/// A job is free again when its holder gave it back (nack, drop, an ack
/// that found its claim lost), was killed, or lost its session: it must be
/// delivered again (or be moved to `dead/`) within `redelivery_limit` of
/// being freed, or of the last hand-out of a job ahead of it in line (a
/// freed job waits behind higher priorities, as it should). Judged when the
/// limit ends before the finish and no server was down meanwhile.
pub fn redelivery(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    const NAME: &str = "wq-redelivery";
    on_state(facts, NAME, |state| {
        let limit = redelivery_limit(facts.session);
        let finish = phase(records, "finish").unwrap_or(facts.end);
        let jobs = jobs(records);
        let present: HashSet<&str> = state
            .queued
            .iter()
            .map(|(id, _, _)| id.as_str())
            .chain(state.dead.iter().map(String::as_str))
            .collect();
        let dead: HashSet<&str> = state.dead.iter().map(String::as_str).collect();
        let killed = killed(records);
        // (job, delivery count) → when and how it was freed; the earliest wins.
        let mut freed: HashMap<(&str, u32), (Instant, &'static str)> = HashMap::new();
        for (id, job) in &jobs {
            for s in &job.settles {
                let how = match s.how {
                    "nack" | "nackfail:SESSION_EXPIRED" => "nack",
                    "drop" => "drop",
                    "ackfail:SESSION_EXPIRED" => "claim-lost",
                    _ => continue,
                };
                free(&mut freed, (id, s.count), s.t, how);
            }
        }
        // Held when its worker was killed or learnt its session was lost.
        let mut cut_start: HashMap<&str, Instant> = HashMap::new();
        for r in records {
            let (w, how, at) = match &r.ev {
                Ev::Paused { w } => {
                    cut_start.insert(w, r.t);
                    continue;
                }
                Ev::FaultStart {
                    kind: "blackhole",
                    target: Some(w),
                    ..
                } => {
                    cut_start.insert(w, r.t);
                    continue;
                }
                Ev::Killed { w } | Ev::Exited { w, .. } => (w.as_str(), "kill", r.t),
                Ev::Client { w, state } if state == "LOST" => {
                    let since = cut_start
                        .get(w.as_str())
                        .copied()
                        .filter(|c| r.t.duration_since(*c) <= facts.session * 3)
                        .unwrap_or_else(|| r.t.checked_sub(facts.session).unwrap_or(r.t));
                    (w.as_str(), "expiry", since)
                }
                _ => continue,
            };
            for (id, job) in &jobs {
                for d in job.deliveries.iter().filter(|d| d.w == w && d.t <= r.t) {
                    let settled = job
                        .settles
                        .iter()
                        .any(|s| s.w == w && s.count == d.count && s.t <= r.t && s.how != "acking");
                    if !settled {
                        free(&mut freed, (id, d.count), at, how);
                    }
                }
            }
        }
        // Every hand-out (driver time, place in line), for what was ahead of a freed job.
        let handouts: Vec<(Instant, &str)> = jobs
            .values()
            .filter_map(|job| Some((job, job.offered?.1)))
            .flat_map(|(job, name)| job.deliveries.iter().map(move |d| (d.t, name)))
            .collect();
        let mut problems = Vec::new();
        // Per way of being freed: how many judged, and the slowest redelivery.
        let mut judged: BTreeMap<&str, (usize, Duration)> = BTreeMap::new();
        let mut unjudged = 0;
        let mut keys: Vec<_> = freed.iter().collect();
        keys.sort_by_key(|(_, (at, _))| *at);
        for ((id, count), (at, how)) in keys {
            let job = &jobs[id];
            let Some((_, name)) = job.offered else {
                continue;
            };
            // Acknowledged by its holder after all (a kill after the ack went out),
            // or moved aside (when is not recorded).
            let acked = job
                .settles
                .iter()
                .any(|s| s.how == "acked" && s.count == *count);
            if acked || dead.contains(id) {
                continue;
            }
            let again = job
                .deliveries
                .iter()
                .filter(|d| d.count > *count)
                .map(|d| d.t)
                .min();
            // A freed job goes back to its place in line: jobs ahead of it
            // (higher priority, or older) are served first. The clock starts
            // when it was freed, or at the last hand-out of a job ahead of it.
            let until = again.unwrap_or(finish);
            let start = handouts
                .iter()
                .filter(|(t, other)| *other < name && *t >= *at && *t <= until)
                .map(|(t, _)| *t)
                .max()
                .unwrap_or(*at)
                .max(*at);
            let deadline = start + limit;
            if (again.is_none() && deadline > finish)
                || timeline.fault_overlapping_kind("server_kill", *at, deadline)
            {
                unjudged += 1;
                continue;
            }
            let kind = judged.entry(how).or_insert((0, Duration::ZERO));
            kind.0 += 1;
            match again {
                Some(t) if t <= deadline => kind.1 = kind.1.max(t.saturating_duration_since(start)),
                // An ack of unknown outcome (cut off, or in flight when its worker
                // was killed) may have deleted it.
                None if !present.contains(id) && job.unknown_ack(&killed) => {}
                Some(t) => problems.push(format!(
                    "{id}: freed by {how} at {} (delivery {count}), first in line from {}, delivered again only {:.1}s later (limit {:.1}s)",
                    facts.at(*at),
                    facts.at(start),
                    t.saturating_duration_since(start).as_secs_f64(),
                    limit.as_secs_f64()
                )),
                None => problems.push(format!(
                    "{id}: freed by {how} at {} (delivery {count}), first in line from {}, never delivered again{}",
                    facts.at(*at),
                    facts.at(start),
                    if present.contains(id) { " though still queued" } else { "" }
                )),
            }
        }
        let judged_line: Vec<String> = judged
            .iter()
            .map(|(k, (n, worst))| format!("{k}:{n}/{:.2}s", worst.as_secs_f64()))
            .collect();
        let summary = format!(
            "judged/slowest=[{}] unjudged-near-finish-or-server-kill={unjudged} limit={:.1}s",
            judged_line.join(" "),
            limit.as_secs_f64()
        );
        Check::new(NAME, problems, summary)
    })
}

/// Records that a delivery was freed at `at`, keeping the earliest moment.
fn free<'a>(
    freed: &mut HashMap<(&'a str, u32), (Instant, &'static str)>,
    key: (&'a str, u32),
    at: Instant,
    how: &'static str,
) {
    let slot = freed.entry(key).or_insert((at, how));
    if at < slot.0 {
        *slot = (at, how);
    }
}

/// No claim outlives its session (none is left once every worker is gone),
/// and no job is held forever. A job offered before the calm phase and still
/// queued at the end is held if the queue passed it over, handing out more
/// jobs later in line than the order bound allows after the calm began, or if
/// the consumers went idle (no delivery in the calm's last two seconds). A job
/// behind a steady stream of earlier ones (higher priority, offered all
/// through the calm on a loaded machine) is starved by its priority, as the
/// README says it may be: counted, not failed.
pub fn claims(records: &[Record], facts: &Facts) -> Check {
    const NAME: &str = "wq-claims";
    on_state(facts, NAME, |state| {
        let jobs = jobs(records);
        let calm = phase(records, "calm").unwrap_or(facts.end);
        let finish = phase(records, "finish").unwrap_or(facts.end);
        let (_, _, bound) = order_bound(records);
        // The first delivery of each job in the calm phase, with the job's place in line.
        let firsts_in_calm: Vec<(Instant, &str)> = jobs
            .values()
            .filter_map(|job| Some((job.deliveries.first()?.t, job.offered?.1)))
            .filter(|(t, _)| *t >= calm)
            .collect();
        let last_delivery = jobs
            .values()
            .flat_map(|j| j.deliveries.iter().map(|d| d.t))
            .max();
        let idle_at_end = last_delivery.is_none_or(|t| t + Duration::from_secs(2) < finish);
        let mut problems: Vec<String> = state
            .claims
            .iter()
            .map(|c| format!("claim taken/{c} left after every session ended"))
            .collect();
        let (mut held, mut starved) = (0, 0);
        for (id, name, version) in &state.queued {
            let offered = jobs.get(id.as_str()).and_then(|j| j.offered);
            if offered.is_none_or(|(t, _)| t >= calm) {
                continue;
            }
            let passed_over = firsts_in_calm
                .iter()
                .filter(|(_, other)| *other > name.as_str())
                .count();
            if passed_over <= bound && !idle_at_end {
                starved += 1;
                continue;
            }
            held += 1;
            problems.push(format!(
                "{id} ({name}) offered before the calm phase, still queued at the end after {version} deliveries: \
                 held ({passed_over} jobs later in line handed out in the calm, bound {bound}; consumers idle at the end: {idle_at_end})"
            ));
        }
        let summary = format!(
            "claims-left={} queued-at-end={} offered-before-calm-and-held={held} starved-behind-earlier-jobs={starved}",
            state.claims.len(),
            state.queued.len()
        );
        Check::new(NAME, problems, summary)
    })
}

/// The documented order bound (README, "Work queue"): 4 × the sum of the
/// prefetch of every consuming object. Returns (objects, prefetch sum, bound).
fn order_bound(records: &[Record]) -> (usize, usize, usize) {
    let mut objects: HashMap<(&str, &str), usize> = HashMap::new();
    for r in records {
        if let Ev::WqObject {
            w,
            object,
            prefetch,
        } = &r.ev
        {
            objects.insert((w, object), *prefetch);
        }
    }
    let prefetch: usize = objects.values().sum();
    (objects.len(), prefetch, 4 * prefetch)
}

/// For jobs offered in the calm phase: how many jobs later in line (by
/// priority, then FIFO: the entry names sort so) were handed out before
/// each, after it was offered. The documented bound (README, "Work queue")
/// is 4 × C × P; with objects of different prefetch, 4 × the sum of the
/// prefetch of the objects consuming in the calm phase.
pub fn order(records: &[Record], facts: &Facts) -> Check {
    const NAME: &str = "wq-order";
    let jobs = jobs(records);
    let calm = phase(records, "calm").unwrap_or(facts.end);
    let (objects, prefetch, bound) = order_bound(records);
    // Every delivery of a non-poison job, in the order it was handed out.
    let mut handed: Vec<(u64, Instant, &str, &str)> = jobs
        .iter()
        .filter(|(id, _)| !Job::poison(id))
        .filter_map(|(id, job)| Some((id, job, job.offered?.1)))
        .flat_map(|(id, job, name)| {
            job.deliveries
                .iter()
                .map(move |d| (d.at_us, d.t, *id, name))
        })
        .collect();
    handed.sort();
    let mut worst = Overtaken::default();
    let mut judged = 0;
    let mut first_seen: HashSet<&str> = HashSet::new();
    for (at, (_, _, id, name)) in handed.iter().enumerate() {
        if !first_seen.insert(id) {
            continue;
        }
        let Some((offered, _)) = jobs[id].offered.filter(|(t, _)| *t > calm) else {
            continue;
        };
        judged += 1;
        let overtaken = handed[..at]
            .iter()
            .filter(|(_, t, other, other_name)| other != id && *t > offered && other_name > name)
            .count();
        worst.see(overtaken, id);
    }
    let problems = worst.past(bound, "jobs later in line");
    let summary = format!(
        "calm-jobs-judged={judged} objects={objects} prefetch-sum={prefetch} worst-overtaking={} bound={bound}",
        worst.by
    );
    Check::new(NAME, problems, summary)
}
