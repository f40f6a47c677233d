//! Semaphore: never more than `max_leases` leases in force at once among live
//! holders. Liveness (a waiter in `acquire()` while the semaphore stays idle)
//! is `locks::liveness` on the semaphore's sections.

use super::locks::{sections, Section};
use super::{Check, Facts, Timeline};
use crate::resource::{Record, Sec};

/// Every lease section (`SBEGIN` … `SEND`/`SABORT`) whose `SBEGIN` the
/// resource accepted, cut short where its worker was told SUSPENDED/LOST,
/// paused or killed, as the lock's exclusion check cuts them: at no moment
/// more than `max_leases` are open. A lease token that two workers wrote
/// under (`STALE` from the resource) is a violation: one lease node has one
/// holder.
pub fn max_leases(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let max = facts.sem_leases as usize;
    let (sections, stale) = sections(records, timeline, facts, &[Sec::Sem]);
    let mut problems: Vec<String> = stale
        .iter()
        .map(|r| {
            format!(
                "{} {}: SBEGIN with lease token {}, which another worker wrote under",
                facts.at(r.t),
                r.w,
                r.token
            )
        })
        .collect();
    let mut active: Vec<&Section> = Vec::new();
    let (mut most, mut over) = (0, 0);
    for s in &sections {
        active.retain(|a| a.end > s.begin);
        if active.len() >= max {
            over += 1;
            let others: Vec<String> = active
                .iter()
                .map(|a| {
                    format!(
                        "{} token {} [{} – {}]",
                        a.w,
                        a.token,
                        facts.at(a.begin),
                        facts.at(a.end)
                    )
                })
                .collect();
            problems.push(format!(
                "SBEGIN {} token {} at {}: lease {} of at most {max} in force: {}",
                s.w,
                s.token,
                facts.at(s.begin),
                active.len() + 1,
                others.join(", ")
            ));
        }
        active.push(s);
        most = most.max(active.len());
    }
    let holders: std::collections::HashSet<&str> = sections.iter().map(|s| s.w.as_str()).collect();
    let summary = format!(
        "max-leases={max} sections={} holders={} most-at-once={most} over={over} stale={}",
        sections.len(),
        holders.len(),
        stale.len()
    );
    Check::new("sem-max-leases", problems, summary)
}
