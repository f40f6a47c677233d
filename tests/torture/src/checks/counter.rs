//! Atomic longs: every attempt adds one, so each final value is exact up to the attempts whose
//! outcome nobody knows.

use std::collections::{BTreeMap, HashSet};

use super::{Check, Facts};
use crate::resource::{Ev, Record};

/// What the attempts on one counter were answered.
#[derive(Default)]
struct Attempts<'a> {
    open: HashSet<(&'a str, u64)>,
    /// Each value acknowledged, with who said it wrote it.
    acknowledged: BTreeMap<i64, Vec<&'a str>>,
    acked: i64,
    connection_loss: i64,
    cancelled: i64,
    declined: u64,
    failed: BTreeMap<&'a str, u64>,
}

/// `counter-exact`: each counter's final value is the number of its attempts acknowledged
/// (`ok`) plus between 0 and the number whose outcome is unknown — answered `CONNECTION_LOSS`,
/// dropped mid-way (`cancelled`), or never answered (the worker was killed). An attempt that
/// `failed` with any other code, or declined (`none`), wrote nothing. No value is acknowledged
/// twice (two increments that both say they wrote N counted one), and none above the final
/// value.
pub fn exact(records: &[Record], facts: &Facts) -> Check {
    let mut by_counter: BTreeMap<&str, Attempts> = BTreeMap::new();
    let mut problems = Vec::new();
    for r in records {
        match &r.ev {
            Ev::CounterTry { w, counter, n } => {
                let attempts = by_counter.entry(counter).or_default();
                attempts.open.insert((w.as_str(), *n));
            }
            Ev::CounterDone {
                w,
                counter,
                n,
                how,
                post,
            } => {
                let attempts = by_counter.entry(counter).or_default();
                if !attempts.open.remove(&(w.as_str(), *n)) {
                    problems.push(format!(
                        "{} {w}: CDONE {counter} {n} without its CTRY",
                        facts.at(r.t)
                    ));
                }
                match (how.as_str(), post) {
                    (_, Some(post)) => {
                        attempts.acked += 1;
                        attempts.acknowledged.entry(*post).or_default().push(w);
                    }
                    (how, _) if how.starts_with("unknown") => attempts.connection_loss += 1,
                    ("cancelled", _) => attempts.cancelled += 1,
                    ("none", _) => attempts.declined += 1,
                    (how, _) => *attempts.failed.entry(how).or_insert(0) += 1,
                }
            }
            _ => {}
        }
    }
    let mut summaries = Vec::new();
    for (node, total) in &facts.counters {
        let attempts = by_counter.remove(node).unwrap_or_default();
        summaries.push(judge(node, &attempts, total, &mut problems));
    }
    for node in by_counter.keys() {
        problems.push(format!("attempts on {node}, which the driver did not read"));
    }
    Check::new("counter-exact", problems, summaries.join("; "))
}

/// Judges one counter; its summary.
fn judge(
    node: &str,
    attempts: &Attempts,
    total: &Result<i64, String>,
    problems: &mut Vec<String>,
) -> String {
    let acked = attempts.acked;
    let unanswered = attempts.open.len() as i64;
    let unknown = attempts.connection_loss + attempts.cancelled + unanswered;
    for (post, by) in &attempts.acknowledged {
        if by.len() > 1 {
            problems.push(format!(
                "{node}: value {post} acknowledged {} times (by {})",
                by.len(),
                by.join(", ")
            ));
        }
    }
    let total = match total {
        Ok(total) => Some(*total),
        Err(why) => {
            problems.push(format!("{node}: the final value could not be read: {why}"));
            None
        }
    };
    if let Some(total) = total {
        if total < acked || total > acked + unknown {
            problems.push(format!(
                "{node}: final value {total} outside [acknowledged {acked}, acknowledged + unknown {}]",
                acked + unknown
            ));
        }
        if let Some((highest, by)) = attempts.acknowledged.last_key_value() {
            if *highest > total {
                problems.push(format!(
                    "{node}: value {highest} acknowledged (by {}) above the final value {total}",
                    by.join(", ")
                ));
            }
        }
    }
    let failed: Vec<String> = attempts
        .failed
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(
        "{node}: final={} acknowledged={acked} unknown={unknown} [connection-loss={} cancelled={} unanswered={unanswered}] declined={} failed=[{}]",
        total.map_or("?".to_string(), |t| t.to_string()),
        attempts.connection_loss,
        attempts.cancelled,
        attempts.declined,
        failed.join(" ")
    )
}
