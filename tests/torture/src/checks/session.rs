//! `session-loss` (the secured variant, `--secure`): a session is lost only to a fault that can
//! outlast it. A server that requires a SASL login once closed the session of every client with
//! recipes on each reconnect; the other checks allow a lost session anywhere (the recipes must
//! only tell), so without this one that regression would pass.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::{Check, Facts, Timeline};
use crate::resource::{Ev, Record};

/// Faults of a worker, besides a pause, that may expire its session: a partition past the
/// session timeout, and latency (each chunk of a TLS handshake and of a SASL exchange delayed
/// by up to 400 ms: a reconnect can take longer than the session). A dropped connection
/// (`drop_all`, `drop_replies`) or a server killed is not one by itself: the client reconnects
/// at once (to another server), in the same session; if it cannot for long, that is judged as
/// any long cut.
const EXPIRING: [&str; 2] = ["blackhole", "latency"];

/// How long after a pause or such a fault its worker may learn of the loss: once it runs and
/// reconnects again, on a loaded machine.
fn slack(session: Duration) -> Duration {
    session + Duration::from_secs(2)
}

/// Each `CLIENT <w> LOST` needs a cause, the first that applies:
/// - `cut-off`: the worker was told SUSPENDED at least half a session before, and not
///   RECONNECTED since (the server last heard of it at most a ping interval, a third of the
///   session, before it noticed the cut): a session can expire in that time, as after a
///   server kill with a slow election;
/// - `pause`: the worker was resumed from a pause within the slack before (one loss a pause);
/// - `blackhole`, `latency`: such a fault of the worker overlapped the slack (one loss a fault).
///
/// A loss soon after a RECONNECTED, or soon after a cut that none of these explains, fails:
/// the server closed a session the client had just resumed.
pub fn session_loss(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let slack = slack(facts.session);
    let long_cut = facts.session / 2;
    // Each worker's resumes from a pause (whatever fault chose the worker), and whether one
    // has explained a loss already.
    let mut resumes: BTreeMap<&str, Vec<(Instant, bool)>> = BTreeMap::new();
    for r in records {
        if let Ev::Resumed { w } = &r.ev {
            resumes.entry(w).or_default().push((r.t, false));
        }
    }
    let mut used_faults: Vec<bool> = vec![false; timeline.faults.len()];
    // Since when each worker is cut off (its first SUSPENDED since it was last connected).
    let mut cut_since: BTreeMap<&str, Instant> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut lost = 0;
    let mut excused: BTreeMap<&str, u32> = BTreeMap::new();
    for r in records {
        let Ev::Client { w, state } = &r.ev else {
            continue;
        };
        match state.as_str() {
            "SUSPENDED" => {
                cut_since.entry(w).or_insert(r.t);
                continue;
            }
            "LOST" => {}
            _ => {
                cut_since.remove(w.as_str());
                continue;
            }
        }
        lost += 1;
        let cut = cut_since.remove(w.as_str());
        let since = r.t.checked_sub(slack).unwrap_or(facts.started);
        if cut.is_some_and(|c| r.t.saturating_duration_since(c) >= long_cut) {
            *excused.entry("cut-off").or_insert(0) += 1;
            continue;
        }
        let resumed = resumes.get_mut(w.as_str()).and_then(|p| {
            p.iter_mut()
                .find(|(at, used)| !*used && *at <= r.t && *at >= since)
        });
        if let Some((_, used)) = resumed {
            *used = true;
            *excused.entry("pause").or_insert(0) += 1;
            continue;
        }
        let fault = timeline.faults.iter().enumerate().find(|(i, f)| {
            !used_faults[*i]
                && f.target.as_deref() == Some(w.as_str())
                && EXPIRING.contains(&f.kind)
                && f.start <= r.t
                && f.end >= since
        });
        if let Some((i, f)) = fault {
            used_faults[i] = true;
            *excused.entry(f.kind).or_insert(0) += 1;
            continue;
        }
        // What the worker went through just before, to tell a resumed session closed by the
        // server from a slow machine.
        let near: Vec<String> = timeline
            .faults
            .iter()
            .filter(|f| f.start <= r.t && f.end >= since)
            .map(|f| {
                format!(
                    "{}({}) {}..{}",
                    f.kind,
                    f.target.as_deref().unwrap_or("ensemble"),
                    facts.at(f.start),
                    facts.at(f.end)
                )
            })
            .collect();
        problems.push(format!(
            "{} {w}: session lost {} (faults in the {:.1} s before: {})",
            facts.at(r.t),
            match cut {
                Some(c) => format!(
                    "{:.3} s after its SUSPENDED",
                    r.t.saturating_duration_since(c).as_secs_f64()
                ),
                None => "while connected (after a RECONNECTED)".to_string(),
            },
            slack.as_secs_f64(),
            if near.is_empty() {
                "none".to_string()
            } else {
                near.join(", ")
            }
        ));
    }
    let excused: Vec<String> = excused.iter().map(|(k, n)| format!("{k}:{n}")).collect();
    let summary = format!(
        "lost={lost} excused=[{}] unexplained={}",
        excused.join(" "),
        problems.len()
    );
    Check::new("session-loss", problems, summary)
}
