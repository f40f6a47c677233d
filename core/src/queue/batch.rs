//! Batched takes: up to `max` head items claimed in one transaction, so a drain pays one write
//! (one fsync on the server) per batch instead of one per item.
//!
//! Contract, including failures (the single take's rules, for a batch):
//! - The batch is the head of this consumer's cached listing, in queue order; an item that
//!   another consumer took first is left out (the batch is claimed again without it), so a batch
//!   holds fewer than `max` items only when the queue held fewer, or others took some.
//! - The data of every item is read (pipelined: one round trip) before the claim is sent, and the
//!   claim is one transaction: every item's delete, the removal of this consumer's previous claim
//!   marker and the creation of a new one. All of the batch is taken or none of it: after a
//!   connection loss the marker tells which, so no item is lost or delivered twice.
//! - Once sent, a claim runs to its end in a task of its own; if the caller is gone by then,
//!   every item goes back under its own name (at its place in line).

use std::sync::Arc;

use tokio::time::Instant;
use zookeeper_client as zk;

use super::{DistributedQueue, Inner, Item, Rounds, Unclaimed};
use crate::client::Settling;
use crate::error::{Error, ErrorCode, Result};
use crate::handoff::Handoff;
use crate::runtime;
use crate::wait::Wait;

/// The most items one batched take claims: one transaction of that many deletes stays far below
/// the server's packet limit, and a caller's batch of payloads stays bounded.
pub const MAX_BATCH: usize = 1000;

/// A batch size as a caller gave it: 1 to `MAX_BATCH`.
pub(crate) fn batch_size(max: i64) -> Result<usize> {
    usize::try_from(max)
        .ok()
        .filter(|m| (1..=MAX_BATCH).contains(m))
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "a batch takes between 1 and {MAX_BATCH} items, got {max}"
            ))
        })
}

impl DistributedQueue {
    /// Removes up to `max` items (1 to `MAX_BATCH`) from the head, in queue order, in one
    /// transaction; empty when the queue is empty.
    pub async fn poll_many(&self, max: usize) -> Result<Vec<Item>> {
        Ok(self
            .poll_batch(max)
            .await?
            .map(OwedBatch::deliver)
            .unwrap_or_default())
    }

    /// Waits up to `timeout` (`None`: as long as it takes) until the queue holds an item, then
    /// takes up to `max` as `poll_many` does; empty if none came in time.
    pub async fn take_many(&self, max: usize, timeout: impl Into<Wait>) -> Result<Vec<Item>> {
        let deadline = timeout.into().deadline();
        Ok(self
            .take_batch_until(max, deadline)
            .await?
            .map(OwedBatch::deliver)
            .unwrap_or_default())
    }

    /// Counted as one take, whatever the batch holds.
    async fn take_batch_until(
        &self,
        max: usize,
        deadline: Option<Instant>,
    ) -> Result<Option<OwedBatch>> {
        let waiting = self.taking();
        let taken = self.take_batch_uncounted(max, deadline).await;
        waiting.end_by(&taken);
        taken
    }

    async fn take_batch_uncounted(
        &self,
        max: usize,
        deadline: Option<Instant>,
    ) -> Result<Option<OwedBatch>> {
        batch_size(max as i64).map_err(|err| self.about(err))?;
        self.wait_for_items(deadline, || {
            self.poll_bounded(deadline, self.poll_batch_uncounted(max, deadline))
        })
        .await
        .map_err(|err| self.about(err))
    }

    /// A batched poll, counted as one take (an empty queue is its timeout).
    async fn poll_batch(&self, max: usize) -> Result<Option<OwedBatch>> {
        let waiting = self.taking();
        let polled = self.poll_batch_uncounted(max, None).await;
        waiting.end_by(&polled);
        polled
    }

    /// `deadline`: as `poll_owed`'s.
    async fn poll_batch_uncounted(
        &self,
        max: usize,
        deadline: Option<Instant>,
    ) -> Result<Option<OwedBatch>> {
        let scoped = self.poll_batch_unscoped(max, deadline).await;
        scoped.map_err(|err| self.about(err))
    }

    async fn poll_batch_unscoped(
        &self,
        max: usize,
        deadline: Option<Instant>,
    ) -> Result<Option<OwedBatch>> {
        let max = batch_size(max as i64)?;
        let mut cache = self.inner.cache.lock().await;
        let mut rounds = Rounds::new(deadline);
        loop {
            if !rounds.another() {
                return Ok(None);
            }
            if self.inner.head(&mut cache).await?.is_none() {
                return Ok(None);
            }
            let batch = max.min(cache.names.len());
            let names: Vec<String> = (0..batch).filter_map(|_| cache.take_at(0)).collect();
            // A batch starts at the head.
            let unclaimed = Unclaimed::new(&self.inner, names.clone());
            let prefetched = cache.prefetched.take();
            let wanted = names.len();
            let items = self.inner.read_all(names, prefetched).await?;
            unclaimed.settled();
            // Those still there stay ours to put back until their claim answered: a claim that
            // failed took nothing.
            let unclaimed =
                Unclaimed::new(&self.inner, items.iter().map(|i| i.name.clone()).collect());
            cache.read(items.len() == wanted, true);
            if items.is_empty() {
                continue;
            }
            let previous = cache.last_marker.take();
            let (reply, answer) = tokio::sync::oneshot::channel();
            let inner = self.inner.clone();
            let settling = self.inner.client.settling();
            runtime::handle().spawn(async move {
                let outcome = inner.claim_batch(items, previous).await;
                // Dropped undelivered (the caller gone before or after the send), the batch
                // goes back, and takes the claim marker along: the caller who would have kept
                // it is gone.
                let sent = reply.send(outcome.map(|(items, marker)| {
                    let owed = OwedBatch {
                        inner: inner.clone(),
                        items,
                        marker: marker.clone(),
                        settling: Some(settling),
                    };
                    (owed, marker)
                }));
                if let Err(Ok((owed, _))) = sent {
                    drop(owed);
                }
            });
            let (mut owed, marker) = answer
                .await
                .map_err(|_| Error::new(ErrorCode::Internal, "the claim task ended early"))??;
            unclaimed.settled();
            // The marker is the cache's to keep from here on (deleted with the next claim).
            owed.marker = None;
            cache.last_marker = marker;
            if !owed.items.is_empty() {
                return Ok(Some(owed));
            }
            cache.lost_race();
        }
    }
}

impl Inner {
    /// The data of every item of `names`, read in one round trip (the requests pipelined); an
    /// item already gone is left out.
    async fn read_all(
        &self,
        names: Vec<String>,
        prefetched: Option<(String, Vec<u8>)>,
    ) -> Result<Vec<Item>> {
        loop {
            let zk = self.client.zk()?;
            let session = zk.session_id().0;
            let reads: Vec<_> = names
                .iter()
                .map(|name| match &prefetched {
                    Some((known, _)) if known == name => None,
                    _ => Some(zk.get_data(&format!("{}/{}", self.dir, name))),
                })
                .collect();
            drop(zk);
            let mut items = Vec::with_capacity(names.len());
            let mut lost = None;
            for (name, read) in names.iter().zip(reads) {
                let data = match read {
                    None => prefetched.as_ref().map(|(_, data)| data.clone()),
                    Some(read) => match read.await {
                        Ok((data, _)) => Some(data),
                        Err(zk::Error::NoNode) => None,
                        Err(err) => {
                            lost = Some(Error::from(err));
                            break;
                        }
                    },
                };
                if let Some(data) = data {
                    items.push(Item {
                        name: name.clone(),
                        data,
                    });
                }
            }
            match lost {
                None => return Ok(items),
                // Reads change nothing: read the whole batch again once connected.
                Some(err) if err.is_connection_loss() => {
                    self.client.await_usable(session, None).await?
                }
                Some(err) => return Err(err),
            }
        }
    }

    /// Takes every item of `items` that is still there, in one transaction with a new claim
    /// marker (and the removal of `previous`). An item another consumer took first fails the
    /// transaction at its delete: it is left out and the rest claimed again. Answers the items
    /// taken and the claim marker to keep (`previous` when none was taken).
    async fn claim_batch(
        &self,
        mut items: Vec<Item>,
        mut previous: Option<String>,
    ) -> Result<(Vec<Item>, Option<String>)> {
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(self.client.acls());
        loop {
            if items.is_empty() {
                return Ok((items, previous));
            }
            let zk = self.client.zk()?;
            let session = zk.session_id().0;
            // Its own name space (`batch-`): a marker is named by its first item, and a single
            // take's marker for that same item may still be kept.
            let marker = format!(
                "{}/claim-{:x}-{}-batch-{}",
                self.bookkeeping, session as u64, self.consumer, items[0].name
            );
            let mut transaction = zk.new_multi_writer();
            for item in &items {
                transaction.add_delete(&format!("{}/{}", self.dir, item.name), None)?;
            }
            // The previous marker goes before the new one is made: it may have the same name
            // (the same first item, given back and taken again).
            if let Some(previous) = previous.as_deref() {
                transaction.add_delete(previous, None)?;
            }
            transaction.add_create(&marker, &[], &ephemeral)?;
            let committed = transaction.commit().await;
            drop(zk);
            let n = items.len();
            let marker_index = n + usize::from(previous.is_some());
            match committed {
                Ok(_) => return Ok((items, Some(marker))),
                Err(zk::MultiWriteError::OperationFailed {
                    index,
                    source: zk::Error::NoNode,
                }) if index < n => {
                    // Taken by another consumer.
                    items.remove(index);
                }
                // Our previous marker is gone (a new session, or a give-back took it).
                Err(zk::MultiWriteError::OperationFailed {
                    index,
                    source: zk::Error::NoNode,
                }) if index == n && previous.is_some() => previous = None,
                // No bookkeeping directory yet (or removed while empty).
                Err(zk::MultiWriteError::OperationFailed {
                    index,
                    source: zk::Error::NoNode,
                }) if index == marker_index => {
                    self.client
                        .ensure_container(&self.bookkeeping, None)
                        .await?
                }
                // A marker of ours for a batch that began with this same item, which went back
                // since (its give-back was cut off before it could take the marker along): that
                // claim is settled, so its marker is stale.
                Err(zk::MultiWriteError::OperationFailed {
                    index,
                    source: zk::Error::NodeExists,
                }) if index == marker_index => {
                    crate::client::delete_confirmed(&self.client, &marker).await?
                }
                Err(zk::MultiWriteError::RequestFailed { source })
                    if Error::from(source.clone()).is_connection_loss() =>
                {
                    if self.claim_applied(session, &marker).await? {
                        return Ok((items, Some(marker)));
                    }
                    // Not applied: claimed again, without the items taken meanwhile.
                }
                Err(err) => return Err(zk::Error::from(err).into()),
            }
        }
    }
}

/// Claimed items on their way to the caller; dropped before `deliver` (the caller's future was
/// dropped), every one goes back.
struct OwedBatch {
    inner: Arc<Inner>,
    items: Vec<Item>,
    /// The claim marker kept after it, removed with the last item's give-back.
    marker: Option<String>,
    /// Taken when the claim was sent; `close` waits for it.
    settling: Option<Settling>,
}

impl OwedBatch {
    fn deliver(mut self) -> Vec<Item> {
        std::mem::take(&mut self.items)
    }

    /// The items, and the guard that takes over giving them back.
    fn hand_off(mut self, queue: &DistributedQueue) -> (Vec<Item>, Handoff) {
        let items = std::mem::take(&mut self.items);
        let (queue, owed) = (queue.clone(), items.clone());
        let settling = self.settling.take().expect("a batch holds close back");
        let handoff = Handoff::new(settling, move || {
            for item in owed {
                queue.abandon_taken(item);
            }
        });
        (items, handoff)
    }
}

impl Drop for OwedBatch {
    fn drop(&mut self) {
        let items = std::mem::take(&mut self.items);
        let mut marker = self.marker.take();
        let inner = self.inner.clone();
        if items.is_empty() {
            // A claim that took nothing, for a caller who is gone: nobody keeps its marker.
            if let Some(marker) = marker {
                runtime::handle().spawn(async move {
                    let _ = crate::client::delete_confirmed(&inner.client, &marker).await;
                });
            }
            return;
        }
        let settling = self.settling.take();
        runtime::handle().spawn(async move {
            let _settling = settling;
            let last = items.len() - 1;
            for (i, item) in items.into_iter().enumerate() {
                let marker = if i == last { marker.take() } else { None };
                if let Err(err) = inner.give_back(&item, marker).await {
                    super::cannot_put_back(&inner.dir, &item.name, &err);
                }
            }
        });
    }
}

/// `ffi::HandedQueue`'s batched takes.
impl DistributedQueue {
    pub(crate) async fn poll_batch_handed(&self, max: i64) -> Result<(Vec<Item>, Option<Handoff>)> {
        let max = batch_size(max).map_err(|err| self.about(err))?;
        Ok(split(self, self.poll_batch(max).await?))
    }

    pub(crate) async fn take_batch_handed(
        &self,
        max: i64,
        wait: Wait,
    ) -> Result<(Vec<Item>, Option<Handoff>)> {
        let max = batch_size(max).map_err(|err| self.about(err))?;
        Ok(split(
            self,
            self.take_batch_until(max, wait.deadline()).await?,
        ))
    }
}

fn split(queue: &DistributedQueue, owed: Option<OwedBatch>) -> (Vec<Item>, Option<Handoff>) {
    match owed {
        Some(owed) => {
            let (items, handoff) = owed.hand_off(queue);
            (items, Some(handoff))
        }
        None => (Vec::new(), None),
    }
}
