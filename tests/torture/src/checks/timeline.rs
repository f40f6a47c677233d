//! When each worker was cut off (told SUSPENDED/LOST, paused, killed), when
//! it resumed, and when faults were under way: what excuses a section, a
//! stale token or a hang.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::resource::{Ev, Record};

pub struct Window {
    pub kind: &'static str,
    pub start: Instant,
    pub end: Instant,
    /// The worker it hit; `None` for the whole ensemble.
    pub target: Option<String>,
}

pub struct Timeline {
    pub faults: Vec<Window>,
    cuts: HashMap<String, Vec<Instant>>,
    resumes: HashMap<String, Vec<Instant>>,
    /// When each worker was paused (until when), or killed (for good).
    out: HashMap<String, Vec<(Instant, Instant)>>,
}

/// After a SIGCONT a worker may act once more on what it had before the
/// pause (a grant read from its socket, a section it was about to begin)
/// before it can learn that its session expired meanwhile.
pub const AFTER_RESUME: Duration = Duration::from_secs(2);

impl Timeline {
    pub fn new(records: &[Record], end: Instant) -> Timeline {
        let mut faults = Vec::new();
        let mut open: HashMap<u64, usize> = HashMap::new();
        let mut cuts: HashMap<String, Vec<Instant>> = HashMap::new();
        let mut resumes: HashMap<String, Vec<Instant>> = HashMap::new();
        let mut out: HashMap<String, Vec<(Instant, Instant)>> = HashMap::new();
        for r in records {
            match &r.ev {
                Ev::FaultStart { id, kind, target } => {
                    open.insert(*id, faults.len());
                    faults.push(Window {
                        kind,
                        start: r.t,
                        end,
                        target: target.clone(),
                    });
                }
                Ev::FaultEnd { id } => {
                    if let Some(at) = open.remove(id) {
                        faults[at].end = r.t;
                    }
                }
                Ev::Conn { w, what } if what != "RECONNECTED" => {
                    cuts.entry(w.clone()).or_default().push(r.t)
                }
                Ev::Paused { w } | Ev::Killed { w } | Ev::Exited { w, .. } => {
                    cuts.entry(w.clone()).or_default().push(r.t);
                    out.entry(w.clone()).or_default().push((r.t, end));
                }
                Ev::Resumed { w } => {
                    resumes.entry(w.clone()).or_default().push(r.t);
                    if let Some(pause) = out.get_mut(w).and_then(|o| o.last_mut()) {
                        pause.1 = r.t;
                    }
                }
                _ => {}
            }
        }
        Timeline {
            faults,
            cuts,
            resumes,
            out,
        }
    }

    /// The first moment from `t` on at which `w` was cut off. A line
    /// recorded while its worker is paused or dead was on the wire before:
    /// the worker is cut off from the start.
    pub fn cut_after(&self, w: &str, t: Instant) -> Option<Instant> {
        if self.out_of_play(w, t) {
            return Some(t);
        }
        self.cuts
            .get(w)
            .and_then(|cuts| cuts.iter().find(|c| **c >= t).copied())
    }

    /// Whether `w` was paused or dead at `t`.
    pub fn out_of_play(&self, w: &str, t: Instant) -> bool {
        self.out
            .get(w)
            .is_some_and(|o| o.iter().any(|(from, to)| *from <= t && t < *to))
    }

    /// Whether `w` was resumed from a pause shortly before `t`.
    pub fn just_resumed(&self, w: &str, t: Instant) -> bool {
        self.resumes.get(w).is_some_and(|resumes| {
            resumes
                .iter()
                .any(|r| *r <= t && t.duration_since(*r) <= AFTER_RESUME)
        })
    }

    /// The kind of a fault on `w` (or on every worker) that overlapped `[from, to]`.
    pub fn fault_overlapping(
        &self,
        w: Option<&str>,
        from: Instant,
        to: Instant,
    ) -> Option<&'static str> {
        self.faults
            .iter()
            .find(|f| {
                let hits = f.target.is_none() || w.is_none() || f.target.as_deref() == w;
                hits && f.start <= to && f.end >= from
            })
            .map(|f| f.kind)
    }

    /// Whether a fault of `kind` overlapped `[from, to]`.
    pub fn fault_overlapping_kind(&self, kind: &str, from: Instant, to: Instant) -> bool {
        self.faults
            .iter()
            .any(|f| f.kind == kind && f.start <= to && f.end >= from)
    }

    /// Whether any fault started within `(from, to]`.
    pub fn fault_starts_within(&self, from: Instant, to: Instant) -> bool {
        self.faults.iter().any(|f| f.start > from && f.start <= to)
    }
}
