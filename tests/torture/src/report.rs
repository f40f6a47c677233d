//! What a seed prints: a line per check, the counts, the verdict; and the
//! whole history of a failed seed, for analysis.

use std::collections::BTreeMap;

use tokio::time::Instant;

use crate::checks::{self, Facts};
use crate::resource::{self, Ev, History};

/// Prints every check, the counts, and the verdict line.
pub fn report(
    seed: u64,
    records: &[resource::Record],
    checks: &[checks::Check],
    faults: &BTreeMap<&'static str, u64>,
    drain_error: Option<String>,
    history: &History,
    started: Instant,
) -> bool {
    for check in checks {
        let verdict = if check.pass { "pass" } else { "FAIL" };
        println!("check {:<24} {verdict}  {}", check.name, check.summary);
        for detail in check.details.iter().take(8) {
            println!("    {detail}");
        }
        if check.details.len() > 8 {
            println!("    … {} more", check.details.len() - 8);
        }
    }
    let mut stats: BTreeMap<String, u64> = BTreeMap::new();
    for r in records {
        if let Ev::Bye { stats: s, .. } = &r.ev {
            for (k, v) in s {
                *stats.entry(k.clone()).or_insert(0) += v;
            }
        }
    }
    let ops: u64 = stats
        .iter()
        .filter(|(k, _)| k.starts_with("op."))
        .map(|(_, v)| v)
        .sum();
    // A Java worker counts its operations under `op.java.<group>.<op>`.
    for group in [
        "lock", "rw", "queue", "work", "election", "sem", "latch", "barrier", "dbarrier",
        "counter", "cache", "disc", "java",
    ] {
        let prefix = format!("op.{group}.");
        let line = joined(
            stats
                .iter()
                .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?, v))),
        );
        if group == "java" {
            // The Java workers are the slots named `j…` (see workers.rs).
            let names: Vec<&str> = records
                .iter()
                .filter_map(|r| match &r.ev {
                    Ev::Spawned { w } if w.starts_with('j') => Some(w.as_str()),
                    _ => None,
                })
                .collect();
            if !names.is_empty() {
                println!("ops java ({}): {line}", names.join(" "));
            }
            continue;
        }
        println!("ops {group}: {line}");
    }
    let errors = joined(
        stats
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("err.")?, v))),
    );
    println!(
        "errors: {}",
        if errors.is_empty() { "none" } else { &errors }
    );
    let outcomes = joined(
        stats
            .iter()
            .filter(|(k, _)| {
                !k.starts_with("op.") && !k.starts_with("err.") && !k.starts_with("event.")
            })
            .map(|(k, v)| (k.as_str(), v)),
    );
    println!("outcomes: {outcomes}");
    let events = joined(
        stats
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix("event.")?, v))),
    );
    println!("events: {events}");
    let faults = joined(faults.iter().map(|(k, v)| (*k, v)));
    println!(
        "faults: {}",
        if faults.is_empty() { "none" } else { &faults }
    );
    println!(
        "history: {} lines from workers, {} records (ops of killed workers are not counted)",
        history.lines(),
        records.len()
    );
    if let Some(err) = drain_error {
        println!("drain: {err}");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let failed: Vec<&checks::Check> = checks.iter().filter(|c| !c.pass).collect();
    if failed.is_empty() {
        println!(
            "PASS seed {seed} ops={ops} checks={} ({elapsed:.1}s)",
            checks.len()
        );
        return true;
    }
    let reasons: Vec<String> = failed
        .iter()
        .map(|c| match c.details.first() {
            Some(first) => format!("{} ({first})", c.name),
            None => c.name.to_string(),
        })
        .collect();
    println!("FAIL seed {seed}: {} ({elapsed:.1}s)", reasons.join("; "));
    false
}

fn joined<'a>(pairs: impl Iterator<Item = (&'a str, &'a u64)>) -> String {
    pairs
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The whole history of a failed seed, one record a line, for analysis.
pub fn dump(logs: &std::path::Path, records: &[resource::Record], facts: &Facts) {
    let mut text = String::new();
    for r in records {
        text.push_str(&format!("{} {:?}\n", facts.at(r.t), r.ev));
    }
    for id in &facts.drained {
        text.push_str(&format!("drained {id}\n"));
    }
    let _ = std::fs::write(logs.join("history.txt"), text);
}
