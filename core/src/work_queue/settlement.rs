//! What a delivery records, from the moment its consumer gets it until it is settled: the
//! delivery and any redelivery, the in-flight count, and how it was settled (ack, nack, a last
//! delivery given back that makes it a dead letter, or a claim lost) with the time it took.

use std::sync::Arc;

use tokio::time::Instant;

use super::{claim_lost, Claimed, Inner};
use crate::error::Error;
use crate::observe::catalog::{
    WORK_QUEUE_DELIVERIES, WORK_QUEUE_IN_FLIGHT, WORK_QUEUE_PROCESS, WORK_QUEUE_REDELIVERIES,
    WORK_QUEUE_SETTLED,
};
use crate::observe::{millis, recipe_event, Gauge, Recipe, Registry};

/// How a delivery ended, as `zkrecipes.work_queue.settled` counts it.
pub(super) enum Settled {
    Ack,
    /// Given back (a `nack`, a dropped delivery) to be delivered again.
    Nack,
    /// Given back after its last allowed delivery: the next claim moves it to the dead letters.
    DeadLetter,
    /// Its claim ended before it could be settled (the session went, another consumer took it
    /// over, an ack that failed): it will be delivered again, maybe already was.
    Lost(Error),
}

impl Settled {
    fn as_str(&self) -> &'static str {
        match self {
            Settled::Ack => "ack",
            Settled::Nack => "nack",
            Settled::DeadLetter => "dead_letter",
            Settled::Lost(_) => "lost",
        }
    }
}

/// One delivery in its consumer's hands. The in-flight count goes down when this is dropped,
/// however the delivery ends.
pub(super) struct Settlement {
    registry: Arc<Registry>,
    /// The work queue's path.
    path: Box<str>,
    job: Box<str>,
    delivered: Instant,
    _in_flight: Gauge,
}

impl Settlement {
    /// Counts a delivery of `claimed` to this consumer (a redelivery when delivered before).
    pub(super) fn begin(inner: &Inner, claimed: &Claimed) -> Settlement {
        let registry = inner.client.registry().clone();
        let path = inner.path.as_str();
        registry.count(&WORK_QUEUE_DELIVERIES, &[path]);
        let delivery_count = claimed.version.max(1);
        let job = claimed.name.as_str();
        if delivery_count > 1 {
            registry.count(&WORK_QUEUE_REDELIVERIES, &[path]);
            recipe_event!(
                Recipe::WorkQueue,
                INFO,
                path,
                job,
                delivery_count,
                "work queue {path}: {job} delivered again (delivery {delivery_count})"
            );
        }
        let in_flight = Gauge::up(&registry, registry.key(&WORK_QUEUE_IN_FLIGHT, &[path]));
        Settlement {
            registry,
            path: Box::from(path),
            job: Box::from(job),
            delivered: Instant::now(),
            _in_flight: in_flight,
        }
    }

    /// Records how the delivery was settled and how long it was processed.
    pub(super) fn settle(self, settled: Settled) {
        let (path, job, outcome) = (&*self.path, &*self.job, settled.as_str());
        let processed = self.delivered.elapsed();
        let registry = &self.registry;
        registry.count(&WORK_QUEUE_SETTLED, &[path, outcome]);
        registry.record(
            &registry.key(&WORK_QUEUE_PROCESS, &[path, outcome]),
            processed,
        );
        let processed_ms = millis(processed);
        match settled {
            Settled::Lost(reason) => {
                let reason = reason.to_string();
                recipe_event!(
                    Recipe::WorkQueue,
                    WARN,
                    path,
                    job,
                    outcome,
                    processed_ms,
                    reason = reason.as_str(),
                    "work queue {path}: delivery of {job} LOST after {processed_ms} ms: {reason}"
                );
            }
            Settled::DeadLetter => recipe_event!(
                Recipe::WorkQueue,
                INFO,
                path,
                job,
                outcome,
                processed_ms,
                "work queue {path}: {job} given back after its last delivery: it goes to the dead letters"
            ),
            Settled::Ack | Settled::Nack => recipe_event!(
                Recipe::WorkQueue,
                DEBUG,
                path,
                job,
                outcome,
                processed_ms,
                "work queue {path}: {job} settled ({outcome}) after {processed_ms} ms"
            ),
        }
    }
}

impl Inner {
    /// How giving `claimed` back settles it (before its release is sent): lost when its claim
    /// went with an earlier session, a dead letter after its last allowed delivery, else a nack.
    pub(super) fn given_back(&self, claimed: &Claimed) -> Settled {
        if self.client.session_id().ok() != Some(claimed.session) {
            Settled::Lost(claim_lost(claimed))
        } else if self.past_max_deliveries(claimed.version) {
            Settled::DeadLetter
        } else {
            Settled::Nack
        }
    }
}
