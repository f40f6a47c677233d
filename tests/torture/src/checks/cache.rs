//! Caches: what each worker's caches reported at the end (ops/cache), judged over all of
//! them, and every cache a worker started accounted for.
//!
//! - `cache-matches-server`: once every writer stopped and the marker write was in the cache,
//!   its snapshot was the server's subtree (path, data, czxid, mzxid).
//! - `cache-replay`: its events, replayed over the snapshot taken with them, all fitted and
//!   gave its copy exactly.

use std::collections::BTreeMap;

use super::Check;
use crate::resource::{Ev, Record};

pub fn matches_server(records: &[Record]) -> Check {
    let (reports, _) = reports(records);
    let mut nodes = 0u64;
    for (_, _, _, text) in reports.iter().filter(|r| r.2 == "ok") {
        nodes += counts(text).get("nodes").copied().unwrap_or(0);
    }
    judge("cache-matches-server", "ok", &reports, records, |reports| {
        format!("nodes-compared={nodes} {}", kinds(reports))
    })
}

pub fn replay(records: &[Record]) -> Check {
    let (_, reports) = reports(records);
    let mut events: BTreeMap<String, u64> = BTreeMap::new();
    for (_, _, _, text) in reports.iter().filter(|r| r.2 == "fits") {
        for (name, n) in counts(text) {
            *events.entry(name).or_insert(0) += n;
        }
    }
    judge("cache-replay", "fits", &reports, records, |reports| {
        let events: Vec<String> = events.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{} {}", kinds(reports), events.join(" "))
    })
}

type Report<'a> = (&'a str, &'a str, &'a str, &'a str);

/// Every cache's reports at the end: how it compared with the server, and how its events
/// replayed.
fn reports(records: &[Record]) -> (Vec<Report<'_>>, Vec<Report<'_>>) {
    let (mut matched, mut replayed) = (Vec::new(), Vec::new());
    for r in records {
        let (reports, (w, cache, how, text)) = match &r.ev {
            Ev::CacheMatch {
                w,
                cache,
                how,
                text,
            } => (&mut matched, (w, cache, how, text)),
            Ev::CacheReplay {
                w,
                cache,
                how,
                text,
            } => (&mut replayed, (w, cache, how, text)),
            _ => continue,
        };
        reports.push((w.as_str(), cache.as_str(), how.as_str(), text.as_str()));
    }
    (matched, replayed)
}

/// Every report not `good` is a problem, and so is a worker that said BYE with fewer reports
/// than the caches it started (`cache.started`).
fn judge(
    name: &'static str,
    good: &str,
    reports: &[Report],
    records: &[Record],
    summary: impl Fn(&[Report]) -> String,
) -> Check {
    let mut problems: Vec<String> = reports
        .iter()
        .filter(|(_, _, how, _)| *how != good)
        .map(|(w, cache, how, text)| format!("{w} {cache}: {how} {text}"))
        .collect();
    let mut started = 0;
    for r in records {
        if let Ev::Bye { w, stats } = &r.ev {
            let caches = stats
                .iter()
                .find(|(k, _)| k == "cache.started")
                .map_or(0, |(_, v)| *v);
            started += caches;
            let reported = reports.iter().filter(|(by, ..)| by == w).count() as u64;
            if reported < caches {
                problems.push(format!(
                    "{w} started {caches} caches and reported on {reported}"
                ));
            }
        }
    }
    let good_ones = reports.iter().filter(|(_, _, how, _)| *how == good).count();
    let summary = format!("caches={started} {good}={good_ones} {}", summary(reports));
    Check::new(name, problems, summary)
}

/// How many caches of each kind reported (`persistent-d2=2 oneshot-all=1`).
fn kinds(reports: &[Report]) -> String {
    let mut kinds: BTreeMap<&str, u32> = BTreeMap::new();
    for (_, cache, ..) in reports {
        *kinds.entry(cache).or_insert(0) += 1;
    }
    let kinds: Vec<String> = kinds.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("[{}]", kinds.join(" "))
}

/// The `name=count` words of a report.
fn counts(text: &str) -> BTreeMap<String, u64> {
    text.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}
