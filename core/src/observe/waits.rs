//! The two shapes every recipe's numbers and events take: a wait (acquire, take, consume,
//! await leadership, a barrier) and a hold (a lock, a lease, a leadership). A recipe starts
//! one where the wait or hold starts and ends it where it ends; what is recorded, and at which
//! level it is logged, is decided here once.
//!
//! Levels: a wait that had to queue behind another client is logged at info when it ends, and
//! so is the end of the hold it led to; an uncontended one at debug. A leadership (a `notable`
//! family) is logged at info however it came. A hold lost is a warning.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::catalog::{self, Metric};
use super::events::{millis, recipe_event, recipe_span, Recipe};
use super::registry::{Gauge, Registry};
use super::wait_calls::WaitCall;
use crate::client::Client;
use crate::error::{Error, Result};

/// The metrics of one kind of wait.
pub(crate) struct WaitMetrics {
    pub recipe: Recipe,
    /// The name of the wait's span (`zkrecipes.lock.acquire`), as OpenTelemetry shows it.
    pub span: &'static str,
    /// What is waited for, as the events name it (`"lock"`, `"lease"`, `"item"`).
    pub noun: &'static str,
    /// The outcome of a wait that got what it waited for (`"acquired"`, `"taken"`).
    pub success: &'static str,
    pub duration: &'static Metric,
    /// A counter of waits by outcome, for families that keep one beside the histogram.
    pub outcomes: Option<&'static Metric>,
    /// An up/down counter of the waits in progress.
    pub waiters: Option<&'static Metric>,
    /// Its ends are logged at info even when nothing queued: a leadership gained is news.
    pub notable: bool,
}

/// The metrics of one kind of hold.
pub(crate) struct HoldMetrics {
    pub recipe: Recipe,
    pub noun: &'static str,
    pub duration: &'static Metric,
    pub holders: &'static Metric,
    pub lost: &'static Metric,
    /// What its holder does at the end, as the events say it (`"released"`).
    pub given_up: &'static str,
    /// Its ends are logged at info even after an uncontended wait: a leadership given up is
    /// news.
    pub notable: bool,
}

pub(crate) const LOCK_WAITS: WaitMetrics = WaitMetrics {
    recipe: Recipe::Lock,
    span: "zkrecipes.lock.acquire",
    noun: "lock",
    success: "acquired",
    duration: &catalog::LOCK_WAIT,
    outcomes: Some(&catalog::LOCK_ACQUISITIONS),
    waiters: Some(&catalog::LOCK_WAITERS),
    notable: false,
};
pub(crate) const LOCK_HOLDS: HoldMetrics = HoldMetrics {
    recipe: Recipe::Lock,
    noun: "lock",
    duration: &catalog::LOCK_HOLD,
    holders: &catalog::LOCK_HOLDERS,
    lost: &catalog::LOCK_LOST,
    given_up: "released",
    notable: false,
};
pub(crate) const SEMAPHORE_WAITS: WaitMetrics = WaitMetrics {
    recipe: Recipe::Semaphore,
    span: "zkrecipes.semaphore.acquire",
    noun: "lease",
    success: "acquired",
    duration: &catalog::SEMAPHORE_WAIT,
    outcomes: Some(&catalog::SEMAPHORE_ACQUISITIONS),
    waiters: Some(&catalog::SEMAPHORE_WAITERS),
    notable: false,
};
pub(crate) const SEMAPHORE_HOLDS: HoldMetrics = HoldMetrics {
    recipe: Recipe::Semaphore,
    noun: "lease",
    duration: &catalog::SEMAPHORE_HOLD,
    holders: &catalog::SEMAPHORE_HOLDERS,
    lost: &catalog::SEMAPHORE_LOST,
    given_up: "released",
    notable: false,
};
pub(crate) const QUEUE_TAKES: WaitMetrics = WaitMetrics {
    recipe: Recipe::Queue,
    span: "zkrecipes.queue.take",
    noun: "item",
    success: "taken",
    duration: &catalog::QUEUE_TAKE,
    outcomes: Some(&catalog::QUEUE_TAKES),
    waiters: Some(&catalog::QUEUE_TAKERS),
    notable: false,
};
pub(crate) const WORK_QUEUE_CONSUMES: WaitMetrics = WaitMetrics {
    recipe: Recipe::WorkQueue,
    span: "zkrecipes.work_queue.consume",
    noun: "delivery",
    success: "delivered",
    duration: &catalog::WORK_QUEUE_CONSUME,
    outcomes: Some(&catalog::WORK_QUEUE_CONSUMES),
    waiters: Some(&catalog::WORK_QUEUE_CONSUMERS),
    notable: false,
};
pub(crate) const ELECTION_WAITS: WaitMetrics = WaitMetrics {
    recipe: Recipe::Election,
    span: "zkrecipes.election.await_leadership",
    noun: "leadership",
    success: "leader",
    duration: &catalog::ELECTION_WAIT,
    outcomes: None,
    waiters: None,
    notable: true,
};
pub(crate) const LATCH_WAITS: WaitMetrics = WaitMetrics {
    recipe: Recipe::Latch,
    span: "zkrecipes.latch.await_leadership",
    noun: "leadership",
    success: "leader",
    duration: &catalog::LATCH_WAIT,
    outcomes: None,
    waiters: None,
    notable: true,
};
pub(crate) const ELECTION_TERMS: HoldMetrics = HoldMetrics {
    recipe: Recipe::Election,
    noun: "leadership",
    duration: &catalog::ELECTION_LEADERSHIP,
    holders: &catalog::ELECTION_LEADERS,
    lost: &catalog::ELECTION_LOST,
    given_up: "stepped down",
    notable: true,
};
pub(crate) const LATCH_TERMS: HoldMetrics = HoldMetrics {
    recipe: Recipe::Latch,
    noun: "leadership",
    duration: &catalog::LATCH_LEADERSHIP,
    holders: &catalog::LATCH_LEADERS,
    lost: &catalog::LATCH_LOST,
    given_up: "stepped down",
    notable: true,
};
pub(crate) const BARRIER_WAITS: WaitMetrics = WaitMetrics {
    recipe: Recipe::Barrier,
    span: "zkrecipes.barrier.wait",
    noun: "barrier",
    success: "passed",
    duration: &catalog::BARRIER_WAIT,
    outcomes: None,
    waiters: Some(&catalog::BARRIER_WAITERS),
    notable: false,
};

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Got what it waited for: the family's `success` word.
    Done,
    /// The caller's deadline passed (a try included).
    TimedOut,
    /// The caller dropped the wait, or stopped it.
    Cancelled,
    /// An error went back to the caller.
    Failed,
}

/// One wait in progress. Dropped without `end`, it counts as cancelled: a future dropped at any
/// await is a cancelled wait in every language.
pub(crate) struct Waiting {
    registry: Arc<Registry>,
    metrics: &'static WaitMetrics,
    path: Box<str>,
    kind: Option<&'static str>,
    started: Instant,
    /// The wait as a `tracing` span (`zkrecipes.lock.acquire`, …), open while it lasts: a
    /// program's OpenTelemetry layer shows where a slow request waited. Its fields are filled
    /// in when the wait ends.
    span: tracing::Span,
    waiter: Option<Gauge>,
    ended: bool,
    /// It had to queue behind another client: its end, and the hold it led to, at info.
    contended: bool,
}

impl Waiting {
    pub(crate) fn begin(client: &Client, call: &'static WaitCall, path: &str) -> Waiting {
        let (metrics, kind) = (call.family, call.metric_kind);
        let registry = client.registry().clone();
        let waiter = metrics
            .waiters
            .map(|waiters| Gauge::up(&registry, registry.key(waiters, &values(path, kind, None))));
        Waiting {
            registry,
            metrics,
            path: Box::from(path),
            kind,
            started: Instant::now(),
            span: recipe_span!(
                metrics.recipe,
                "zkrecipes.wait",
                otel.name = metrics.span,
                path,
                kind = call.kind,
                outcome = tracing::field::Empty,
                waited_ms = tracing::field::Empty,
                fencing_token = tracing::field::Empty,
            ),
            waiter,
            ended: false,
            contended: metrics.notable,
        }
    }

    /// The wait had to queue behind another client (it is logged at info when it ends).
    pub(crate) fn queued(&mut self) {
        self.contended = true;
    }

    /// Whether the wait had to queue (`queued`), for the hold it led to.
    pub(crate) fn contended(&self) -> bool {
        self.contended
    }

    /// Records the wait's end. `token`: the fencing token it got. Returns how long it waited.
    pub(crate) fn end(
        mut self,
        outcome: Outcome,
        token: Option<i64>,
        reason: Option<&Error>,
    ) -> Duration {
        self.finish(outcome, token, reason)
    }

    /// Ends the wait by the answer the caller gets: `Some` is done (with the token `token_of`
    /// finds in it), `None` timed out, an error failed.
    pub(crate) fn end_with<T>(
        self,
        answer: &Result<Option<T>>,
        token_of: impl FnOnce(&T) -> i64,
    ) -> Duration {
        match answer {
            Ok(Some(got)) => self.end(Outcome::Done, Some(token_of(got)), None),
            Ok(None) => self.end(Outcome::TimedOut, None, None),
            Err(err) => self.end(Outcome::Failed, None, Some(err)),
        }
    }

    /// Ends the wait by an answer that carries no fencing token (`Got`): got it is done, not
    /// got timed out (a poll that found nothing included), an error failed.
    pub(crate) fn end_by(self, answer: &Result<impl Got>) -> Duration {
        match answer {
            Ok(got) if got.got() => self.end(Outcome::Done, None, None),
            Ok(_) => self.end(Outcome::TimedOut, None, None),
            Err(err) => self.end(Outcome::Failed, None, Some(err)),
        }
    }

    fn finish(&mut self, outcome: Outcome, token: Option<i64>, reason: Option<&Error>) -> Duration {
        let contended = self.contended;
        self.ended = true;
        self.waiter.take();
        let waited = self.started.elapsed();
        let word = match outcome {
            Outcome::Done => self.metrics.success,
            Outcome::TimedOut => "timeout",
            Outcome::Cancelled => "cancelled",
            Outcome::Failed => "error",
        };
        self.span.record("outcome", word);
        self.span.record("waited_ms", millis(waited));
        if let Some(token) = token {
            self.span.record("fencing_token", token);
        }
        let values = values(&self.path, self.kind, Some(word));
        let key = self.registry.key(self.metrics.duration, &values);
        self.registry.record(&key, waited);
        if let Some(outcomes) = self.metrics.outcomes {
            self.registry.add(&self.registry.key(outcomes, &values), 1);
        }
        let (recipe, noun, path, waited_ms) = (
            self.metrics.recipe,
            self.metrics.noun,
            &*self.path,
            millis(waited),
        );
        let kind = self.kind.unwrap_or(noun);
        let reason = reason.map(|r| r.to_string());
        match (outcome, contended) {
            (Outcome::Done, true) | (Outcome::TimedOut, true) => recipe_event!(
                recipe,
                INFO,
                path,
                kind,
                outcome = word,
                waited_ms,
                fencing_token = token,
                "{noun} {path}: {word} after waiting {waited_ms} ms"
            ),
            _ => recipe_event!(
                recipe,
                DEBUG,
                path,
                kind,
                outcome = word,
                waited_ms,
                fencing_token = token,
                reason,
                "{noun} {path}: {word} after {waited_ms} ms"
            ),
        }
        waited
    }
}

/// Whether a wait's answer is what it waited for: `Some` item, `true` for a barrier passed.
pub(crate) trait Got {
    fn got(&self) -> bool;
}

impl<T> Got for Option<T> {
    fn got(&self) -> bool {
        self.is_some()
    }
}

impl Got for bool {
    fn got(&self) -> bool {
        *self
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if !self.ended {
            self.finish(Outcome::Cancelled, None, None);
        }
    }
}

/// One hold (a lock, a lease, a leadership) from the moment it is had until it is dropped.
pub(crate) struct Holding {
    registry: Arc<Registry>,
    metrics: &'static HoldMetrics,
    path: Box<str>,
    kind: Option<&'static str>,
    since: Instant,
    contended: bool,
    token: Option<i64>,
    holder: Option<Gauge>,
    lost: Option<Error>,
}

impl Holding {
    pub(crate) fn begin(
        client: &Client,
        metrics: &'static HoldMetrics,
        path: &str,
        kind: Option<&'static str>,
        token: Option<i64>,
        contended: bool,
    ) -> Holding {
        let registry = client.registry().clone();
        let holder = Gauge::up(
            &registry,
            registry.key(metrics.holders, &values(path, kind, None)),
        );
        Holding {
            registry,
            metrics,
            path: Box::from(path),
            kind,
            since: Instant::now(),
            contended: contended || metrics.notable,
            token,
            holder: Some(holder),
            lost: None,
        }
    }

    /// The hold ends without its holder's release (recorded when dropped).
    pub(crate) fn lose(&mut self, reason: &Error) {
        self.lost.get_or_insert_with(|| reason.clone());
    }
}

impl std::fmt::Debug for Holding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Holding")
            .field("path", &self.path)
            .field("kind", &self.kind.unwrap_or(self.metrics.noun))
            .finish()
    }
}

impl Drop for Holding {
    fn drop(&mut self) {
        self.holder.take();
        let held = self.since.elapsed();
        let values = values(&self.path, self.kind, None);
        self.registry
            .record(&self.registry.key(self.metrics.duration, &values), held);
        let (recipe, noun, path, held_ms, token, given_up) = (
            self.metrics.recipe,
            self.metrics.noun,
            &*self.path,
            millis(held),
            self.token,
            self.metrics.given_up,
        );
        let kind = self.kind.unwrap_or(noun);
        match &self.lost {
            Some(reason) => {
                self.registry
                    .add(&self.registry.key(self.metrics.lost, &values), 1);
                let reason = reason.to_string();
                recipe_event!(
                    recipe,
                    WARN,
                    path,
                    kind,
                    held_ms,
                    fencing_token = token,
                    reason = reason.as_str(),
                    "{noun} {path}: LOST after holding {held_ms} ms: {reason}"
                );
            }
            None if self.contended => recipe_event!(
                recipe,
                INFO,
                path,
                kind,
                held_ms,
                fencing_token = token,
                "{noun} {path}: {given_up} after holding {held_ms} ms"
            ),
            None => recipe_event!(
                recipe,
                DEBUG,
                path,
                kind,
                held_ms,
                fencing_token = token,
                "{noun} {path}: {given_up} after holding {held_ms} ms"
            ),
        }
    }
}

/// The attribute values in catalog order: path, then kind where the family has one, then the
/// outcome where the metric has one.
fn values<'a>(
    path: &'a str,
    kind: Option<&'static str>,
    outcome: Option<&'static str>,
) -> Vec<&'a str> {
    let mut values = vec![path];
    values.extend(kind);
    values.extend(outcome);
    values
}

/// A participant's way to leadership, again and again: a wait from joining (or lining up again
/// after a term) until it leads, then a term until the leadership ends. Dropped, a wait in
/// progress counts as cancelled and a term as stepped down (the participant stopped).
pub(crate) struct Candidacy {
    client: Client,
    waits: &'static WaitCall,
    terms: &'static HoldMetrics,
    path: Box<str>,
    waiting: Option<Waiting>,
    term: Option<Holding>,
}

impl Candidacy {
    pub(crate) fn new(
        client: &Client,
        waits: &'static WaitCall,
        terms: &'static HoldMetrics,
        path: &str,
    ) -> Candidacy {
        Candidacy {
            client: client.clone(),
            waits,
            terms,
            path: Box::from(path),
            waiting: None,
            term: None,
        }
    }

    /// In line for leadership: a wait begins, unless one runs or the participant leads.
    pub(crate) fn in_line(&mut self) {
        if self.waiting.is_none() && self.term.is_none() {
            let waiting = Waiting::begin(&self.client, self.waits, &self.path);
            self.waiting = Some(waiting);
        }
    }

    /// Leads from now on (with its fencing token, if it has one); a leader that finds it still
    /// leads stays in the same term.
    pub(crate) fn elected(&mut self, token: Option<i64>) {
        if self.term.is_some() {
            return;
        }
        let contended = match self.waiting.take() {
            Some(waiting) => {
                let contended = waiting.contended();
                waiting.end(Outcome::Done, token, None);
                contended
            }
            None => false,
        };
        let term = Holding::begin(&self.client, self.terms, &self.path, None, token, contended);
        self.term = Some(term);
    }

    /// The participation failed for good before leading.
    pub(crate) fn failed(&mut self, reason: &Error) {
        if let Some(waiting) = self.waiting.take() {
            waiting.end(Outcome::Failed, None, Some(reason));
        }
    }

    /// The term ends, `lost` when the leadership ended without stepping down.
    pub(crate) fn term_ended(&mut self, lost: Option<&Error>) {
        if let Some(mut term) = self.term.take() {
            if let Some(reason) = lost {
                term.lose(reason);
            }
        }
    }
}
