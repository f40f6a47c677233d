//! The checks, judged from the history of one seed once every worker is gone.

mod barrier;
mod cache;
mod counter;
mod discovery;
mod election;
mod latch;
mod locks;
mod queue;
mod semaphore;
mod session;
mod timeline;
mod work_queue;

use std::time::{Duration, Instant};

use crate::resource::{Ev, Record, Sec};
pub use timeline::Timeline;

/// How long a liveness check (a failover, a lock idle while a task waits) may take before it is
/// reported. Idle, either takes the session timeout plus a few round trips (about 3.5 s with a
/// 3 s session); the bound, two session timeouts and a second (7 s), leaves a loaded machine
/// (a busy core, a JVM collecting) twice the idle time over the session. The fault schedule
/// keeps this long a quiet after every kill, so that each failover is judged; how fast it is
/// belongs to `make bench`.
pub fn liveness_limit(session: Duration) -> Duration {
    session * 2 + Duration::from_secs(1)
}

/// What the driver learnt outside the history.
pub struct Facts {
    pub session: Duration,
    pub started: Instant,
    pub end: Instant,
    /// Items the driver drained from the queue after the workers stopped.
    pub drained: Vec<String>,
    /// Nodes scanned and ephemeral nodes left, or why the scan failed.
    pub orphans: Result<(usize, Vec<(String, i64)>), String>,
    /// Workers that did not exit within the grace after `finish`.
    pub hung: Vec<String>,
    /// Workers that exited with a failure status after `finish`.
    pub failed_exits: Vec<(String, String)>,
    /// Consumer tasks taking from the queue in the calm phase.
    pub consumers: usize,
    /// The work queue as the driver read it at the end.
    pub work: Result<crate::sweep::WorkState, String>,
    /// The atomic longs' values as the driver read them at the end, by node name.
    pub counters: Vec<(&'static str, Result<i64, String>)>,
    /// The semaphore's `max_leases`.
    pub sem_leases: u32,
    /// The double barrier's `member_count`.
    pub dbarrier_members: u32,
    /// A secured ensemble (`--secure`): `session-loss` is judged too.
    pub secure: bool,
}

impl Facts {
    /// A time as seconds since the seed started, for details.
    pub fn at(&self, t: Instant) -> String {
        format!(
            "{:.3}s",
            t.saturating_duration_since(self.started).as_secs_f64()
        )
    }
}

pub struct Check {
    pub name: &'static str,
    pub pass: bool,
    pub summary: String,
    /// The first offending events, when failed.
    pub details: Vec<String>,
}

impl Check {
    fn new(name: &'static str, problems: Vec<String>, summary: String) -> Check {
        Check {
            name,
            pass: problems.is_empty(),
            summary,
            details: problems,
        }
    }
}

/// The most overtaken delivery an order check has seen: by how many, and which.
#[derive(Default)]
struct Overtaken<'a> {
    by: usize,
    id: &'a str,
}

impl<'a> Overtaken<'a> {
    fn see(&mut self, by: usize, id: &'a str) {
        if by > self.by {
            *self = Overtaken { by, id };
        }
    }

    /// The check's problem when past `bound`; `overtakers` says what overtook ("later items").
    fn past(&self, bound: usize, overtakers: &str) -> Vec<String> {
        if self.by <= bound {
            return Vec::new();
        }
        vec![format!(
            "{} was overtaken by {} {overtakers} (bound {bound})",
            self.id, self.by
        )]
    }
}

pub fn judge(records: &[Record], facts: &Facts) -> Vec<Check> {
    let timeline = Timeline::new(records, facts.end);
    let mut checks = vec![
        locks::exclusion(records, &timeline, facts, "mutual-exclusion", &[Sec::Excl]),
        locks::exclusion(
            records,
            &timeline,
            facts,
            "rw-exclusion",
            &[Sec::Read, Sec::Write],
        ),
        locks::liveness(records, facts, Sec::Excl, "lock-liveness"),
        queue::exactly_once(records, facts),
        queue::order(records, facts),
        work_queue::settled_once(records, facts),
        work_queue::delivery_counts(records, facts),
        work_queue::redelivery(records, &timeline, facts),
        work_queue::claims(records, facts),
        work_queue::order(records, facts),
        election::single_leader(records, &timeline, facts),
        election::failover(records, &timeline, facts),
        semaphore::max_leases(records, &timeline, facts),
        locks::liveness(records, facts, Sec::Sem, "sem-liveness"),
        latch::single_leader(records, &timeline, facts),
        latch::tokens(records, &timeline, facts),
        barrier::release(records, &timeline, facts),
        barrier::quorum(records, &timeline, facts),
        counter::exact(records, facts),
        cache::matches_server(records),
        cache::replay(records),
        discovery::stale(records, &timeline, facts),
        discovery::missed(records, &timeline, facts),
        discovery::back(records, &timeline, facts),
        worker_reports(records, &timeline, facts),
        workers_finish(records, facts),
        orphans(facts),
    ];
    if facts.secure {
        checks.push(session::session_loss(records, &timeline, facts));
    }
    checks
}

/// What workers detected themselves: a VIOLATION always fails; a call that
/// hung is excused when a fault of that worker (or of the ensemble)
/// overlapped it.
fn worker_reports(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let mut problems = Vec::new();
    let (mut violations, mut hangs) = (0, 0);
    let mut excused: std::collections::BTreeMap<&str, u32> = Default::default();
    for r in records {
        match &r.ev {
            Ev::Violation { w, text } => {
                violations += 1;
                problems.push(format!("{} {w}: {text}", facts.at(r.t)));
            }
            Ev::Hang { w, ms, what } => {
                hangs += 1;
                let from =
                    r.t.checked_sub(Duration::from_millis(*ms))
                        .unwrap_or(facts.started);
                if let Some(kind) = timeline.fault_overlapping(Some(w), from, r.t) {
                    *excused.entry(kind).or_insert(0) += 1;
                } else {
                    problems.push(format!(
                        "{} {w}: no answer after {ms} ms: {what}",
                        facts.at(r.t)
                    ));
                }
            }
            _ => {}
        }
    }
    let excused: Vec<String> = excused.iter().map(|(k, n)| format!("{k}:{n}")).collect();
    let summary = format!(
        "violations={violations} hangs={hangs} hangs-excused-by-faults=[{}]",
        excused.join(" ")
    );
    Check::new("worker-reports", problems, summary)
}

/// Every worker exits within the grace after `finish`, and none crashed.
fn workers_finish(records: &[Record], facts: &Facts) -> Check {
    let mut problems: Vec<String> = facts
        .hung
        .iter()
        .map(|w| format!("{w} did not exit within 30 s of finish (killed)"))
        .collect();
    for (w, status) in &facts.failed_exits {
        problems.push(format!("{w} exited with {status} after finish"));
    }
    // Every worker ever started either said BYE or was killed (or crashed).
    let mut open: Vec<&str> = Vec::new();
    let (mut workers, mut hellos, mut byes) = (0, 0, 0);
    for r in records {
        match &r.ev {
            Ev::Spawned { w } => {
                workers += 1;
                open.push(w);
            }
            Ev::Hello => hellos += 1,
            Ev::Bye { w, .. } | Ev::Killed { w } => {
                byes += usize::from(matches!(r.ev, Ev::Bye { .. }));
                open.retain(|o| o != w);
            }
            Ev::Exited { w, status } => {
                open.retain(|o| o != w);
                problems.push(format!(
                    "{} {w} exited by itself during the run: {status}",
                    facts.at(r.t)
                ))
            }
            _ => {}
        }
    }
    for w in open {
        if !facts.failed_exits.iter().any(|(f, _)| f == w) {
            problems.push(format!(
                "{w} exited without its BYE (no counts, maybe no clean close)"
            ));
        }
    }
    let summary = format!(
        "workers={workers} said-hello={hellos} said-bye={byes} hung={} problems={}",
        facts.hung.len(),
        problems.len()
    );
    Check::new("workers-finish", problems, summary)
}

/// No ephemeral node of any recipe outlives the sessions of the workers.
fn orphans(facts: &Facts) -> Check {
    match &facts.orphans {
        Ok((scanned, left)) => {
            let problems = left
                .iter()
                .map(|(path, owner)| format!("{path} (session {owner:#x})"))
                .collect();
            Check::new(
                "no-orphans",
                problems,
                format!("nodes-scanned={scanned} ephemerals-left={}", left.len()),
            )
        }
        Err(why) => Check::new("no-orphans", vec![why.clone()], "scan failed".into()),
    }
}
