//! A FIFO queue of persistent-sequential `qn-<seq>` nodes, readable and
//! writable by Apache's `DistributedQueue` and Curator's `SimpleDistributedQueue`.
//!
//! Contract, including failures:
//! - FIFO by the server's sequence (compared as integers).
//! - Concurrent consumers never receive the same item: an item is delivered
//!   only to the consumer whose delete of it succeeded.
//! - A consumer caches the sorted children and lists again only when the cache
//!   is exhausted, so draining N items costs about 2N requests in N round trips
//!   (the delete of an item and the read of the next one are sent together),
//!   not N listings. An item's data is read before its delete is sent, so a
//!   connection loss can never lose an item.
//! - `offer` that fails with `CONNECTION_LOSS` may or may not have enqueued
//!   the item (the server may have applied the create before the reply was lost).
//! - Several consumers split the backlog instead of racing for the head (see
//!   `stripes.rs`): each claim is sent with one multi-read of the next item's
//!   data and of the claim markers, so a drain still costs about two requests
//!   per item, and C consumers claim C items at once. A single consumer takes
//!   items strictly in order; with several, an item waits for the consumer
//!   whose share it is in, and for at most three claims of each other consumer
//!   once that one is behind (the regression tests and `make bench` report
//!   how far items are overtaken). Before a consumer has listed the markers
//!   (or after a lost race to a consumer it did not know of), it claims the
//!   head. A consumer claims the items of its share oldest first, so that its
//!   marker tells the others that every older item of its share is gone.
//! - A connection loss during a claim is resolved exactly: the delete is one
//!   transaction with an ephemeral claim marker of this queue object, so the
//!   item is neither lost nor delivered twice (each object has its own marker,
//!   so two objects of one session never take each other's claim for their
//!   own). Only a session that expires in that very moment leaves it unknown
//!   (the `poll` then fails with `SESSION_EXPIRED`).
//! - The directory holds only items: claim markers and give-back receipts
//!   live in the sibling container `<dir>.zkrecipes`, so `size()` is the
//!   directory's child count (one request, whatever the backlog) and
//!   Apache's consumers never meet a child they do not know.
//! - `poll_many`/`take_many` claim up to `MAX_BATCH` head items in one
//!   transaction (one write for the batch): see `batch.rs`.
//! - Cancelling a `poll`/`take` never loses an item: a claim, once sent, runs
//!   to its end, and an item claimed for a caller who is gone is put back
//!   under its own name (so at its place in line) by `give_back`, across
//!   connection losses and a new session; `Client::close` waits for items on
//!   their way back (up to one session timeout).

mod batch;
mod cache;
mod claim;
mod give_back;
mod owed;
mod rounds;
mod stripes;

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use zookeeper_client as zk;

use crate::backoff::Backoff;
use crate::client::{with_deadline, Client, Settling, MAX_PACKET};
use crate::error::{Error, ErrorCode, Result};
use crate::handoff::Handoff;
use crate::lock::contenders::{sort_by_sequence, split_sequence};
use crate::observe::catalog::QUEUE_OFFERS;
use crate::observe::{recipe_event, Recipe, Waiting, QUEUE_TAKE};
use crate::wait::Wait;
use crate::{path, runtime};
use cache::Cache;
use stripes::Peers;

use claim::Unclaimed;
pub(crate) use owed::Owed;
use rounds::Rounds;

pub use batch::MAX_BATCH;

const ITEM_PREFIX: &str = "qn-";

/// Names a give-back's receipt; other consumers ignore it as they ignore
/// any child that is not an item.
const RECEIPT_PREFIX: &str = "back-";

/// How long a give-back's receipt is kept at most. A consumer cut off for
/// longer than half of it in the middle of a give-back reports the outcome
/// unknown rather than trust a receipt that may have been swept.
const RECEIPT_TTL: Duration = Duration::from_secs(600);

/// The unit of README's order bound: with C consumers an item is overtaken
/// by at most `(CLAIM_WINDOW - 1) * C` later items (in practice; see the
/// contract above). It was the width of a random pick after a lost race.
pub const CLAIM_WINDOW: usize = 4;

/// Room for the request header, the path and the ACL of a create.
const CREATE_OVERHEAD: usize = 512;

#[derive(Clone)]
pub struct DistributedQueue {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    dir: String,
    /// `<dir>.zkrecipes`: claim markers and receipts, out of the item count.
    bookkeeping: String,
    /// Names this object's claim markers, apart from every other consumer's.
    consumer: String,
    cache: tokio::sync::Mutex<Cache>,
    /// Items given back, or taken out of the cache by a poll that ended
    /// before claiming them, since the cache was last consulted: they go back
    /// into it at their places then (a poll may hold the cache meanwhile).
    to_put_back: std::sync::Mutex<Vec<String>>,
}

/// An item taken from the queue: its node name and payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub name: String,
    pub data: Vec<u8>,
}

/// The data of the next item and the claim markers, each if asked for and read.
type ReadAfterClaim = (Option<Vec<u8>>, Option<Vec<String>>);

/// How a claim transaction ended.
struct Claim {
    claimed: bool,
    /// Our claim marker after it (the new one, or the previous if not claimed).
    marker: Option<String>,
    prefetched: Option<(String, Vec<u8>)>,
    /// The claim markers listed after the claim, when asked for.
    markers: Option<Vec<String>>,
}

impl DistributedQueue {
    /// A queue in directory `dir` (created on first offer).
    pub fn new(client: &Client, dir: &str) -> Result<DistributedQueue> {
        path::validate(dir)?;
        client.check_open()?;
        let consumer = uuid::Uuid::new_v4().simple().to_string();
        let inner = Inner {
            client: client.clone(),
            dir: dir.to_string(),
            bookkeeping: bookkeeping_dir(dir),
            consumer: consumer.clone(),
            cache: tokio::sync::Mutex::new(Cache::new(&consumer)),
            to_put_back: Default::default(),
        };
        Ok(DistributedQueue {
            inner: Arc::new(inner),
        })
    }

    pub fn dir(&self) -> &str {
        &self.inner.dir
    }

    /// The largest payload `offer` accepts on this queue.
    pub fn max_payload(&self) -> usize {
        // The chroot is part of every path on the wire (found through a
        // 700-character chroot: the server dropped the connection instead).
        let chroot = self.inner.client.chroot_len();
        MAX_PACKET - CREATE_OVERHEAD - self.inner.dir.len() - chroot
    }

    /// Appends `data`; returns the item's node path.
    pub async fn offer(&self, data: &[u8]) -> Result<String> {
        let offered = self.offer_unscoped(data).await;
        if let Ok(item) = &offered {
            let dir = self.inner.dir.as_str();
            self.inner.client.registry().count(&QUEUE_OFFERS, &[dir]);
            recipe_event!(
                Recipe::Queue,
                DEBUG,
                path = dir,
                item = item.as_str(),
                "queue {dir}: offered {item}"
            );
        }
        offered.map_err(|err| self.about(err))
    }

    async fn offer_unscoped(&self, data: &[u8]) -> Result<String> {
        if data.len() > self.max_payload() {
            return Err(Error::invalid_argument(format!(
                "payload of {} bytes exceeds the queue limit of {} bytes",
                data.len(),
                self.max_payload()
            )));
        }
        let inner = &self.inner;
        let prefix = format!("{}/{}", inner.dir, ITEM_PREFIX);
        let options = zk::CreateMode::PersistentSequential.with_acls(inner.client.acls());
        loop {
            let created = inner.client.zk()?.create(&prefix, data, &options).await;
            match created {
                Ok((_, sequence)) => return Ok(format!("{prefix}{sequence}")),
                Err(zk::Error::NoNode) => inner.client.ensure_path(&inner.dir, None).await?,
                // Not retried: the create may have been applied (see the contract).
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// The head item, or `None` when the queue is empty.
    pub async fn peek(&self) -> Result<Option<Vec<u8>>> {
        let scoped = self.peek_unscoped().await;
        scoped.map_err(|err| self.about(err))
    }

    async fn peek_unscoped(&self) -> Result<Option<Vec<u8>>> {
        let mut cache = self.inner.cache.lock().await;
        loop {
            let Some(head) = self.inner.head(&mut cache).await? else {
                return Ok(None);
            };
            let path = format!("{}/{}", self.inner.dir, head);
            match self.inner.client.read_if_present(&path).await? {
                Some((data, _)) => return Ok(Some(data)),
                None => {
                    cache.names.pop_front();
                }
            }
        }
    }

    /// Removes and returns the head item, or `None` when the queue is empty.
    pub async fn poll(&self) -> Result<Option<Vec<u8>>> {
        Ok(self.poll_item().await?.map(|item| item.data))
    }

    /// `poll` with the item's name, which `give_back` takes.
    pub async fn poll_item(&self) -> Result<Option<Item>> {
        Ok(self.poll_owed(None).await?.map(Owed::deliver))
    }

    /// `deadline`: a poll of a take that has one starts no new claim after it
    /// (a claim under way runs to its end). Without, it goes on until it
    /// claims an item or finds the queue empty. Counted as one take (an empty
    /// queue is its timeout).
    pub(crate) async fn poll_owed(&self, deadline: Option<Instant>) -> Result<Option<Owed>> {
        let waiting = self.taking();
        let polled = self.poll_owed_uncounted(deadline).await;
        waiting.end_by(&polled);
        polled
    }

    /// `poll_owed` as one step of a take, which counts itself.
    async fn poll_owed_uncounted(&self, deadline: Option<Instant>) -> Result<Option<Owed>> {
        let scoped = self.poll_owed_unscoped(deadline).await;
        scoped.map_err(|err| self.about(err))
    }

    /// The numbers and events of one take or poll, from now until its answer (a dropped
    /// future is a cancelled take).
    fn taking(&self) -> Waiting {
        Waiting::begin(&self.inner.client, &QUEUE_TAKE, &self.inner.dir)
    }

    async fn poll_owed_unscoped(&self, deadline: Option<Instant>) -> Result<Option<Owed>> {
        let mut cache = self.inner.cache.lock().await;
        let mut rounds = Rounds::new(deadline);
        loop {
            if !rounds.another() {
                return Ok(None);
            }
            let Some(name) = self.inner.next_claim(&mut cache).await? else {
                return Ok(None);
            };
            let unclaimed = Unclaimed::new(&self.inner, vec![name.clone()]);
            // The data is in hand before the delete is sent: a delete whose reply is
            // lost can never take an item's data with it.
            let data = match cache.prefetched.take() {
                Some((prefetched, data)) if prefetched == name => data,
                _ => match self.inner.read(&name).await? {
                    Some(data) => data,
                    None => {
                        unclaimed.settled();
                        cache.lost_race();
                        continue;
                    }
                },
            };
            cache.read(true, false);
            let next = cache.predicted_next();
            // Taken: the claim deletes it, or hands it back (a lost race); a claim whose caller
            // is gone deletes it itself (below). Kept in the cache as well, a give-back running
            // beside this claim took it too, and the claim of that same item again (back under
            // its own name) found its marker's name taken (NODE_EXISTS, seen in the Python suite).
            let previous = cache.last_marker.take();
            let list_peers = cache.watch_peers;
            // Once sent, a claim runs to its end in a task of its own; if the
            // caller is gone by then, the item goes back (never lost).
            let (reply, answer) = tokio::sync::oneshot::channel();
            let inner = self.inner.clone();
            // `close` waits for a claim in flight too: a caller that gave up
            // and closed at once would otherwise end the session before the
            // claimed item could go back (found by the CLI's SIGINT test).
            let settling = self.inner.client.settling();
            runtime::handle().spawn(async move {
                let outcome = inner.claim(&name, next, previous, list_peers).await;
                let item = Item { name, data };
                // The claimed item travels in a guard, with the hold on
                // `close`: dropped undelivered (the caller gone before or
                // after the send), it goes back.
                let unsent = reply.send(outcome.map(|claim| {
                    let owed = claim.claimed.then(|| Owed {
                        inner: inner.clone(),
                        item: Some(item),
                        marker: claim.marker.clone(),
                        settling: Some(settling),
                    });
                    (claim, owed)
                }));
                // The caller is gone after a lost race: the marker handed back is nobody's.
                if let Err(Ok((claim, None))) = unsent {
                    if let Some(marker) = claim.marker {
                        let _ = crate::client::delete_confirmed(&inner.client, &marker).await;
                    }
                }
            });
            // A claim that failed (NO_AUTH, the session gone, ...) took nothing: the item
            // stays in our cache, as it is on the server (`unclaimed` puts it back when this
            // returns the error). It was dropped, and the next peek skipped the head.
            let (claim, owed) = answer
                .await
                .map_err(|_| Error::new(ErrorCode::Internal, "the claim task ended early"))??;
            unclaimed.settled();
            cache.last_marker = claim.marker;
            cache.prefetched = claim.prefetched;
            if let Some(markers) = claim.markers {
                cache.learn_peers(Peers::from_markers(&markers, &self.inner.consumer));
            }
            if owed.is_some() {
                return Ok(owed);
            }
            cache.lost_race();
        }
    }

    /// For a binding whose caller gave up after the item was taken (a
    /// cancelled future, an interrupt): the item goes back, never lost.
    fn abandon_taken(&self, item: Item) {
        let queue = self.clone();
        let settling = self.inner.client.settling();
        runtime::handle().spawn(async move {
            let _settling = settling;
            if let Err(err) = queue.give_back(&item).await {
                cannot_put_back(queue.dir(), &item.name, &err);
            }
        });
    }

    /// Puts an item taken by `poll_item` back at its place in line (under its
    /// own name), for a consumer that cannot hand it on.
    pub async fn give_back(&self, item: &Item) -> Result<()> {
        // In a task of its own, which takes the marker along: a give-back cut short would
        // otherwise leave the marker it took out of the cache to nobody.
        let (inner, item) = (self.inner.clone(), item.clone());
        let settling = inner.client.settling();
        let given = runtime::handle().spawn(async move {
            let _settling = settling;
            let marker = inner.cache.lock().await.last_marker.take();
            inner.give_back(&item, marker).await
        });
        given
            .await
            .map_err(|_| Error::new(ErrorCode::Internal, "give-back task ended"))?
    }

    /// Like `peek`, but an empty queue is `NO_SUCH_ELEMENT`.
    pub async fn element(&self) -> Result<Vec<u8>> {
        self.peek().await?.ok_or_else(|| self.about(empty()))
    }

    /// Like `poll`, but an empty queue is `NO_SUCH_ELEMENT`.
    pub async fn remove(&self) -> Result<Vec<u8>> {
        Ok(self.remove_item().await?.data)
    }

    /// `remove` with the item's name, which `give_back` takes.
    pub async fn remove_item(&self) -> Result<Item> {
        self.poll_item().await?.ok_or_else(|| self.about(empty()))
    }

    /// Waits for an item as long as it takes.
    pub async fn take(&self) -> Result<Vec<u8>> {
        let owed = self.take_until(None).await?;
        Ok(owed
            .expect("an unbounded take ends with an item")
            .deliver()
            .data)
    }

    /// Waits for an item up to `timeout` (one deadline); `None` if none came.
    pub async fn take_timeout(&self, timeout: Duration) -> Result<Option<Vec<u8>>> {
        Ok(self.take_item(Some(timeout)).await?.map(|item| item.data))
    }

    /// `take` (`None` = no limit) with the item's name, which `give_back` takes.
    /// `timeout`: a `Wait`, or what converts to one (`None` waits forever).
    pub async fn take_item(&self, timeout: impl Into<Wait>) -> Result<Option<Item>> {
        let owed = self.take_until(timeout.into().deadline()).await?;
        Ok(owed.map(Owed::deliver))
    }

    pub(crate) async fn take_until(&self, deadline: Option<Instant>) -> Result<Option<Owed>> {
        let waiting = self.taking();
        let scoped = self.take_until_unscoped(deadline).await;
        let taken = scoped.map_err(|err| self.about(err));
        waiting.end_by(&taken);
        taken
    }

    async fn take_until_unscoped(&self, deadline: Option<Instant>) -> Result<Option<Owed>> {
        self.wait_for_items(deadline, || {
            self.poll_bounded(deadline, self.poll_owed_uncounted(deadline))
        })
        .await
    }

    /// `poll` until it finds something, waiting on a child watch between polls that found the
    /// queue empty; `None` once the deadline passed.
    async fn wait_for_items<T, Polled>(
        &self,
        deadline: Option<Instant>,
        mut poll: impl FnMut() -> Polled,
    ) -> Result<Option<T>>
    where
        Polled: Future<Output = Result<Option<T>>>,
    {
        loop {
            if let Some(taken) = poll().await? {
                return Ok(Some(taken));
            }
            if deadline.is_some_and(|d| d <= Instant::now()) {
                return Ok(None);
            }
            // Empty as of the listing poll just made: arm a child watch, and
            // look once more since an item may have arrived in between.
            let dir = self.inner.dir.as_str();
            let watched = self
                .inner
                .client
                .retrying(deadline, |zk| async move {
                    zk.get_and_watch_children(dir).await
                })
                .await;
            let (children, _, watcher) = match watched {
                Ok(watched) => watched,
                Err(err) if err.code() == ErrorCode::NoNode => {
                    match self.inner.client.ensure_path(dir, deadline).await {
                        Ok(()) => continue,
                        Err(err) if err.code() == ErrorCode::Timeout => return Ok(None),
                        Err(err) => return Err(err),
                    }
                }
                Err(err) if err.code() == ErrorCode::Timeout => return Ok(None),
                Err(err) => return Err(err),
            };
            if children.iter().any(|c| item_sequence(c).is_some()) {
                continue;
            }
            let woke = with_deadline(deadline, async {
                tokio::select! {
                    _ = watcher.changed() => Ok(()),
                    _ = self.inner.client.closed() => Err(Error::closed()),
                }
            })
            .await;
            match woke {
                Ok(result) => result?,
                Err(_) => return Ok(None),
            }
        }
    }

    /// A poll that the deadline cuts only while the connection is down: a
    /// connected poll (a round trip) finishes, since an item it claimed and
    /// had to give back would return behind the other consumers' caches
    /// (out of order); a poll stuck in a partition gives up at the deadline
    /// (its claim, if any, gives the item back once it can).
    async fn poll_bounded<T>(
        &self,
        deadline: Option<Instant>,
        poll: impl Future<Output = Result<Option<T>>>,
    ) -> Result<Option<T>> {
        let Some(deadline) = deadline else {
            return poll.await;
        };
        tokio::pin!(poll);
        tokio::select! {
            polled = &mut poll => polled,
            () = tokio::time::sleep_until(deadline) => {
                let mut states = self.inner.client.subscribe();
                loop {
                    if !self.inner.client.state().is_usable() {
                        return Ok(None);
                    }
                    tokio::select! {
                        polled = &mut poll => return polled,
                        _ = states.recv() => {}
                    }
                }
            }
        }
    }

    /// Deletes this consumer's claim marker (each consumer keeps the one of
    /// its last take until its next take, for the exactly-once check after a
    /// connection loss): a queue object that is done leaves nothing behind.
    /// The object stays usable.
    pub async fn close(&self) -> Result<()> {
        // In a task of its own: the marker it takes out of the cache is nobody else's to delete.
        let inner = self.inner.clone();
        let closing = runtime::handle().spawn(async move {
            match inner.cache.lock().await.last_marker.take() {
                Some(marker) => crate::client::delete_confirmed(&inner.client, &marker).await,
                None => Ok(()),
            }
        });
        closing
            .await
            .map_err(|_| Error::new(ErrorCode::Internal, "close task ended"))?
    }

    /// Number of items: the directory's child count, one request whatever
    /// the backlog. Children that are not items (written there by somebody
    /// else) are counted too.
    pub async fn size(&self) -> Result<usize> {
        let dir = self.inner.dir.as_str();
        let stat = self
            .inner
            .client
            .retrying(None, |zk| async move { zk.check_stat(dir).await })
            .await
            .map_err(|err| self.about(err))?;
        Ok(stat.map_or(0, |stat| stat.num_children.max(0) as usize))
    }

    /// The error with the queue's path (and chroot) in its message.
    pub(crate) fn about(&self, err: Error) -> Error {
        self.inner.client.about(err, "queue", &self.inner.dir)
    }
}

impl Inner {
    /// The cached head (with the items given back since put in at their
    /// places), listing again when the cache is exhausted.
    async fn head(&self, cache: &mut Cache) -> Result<Option<String>> {
        let to_put_back = std::mem::take(&mut *self.to_put_back.lock().expect("not poisoned"));
        for name in to_put_back {
            cache.put_back(&name);
        }
        if cache.names.is_empty() {
            cache.names = self.list().await?;
        }
        Ok(cache.names.front().cloned())
    }

    /// The item to claim next. With other consumers, see `Cache::take_shared`.
    /// Alone (as far as we know), the head, also right after a lost race: the
    /// claim after it lists the markers. (A random pick past the head after a
    /// lost race, as before the split, skipped items that the others then
    /// took for gone by our marker: one waited out a 6 s SIGSTOP of ours,
    /// overtaken by 940, found by an adversarial review.)
    async fn next_claim(&self, cache: &mut Cache) -> Result<Option<String>> {
        if self.head(cache).await?.is_none() {
            return Ok(None);
        }
        if cache.peers.count() > 1 {
            return Ok(cache.take_shared());
        }
        Ok(cache.take_at(0))
    }

    async fn list(&self) -> Result<VecDeque<String>> {
        let dir = self.dir.as_str();
        let children = match self
            .client
            .retrying(None, |zk| async move { zk.list_children(dir).await })
            .await
        {
            Ok(children) => children,
            Err(err) if err.code() == ErrorCode::NoNode => return Ok(VecDeque::new()),
            Err(err) => return Err(err),
        };
        let mut items: Vec<(i64, String)> = children
            .into_iter()
            .filter_map(|c| item_sequence(&c).map(|s| (s, c)))
            .collect();
        items.sort_by(|a, b| a.1.cmp(&b.1));
        sort_by_sequence(&mut items, |(sequence, _)| *sequence);
        Ok(items.into_iter().map(|(_, name)| name).collect())
    }

    async fn read(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let path = format!("{}/{}", self.dir, name);
        let found = self.client.read_if_present(&path).await?;
        Ok(found.map(|(data, _)| data))
    }
}

/// `<dir>.zkrecipes`: `path::validate` keeps that name from every recipe.
fn bookkeeping_dir(dir: &str) -> String {
    format!("{dir}{}", path::RESERVED_SUFFIX)
}

/// A queue object dropped without `close` leaves no claim marker behind for
/// the rest of the session (found by an adversarial test: a queue object per
/// request piled up one ephemeral node each).
impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(marker) = self.cache.get_mut().last_marker.take() {
            let client = self.client.clone();
            runtime::handle().spawn(async move {
                let _ = crate::client::delete_confirmed(&client, &marker).await;
            });
        }
    }
}

fn item_sequence(name: &str) -> Option<i64> {
    let (prefix, sequence) = split_sequence(name)?;
    (prefix == ITEM_PREFIX).then_some(sequence)
}

/// An item claimed for a caller who is gone could not go back: it is out of the queue and
/// was delivered to nobody, which the library cannot mend by itself.
fn cannot_put_back(dir: &str, item: &str, err: &Error) {
    let reason = err.to_string();
    recipe_event!(
        Recipe::Queue,
        ERROR,
        path = dir,
        item,
        reason,
        "queue {dir}: cannot put back {item}, which left the queue undelivered: {reason}"
    );
}

pub(crate) fn empty() -> Error {
    Error::new(ErrorCode::NoSuchElement, "empty")
}
