//! Mutual exclusion (exclusive lock, read/write lock) and lock liveness.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::{Check, Facts, Timeline};
use crate::resource::{Ev, Record, Sec};

pub(super) struct Section {
    pub sec: Sec,
    pub w: String,
    pub token: i64,
    pub begin: Instant,
    /// The END, or the moment its worker was cut off, whichever came first.
    pub end: Instant,
}

/// A `BEGIN` the resource refused (`STALE`).
pub(super) struct Refused {
    pub t: Instant,
    pub w: String,
    pub sec: Sec,
    pub token: i64,
    /// Its worker had just been resumed from a pause.
    pub resumed: bool,
}

/// The sections of `secs` whose `BEGIN` the resource accepted, sorted by
/// their begin, each cut short where its worker was told SUSPENDED/LOST,
/// paused or killed; and the refused begins.
pub(super) fn sections(
    records: &[Record],
    timeline: &Timeline,
    facts: &Facts,
    secs: &[Sec],
) -> (Vec<Section>, Vec<Refused>) {
    let mut open: HashMap<(String, i64), (Sec, Instant)> = HashMap::new();
    let mut sections = Vec::new();
    let mut stale = Vec::new();
    let close = |w: &str, token: i64, sec: Sec, begin: Instant, end: Instant| Section {
        sec,
        w: w.to_string(),
        token,
        begin,
        end: timeline.cut_after(w, begin).map_or(end, |cut| cut.min(end)),
    };
    for r in records {
        match &r.ev {
            Ev::Begin {
                sec,
                w,
                token,
                stale: refused,
            } if secs.contains(sec) => {
                if !*refused {
                    open.insert((w.clone(), *token), (*sec, r.t));
                } else {
                    stale.push(Refused {
                        t: r.t,
                        w: w.clone(),
                        sec: *sec,
                        token: *token,
                        resumed: timeline.just_resumed(w, r.t),
                    });
                }
            }
            Ev::End { sec, w, token } if secs.contains(sec) => {
                if let Some((sec, begin)) = open.remove(&(w.clone(), *token)) {
                    sections.push(close(w, *token, sec, begin, r.t));
                }
            }
            _ => {}
        }
    }
    for ((w, token), (sec, begin)) in open {
        sections.push(close(&w, token, sec, begin, facts.end));
    }
    sections.sort_by_key(|s| s.begin);
    (sections, stale)
}

/// No two sections overlap (on the read/write lock: no write section
/// overlaps any other section), judged on sections whose `BEGIN` the
/// resource accepted, each cut short where its worker was told
/// SUSPENDED/LOST, paused or killed. A `BEGIN` with a stale fencing token
/// is a violation, unless its worker had just been resumed from a pause.
pub fn exclusion(
    records: &[Record],
    timeline: &Timeline,
    facts: &Facts,
    name: &'static str,
    secs: &[Sec],
) -> Check {
    let mut problems = Vec::new();
    let mut excused_stale = 0;
    let (sections, stale) = sections(records, timeline, facts, secs);
    for r in stale {
        if r.resumed {
            excused_stale += 1;
        } else {
            problems.push(format!(
                "{} {}: {}BEGIN with stale fencing token {}",
                facts.at(r.t),
                r.w,
                r.sec.prefix(),
                r.token
            ));
        }
    }
    let mut active: Vec<&Section> = Vec::new();
    let mut overlaps = 0;
    for s in &sections {
        active.retain(|a| a.end > s.begin);
        for a in &active {
            if a.sec == Sec::Write || s.sec == Sec::Write || s.sec == Sec::Excl {
                overlaps += 1;
                problems.push(format!(
                    "{}BEGIN {} token {} at {} inside {}BEGIN {} token {} [{} – {}]",
                    s.sec.prefix(),
                    s.w,
                    s.token,
                    facts.at(s.begin),
                    a.sec.prefix(),
                    a.w,
                    a.token,
                    facts.at(a.begin),
                    facts.at(a.end)
                ));
            }
        }
        active.push(s);
    }
    let count = |sec: Sec| sections.iter().filter(|s| s.sec == sec).count();
    let summary = match secs {
        [Sec::Excl] => format!("sections={}", count(Sec::Excl)),
        _ => format!("reads={} writes={}", count(Sec::Read), count(Sec::Write)),
    } + &format!(
        " overlaps={overlaps} stale={} stale-excused-after-pause={excused_stale}",
        problems.len() - overlaps
    );
    Check::new(name, problems, summary)
}

/// While a task waits in a blocking `acquire()`, the exclusive lock (or the
/// semaphore: `sec`) is never idle (no `BEGIN`) for longer than
/// `liveness_limit`, not counting fault windows (the clock restarts when a
/// fault ends).
pub fn liveness(records: &[Record], facts: &Facts, sec: Sec, name: &'static str) -> Check {
    let limit = super::liveness_limit(facts.session);
    let mut waiters: HashMap<String, u32> = HashMap::new();
    let mut total = 0u32;
    let mut idle_since = facts.started;
    let mut faults = 0i32;
    let mut worst = Duration::ZERO;
    let mut stalls: Vec<(Instant, Duration)> = Vec::new();
    let mut waits = 0;
    let mut look = |t: Instant, total: u32, faults: i32, idle_since: Instant| {
        if total == 0 || faults > 0 {
            return;
        }
        let idle = t.saturating_duration_since(idle_since);
        worst = worst.max(idle);
        if idle > limit {
            match stalls.last_mut() {
                Some((since, gap)) if *since == idle_since => *gap = (*gap).max(idle),
                _ => stalls.push((idle_since, idle)),
            }
        }
    };
    for r in records {
        look(r.t, total, faults, idle_since);
        match &r.ev {
            Ev::Begin {
                sec: begun,
                stale: false,
                ..
            } if *begun == sec => idle_since = r.t,
            Ev::Waiting { sec: waits_for, w } if *waits_for == sec => {
                waits += 1;
                *waiters.entry(w.clone()).or_insert(0) += 1;
                total += 1;
                if total == 1 {
                    idle_since = idle_since.max(r.t);
                }
            }
            Ev::Waited { sec: waited, w } if *waited == sec => {
                if let Some(n) = waiters.get_mut(w).filter(|n| **n > 0) {
                    *n -= 1;
                    total -= 1;
                }
            }
            Ev::FaultStart { .. } => faults += 1,
            Ev::FaultEnd { .. } => {
                faults -= 1;
                idle_since = idle_since.max(r.t);
            }
            Ev::Killed { w } | Ev::Exited { w, .. } => {
                total -= waiters.remove(w).unwrap_or(0);
                idle_since = idle_since.max(r.t);
            }
            _ => {}
        }
    }
    look(facts.end, total, faults, idle_since);
    let problems = stalls
        .iter()
        .map(|(since, gap)| {
            format!(
                "no {}BEGIN for {:.1}s from {} while a task waited in acquire() and no fault was under way",
                sec.prefix(),
                gap.as_secs_f64(),
                facts.at(*since)
            )
        })
        .collect();
    let summary = format!(
        "blocking-waits={waits} longest-idle-with-waiter={:.1}s limit={:.1}s",
        worst.as_secs_f64(),
        limit.as_secs_f64()
    );
    Check::new(name, problems, summary)
}
