//! An at-least-once work queue in kazoo's `LockingQueue` layout: a consumer
//! claims an item, works on it, and acknowledges it; an item whose consumer
//! died (or lost its session, or gave it back) is delivered again.
//!
//! Layout, shared with kazoo (tested both ways):
//! - `<path>/entries/entry-<priority:03>-<seq>`: the items (persistent
//!   sequential, the payload as data). Lower priority first, FIFO within one
//!   (names sort so).
//! - `<path>/taken/<entry name>`: the claim, ephemeral, with the consumer's
//!   id as data; it goes with the consumer's session.
//! - `<path>/dead/<entry name>`: items moved aside after `max_deliveries`.
//!
//! Contract, including failures:
//! - A claim is one transaction: the `taken` node and a rewrite of the
//!   entry's data with its version checked. The entry's version therefore
//!   counts its deliveries (kazoo's consumers do not count theirs).
//! - `ack` deletes the entry and its claim in one transaction, checking the
//!   entry's version: an item whose claim was lost (session expired) and
//!   taken by another consumer is never deleted by the first.
//! - Acknowledgements sent while another is being committed go together in
//!   the next transaction (one write for many).
//! - `nack`, dropping a delivery, closing the queue object or losing the
//!   session returns the item at its place in line.
//! - With `prefetch` P, one transaction claims up to P items; the ones not
//!   yet handed out go back when the queue object is closed or dropped.
//! - Order: one consumer with prefetch 1 gets items strictly by priority,
//!   then FIFO. With C consumers and prefetch P, an item can be overtaken
//!   only by items claimed while it was claimed by (or buffered in) another
//!   consumer, and by items claimed after a lost race, at most C × P.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::client::{while_usable, with_deadline, Client, MAX_PACKET};
use crate::error::{Error, ErrorCode, Result};
use crate::observe::{recipe_event, Recipe, Waiting, WORK_QUEUE_CONSUME};
use crate::wait::Wait;
use crate::{path, runtime};

mod acks;
mod claim;
mod dead_letter;
mod delivery;
mod offer;
mod options;
mod settlement;
mod slot;

use acks::AckBatch;
pub use delivery::Delivery;
use delivery::{claim_lost, claim_taken_over, Claimed};
pub(crate) use options::{bad_max_deliveries, bad_prefetch, MAX_PREFETCH};
pub use options::{priority, WorkQueueOptions, DEFAULT_PRIORITY, MAX_PRIORITY};
use settlement::Settlement;
pub use slot::DeliverySlot;

const ENTRY_PREFIX: &str = "entry-";
/// Room for the request header, the path and the ACL of one operation.
const OP_OVERHEAD: usize = 512;

#[derive(Clone)]
pub struct WorkQueue {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    path: String,
    entries: String,
    taken: String,
    dead: String,
    /// Written into our claims, as kazoo writes its consumer id.
    consumer: Vec<u8>,
    options: WorkQueueOptions,
    /// Claimed items not yet handed out, and the names seen available.
    state: tokio::sync::Mutex<Cursor>,
    acks: Mutex<AckBatch>,
    /// Set by `close()`: offers and consumes answer `CLOSED` from then on,
    /// and a consume waiting at that moment wakes with it.
    closed: tokio::sync::watch::Sender<bool>,
    /// Deliveries handed out and not settled yet (`settlement.rs`).
    unsettled: Arc<settlement::Unsettled>,
}

#[derive(Default)]
struct Cursor {
    claimed: VecDeque<Claimed>,
    /// Available entry names from the last listing, head first.
    names: VecDeque<String>,
    /// Claims lost to other consumers in a row.
    collided: u32,
}

impl WorkQueue {
    pub fn new(client: &Client, path: &str) -> Result<WorkQueue> {
        WorkQueue::with_options(client, path, WorkQueueOptions::default())
    }

    pub fn with_options(
        client: &Client,
        path: &str,
        options: WorkQueueOptions,
    ) -> Result<WorkQueue> {
        path::validate(path)?;
        client.check_open()?;
        options.check()?;
        let inner = Inner {
            client: client.clone(),
            path: path.to_string(),
            entries: format!("{path}/entries"),
            taken: format!("{path}/taken"),
            dead: format!("{path}/dead"),
            consumer: uuid::Uuid::new_v4().simple().to_string().into_bytes(),
            options,
            state: Default::default(),
            acks: Default::default(),
            closed: tokio::sync::watch::Sender::new(false),
            unsettled: Arc::default(),
        };
        Ok(WorkQueue {
            inner: Arc::new(inner),
        })
    }

    pub fn path(&self) -> &str {
        &self.inner.path
    }

    /// The directory of items moved aside after `max_deliveries`.
    pub fn dead_letter_path(&self) -> &str {
        &self.inner.dead
    }

    /// The largest payload an offer accepts.
    pub fn max_payload(&self) -> usize {
        let chroot = self.inner.client.chroot_len();
        self.inner.payload_limit(chroot)
    }

    /// Appends `data` with the default priority (100); returns its node path.
    pub async fn offer(&self, data: &[u8]) -> Result<String> {
        self.offer_with_priority(data, DEFAULT_PRIORITY).await
    }

    /// Appends `data`; lower `priority` (0–999) first.
    pub async fn offer_with_priority(&self, data: &[u8], priority: u16) -> Result<String> {
        let mut names = self.offer_all_with_priority(&[data], priority).await?;
        Ok(names.pop().expect("one name per item"))
    }

    /// Appends every item, in order, with the default priority: one
    /// transaction (one write) per batch under the server's packet limit,
    /// all of a batch or none. A batch that failed with `CONNECTION_LOSS`
    /// may or may not have been applied.
    pub async fn offer_all<D: AsRef<[u8]>>(&self, items: &[D]) -> Result<Vec<String>> {
        self.offer_all_with_priority(items, DEFAULT_PRIORITY).await
    }

    pub async fn offer_all_with_priority<D: AsRef<[u8]>>(
        &self,
        items: &[D],
        priority: u16,
    ) -> Result<Vec<String>> {
        self.inner.check_open()?;
        let scoped = self.inner.offer_all(items, priority).await;
        scoped.map_err(|err| self.inner.about(err))
    }

    /// The next item, claimed for this consumer: waits as long as it takes
    /// (`timeout` `None`), or `None` once `timeout` passed. Cancelling the
    /// call gives back whatever it claimed.
    pub async fn consume(&self, timeout: impl Into<Wait>) -> Result<Option<Delivery>> {
        let waiting = Waiting::begin(&self.inner.client, &WORK_QUEUE_CONSUME, &self.inner.path);
        let mut consumed = self.consume_uncounted(timeout.into()).await;
        waiting.end_by(&consumed);
        if let Ok(Some(delivery)) = &mut consumed {
            let claimed = delivery
                .claimed
                .as_ref()
                .expect("a new delivery is unsettled");
            delivery.settlement = Some(Settlement::begin(&self.inner, claimed));
        }
        consumed
    }

    async fn consume_uncounted(&self, timeout: Wait) -> Result<Option<Delivery>> {
        self.inner.check_open()?;
        let deadline = timeout.deadline();
        let mut closed = self.inner.closed.subscribe();
        // Losing to `close()` drops the claim in flight, whose task gives
        // back what it claimed.
        let scoped = tokio::select! {
            got = self.consume_until(deadline) => got,
            _ = closed.wait_for(|closed| *closed) => Err(self.inner.closed_error()),
        };
        scoped.map_err(|err| self.inner.about(err))
    }

    async fn consume_until(&self, deadline: Option<Instant>) -> Result<Option<Delivery>> {
        let inner = &self.inner;
        loop {
            // A claim runs to its end in a task of its own, and travels as a
            // `Delivery`: whether the caller gave up before the send or
            // after it (the value then dies with the channel), its drop
            // gives the item back.
            let (sent, received) = oneshot::channel();
            let worker = inner.clone();
            runtime::handle().spawn(async move {
                let got = worker.next_claimed().await.map(|claimed| {
                    claimed.map(|claimed| Delivery {
                        inner: worker.clone(),
                        claimed: Some(claimed),
                        settlement: None,
                    })
                });
                let _ = sent.send(got);
            });
            // A claim under way at the deadline is waited for while its
            // answer can come: a timeout shorter than a round trip (0 over
            // a slow link) is a try that gets the server's answer, not a
            // certain `None` (found by the CLI's adversarial test).
            let mut received = received;
            let got = match with_deadline(deadline, &mut received).await {
                Ok(got) => got,
                Err(_) => match while_usable(&inner.client, received).await {
                    Some(got) => got,
                    None => return Ok(None),
                },
            };
            let got = got.map_err(|_| Error::new(ErrorCode::Internal, "claim task ended"))?;
            if let Some(delivery) = got? {
                return Ok(Some(delivery));
            }
            // Nothing available: wait for a change, then look again.
            match with_deadline(deadline, inner.wait_for_change()).await {
                Ok(changed) => changed?,
                Err(_) => return Ok(None),
            }
        }
    }

    /// Items in the queue, claimed ones included: the child count of
    /// `entries`, one request.
    pub async fn size(&self) -> Result<usize> {
        self.inner.check_open()?;
        let entries = self.inner.entries.as_str();
        let stat = self
            .inner
            .client
            .retrying(None, |zk| async move { zk.check_stat(entries).await })
            .await
            .map_err(|err| self.inner.about(err))?;
        Ok(stat.map_or(0, |stat| stat.num_children.max(0) as usize))
    }

    /// Gives back the items claimed by prefetch and not handed out yet;
    /// the queue object answers `CLOSED` afterwards. Deliveries already
    /// handed out stay the caller's to `ack` or `nack`. Idempotent.
    pub async fn close(&self) -> Result<()> {
        self.inner.closed.send_replace(true);
        let mut state = self.inner.state.lock().await;
        let claimed: Vec<Claimed> = state.claimed.drain(..).collect();
        state.names.clear();
        // Out of the buffer, the claims are nobody's but this task's: it releases every one
        // (past a failed one too) even if the caller stops waiting, or they would stay taken
        // until the session ends.
        let inner = self.inner.clone();
        let settling = inner.client.settling();
        let released = runtime::handle().spawn(async move {
            let _settling = settling;
            let mut first_failure = Ok(());
            for claimed in &claimed {
                let released = inner.release(claimed).await;
                first_failure = first_failure.and(released);
            }
            first_failure
        });
        let released = released.await;
        drop(state);
        released.map_err(|_| Error::new(ErrorCode::Internal, "close task ended"))?
    }
}

impl Inner {
    fn about(&self, err: Error) -> Error {
        self.client.about(err, "work queue", &self.path)
    }

    /// The largest payload: its claim (a create and a rewrite of the entry,
    /// in one transaction) must fit in one packet.
    fn payload_limit(&self, chroot: usize) -> usize {
        MAX_PACKET - 3 * OP_OVERHEAD - 2 * (self.taken.len() + chroot + 32)
    }

    fn check_open(&self) -> Result<()> {
        if *self.closed.borrow() {
            return Err(self.closed_error());
        }
        Ok(())
    }

    fn closed_error(&self) -> Error {
        Error::new(
            ErrorCode::Closed,
            format!("work queue {} is closed", self.path),
        )
    }

    /// Releases in the background (a drop, a caller that went away).
    fn give_back(self: Arc<Self>, claimed: Vec<Claimed>) {
        let settling = self.client.settling();
        runtime::handle().spawn(async move {
            let _settling = settling;
            let mut names = Vec::new();
            for c in claimed {
                if let Err(err) = self.release(&c).await {
                    let (path, job, reason) = (self.path.as_str(), c.name.as_str(), err.to_string());
                    recipe_event!(
                        Recipe::WorkQueue,
                        WARN,
                        path,
                        job,
                        reason,
                        "work queue {path}: cannot give back {job} (it returns when its claim ends with the session): {reason}"
                    );
                }
                names.push(c.name);
            }
            self.requeue(names).await;
        });
    }
}

/// Claimed items not handed out go back when the last handle goes.
impl Drop for Inner {
    fn drop(&mut self) {
        let claimed: Vec<Claimed> = self.state.get_mut().claimed.drain(..).collect();
        if claimed.is_empty() {
            return;
        }
        let client = self.client.clone();
        let taken = self.taken.clone();
        runtime::handle().spawn(async move {
            for c in claimed {
                if client.session_id().ok() == Some(c.session) {
                    let _ =
                        crate::client::delete_confirmed(&client, &format!("{taken}/{}", c.name))
                            .await;
                }
            }
        });
    }
}

/// `entry-<priority>-<seq>` → priority.
fn priority_of(name: &str) -> Option<u16> {
    name.strip_prefix(ENTRY_PREFIX)?
        .split('-')
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn priority_is_read_from_the_name() {
        assert_eq!(super::priority_of("entry-007-0000000012"), Some(7));
        assert_eq!(super::priority_of("entry-100-0000000000"), Some(100));
        assert_eq!(super::priority_of("other"), None);
    }
}
