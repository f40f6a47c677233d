//! The lock recipe: an exclusive lock, and each side of a read/write lock.
//!
//! Contract, including failures:
//! - Fair (FIFO by sequence); a waiter watches only the contender it waits
//!   for, with a *data* watch, and re-reads the children after **any** event,
//!   so a predecessor that vanishes can never strand it (Apache `WriteLock` bug).
//! - `acquire` sends the create and the list of children together: an
//!   uncontended acquire is one round trip, acquire + release two.
//! - A create whose reply was lost may have happened: the node is found again
//!   by the uuid in its name and adopted only if its `ephemeralOwner` is our
//!   session. Giving up (timeout, error, cancellation) deletes it.
//! - The holder is told (`LOST`) when its node disappears: session expiry or
//!   an operator's delete. None of the peers does this.
//! - `release` reports success only once the delete is confirmed.
//! - Reentrant per owner with a hold count (Rust: the lock object).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use zookeeper_client as zk;

use super::contenders::{self, Contender, Kind};
use crate::client::{expired, with_deadline, Client};
use crate::error::{Error, ErrorCode, Result};
use crate::{path, runtime};

/// Who holds a lock inside this process. Reentrancy is per owner: the Rust API
/// uses one owner per lock object; bindings pass a thread id (Java, Python).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Owner(pub u64);

/// What a lock tells its listeners.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockEvent {
    Acquired {
        fencing_token: i64,
    },
    Released,
    /// The lock node is gone while we held it; the lock is no longer held.
    Lost {
        reason: Error,
    },
}

/// One contender as `participants()` reports it, holder first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Participant {
    pub node: String,
    pub identity: String,
    pub is_reader: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Exclusive,
    Read,
    Write,
}

impl Side {
    fn marker(self) -> &'static str {
        match self {
            Side::Exclusive => contenders::EXCLUSIVE_MARKER,
            Side::Read => contenders::READ_MARKER,
            Side::Write => contenders::WRITE_MARKER,
        }
    }
}

#[derive(Clone, Debug)]
struct Held {
    owner: Owner,
    count: u32,
    node: String,
    fencing_token: i64,
    monitor: AbortHandle,
    /// Set before our own delete, so that the monitor does not call it a loss.
    releasing: Arc<AtomicBool>,
}

/// Our contender node right after its create, with what was pipelined behind it.
struct Created {
    node: String,
    fencing_token: i64,
    session: i64,
    listing: Option<Vec<String>>,
    /// The child watch set by that listing: a holder's loss detector that cost
    /// no extra request (it fires before the reply of our own delete).
    children_watch: Option<zk::OneshotWatcher>,
}

/// An exclusive lock (`WriteLock::new`) or one side of a `ReadWriteLock`.
#[derive(Clone)]
pub struct Lock {
    core: Arc<LockCore>,
}

/// The exclusive lock of API.md.
pub type WriteLock = Lock;

pub(crate) struct LockCore {
    client: Client,
    dir: String,
    uuid: String,
    side: Side,
    /// The other side of a read/write lock, for downgrade and upgrade rules.
    sibling: Mutex<Weak<LockCore>>,
    held: Mutex<Option<Held>>,
    /// `true` while some owner holds the lock: other owners wait on it locally.
    busy: watch::Sender<bool>,
    /// One ZooKeeper contention at a time per lock object.
    gate: tokio::sync::Mutex<()>,
    events: broadcast::Sender<LockEvent>,
}

impl Lock {
    /// An exclusive, fair, reentrant lock on the directory `dir` (created on
    /// first use). Fails with `INVALID_PATH` before anything is sent.
    pub fn new(client: &Client, dir: &str) -> Result<Lock> {
        Lock::with_side(
            client,
            dir,
            Side::Exclusive,
            uuid::Uuid::new_v4().to_string(),
        )
    }

    pub(crate) fn with_side(client: &Client, dir: &str, side: Side, uuid: String) -> Result<Lock> {
        path::validate(dir)?;
        let (busy, _) = watch::channel(false);
        let (events, _) = broadcast::channel(64);
        let core = LockCore {
            client: client.clone(),
            dir: dir.to_string(),
            uuid,
            side,
            sibling: Mutex::new(Weak::new()),
            held: Mutex::new(None),
            busy,
            gate: tokio::sync::Mutex::new(()),
            events,
        };
        Ok(Lock {
            core: Arc::new(core),
        })
    }

    pub(crate) fn pair(&self, other: &Lock) {
        *self.core.sibling.lock().unwrap() = Arc::downgrade(&other.core);
        *other.core.sibling.lock().unwrap() = Arc::downgrade(&self.core);
    }

    pub fn dir(&self) -> &str {
        &self.core.dir
    }

    /// Waits as long as it takes.
    pub async fn acquire(&self) -> Result<LockGuard> {
        let token = self.lock_as(Owner::default(), Wait::Forever).await?;
        Ok(self.guard(token.expect("an unbounded wait ends with the lock")))
    }

    /// `None` when somebody else holds the lock. Costs one request when the
    /// lock is visibly held.
    pub async fn try_acquire(&self) -> Result<Option<LockGuard>> {
        Ok(self
            .lock_as(Owner::default(), Wait::No)
            .await?
            .map(|t| self.guard(t)))
    }

    /// `None` when the lock was not obtained within `timeout` (one deadline for
    /// the whole call); nothing is left on the server then.
    pub async fn acquire_timeout(&self, timeout: Duration) -> Result<Option<LockGuard>> {
        Ok(self
            .lock_as(Owner::default(), Wait::For(timeout))
            .await?
            .map(|t| self.guard(t)))
    }

    fn guard(&self, fencing_token: i64) -> LockGuard {
        LockGuard {
            lock: self.clone(),
            owner: Owner::default(),
            fencing_token,
            released: false,
        }
    }

    /// Acquires for `owner`; returns the fencing token, `None` if not obtained.
    /// The form the bindings use (they release with `unlock_as`).
    pub async fn lock_as(&self, owner: Owner, wait: Wait) -> Result<Option<i64>> {
        let deadline = wait.deadline();
        self.core.lock_as(owner, deadline, wait == Wait::No).await
    }

    /// Drops one hold of `owner`; at zero deletes the node (confirmed).
    /// `NOT_OWNER` if `owner` does not hold the lock.
    pub async fn unlock_as(&self, owner: Owner) -> Result<()> {
        self.core.unlock_as(owner).await
    }

    pub fn is_held(&self) -> bool {
        self.core.held.lock().unwrap().is_some()
    }

    pub fn is_held_by(&self, owner: Owner) -> bool {
        self.core
            .held
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|h| h.owner == owner)
    }

    pub fn hold_count(&self, owner: Owner) -> u32 {
        self.core
            .held
            .lock()
            .unwrap()
            .as_ref()
            .filter(|h| h.owner == owner)
            .map_or(0, |h| h.count)
    }

    /// The czxid of our lock node while held: globally increasing across the
    /// ensemble, unlike the per-directory sequence number.
    pub fn fencing_token(&self) -> Option<i64> {
        self.core
            .held
            .lock()
            .unwrap()
            .as_ref()
            .map(|h| h.fencing_token)
    }

    /// Path of our lock node while held.
    pub fn node_path(&self) -> Option<String> {
        self.core
            .held
            .lock()
            .unwrap()
            .as_ref()
            .map(|h| format!("{}/{}", self.core.dir, h.node))
    }

    pub fn subscribe(&self) -> broadcast::Receiver<LockEvent> {
        self.core.events.subscribe()
    }

    /// Every contender in lock order with its identity; the first holds the lock.
    pub async fn participants(&self) -> Result<Vec<Participant>> {
        self.core.participants().await
    }
}

/// How long `lock_as` may wait.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wait {
    No,
    Forever,
    For(Duration),
}

impl Wait {
    /// From a binding's optional seconds: `None` = forever; refuses NaN and negatives.
    pub fn from_secs(timeout: Option<f64>) -> Result<Wait> {
        match timeout {
            None => Ok(Wait::Forever),
            Some(s) if s.is_nan() || s < 0.0 => Err(Error::invalid_argument(format!(
                "timeout must be >= 0, got {s}"
            ))),
            Some(s) if s > 1e9 => Ok(Wait::Forever),
            Some(s) => Ok(Wait::For(Duration::from_secs_f64(s))),
        }
    }

    fn deadline(self) -> Option<Instant> {
        match self {
            Wait::For(d) => Some(Instant::now().checked_add(d).unwrap_or_else(far_future)),
            _ => None,
        }
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86400 * 365 * 30)
}

/// A held lock. `release()` returns once the node is gone; dropping the guard
/// releases in the background.
#[must_use = "dropping the guard releases the lock"]
pub struct LockGuard {
    lock: Lock,
    owner: Owner,
    fencing_token: i64,
    released: bool,
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockGuard")
            .field("dir", &self.lock.dir())
            .field("fencing_token", &self.fencing_token)
            .finish()
    }
}

impl LockGuard {
    pub fn fencing_token(&self) -> i64 {
        self.fencing_token
    }

    pub fn lock(&self) -> &Lock {
        &self.lock
    }

    pub async fn release(mut self) -> Result<()> {
        self.released = true;
        self.lock.unlock_as(self.owner).await
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if !self.released {
            let lock = self.lock.clone();
            let owner = self.owner;
            runtime::handle().spawn(async move { lock.unlock_as(owner).await });
        }
    }
}

/// Removes a node we created unless disarmed: cancellation (a dropped future)
/// or an error must never leave a contender behind that blocks everybody.
struct NodeCleanup {
    client: Client,
    path: Option<String>,
}

impl NodeCleanup {
    fn disarm(mut self) {
        self.path = None;
    }
}

impl Drop for NodeCleanup {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            let client = self.client.clone();
            runtime::handle().spawn(async move { delete_confirmed(&client, &path).await });
        }
    }
}

/// Armed while a create is in flight: if the call is abandoned (deadline,
/// cancellation) the create may still land, so every node of this lock object
/// that it does not hold is swept, under the gate so that no live contention
/// of the same object is touched.
struct SweepOnDrop(Option<Arc<LockCore>>);

impl SweepOnDrop {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for SweepOnDrop {
    fn drop(&mut self) {
        if let Some(core) = self.0.take() {
            runtime::handle().spawn(async move {
                let _gate = core.gate.lock().await;
                let Ok(session) = core.client.session_id() else {
                    return;
                };
                match core.find_own_node(session, None).await {
                    Ok(Some((node, _))) => {
                        let _ =
                            delete_confirmed(&core.client, &format!("{}/{}", core.dir, node)).await;
                    }
                    Ok(None) => {}
                    Err(err) => tracing::warn!("cannot sweep an abandoned lock node: {err}"),
                }
            });
        }
    }
}

/// Deletes `path`, retrying across connection losses until the server
/// confirms it is gone (or the session that owned it has ended).
pub(crate) async fn delete_confirmed(client: &Client, path: &str) -> Result<()> {
    loop {
        let Ok(zk) = client.zk() else { return Ok(()) };
        let session = zk.session_id().0;
        match zk.delete(path, None).await.map_err(Error::from) {
            Ok(()) => return Ok(()),
            Err(err) => match err.code() {
                ErrorCode::NoNode | ErrorCode::SessionExpired | ErrorCode::Closed => return Ok(()),
                ErrorCode::ConnectionLoss => {
                    drop(zk);
                    if let Err(err) = client.await_usable(session, None).await {
                        // Expired or closed: the ephemeral node went with the session.
                        if matches!(err.code(), ErrorCode::SessionExpired | ErrorCode::Closed) {
                            return Ok(());
                        }
                    }
                }
                _ => return Err(err),
            },
        }
    }
}

impl LockCore {
    fn node_prefix(&self) -> String {
        format!("{}/_c_{}-{}", self.dir, self.uuid, self.side.marker())
    }

    fn sibling(&self) -> Option<Arc<LockCore>> {
        self.sibling.lock().unwrap().upgrade()
    }

    /// Re-enters if `owner` holds; `Some(false)` if another owner holds.
    fn reenter(&self, owner: Owner) -> Option<std::result::Result<i64, ()>> {
        let mut held = self.held.lock().unwrap();
        let h = held.as_mut()?;
        if h.owner == owner {
            h.count += 1;
            Some(Ok(h.fencing_token))
        } else {
            Some(Err(()))
        }
    }

    async fn lock_as(
        self: &Arc<Self>,
        owner: Owner,
        deadline: Option<Instant>,
        try_only: bool,
    ) -> Result<Option<i64>> {
        self.client.zk()?;
        if self.side == Side::Write {
            if let Some(read) = self.sibling() {
                if read
                    .held
                    .lock()
                    .unwrap()
                    .as_ref()
                    .is_some_and(|h| h.owner == owner)
                    && !self.is_held_by(owner)
                {
                    return Err(Error::new(
                        ErrorCode::WouldDeadlock,
                        "the read lock is held by this owner: upgrading to the write lock would wait forever",
                    ));
                }
            }
        }
        loop {
            match self.reenter(owner) {
                Some(Ok(token)) => return Ok(Some(token)),
                Some(Err(())) if try_only => return Ok(None),
                Some(Err(())) => {
                    // Another owner of this object holds it: wait locally, no request.
                    let mut busy = self.busy.subscribe();
                    let freed = with_deadline(deadline, async {
                        tokio::select! {
                            _ = busy.wait_for(|b| !*b) => Ok(()),
                            _ = self.client.closed() => Err(Error::closed()),
                        }
                    });
                    match freed.await {
                        Ok(r) => r?,
                        Err(_) => return Ok(None),
                    }
                    continue;
                }
                None => {}
            }
            let gate = match with_deadline(deadline, self.gate.lock()).await {
                Ok(gate) => gate,
                Err(_) => return Ok(None),
            };
            if self.held.lock().unwrap().is_some() {
                continue;
            }
            let result = self.contend(owner, deadline, try_only).await;
            drop(gate);
            return result;
        }
    }

    fn is_held_by(&self, owner: Owner) -> bool {
        self.held
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|h| h.owner == owner)
    }

    /// The contender we must wait for, if any.
    fn blocker<'a>(
        &self,
        owner: Owner,
        contenders: &'a [Contender],
        ours: usize,
    ) -> Option<&'a Contender> {
        match self.side {
            Side::Exclusive | Side::Write => ours.checked_sub(1).map(|i| &contenders[i]),
            Side::Read => {
                // A write holder may take the read lock (downgrade): our own
                // writer only blocks us when another owner of this object holds it.
                let own_writer_passes = self.sibling().is_some_and(|w| {
                    w.held
                        .lock()
                        .unwrap()
                        .as_ref()
                        .is_some_and(|h| h.owner == owner)
                });
                contenders[..ours].iter().rev().find(|c| {
                    c.kind == Kind::Write && !(own_writer_passes && c.is_ours(&self.uuid))
                })
            }
        }
    }

    /// Whether a newcomer would have to wait, judged from a listing alone.
    fn visibly_blocked(&self, owner: Owner, contenders: &[Contender]) -> bool {
        self.blocker(owner, contenders, contenders.len()).is_some()
    }

    async fn list(&self, deadline: Option<Instant>) -> Result<Vec<Contender>> {
        let dir = self.dir.as_str();
        match self
            .client
            .retrying(deadline, |zk| async move { zk.list_children(dir).await })
            .await
        {
            Ok(children) => Ok(contenders::sorted(&children)),
            Err(err) if err.code() == ErrorCode::NoNode => Ok(Vec::new()),
            Err(err) => Err(err),
        }
    }

    async fn contend(
        self: &Arc<Self>,
        owner: Owner,
        deadline: Option<Instant>,
        try_only: bool,
    ) -> Result<Option<i64>> {
        if try_only && self.visibly_blocked(owner, &self.list(deadline).await?) {
            return Ok(None);
        }
        let mut created = self.create_node(deadline).await?;
        let mut cleanup = NodeCleanup {
            client: self.client.clone(),
            path: Some(format!("{}/{}", self.dir, created.node)),
        };
        loop {
            let contenders = match created.listing.take() {
                Some(children) => contenders::sorted(&children),
                None => match self.list(deadline).await {
                    Ok(contenders) => contenders,
                    Err(err) if err.code() == ErrorCode::Timeout => return Ok(None),
                    Err(err) => return Err(err),
                },
            };
            let Some(ours) = contenders.iter().position(|c| c.name == created.node) else {
                if self.client.session_id()? != created.session {
                    return Err(expired());
                }
                // Deleted by somebody else while we waited: take a new place in line.
                cleanup.disarm();
                created = self.create_node(deadline).await?;
                cleanup = NodeCleanup {
                    client: self.client.clone(),
                    path: Some(format!("{}/{}", self.dir, created.node)),
                };
                continue;
            };
            let Some(blocker) = self.blocker(owner, &contenders, ours) else {
                cleanup.disarm();
                let token = created.fencing_token;
                self.take_hold(owner, created);
                return Ok(Some(token));
            };
            // A waiter must not keep the child watch: it would wake on every join.
            created.children_watch = None;
            if try_only {
                drop(cleanup);
                return Ok(None);
            }
            match self.wait_for_change(&blocker.name, deadline).await {
                Ok(()) => {}
                Err(err) if err.code() == ErrorCode::Timeout => return Ok(None),
                Err(err) => return Err(err),
            }
        }
    }

    /// Arms a data watch on `blocker` and waits for any event on it. A blocker
    /// that is already gone returns at once; the caller re-reads either way.
    async fn wait_for_change(&self, blocker: &str, deadline: Option<Instant>) -> Result<()> {
        let path = format!("{}/{}", self.dir, blocker);
        let path = path.as_str();
        let watched = self
            .client
            .retrying(deadline, |zk| async move {
                match zk.get_and_watch_data(path).await {
                    Ok((_, _, watcher)) => Ok(Some(watcher)),
                    Err(zk::Error::NoNode) => Ok(None),
                    Err(err) => Err(err),
                }
            })
            .await?;
        let Some(watcher) = watched else {
            return Ok(());
        };
        with_deadline(deadline, async {
            tokio::select! {
                _ = watcher.changed() => Ok(()),
                _ = self.client.closed() => Err(Error::closed()),
            }
        })
        .await?
    }

    /// Creates our contender node with the children listing pipelined behind it.
    async fn create_node(self: &Arc<Self>, deadline: Option<Instant>) -> Result<Created> {
        let prefix = self.node_prefix();
        let options = zk::CreateMode::EphemeralSequential.with_acls(self.client.acls());
        let identity = self.client.identity().as_bytes().to_vec();
        loop {
            let zk = self.client.zk()?;
            let session = zk.session_id().0;
            let create = zk.create(&prefix, &identity, &options);
            let list = zk.list_and_watch_children(&self.dir);
            let sweep = SweepOnDrop(Some(self.clone()));
            let (created, listed) =
                with_deadline(deadline, async { tokio::join!(create, list) }).await?;
            sweep.disarm();
            match created.map_err(Error::from) {
                Ok((stat, sequence)) => {
                    let node = format!("{}{}", &prefix[self.dir.len() + 1..], sequence);
                    let (listing, children_watch) = match listed {
                        Ok((children, watch)) => (Some(children), Some(watch)),
                        Err(_) => (None, None),
                    };
                    return Ok(Created {
                        node,
                        fencing_token: stat.czxid,
                        session,
                        listing,
                        children_watch,
                    });
                }
                Err(err) if err.code() == ErrorCode::NoNode => {
                    drop(zk);
                    self.client.ensure_path(&self.dir, deadline).await?;
                }
                Err(err) if err.is_connection_loss() => {
                    drop(zk);
                    if let Some((node, fencing_token)) =
                        self.find_own_node(session, deadline).await?
                    {
                        return Ok(Created {
                            node,
                            fencing_token,
                            session,
                            listing: None,
                            children_watch: None,
                        });
                    }
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// After a lost create reply: our node, if the create happened. Adopted
    /// only if our current session owns it; anything else with our uuid is
    /// deleted so that it cannot block the line.
    async fn find_own_node(
        &self,
        session: i64,
        deadline: Option<Instant>,
    ) -> Result<Option<(String, i64)>> {
        let dir = self.dir.as_str();
        let children = self
            .client
            .retrying(deadline, |zk| async move { zk.list_children(dir).await })
            .await;
        let children = match children {
            Ok(children) => children,
            Err(err) if err.code() == ErrorCode::NoNode => return Ok(None),
            Err(err) => return Err(err),
        };
        if self.client.session_id()? != session {
            return Err(expired());
        }
        let mine = format!("_c_{}-{}", self.uuid, self.side.marker());
        for child in children.into_iter().filter(|c| c.starts_with(&mine)) {
            let path = format!("{}/{}", self.dir, child);
            let p = path.as_str();
            let stat = self
                .client
                .retrying(deadline, |zk| async move { zk.check_stat(p).await })
                .await?;
            match stat {
                Some(stat) if stat.ephemeral_owner == session && !self.is_current_node(&child) => {
                    return Ok(Some((child, stat.czxid)));
                }
                Some(_) if !self.is_current_node(&child) => {
                    delete_confirmed(&self.client, &path).await?;
                }
                _ => {}
            }
        }
        Ok(None)
    }

    fn is_current_node(&self, child: &str) -> bool {
        self.held
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|h| h.node == child)
    }

    fn take_hold(self: &Arc<Self>, owner: Owner, created: Created) {
        let releasing = Arc::new(AtomicBool::new(false));
        let monitor = runtime::handle()
            .spawn(monitor_holder(
                Arc::downgrade(self),
                created.node.clone(),
                created.session,
                created.children_watch,
                releasing.clone(),
            ))
            .abort_handle();
        let fencing_token = created.fencing_token;
        let held = Held {
            owner,
            count: 1,
            node: created.node,
            fencing_token,
            monitor,
            releasing,
        };
        *self.held.lock().unwrap() = Some(held);
        self.busy.send_replace(true);
        let _ = self.events.send(LockEvent::Acquired { fencing_token });
    }

    async fn unlock_as(&self, owner: Owner) -> Result<()> {
        let (node, monitor) = {
            let mut held = self.held.lock().unwrap();
            match held.as_mut() {
                Some(h) if h.owner == owner => {
                    if h.count > 1 {
                        h.count -= 1;
                        return Ok(());
                    }
                    h.releasing.store(true, Ordering::SeqCst);
                    (h.node.clone(), h.monitor.clone())
                }
                _ => {
                    return Err(Error::new(
                        ErrorCode::NotOwner,
                        "the lock is not held by this owner",
                    ))
                }
            }
        };
        // Keep "held" until the server confirms the delete: never report
        // released while our node may still be first in line.
        let result = delete_confirmed(&self.client, &format!("{}/{}", self.dir, node)).await;
        if result.is_ok() {
            // Its watch has fired by now (events precede the reply), so stopping
            // the monitor costs no watch-removal request.
            monitor.abort();
            self.drop_hold(LockEvent::Released);
        }
        result
    }

    fn drop_hold(&self, event: LockEvent) {
        if self.held.lock().unwrap().take().is_some() {
            self.busy.send_replace(false);
            let _ = self.events.send(event);
        }
    }

    async fn participants(&self) -> Result<Vec<Participant>> {
        let contenders = self.list(None).await?;
        let zk = self.client.zk()?;
        let paths: Vec<String> = contenders
            .iter()
            .map(|c| format!("{}/{}", self.dir, c.name))
            .collect();
        // All getData requests are sent before the first reply is awaited.
        let requests: Vec<_> = paths.iter().map(|p| zk.get_data(p)).collect();
        let mut participants = Vec::with_capacity(contenders.len());
        for (contender, request) in contenders.into_iter().zip(requests) {
            match request.await {
                Ok((data, _)) => participants.push(Participant {
                    node: contender.name,
                    identity: String::from_utf8_lossy(&data).into_owned(),
                    is_reader: contender.kind == Kind::Read,
                }),
                Err(zk::Error::NoNode) => {}
                Err(err) => return Err(err.into()),
            }
        }
        Ok(participants)
    }
}

/// Watches the holder's own node: gone while held means the lock is lost.
/// Starts from the free child watch of the acquiring listing when there is
/// one, and arms a data watch on our node only once the directory changes.
async fn monitor_holder(
    core: Weak<LockCore>,
    node: String,
    session: i64,
    children_watch: Option<zk::OneshotWatcher>,
    releasing: Arc<AtomicBool>,
) {
    let Some(client) = core.upgrade().map(|lock| lock.client.clone()) else {
        return;
    };
    let path = match core.upgrade() {
        Some(lock) => format!("{}/{}", lock.dir, node),
        None => return,
    };
    let reason = watch_until_lost(&client, &path, session, children_watch, &releasing).await;
    if releasing.load(Ordering::SeqCst) {
        return;
    }
    if let Some(lock) = core.upgrade() {
        if reason.code() == ErrorCode::Closed {
            lock.drop_hold(LockEvent::Released);
        } else {
            tracing::warn!("lost lock {path}: {reason}");
            lock.drop_hold(LockEvent::Lost { reason });
        }
    }
}

/// Returns why our node is gone (deleted, session expired, client closed).
async fn watch_until_lost(
    client: &Client,
    path: &str,
    session: i64,
    children_watch: Option<zk::OneshotWatcher>,
    releasing: &AtomicBool,
) -> Error {
    if let Some(watch) = children_watch {
        let event = tokio::select! {
            event = watch.changed() => event,
            _ = client.closed() => return Error::closed(),
        };
        if event.event_type == zk::EventType::Session {
            return session_event_reason(event.session_state);
        }
    }
    loop {
        if releasing.load(Ordering::SeqCst) {
            return Error::new(ErrorCode::NoNode, "released");
        }
        let watched = client
            .retrying(None, |zk| async move {
                if zk.session_id().0 != session {
                    return Err(zk::Error::SessionExpired);
                }
                zk.get_and_watch_data(path).await.map(|(_, _, w)| w)
            })
            .await;
        let watcher = match watched {
            Ok(watcher) => watcher,
            Err(err) if err.code() == ErrorCode::NoNode => {
                return Error::new(ErrorCode::NoNode, format!("lock node {path} was deleted"))
            }
            Err(err) => return err,
        };
        let event = tokio::select! {
            event = watcher.changed() => event,
            _ = client.closed() => return Error::closed(),
        };
        match event.event_type {
            zk::EventType::NodeDeleted => {
                return Error::new(ErrorCode::NoNode, format!("lock node {path} was deleted"))
            }
            zk::EventType::Session => return session_event_reason(event.session_state),
            _ => continue,
        }
    }
}

fn session_event_reason(state: zk::SessionState) -> Error {
    match state {
        zk::SessionState::Closed => Error::closed(),
        _ => expired(),
    }
}
