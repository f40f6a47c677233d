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

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::oneshot;
use tokio::time::Instant;
use zookeeper_client as zk;

use crate::client::{while_usable, with_deadline, Client, ConnectionState, MAX_PACKET};
use crate::error::{Error, ErrorCode, Result};
use crate::wait::Wait;
use crate::{path, runtime};

const ENTRY_PREFIX: &str = "entry-";
pub const DEFAULT_PRIORITY: u16 = 100;
pub const MAX_PRIORITY: u16 = 999;
/// Room for the request header, the path and the ACL of one operation.
const OP_OVERHEAD: usize = 512;
/// How a work queue object consumes.
#[derive(Clone, Debug)]
pub struct WorkQueueOptions {
    /// Items claimed by one transaction (and buffered until handed out).
    pub prefetch: usize,
    /// An item delivered this many times is moved to `<path>/dead` instead
    /// of being delivered again. `None`: no limit.
    pub max_deliveries: Option<u32>,
}

impl WorkQueueOptions {
    /// Options from numbers as a binding received them (any sign, any
    /// width), checked here so that every language's error names the number
    /// its caller gave.
    pub fn from_numbers(prefetch: i64, max_deliveries: Option<i64>) -> Result<WorkQueueOptions> {
        let options = WorkQueueOptions {
            prefetch: usize::try_from(prefetch)
                .ok()
                .filter(|p| (1..=MAX_PREFETCH).contains(p))
                .ok_or_else(|| bad_prefetch(prefetch))?,
            max_deliveries: match max_deliveries {
                None => None,
                Some(max) => Some(
                    u32::try_from(max)
                        .ok()
                        .filter(|m| *m >= 1)
                        .ok_or_else(|| bad_max_deliveries(max))?,
                ),
            },
        };
        Ok(options)
    }

    fn check(&self) -> Result<()> {
        if !(1..=MAX_PREFETCH).contains(&self.prefetch) {
            return Err(bad_prefetch(self.prefetch));
        }
        if self.max_deliveries == Some(0) {
            return Err(bad_max_deliveries(0));
        }
        Ok(())
    }
}

const MAX_PREFETCH: usize = 1000;

fn bad_prefetch(prefetch: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!(
        "prefetch must be between 1 and {MAX_PREFETCH}, got {prefetch}"
    ))
}

fn bad_max_deliveries(max: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("max_deliveries must be at least 1, got {max}"))
}

impl Default for WorkQueueOptions {
    fn default() -> Self {
        WorkQueueOptions {
            prefetch: 1,
            max_deliveries: None,
        }
    }
}

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
}

#[derive(Default)]
struct Cursor {
    claimed: VecDeque<Claimed>,
    /// Available entry names from the last listing, head first.
    names: VecDeque<String>,
    /// Claims lost to other consumers in a row.
    collided: u32,
}

/// How a claim transaction ended.
struct Claim {
    claimed: Vec<Claimed>,
    /// Names read but not claimed (over the packet budget).
    left: Vec<String>,
    /// Another consumer claimed (or changed) one of them first.
    collided: bool,
    /// Most were gone already: list again.
    stale: bool,
}

impl Claim {
    /// The transaction claimed every one of `read` (name, data, version before).
    fn won(read: Vec<(String, Vec<u8>, i32)>, session: i64, left: Vec<String>) -> Claim {
        let claimed = read
            .into_iter()
            .map(|(name, data, version)| Claimed {
                name,
                data,
                version: version + 1,
                session,
            })
            .collect();
        Claim {
            claimed,
            left,
            collided: false,
            stale: false,
        }
    }
}

/// A priority given as any integer: 0–999, else `INVALID_ARGUMENT` naming it.
/// Bindings pass what the caller gave, so that the rule and its message live here.
pub fn priority(value: i64) -> Result<u16> {
    u16::try_from(value)
        .ok()
        .filter(|p| *p <= MAX_PRIORITY)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "priority must be between 0 and {MAX_PRIORITY}, got {value}"
            ))
        })
}

#[derive(Default)]
struct AckBatch {
    pending: Vec<(Claimed, oneshot::Sender<Result<()>>)>,
    committing: bool,
}

#[derive(Clone, Debug)]
struct Claimed {
    name: String,
    data: Vec<u8>,
    /// The entry's version after our claim: its delivery count.
    version: i32,
    session: i64,
}

/// An item claimed for this consumer. `ack` when done; `nack` (or drop) to
/// give it back.
pub struct Delivery {
    inner: Arc<Inner>,
    claimed: Option<Claimed>,
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
        self.inner.check_open()?;
        let deadline = timeout.into().deadline();
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
        for claimed in &claimed {
            self.inner.release(claimed).await?;
        }
        state.names.clear();
        Ok(())
    }
}

impl Delivery {
    pub fn data(&self) -> &[u8] {
        &self.claimed().data
    }

    /// The entry's node name (`entry-<priority>-<seq>`).
    pub fn name(&self) -> &str {
        &self.claimed().name
    }

    pub fn priority(&self) -> u16 {
        priority_of(&self.claimed().name).unwrap_or(DEFAULT_PRIORITY)
    }

    /// How many times this item was delivered, this time included (by
    /// zkrecipes consumers; kazoo's do not count).
    pub fn delivery_count(&self) -> u32 {
        self.claimed().version.max(1) as u32
    }

    /// Completes when this delivery's claim may have passed to another
    /// consumer: its session ended, or the connection has been down past
    /// `Client::suspended_grace`, the margin locks and leaders use. Work on
    /// the job should stop then, before another consumer can start it
    /// (found by the CLI's adversarial test: two runs of one job overlapped
    /// for 10 s).
    pub async fn lost(&self) -> Error {
        let client = &self.inner.client;
        let mut states = client.subscribe();
        let mut down_since = (!client.state().is_usable()).then(Instant::now);
        loop {
            let deadline = down_since.map(|since| since + client.suspended_grace());
            tokio::select! {
                state = states.recv() => match state {
                    Ok(ConnectionState::Suspended) => {
                        down_since.get_or_insert_with(Instant::now);
                    }
                    Ok(ConnectionState::Connected | ConnectionState::Reconnected) => down_since = None,
                    Ok(ConnectionState::Lost) => return crate::client::expired(),
                    Ok(ConnectionState::Closed) | Err(RecvError::Closed) => {
                        return Error::new(ErrorCode::Closed, "the client was closed");
                    }
                    Err(RecvError::Lagged(_)) => {}
                },
                _ = tokio::time::sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                    return Error::new(
                        ErrorCode::SessionExpired,
                        "disconnected past the session's grace: the claim may have passed to another consumer",
                    );
                }
            }
        }
    }

    fn claimed(&self) -> &Claimed {
        self.claimed.as_ref().expect("a delivery is settled once")
    }

    /// Deletes the item: it is done. Fails with `SESSION_EXPIRED` when the
    /// claim went with an expired session (the item will be delivered
    /// again, possibly already was).
    pub async fn ack(mut self) -> Result<()> {
        let claimed = self.claimed.take().expect("a delivery is settled once");
        let inner = self.inner.clone();
        let acked = inner.ack(claimed).await;
        acked.map_err(|err| inner.about(err))
    }

    /// Gives the item back at its place in line.
    pub async fn nack(mut self) -> Result<()> {
        let claimed = self.claimed.take().expect("a delivery is settled once");
        let released = self.inner.release(&claimed).await;
        self.inner.requeue(vec![claimed.name]).await;
        released.map_err(|err| self.inner.about(err))
    }
}

impl Drop for Delivery {
    /// A delivery dropped unsettled (its worker gave up, a cancelled task)
    /// goes back to the queue.
    fn drop(&mut self) {
        if let Some(claimed) = self.claimed.take() {
            self.inner.clone().give_back(vec![claimed]);
        }
    }
}

/// A delivery as a binding hands it to its language: any thread may settle
/// it, once; a second `ack`/`nack` is `INVALID_ARGUMENT`. Dropped unsettled,
/// it gives the item back like the `Delivery` inside.
pub struct DeliverySlot {
    delivery: Mutex<Option<Delivery>>,
}

impl DeliverySlot {
    pub fn new(delivery: Delivery) -> DeliverySlot {
        DeliverySlot {
            delivery: Mutex::new(Some(delivery)),
        }
    }

    /// The delivery, to settle; the slot is empty afterwards.
    pub fn take(&self) -> Result<Delivery> {
        self.delivery.lock().unwrap().take().ok_or_else(|| {
            Error::invalid_argument("the job was already acknowledged or given back")
        })
    }

    pub fn is_settled(&self) -> bool {
        self.delivery.lock().unwrap().is_none()
    }

    /// Reads the delivery while it is unsettled.
    pub fn read<T>(&self, what: impl FnOnce(&Delivery) -> T) -> Result<T> {
        let delivery = self.delivery.lock().unwrap();
        match delivery.as_ref() {
            Some(d) => Ok(what(d)),
            None => Err(Error::invalid_argument(
                "the job was already acknowledged or given back",
            )),
        }
    }
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Delivery");
        if let Some(c) = &self.claimed {
            d.field("name", &c.name)
                .field("bytes", &c.data.len())
                .field("delivery_count", &c.version);
        }
        d.finish()
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

    /// Names given back by this object go back into its view of the line,
    /// at their place: the next `consume` sees them again.
    async fn requeue(&self, names: Vec<String>) {
        let mut state = self.state.lock().await;
        for name in names {
            if let Err(at) = state.names.binary_search(&name) {
                state.names.insert(at, name);
            }
        }
    }

    async fn ensure_dirs(&self) -> Result<()> {
        self.client.ensure_path(&self.entries, None).await?;
        self.client.ensure_path(&self.taken, None).await
    }

    async fn offer_all<D: AsRef<[u8]>>(&self, items: &[D], priority: u16) -> Result<Vec<String>> {
        let priority = self::priority(i64::from(priority))?;
        let prefix = format!("{}/{ENTRY_PREFIX}{priority:03}-", self.entries);
        let chroot = self.client.chroot_len();
        let limit = self.payload_limit(chroot);
        if let Some(big) = items.iter().find(|d| d.as_ref().len() > limit) {
            return Err(Error::invalid_argument(format!(
                "payload of {} bytes exceeds the queue limit of {limit} bytes",
                big.as_ref().len()
            )));
        }
        let mut names = Vec::with_capacity(items.len());
        let mut start = 0;
        while start < items.len() {
            // As many items as fit in one packet.
            let mut end = start;
            let mut bytes = OP_OVERHEAD;
            while end < items.len() {
                let cost = items[end].as_ref().len() + prefix.len() + chroot + OP_OVERHEAD;
                if end > start && bytes + cost > MAX_PACKET {
                    break;
                }
                bytes += cost;
                end += 1;
            }
            names.extend(self.create_batch(&prefix, &items[start..end]).await?);
            start = end;
        }
        Ok(names)
    }

    async fn create_batch<D: AsRef<[u8]>>(&self, prefix: &str, items: &[D]) -> Result<Vec<String>> {
        let options = zk::CreateMode::PersistentSequential.with_acls(self.client.acls());
        loop {
            let zk = self.client.zk()?;
            let mut transaction = zk.new_multi_writer();
            for item in items {
                transaction.add_create(prefix, item.as_ref(), &options)?;
            }
            // Not retried after a connection loss: it may have been applied.
            match transaction.commit().await {
                Ok(results) => {
                    return Ok(results
                        .into_iter()
                        .filter_map(|r| match r {
                            zk::MultiWriteResult::Create { path, .. } => Some(path),
                            _ => None,
                        })
                        .collect())
                }
                Err(zk::MultiWriteError::OperationFailed {
                    source: zk::Error::NoNode,
                    ..
                }) => self.ensure_dirs().await?,
                Err(err) => return Err(zk::Error::from(err).into()),
            }
        }
    }

    /// One claimed item: from the prefetch buffer, else a new batch claimed.
    /// `None` when nothing is available.
    async fn next_claimed(self: &Arc<Self>) -> Result<Option<Claimed>> {
        let mut state = self.state.lock().await;
        loop {
            // After `close()` drained the buffer, nothing may refill it.
            self.check_open()?;
            if let Some(claimed) = state.claimed.pop_front() {
                return Ok(Some(claimed));
            }
            if state.names.is_empty() {
                state.names = self.available().await?;
                if state.names.is_empty() {
                    return Ok(None);
                }
            }
            let len = state.names.len();
            let want = self.options.prefetch.min(len);
            // Under contention, consumers spread out over slots of `want`
            // names: claiming the same head in lockstep would let one of C
            // consumers win each round. The slots widen with each race lost
            // and narrow again with each claim won.
            let slots = (1 + 2 * state.collided as usize)
                .min(len / want.max(1))
                .max(1);
            let start = want * fastrand::usize(..slots);
            let picked: Vec<String> = state.names.drain(start..start + want).collect();
            let claim = self.claim(picked).await?;
            if claim.stale {
                state.names.clear();
            } else if claim.collided {
                state.collided = (state.collided + 1).min(8);
                // Our view of the line is stale: drop what others claimed
                // (a short listing; the entries may be 100,000).
                let taken: std::collections::HashSet<String> =
                    self.taken_names().await?.into_iter().collect();
                state.names.retain(|n| !taken.contains(n));
            } else {
                state.collided = state.collided.saturating_sub(1);
                for name in claim.left {
                    if let Err(at) = state.names.binary_search(&name) {
                        state.names.insert(at, name);
                    }
                }
            }
            state.claimed.extend(claim.claimed);
        }
    }

    async fn taken_names(&self) -> Result<Vec<String>> {
        let taken = self.taken.as_str();
        match self
            .client
            .retrying(None, |zk| async move { zk.list_children(taken).await })
            .await
        {
            Err(err) if err.code() == ErrorCode::NoNode => Ok(Vec::new()),
            other => other,
        }
    }

    /// Entry names not claimed by anybody, head first.
    async fn available(&self) -> Result<VecDeque<String>> {
        let (entries, taken) = (self.entries.as_str(), self.taken.as_str());
        let listed = self
            .client
            .retrying(None, |zk| async move {
                let (entries, taken) =
                    tokio::join!(zk.list_children(entries), zk.list_children(taken));
                let taken = match taken {
                    Ok(taken) => taken,
                    Err(zk::Error::NoNode) => Vec::new(),
                    Err(err) => return Err(err),
                };
                match entries {
                    Ok(entries) => Ok((entries, taken)),
                    Err(zk::Error::NoNode) => Ok((Vec::new(), taken)),
                    Err(err) => Err(err),
                }
            })
            .await?;
        let (mut entries, taken) = listed;
        let taken: std::collections::HashSet<String> = taken.into_iter().collect();
        entries.retain(|e| e.starts_with(ENTRY_PREFIX) && !taken.contains(e));
        entries.sort();
        Ok(entries.into())
    }

    /// Claims `names` in one transaction (those still there and free, as
    /// many as fit in one packet), moving aside the ones past
    /// `max_deliveries`; also returns the names left for a next claim.
    async fn claim(&self, names: Vec<String>) -> Result<Claim> {
        let zk = self.client.zk()?;
        let reads: Vec<_> = names
            .iter()
            .map(|n| zk.get_data(&format!("{}/{n}", self.entries)))
            .collect();
        let mut read = Vec::new();
        let picked = names.len();
        for (name, result) in names
            .into_iter()
            .zip(futures_util::future::join_all(reads).await)
        {
            match result {
                Ok((data, stat)) => read.push((name, data, stat.version)),
                Err(zk::Error::NoNode) => {}
                Err(err) => return Err(err.into()),
            }
        }
        drop(zk);
        // Most of them gone: other consumers took them; our listing is stale.
        if read.len() * 2 < picked {
            return Ok(Claim {
                claimed: Vec::new(),
                left: read.into_iter().map(|(n, _, _)| n).collect(),
                collided: false,
                stale: true,
            });
        }
        if let Some(max) = self.options.max_deliveries {
            let (dead, live): (Vec<_>, Vec<_>) = read
                .into_iter()
                .partition(|(_, _, version)| *version >= max as i32);
            for (name, data, version) in dead {
                self.bury(&name, &data, version).await?;
            }
            read = live;
        }
        // The claim rewrites each entry: as many as fit in one packet.
        let mut budget = MAX_PACKET - OP_OVERHEAD;
        let fits = read
            .iter()
            .take_while(|(_, data, _)| {
                let cost = data.len() + 2 * (self.taken.len() + 32) + 2 * OP_OVERHEAD;
                let fits = cost <= budget;
                budget = budget.saturating_sub(cost);
                fits
            })
            .count()
            .max(1);
        let left: Vec<String> = read
            .drain(fits.min(read.len())..)
            .map(|(n, _, _)| n)
            .collect();
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(self.client.acls());
        while !read.is_empty() {
            let zk = self.client.zk()?;
            let session = zk.session_id().0;
            let mut transaction = zk.new_multi_writer();
            for (name, data, version) in &read {
                transaction.add_create(
                    &format!("{}/{name}", self.taken),
                    &self.consumer,
                    &ephemeral,
                )?;
                transaction.add_set_data(
                    &format!("{}/{name}", self.entries),
                    data,
                    Some(*version),
                )?;
            }
            let committed = transaction.commit().await;
            drop(zk);
            match committed {
                Ok(_) => return Ok(Claim::won(read, session, left)),
                // The claims directory is missing (a queue offered by Apache-style code).
                Err(zk::MultiWriteError::OperationFailed {
                    index: 0,
                    source: zk::Error::NoNode,
                }) => self.client.ensure_path(&self.taken, None).await?,
                // Somebody else got one first, or it changed.
                Err(zk::MultiWriteError::OperationFailed { .. }) => {
                    return Ok(Claim {
                        claimed: Vec::new(),
                        left: Vec::new(),
                        collided: true,
                        stale: false,
                    })
                }
                Err(zk::MultiWriteError::RequestFailed { source })
                    if Error::from(source.clone()).is_connection_loss() =>
                {
                    self.client.await_usable(session, None).await?;
                    // All or nothing: our first claim node tells which.
                    let first = format!("{}/{}", self.taken, read[0].0);
                    let f = first.as_str();
                    let stat = self
                        .client
                        .retrying(None, |zk| async move { zk.check_stat(f).await })
                        .await?;
                    if stat.is_some_and(|s| s.ephemeral_owner == session) {
                        return Ok(Claim::won(read, session, left));
                    }
                }
                Err(err) => return Err(zk::Error::from(err).into()),
            }
        }
        Ok(Claim {
            claimed: Vec::new(),
            left,
            collided: false,
            stale: false,
        })
    }

    /// Moves an item past `max_deliveries` to the dead-letter directory,
    /// unless somebody holds it: its version counts the claims, so an item
    /// read at its last version may be in its last delivery right now (found
    /// by the adversarial test: a job acknowledged on its last delivery was
    /// also buried by another consumer). Creating and deleting the claim node
    /// in the same transaction asserts that nobody holds it.
    async fn bury(&self, name: &str, data: &[u8], version: i32) -> Result<()> {
        let persistent = zk::CreateMode::Persistent.with_acls(self.client.acls());
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(self.client.acls());
        let claim = format!("{}/{name}", self.taken);
        loop {
            let zk = self.client.zk()?;
            let mut transaction = zk.new_multi_writer();
            transaction.add_create(&claim, &self.consumer, &ephemeral)?;
            transaction.add_delete(&claim, None)?;
            transaction.add_create(&format!("{}/{name}", self.dead), data, &persistent)?;
            transaction.add_delete(&format!("{}/{name}", self.entries), Some(version))?;
            match transaction.commit().await {
                Err(zk::MultiWriteError::OperationFailed {
                    index: 0,
                    source: zk::Error::NoNode,
                }) => self.client.ensure_path(&self.taken, None).await?,
                Ok(_) => {
                    tracing::warn!(
                        "{}/{name} delivered {version} times: moved to {}",
                        self.entries,
                        self.dead
                    );
                    return Ok(());
                }
                Err(zk::MultiWriteError::OperationFailed {
                    index: 2,
                    source: zk::Error::NoNode,
                }) => self.client.ensure_path(&self.dead, None).await?,
                // Already buried, held, or changed: not ours to move.
                Err(zk::MultiWriteError::OperationFailed { .. }) => return Ok(()),
                Err(err) => return Err(zk::Error::from(err).into()),
            }
        }
    }

    /// Waits until the entries or the claims change.
    async fn wait_for_change(&self) -> Result<()> {
        let (entries, taken) = (self.entries.as_str(), self.taken.as_str());
        let watched = self
            .client
            .retrying(None, |zk| async move {
                let (e, t) = tokio::join!(
                    zk.list_and_watch_children(entries),
                    zk.list_and_watch_children(taken)
                );
                let e = match e {
                    Ok((names, watch)) => Some((names, watch)),
                    Err(zk::Error::NoNode) => None,
                    Err(err) => return Err(err),
                };
                let t = match t {
                    Ok((names, watch)) => Some((names, watch)),
                    Err(zk::Error::NoNode) => None,
                    Err(err) => return Err(err),
                };
                Ok((e, t))
            })
            .await?;
        let (entries, taken) = watched;
        let taken_names: std::collections::HashSet<&String> =
            taken.iter().flat_map(|(names, _)| names.iter()).collect();
        let any_free = entries.iter().any(|(names, _)| {
            names
                .iter()
                .any(|n| n.starts_with(ENTRY_PREFIX) && !taken_names.contains(n))
        });
        if any_free {
            return Ok(());
        }
        let entries_changed = async {
            match entries {
                Some((_, watch)) => {
                    watch.changed().await;
                }
                // No queue yet: it appears with the first offer.
                None => self
                    .client
                    .ensure_path(&self.entries, None)
                    .await
                    .map(|_| ())?,
            }
            Ok::<(), Error>(())
        };
        let taken_changed = async {
            match taken {
                Some((_, watch)) => {
                    watch.changed().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            changed = entries_changed => changed,
            () = taken_changed => Ok(()),
            () = self.client.closed() => Err(Error::closed()),
        }
    }

    /// Acknowledges `claimed`, together with the acks sent meanwhile.
    async fn ack(self: &Arc<Self>, claimed: Claimed) -> Result<()> {
        let (done, result) = oneshot::channel();
        let flush = {
            let mut acks = self.acks.lock().unwrap();
            acks.pending.push((claimed, done));
            !std::mem::replace(&mut acks.committing, true)
        };
        if flush {
            // Runs to its end whoever waits: the acks of other callers ride on it.
            let inner = self.clone();
            runtime::handle().spawn(async move { inner.flush_acks().await });
        }
        result
            .await
            .map_err(|_| Error::new(ErrorCode::Internal, "ack task ended"))?
    }

    async fn flush_acks(self: Arc<Self>) {
        loop {
            let batch = {
                let mut acks = self.acks.lock().unwrap();
                if acks.pending.is_empty() {
                    acks.committing = false;
                    return;
                }
                std::mem::take(&mut acks.pending)
            };
            self.commit_acks(batch).await;
        }
    }

    async fn commit_acks(&self, mut batch: Vec<(Claimed, oneshot::Sender<Result<()>>)>) {
        while !batch.is_empty() {
            let session = self.client.session_id().ok();
            // Claims of an ended session are not ours any more.
            let (gone, ours): (Vec<_>, Vec<_>) = batch
                .into_iter()
                .partition(|(c, _)| Some(c.session) != session);
            for (claimed, done) in gone {
                let _ = done.send(Err(claim_lost(&claimed)));
            }
            batch = ours;
            if batch.is_empty() {
                return;
            }
            let zk = match self.client.zk() {
                Ok(zk) => zk,
                Err(err) => {
                    for (_, done) in batch {
                        let _ = done.send(Err(err.clone()));
                    }
                    return;
                }
            };
            let mut transaction = zk.new_multi_writer();
            for (claimed, _) in &batch {
                let entry = format!("{}/{}", self.entries, claimed.name);
                let taken = format!("{}/{}", self.taken, claimed.name);
                if transaction
                    .add_delete(&entry, Some(claimed.version))
                    .is_err()
                    || transaction.add_delete(&taken, None).is_err()
                {
                    break;
                }
            }
            let committed = transaction.commit().await;
            drop(zk);
            match committed {
                Ok(_) => {
                    for (_, done) in batch {
                        let _ = done.send(Ok(()));
                    }
                    return;
                }
                Err(zk::MultiWriteError::OperationFailed { index, source }) => {
                    // That one is not ours to delete (or already gone): the
                    // rest go in the next round.
                    let (claimed, done) = batch.remove(index / 2);
                    let err = match source {
                        zk::Error::NoNode if index % 2 == 0 => Ok(()),
                        _ => Err(claim_lost(&claimed)),
                    };
                    let _ = done.send(err);
                }
                Err(zk::MultiWriteError::RequestFailed { source }) => {
                    let err = Error::from(source);
                    if !err.is_connection_loss() {
                        for (_, done) in batch {
                            let _ = done.send(Err(err.clone()));
                        }
                        return;
                    }
                    // Retried in the same session: an ack applied before the
                    // reply was lost finds its entry gone (counted as done).
                    let Some(session) = session else { return };
                    if let Err(err) = self.client.await_usable(session, None).await {
                        for (_, done) in batch {
                            let _ = done.send(Err(err.clone()));
                        }
                        return;
                    }
                    let mut still = Vec::new();
                    for (claimed, done) in batch {
                        let entry = format!("{}/{}", self.entries, claimed.name);
                        let e = entry.as_str();
                        match self
                            .client
                            .retrying(None, |zk| async move { zk.check_stat(e).await })
                            .await
                        {
                            Ok(None) => {
                                let _ = done.send(Ok(()));
                            }
                            Ok(Some(_)) => still.push((claimed, done)),
                            Err(err) => {
                                let _ = done.send(Err(err));
                            }
                        }
                    }
                    batch = still;
                }
            }
        }
    }

    /// Deletes our claim on `claimed`: the item is free again, at its place.
    async fn release(&self, claimed: &Claimed) -> Result<()> {
        if self.client.session_id().ok() != Some(claimed.session) {
            // The claim went with its session: the item is free already.
            return Ok(());
        }
        let taken = format!("{}/{}", self.taken, claimed.name);
        let t = taken.as_str();
        self.client
            .retrying(None, |zk| async move {
                match zk.delete(t, None).await {
                    Err(zk::Error::NoNode) => Ok(()),
                    other => other,
                }
            })
            .await
    }

    /// Releases in the background (a drop, a caller that went away).
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

    fn give_back(self: Arc<Self>, claimed: Vec<Claimed>) {
        let settling = self.client.settling();
        runtime::handle().spawn(async move {
            let _settling = settling;
            let mut names = Vec::new();
            for c in claimed {
                if let Err(err) = self.release(&c).await {
                    tracing::warn!("cannot give back {}/{}: {err}", self.entries, c.name);
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

fn claim_lost(claimed: &Claimed) -> Error {
    Error::new(
        ErrorCode::SessionExpired,
        format!(
            "the claim on {} ended with its session: the item was given back and will be delivered again",
            claimed.name
        ),
    )
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
