//! Leader latch: never two leaders among live sessions (judged on the terms
//! as the election's are), and fencing tokens that only go up: each new
//! term's token is higher than every earlier term's, and no participant
//! reports a second token while its first is in force.

use std::collections::HashSet;

use super::election::{overlaps, terms_of, Terms};
use super::{Check, Facts, Timeline};
use crate::resource::{Ev, Record};

fn terms<'a>(records: &'a [Record], timeline: &Timeline, facts: &Facts) -> Terms<'a> {
    terms_of(records, timeline, facts, |ev| match ev {
        Ev::Latch { w, token } => Some((w.as_str(), *token)),
        _ => None,
    })
}

pub fn single_leader(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let terms = terms(records, timeline, facts);
    let (problems, most) = overlaps(&terms.terms, facts);
    let leaders: HashSet<&str> = terms.terms.iter().map(|t| t.w).collect();
    let summary = format!(
        "terms={} leaders={} most-at-once={most} terms-excused-after-pause={}",
        terms.terms.len(),
        leaders.len(),
        terms.excused
    );
    Check::new("latch-single-leader", problems, summary)
}

/// In the order the terms began, each token is higher than every earlier
/// term's; equal only to the highest so far when that was the same worker's
/// (its leadership told SUSPENDED, then RECONNECTED with the same node, or
/// cut by a short pause it survived). A participant that reports another
/// token while one is in force holds two at once.
pub fn tokens(records: &[Record], timeline: &Timeline, facts: &Facts) -> Check {
    let terms = terms(records, timeline, facts);
    let mut problems: Vec<String> = terms
        .retokened
        .iter()
        .map(|(t, w, was, now)| {
            format!(
                "{w} reports token {now} at {} while its token {was} is in force",
                facts.at(*t)
            )
        })
        .collect();
    let mut highest: Option<(i64, &str)> = None;
    let mut resumed = 0;
    for t in &terms.terms {
        match highest {
            Some((max, by)) if t.token < max || (t.token == max && by != t.w) => {
                problems.push(format!(
                    "{} leads from {} with token {} after {by} led with token {max}",
                    t.w,
                    facts.at(t.start),
                    t.token
                ));
            }
            Some((max, _)) if t.token == max => resumed += 1,
            _ => highest = Some((t.token, t.w)),
        }
    }
    let distinct: HashSet<i64> = terms.terms.iter().map(|t| t.token).collect();
    let summary = format!(
        "terms={} tokens={} highest={} same-token-resumed={resumed} two-at-once={}",
        terms.terms.len(),
        distinct.len(),
        highest.map_or(0, |(max, _)| max),
        terms.retokened.len()
    );
    Check::new("latch-tokens", problems, summary)
}
