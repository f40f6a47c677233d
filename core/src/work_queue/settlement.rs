//! What a delivery records, from the moment its consumer gets it until it is settled: the
//! delivery and any redelivery, the in-flight count, and how it was settled (ack, nack, a last
//! delivery given back that makes it a dead letter, or a claim lost) with the time it took.
//!
//! A delivery whose session is lost, or whose client closes, is settled `lost` at that moment,
//! as a lock's hold is: the in-flight count falls and the warning is told then, not when the
//! application next touches the job (a review saw `in_flight` stay 1 for good after a close).

use std::sync::{Arc, Mutex, Weak};

use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use super::{claim_lost, Claimed, Inner};
use crate::client::{ConnectionState, WeakClient};
use crate::error::{Error, ErrorCode};
use crate::observe::catalog::{
    WORK_QUEUE_DELIVERIES, WORK_QUEUE_IN_FLIGHT, WORK_QUEUE_PROCESS, WORK_QUEUE_REDELIVERIES,
    WORK_QUEUE_SETTLED,
};
use crate::observe::{millis, recipe_event, Gauge, Recipe, Registry};
use crate::runtime;

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

/// One delivery in its consumer's hands, settled once: by its consumer (`settle`), or by the
/// loss of its session or its client's close, whichever comes first.
pub(super) struct Settlement(Arc<Mutex<Option<Open>>>);

/// The deliveries of one work queue not settled yet, for the watcher that settles them when
/// their session is lost or their client closes.
#[derive(Default)]
pub(super) struct Unsettled {
    open: Mutex<Vec<Weak<Mutex<Option<Open>>>>>,
    watched: std::sync::OnceLock<()>,
}

impl Settlement {
    /// Counts a delivery of `claimed` to this consumer (a redelivery when delivered before).
    pub(super) fn begin(inner: &Inner, claimed: &Claimed) -> Settlement {
        let open = Arc::new(Mutex::new(Some(Open::begin(inner, claimed))));
        let unsettled = &inner.unsettled;
        {
            let mut list = unsettled.open.lock().unwrap();
            list.retain(|o| o.strong_count() > 0);
            list.push(Arc::downgrade(&open));
        }
        unsettled.watched.get_or_init(|| watch(inner));
        Settlement(open)
    }

    /// Records how the delivery was settled, unless its loss did already.
    pub(super) fn settle(self, settled: Settled) {
        let open = self.0.lock().unwrap().take();
        if let Some(open) = open {
            open.settle(settled);
        }
    }
}

/// Settles the queue's open deliveries as lost when their session is lost or the client
/// closes; ends with the client or the queue.
fn watch(inner: &Inner) {
    let unsettled: Weak<Unsettled> = Arc::downgrade(&inner.unsettled);
    let client: WeakClient = inner.client.downgrade();
    let mut states = inner.client.subscribe();
    // The session the deliveries were claimed in, as of the last state heard: the one a LOST
    // ends. The client may have its next one by the time LOST is read here, and claims made in
    // that one must stay open.
    let mut session = inner.client.session_id().ok();
    runtime::handle().spawn(async move {
        loop {
            let closed = match states.recv().await {
                Ok(ConnectionState::Lost) => false,
                Ok(ConnectionState::Closed) | Err(RecvError::Closed) => true,
                Ok(ConnectionState::Connected | ConnectionState::Reconnected) => {
                    session = client.upgrade().and_then(|c| c.session_id().ok());
                    continue;
                }
                Ok(_) | Err(RecvError::Lagged(_)) => continue,
            };
            let Some(unsettled) = unsettled.upgrade() else {
                return;
            };
            let ended = session.take();
            let open: Vec<_> = unsettled.open.lock().unwrap().drain(..).collect();
            let mut kept = Vec::new();
            for weak in open {
                let Some(shared) = weak.upgrade() else {
                    continue;
                };
                let mut slot = shared.lock().unwrap();
                // Settled by its consumer meanwhile: nothing to do, nothing to keep.
                let Some(session_of_claim) = slot.as_ref().map(|open| open.session) else {
                    continue;
                };
                if !closed && Some(session_of_claim) != ended {
                    drop(slot);
                    kept.push(weak);
                    continue;
                }
                let open = slot.take().expect("looked at under the same lock");
                drop(slot);
                let reason = if closed {
                    Error::new(
                        ErrorCode::Closed,
                        "the client was closed: the claim ended with its session",
                    )
                } else {
                    crate::client::expired()
                };
                open.settle(Settled::Lost(reason));
            }
            unsettled.open.lock().unwrap().extend(kept);
            if closed {
                return;
            }
        }
    });
}

/// A delivery's record while it is open. The in-flight count goes down when this is dropped.
struct Open {
    registry: Arc<Registry>,
    /// The work queue's path.
    path: Box<str>,
    job: Box<str>,
    /// The session of its claim.
    session: i64,
    delivered: Instant,
    _in_flight: Gauge,
}

impl Open {
    fn begin(inner: &Inner, claimed: &Claimed) -> Open {
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
        Open {
            registry,
            path: Box::from(path),
            job: Box::from(job),
            session: claimed.session,
            delivered: Instant::now(),
            _in_flight: in_flight,
        }
    }

    /// Records how the delivery was settled and how long it was processed.
    fn settle(self, settled: Settled) {
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
