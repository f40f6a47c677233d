//! The lock recipe: an exclusive lock, and each side of a read/write lock.
//!
//! Contract, including failures:
//! - Fair (FIFO by sequence); a waiter watches only the contender it waits
//!   for, with a *data* watch, and re-reads the children after **any** event,
//!   so a predecessor that vanishes can never strand it (Apache `WriteLock` bug).
//! - `acquire` sends the create and the list of children together: an
//!   uncontended acquire is one round trip, acquire + release two.
//! - Every attempt has its own node identity (`attempt.rs`): a create whose
//!   reply was lost is found again by it and adopted only if its
//!   `ephemeralOwner` is our session; giving up (deadline, error,
//!   cancellation) deletes it without waiting behind any other attempt.
//! - A timed acquire answers `None` whenever the deadline passes, at any
//!   stage, and has withdrawn its node before answering (when connected).
//!   A timeout of zero is a try: it takes a free lock, never waits.
//! - Owners: reentrancy is per owner with a hold count. Bindings pass a caller
//!   identity (a thread in Java and Python, a task in Python asyncio); the Rust
//!   API and Node have none, so each of their acquires is its own owner and
//!   concurrent acquirers of one object exclude each other.
//! - The holder is told `SUSPENDED` / `RECONNECTED` / `LOST` (`holder.rs`);
//!   `release` reports success only once the delete is confirmed, and reports
//!   a lock lost before its release as the error it was lost with.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use zookeeper_client as zk;

use super::attempt::{Attempt, Created};
use super::contenders::{self, Contender, Kind};
use super::holder::{release_node, Hold, Released};
use crate::client::{expired, while_usable, Client};
use crate::emitter::Emitter;
use crate::error::{Error, ErrorCode, Result};
use crate::handoff::Handoff;
use crate::wait::{far_future, Wait};
use crate::{path, runtime};

/// Who holds a lock inside this process; reentrancy is counted per owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Owner(pub u64);

impl Owner {
    /// An owner used by nobody else, for callers without an identity of their
    /// own (Rust, Node): every acquire is then its own owner. The top bit keeps
    /// it apart from thread ids the bindings pass.
    pub fn unique() -> Owner {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Owner(NEXT.fetch_add(1, Ordering::Relaxed) | 1 << 63)
    }

    /// Made by `unique`: a caller without an identity of its own.
    fn is_anonymous(self) -> bool {
        self.0 & 1 << 63 != 0
    }
}

/// What a lock tells its listeners.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockEvent {
    Acquired {
        fencing_token: i64,
    },
    Released,
    /// The connection dropped while held: the lock may be gone; stop writing
    /// to the protected resource until `Reconnected`.
    Suspended,
    /// The same session is back and our node is still first in line.
    Reconnected,
    /// The lock node is gone while held; the lock is no longer held.
    Lost {
        reason: Error,
    },
}

impl LockEvent {
    /// The event's name in every binding (`"ACQUIRED"`, …).
    pub fn name(&self) -> &'static str {
        match self {
            LockEvent::Acquired { .. } => "ACQUIRED",
            LockEvent::Released => "RELEASED",
            LockEvent::Suspended => "SUSPENDED",
            LockEvent::Reconnected => "RECONNECTED",
            LockEvent::Lost { .. } => "LOST",
        }
    }

    /// Why a `LOST` happened, as a message for the bindings.
    pub fn reason(&self) -> Option<String> {
        match self {
            LockEvent::Lost { reason } => Some(reason.to_string()),
            _ => None,
        }
    }
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
    pub(super) fn marker(self) -> &'static str {
        match self {
            Side::Exclusive => contenders::EXCLUSIVE_MARKER,
            Side::Read => contenders::READ_MARKER,
            Side::Write => contenders::WRITE_MARKER,
        }
    }
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
    side: Side,
    /// The other side of a read/write lock, for downgrade and upgrade rules.
    sibling: Mutex<Weak<LockCore>>,
    /// Current holds, one per owner (several only on the read side).
    holds: Mutex<Vec<Hold>>,
    /// Owners whose hold ended without their release (lost, closed): their
    /// next release answers with that reason instead of `NOT_OWNER`.
    ended: Mutex<Vec<(Owner, Error)>>,
    /// Bumped whenever a hold ends, for a release waiting on a lost hold.
    ended_count: watch::Sender<u64>,
    events: Emitter<LockEvent>,
}

impl Lock {
    /// An exclusive, fair lock on the directory `dir` (created on first use).
    /// Fails with `INVALID_PATH` before anything is sent.
    pub fn new(client: &Client, dir: &str) -> Result<Lock> {
        Lock::with_side(client, dir, Side::Exclusive)
    }

    pub(crate) fn with_side(client: &Client, dir: &str, side: Side) -> Result<Lock> {
        path::validate(dir)?;
        client.check_open()?;
        let events = Emitter::new(64);
        let core = LockCore {
            client: client.clone(),
            dir: dir.to_string(),
            side,
            sibling: Mutex::new(Weak::new()),
            holds: Mutex::new(Vec::new()),
            ended: Mutex::new(Vec::new()),
            ended_count: watch::channel(0).0,
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

    /// Waits as long as it takes. Concurrent callers exclude each other.
    pub async fn acquire(&self) -> Result<LockGuard> {
        let owner = Owner::unique();
        let token = self.lock_as(owner, Wait::Forever).await?;
        Ok(self.guard(owner, token.expect("an unbounded wait ends with the lock")))
    }

    /// `None` when somebody else holds the lock. Costs one request when the
    /// lock is visibly held.
    pub async fn try_acquire(&self) -> Result<Option<LockGuard>> {
        let owner = Owner::unique();
        let token = self.lock_as(owner, Wait::No).await?;
        Ok(token.map(|t| self.guard(owner, t)))
    }

    /// `None` when the lock was not obtained within `timeout` (one deadline for
    /// the whole call); nothing is left on the server then.
    pub async fn acquire_timeout(&self, timeout: Duration) -> Result<Option<LockGuard>> {
        let owner = Owner::unique();
        let token = self.lock_as(owner, Wait::For(timeout)).await?;
        Ok(token.map(|t| self.guard(owner, t)))
    }

    /// Acquires for a caller identity of the user's choice: reentrant for
    /// that owner (each call gets a guard that releases one hold), and the
    /// way to downgrade a read/write lock in Rust: take the read side as the
    /// write guard's owner.
    pub async fn acquire_as(&self, owner: Owner, wait: Wait) -> Result<Option<LockGuard>> {
        let token = self.lock_as(owner, wait).await?;
        Ok(token.map(|t| self.guard(owner, t)))
    }

    fn guard(&self, owner: Owner, fencing_token: i64) -> LockGuard {
        LockGuard {
            lock: self.clone(),
            owner,
            fencing_token,
            released: false,
        }
    }

    /// Acquires for `owner`; returns the fencing token, `None` if not obtained
    /// (never `TIMEOUT`). The form the bindings use (they release with
    /// `unlock_as`). Dropping the future withdraws the attempt's node.
    pub async fn lock_as(&self, owner: Owner, wait: Wait) -> Result<Option<i64>> {
        let locked = self.lock_as_unscoped(owner, wait).await;
        locked.map_err(|err| self.core.about(err))
    }

    async fn lock_as_unscoped(&self, owner: Owner, wait: Wait) -> Result<Option<i64>> {
        let core = &self.core;
        core.client.zk()?;
        loop {
            match core.reenter(owner)? {
                Reentry::Held(token) => return Ok(Some(token)),
                Reentry::NotHeld => break,
                // The owner's previous hold is being released (an abandoned
                // acquire being undone): wait for that, then acquire afresh.
                Reentry::Releasing(node) => core.hold_gone(&node).await,
            }
        }
        core.refuse_upgrade(owner)?;
        core.take_ended(owner);
        if let Some(token) = core.downgrade(owner) {
            return Ok(Some(token));
        }
        let mut attempt = Attempt::new(core.clone(), owner);
        let outcome = match wait.normalized() {
            Wait::No => attempt.run(true).await,
            Wait::Forever => attempt.run(false).await,
            Wait::For(timeout) => {
                let deadline = Instant::now()
                    .checked_add(timeout)
                    .unwrap_or_else(far_future);
                let looked = attempt.looked();
                let run = attempt.run(false);
                tokio::pin!(run);
                match tokio::time::timeout_at(deadline, &mut run).await {
                    Ok(outcome) => outcome,
                    Err(_) => first_look(&core.client, looked, run).await,
                }
            }
        };
        match outcome {
            Ok(Some(token)) => Ok(Some(token)),
            Ok(None) => {
                attempt.abandon().await;
                Ok(None)
            }
            Err(err) => {
                attempt.abandon().await;
                Err(err)
            }
        }
    }

    /// Drops one hold of `owner`; at zero deletes the node (confirmed).
    /// `NOT_OWNER` if `owner` does not hold the lock; the loss's error if its
    /// hold was lost; `CLOSED` after the client closed.
    ///
    /// The release starts when this is called, not when the future is first
    /// polled, and runs to its end even if the future is dropped.
    pub fn unlock_as(
        &self,
        owner: Owner,
    ) -> impl std::future::Future<Output = Result<()>> + Send + 'static {
        self.core.unlock_as(owner)
    }

    /// Releases the oldest hold, whoever its owner: for callers without an
    /// identity (Node), where every hold of an exclusive lock is the only one
    /// and every reader is alike.
    pub fn unlock_one(&self) -> impl std::future::Future<Output = Result<()>> + Send + 'static {
        let owner = self.core.visible(|holds| holds.first().map(|h| h.owner));
        let release = owner.map(|owner| self.core.unlock_as(owner));
        let core = self.core.clone();
        async move {
            match release {
                Some(release) => release.await,
                None => {
                    core.client.zk()?;
                    let ended = core.ended.lock().unwrap().pop();
                    let err = ended.map_or_else(not_owner, |(_, reason)| reason);
                    Err(core.about(err))
                }
            }
        }
    }

    /// Releases every hold of this object, whoever its owner (a binding's
    /// `close()`): no other thread's hold is stranded on the server.
    pub async fn release_all(&self) {
        self.core.release_all().await
    }

    /// For a binding whose caller gave up after `lock_as` succeeded (a
    /// cancelled future, an interrupt): the hold is released, never kept.
    /// The hold is gone from this object's answers before this returns (the
    /// caller never sees a hold it gave up); the node's delete goes on in the
    /// background.
    pub fn abandon_acquired(&self, owner: Owner) {
        let release = self.unlock_as(owner);
        let dir = self.dir().to_string();
        runtime::handle().spawn(async move {
            if let Err(err) = release.await {
                tracing::debug!("undoing an abandoned acquire on {dir}: {err}");
            }
        });
    }

    /// For a binding that carries an acquired hold to its caller across
    /// threads: the hold is released unless the `Handoff` is marked delivered.
    pub fn handoff_acquired(&self, owner: Owner) -> Handoff {
        let lock = self.clone();
        Handoff::new(self.core.client.settling(), move || {
            lock.abandon_acquired(owner)
        })
    }

    /// A hold that is being released no longer counts, here and below.
    pub fn is_held(&self) -> bool {
        self.core.visible(|holds| !holds.is_empty())
    }

    /// How many owners hold through this object (more than one only on the
    /// read side).
    pub fn holders(&self) -> usize {
        self.core.visible(|holds| holds.len())
    }

    pub fn is_held_by(&self, owner: Owner) -> bool {
        self.core.hold_of(owner, |_| ()).is_some()
    }

    pub fn hold_count(&self, owner: Owner) -> u32 {
        self.core.hold_of(owner, |h| h.count).unwrap_or(0)
    }

    /// The czxid of a lock node of ours while held (the oldest hold's):
    /// globally increasing across the ensemble, unlike the sequence number.
    pub fn fencing_token(&self) -> Option<i64> {
        self.core
            .visible(|holds| holds.first().map(|h| h.fencing_token))
    }

    /// The fencing token of `owner`'s hold.
    pub fn fencing_token_of(&self, owner: Owner) -> Option<i64> {
        self.core.hold_of(owner, |h| h.fencing_token)
    }

    /// Path of `owner`'s lock node while it holds the lock.
    pub fn node_path_of(&self, owner: Owner) -> Option<String> {
        let node = self.core.hold_of(owner, |h| h.node.clone())?;
        Some(format!("{}/{}", self.core.dir, node))
    }

    /// Path of our lock node while held (the oldest hold's).
    pub fn node_path(&self) -> Option<String> {
        let holds = self.core.holds.lock().unwrap();
        holds
            .first()
            .map(|h| format!("{}/{}", self.core.dir, h.node))
    }

    pub fn subscribe(&self) -> broadcast::Receiver<LockEvent> {
        self.core.events.subscribe()
    }

    /// Every contender in lock order with its identity; the first holds the lock.
    pub async fn participants(&self) -> Result<Vec<Participant>> {
        let listed = self.core.participants().await;
        listed.map_err(|err| self.core.about(err))
    }
}

enum Started {
    Done(Result<()>),
    Behind(String),
    Running(JoinHandle<Result<()>>, String),
}

enum Reentry {
    NotHeld,
    Held(i64),
    Releasing(String),
}

fn not_owner() -> Error {
    Error::new(ErrorCode::NotOwner, "not held by this owner")
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

    /// The owner this hold counts for (see `Lock::acquire_as`).
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// Whether this hold is still in place (not lost, not released).
    pub fn is_held(&self) -> bool {
        self.lock.is_held_by(self.owner)
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

/// A lock object dropped (or closed by a binding) while held releases what it
/// holds: a hold nobody can release any more must not block everybody until
/// the session ends.
impl Drop for LockCore {
    fn drop(&mut self) {
        let holds: Vec<Hold> = self.holds.get_mut().unwrap().drain(..).collect();
        for hold in holds {
            if hold.is_releasing() || self.node_shared(&hold.node) {
                continue;
            }
            let client = self.client.clone();
            let path = format!("{}/{}", self.dir, hold.node);
            let session = hold.session;
            runtime::handle().spawn(async move { release_node(&client, &path, session).await });
        }
        crate::memory::object_dropped();
    }
}

impl LockCore {
    /// The error with the lock's directory (and chroot) in its message.
    fn about(&self, err: Error) -> Error {
        self.client.about(err, "lock", &self.dir)
    }

    pub(super) fn client(&self) -> &Client {
        &self.client
    }

    pub(super) fn dir(&self) -> &str {
        &self.dir
    }

    pub(super) fn side(&self) -> Side {
        self.side
    }

    pub(super) fn emit(&self, event: LockEvent) {
        self.events.emit(event);
    }

    fn sibling(&self) -> Option<Arc<LockCore>> {
        self.sibling.lock().unwrap().upgrade()
    }

    /// Reads the holds that are not being released, oldest first.
    fn visible<T>(&self, read: impl FnOnce(Vec<&Hold>) -> T) -> T {
        let holds = self.holds.lock().unwrap();
        read(holds.iter().filter(|h| !h.is_releasing()).collect())
    }

    fn hold_of<T>(&self, owner: Owner, read: impl FnOnce(&Hold) -> T) -> Option<T> {
        self.visible(|holds| holds.into_iter().find(|h| h.owner == owner).map(read))
    }

    /// Another hold of an owner that holds: the same token, no request. A hold
    /// whose session is gone is not handed out again: it is reported lost.
    fn reenter(&self, owner: Owner) -> Result<Reentry> {
        let current = self.client.session_id()?;
        let mut holds = self.holds.lock().unwrap();
        let Some(at) = holds.iter().position(|h| h.owner == owner) else {
            return Ok(Reentry::NotHeld);
        };
        let hold = &mut holds[at];
        if hold.is_releasing() {
            return Ok(Reentry::Releasing(hold.node.clone()));
        }
        if hold.session == current {
            hold.count += 1;
            return Ok(Reentry::Held(hold.fencing_token));
        }
        let node = hold.node.clone();
        drop(holds);
        let reason = expired();
        self.end_hold(
            &node,
            LockEvent::Lost {
                reason: reason.clone(),
            },
            None,
        );
        Err(reason)
    }

    /// A write request by an owner that holds the read side would wait for
    /// itself forever. Without a caller identity (Rust, Node) any read hold of
    /// this object counts: it cannot be told apart from the caller's own.
    fn refuse_upgrade(&self, owner: Owner) -> Result<()> {
        let read_held = self.side == Side::Write
            && self.sibling().is_some_and(|read| {
                let holds = read.holds.lock().unwrap();
                holds
                    .iter()
                    .any(|h| h.owner == owner || (owner.is_anonymous() && h.owner.is_anonymous()))
            });
        if read_held {
            return Err(Error::new(
                ErrorCode::WouldDeadlock,
                "the read lock is held by this owner: upgrading to the write lock would wait forever",
            ));
        }
        Ok(())
    }

    /// The contender we must wait for, if any.
    pub(super) fn blocker<'a>(
        &self,
        contenders: &'a [Contender],
        ours: usize,
    ) -> Option<&'a Contender> {
        match self.side {
            Side::Exclusive | Side::Write => ours.checked_sub(1).map(|i| &contenders[i]),
            Side::Read => contenders[..ours]
                .iter()
                .rev()
                .find(|c| c.kind == Kind::Write),
        }
    }

    /// Whether a newcomer would have to wait, judged from a listing alone.
    pub(super) fn visibly_blocked(&self, contenders: &[Contender]) -> bool {
        self.blocker(contenders, contenders.len()).is_some()
    }

    pub(super) async fn list(&self) -> Result<Vec<Contender>> {
        let dir = self.dir.as_str();
        match self
            .client
            .retrying(None, |zk| async move { zk.list_children(dir).await })
            .await
        {
            Ok(children) => Ok(contenders::sorted(&children)),
            Err(err) if err.code() == ErrorCode::NoNode => Ok(Vec::new()),
            Err(err) => Err(err),
        }
    }

    /// The listing with a child watch, for a waiter that may be next: if it
    /// is, the watch follows its hold at no extra request (a hand-off costs
    /// the holder's delete and this listing).
    pub(super) async fn list_watched(
        &self,
    ) -> Result<(Vec<Contender>, Option<zk::OneshotWatcher>)> {
        let dir = self.dir.as_str();
        match self
            .client
            .retrying(
                None,
                |zk| async move { zk.list_and_watch_children(dir).await },
            )
            .await
        {
            Ok((children, watch)) => Ok((contenders::sorted(&children), Some(watch))),
            Err(err) if err.code() == ErrorCode::NoNode => Ok((Vec::new(), None)),
            Err(err) => Err(err),
        }
    }

    /// Arms a data watch on `blocker` and waits for any event on it. A blocker
    /// that is already gone returns at once; the caller re-reads either way.
    pub(super) async fn wait_for_change(&self, blocker: &str) -> Result<()> {
        let path = format!("{}/{}", self.dir, blocker);
        let path = path.as_str();
        // Boxed: a waiter spends its life in this function, and the request's
        // future is most of its size (issue 17: memory per waiter).
        let watched = Box::pin(self.client.retrying(None, |zk| async move {
            match zk.get_and_watch_data(path).await {
                Ok((_, _, watcher)) => Ok(Some(watcher)),
                Err(zk::Error::NoNode) => Ok(None),
                Err(err) => Err(err),
            }
        }))
        .await?;
        let Some(watcher) = watched else {
            return Ok(());
        };
        tokio::select! {
            _ = watcher.changed() => Ok(()),
            _ = self.client.closed() => Err(Error::closed()),
        }
    }

    /// A write holder asking for the read lock gets it at once, on the node of
    /// its write hold, without a node of its own: a read node would sort
    /// behind any writer queued meanwhile and wait for it while that writer
    /// waits for us (a deadlock), and once the write hold went, that writer
    /// would run beside our read. The shared node is deleted when the last of
    /// the two holds is released, so nobody writes while the downgraded owner
    /// reads.
    fn downgrade(self: &Arc<Self>, owner: Owner) -> Option<i64> {
        if self.side != Side::Read {
            return None;
        }
        let (node, fencing_token, session) = self
            .sibling()?
            .hold_of(owner, |h| (h.node.clone(), h.fencing_token, h.session))?;
        let hold = Hold::new(self, owner, node, fencing_token, session, None);
        self.holds.lock().unwrap().push(hold);
        self.emit(LockEvent::Acquired { fencing_token });
        Some(fencing_token)
    }

    /// Whether the other side of a read/write lock still holds on `node` (a
    /// downgrade): then a release ends our hold but keeps the node.
    fn node_shared(&self, node: &str) -> bool {
        self.sibling().is_some_and(|other| {
            let holds = other.holds.lock().unwrap();
            holds.iter().any(|h| h.node == node && !h.is_releasing())
        })
    }

    pub(super) fn take_hold(self: &Arc<Self>, owner: Owner, created: Created) {
        let fencing_token = created.fencing_token;
        let hold = Hold::new(
            self,
            owner,
            created.node,
            fencing_token,
            created.session,
            created.children_watch,
        );
        self.holds.lock().unwrap().push(hold);
        self.emit(LockEvent::Acquired { fencing_token });
    }

    /// Ends the hold on `node` (if it is still there) with `event`. A hold
    /// that ended without its owner's release (`remember`) makes that owner's
    /// next release answer the reason instead of `NOT_OWNER`.
    pub(super) fn end_hold(&self, node: &str, event: LockEvent, remember: Option<Error>) {
        let ended = {
            let mut holds = self.holds.lock().unwrap();
            let at = holds.iter().position(|h| h.node == node);
            at.map(|at| holds.remove(at))
        };
        if let Some(hold) = ended {
            if let Some(reason) = remember {
                self.ended.lock().unwrap().push((hold.owner, reason));
            }
            self.ended_count.send_modify(|n| *n += 1);
            self.emit(event);
        }
    }

    /// The reason `owner`'s hold ended without its release, if it did.
    fn take_ended(&self, owner: Owner) -> Option<Error> {
        let mut ended = self.ended.lock().unwrap();
        let at = ended.iter().position(|(o, _)| *o == owner)?;
        Some(ended.remove(at).1)
    }

    /// Starts the release at once, when called, not when first polled: a
    /// caller that is cancelled right away (an asyncio task, a Java future)
    /// has still released. The returned future only reports the outcome.
    fn unlock_as(
        self: &Arc<Self>,
        owner: Owner,
    ) -> impl std::future::Future<Output = Result<()>> + Send + 'static {
        let started = self.start_release(owner);
        let core = self.clone();
        async move {
            let mut started = started;
            loop {
                match started {
                    Started::Done(result) => return result,
                    // Another release of this hold is on its way (an abandoned
                    // acquire being undone): its outcome decides, then look again.
                    Started::Behind(node) => {
                        core.hold_gone(&node).await;
                        started = core.start_release(owner);
                    }
                    Started::Running(task, node) => return core.outcome(owner, task, node).await,
                }
            }
        }
    }

    fn start_release(self: &Arc<Self>, owner: Owner) -> Started {
        let (node, session) = {
            let mut holds = self.holds.lock().unwrap();
            match holds.iter_mut().find(|h| h.owner == owner) {
                Some(h) if h.is_releasing() => return Started::Behind(h.node.clone()),
                Some(h) if h.count > 1 => {
                    h.count -= 1;
                    return Started::Done(Ok(()));
                }
                Some(h) => {
                    h.start_release();
                    (h.node.clone(), h.session)
                }
                None => {
                    drop(holds);
                    let answer = match self.client.zk() {
                        Err(closed) => Err(closed),
                        Ok(_) => {
                            let err = self.take_ended(owner).unwrap_or_else(not_owner);
                            Err(self.about(err))
                        }
                    };
                    return Started::Done(answer);
                }
            }
        };
        // The release runs in a task of its own, to its end: a release whose
        // caller is gone (a dropped future, an interrupt) still deletes the node
        // and ends the hold, so the object never reports a hold it lost.
        let core = self.clone();
        let release = node.clone();
        let task = runtime::handle()
            .spawn(async move { core.finish_release(owner, &release, session).await });
        Started::Running(task, node)
    }

    async fn outcome(
        &self,
        owner: Owner,
        mut task: JoinHandle<Result<()>>,
        node: String,
    ) -> Result<()> {
        let joined = |joined: std::result::Result<Result<()>, tokio::task::JoinError>| {
            joined.unwrap_or_else(|err| Err(Error::new(ErrorCode::Internal, err.to_string())))
        };
        tokio::select! {
            outcome = &mut task => joined(outcome),
            () = self.hold_gone(&node) => match self.take_ended(owner) {
                // The monitor gave the hold up as lost (disconnected too long):
                // answer now; the delete goes on in the background.
                Some(reason) => Err(reason),
                None => joined(task.await),
            },
        }
    }

    /// Resolves once the hold on `node` has ended (released or lost).
    async fn hold_gone(&self, node: &str) {
        let mut ended = self.ended_count.subscribe();
        let still_held = || self.holds.lock().unwrap().iter().any(|h| h.node == node);
        let _ = ended.wait_for(|_| !still_held()).await;
    }

    /// Deletes the node of `owner`'s hold and ends the hold with what the
    /// server said: `RELEASED`, or `LOST` when it was gone already.
    async fn finish_release(&self, owner: Owner, node: &str, session: i64) -> Result<()> {
        let path = format!("{}/{}", self.dir, node);
        let still_held = || self.holds.lock().unwrap().iter().any(|h| h.node == node);
        if self.node_shared(node) {
            self.end_hold(node, LockEvent::Released, None);
            return Ok(());
        }
        match release_node(&self.client, &path, session).await {
            Ok(Released::Deleted) => {
                if still_held() {
                    self.end_hold(node, LockEvent::Released, None);
                    return Ok(());
                }
                // The monitor ended the hold first (a loss): that is the answer.
                self.take_ended(owner).map_or(Ok(()), Err)
            }
            Ok(Released::Lost(reason)) => {
                if still_held() {
                    self.end_hold(
                        node,
                        LockEvent::Lost {
                            reason: reason.clone(),
                        },
                        None,
                    );
                    return Err(reason);
                }
                Err(self.take_ended(owner).unwrap_or(reason))
            }
            Err(err) if err.code() == ErrorCode::Closed => {
                self.end_hold(node, LockEvent::Released, None);
                self.take_ended(owner);
                Err(err)
            }
            Err(err) => {
                // Not deleted (e.g. NO_AUTH): still held, the caller may retry.
                if let Some(h) = self.holds.lock().unwrap().iter().find(|h| h.node == node) {
                    h.cancel_release();
                }
                self.ended_count.send_modify(|n| *n += 1);
                Err(err)
            }
        }
    }

    /// Releases every hold of this object, whoever its owner (closing it).
    async fn release_all(self: &Arc<Self>) {
        let owners: Vec<Owner> = self.holds.lock().unwrap().iter().map(|h| h.owner).collect();
        for owner in owners {
            while self.hold_of(owner, |_| ()).is_some() {
                if self.unlock_as(owner).await.is_err() {
                    break;
                }
            }
        }
    }

    async fn participants(&self) -> Result<Vec<Participant>> {
        let contenders = self.list().await?;
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

/// A deadline shorter than a round trip must not answer "no" for a free lock
/// when a try (timeout 0) would answer "yes" (found by the CLI's adversarial
/// test: `--timeout 1ms` failed on a free lock half the time). So an attempt
/// whose first look is still unanswered at the deadline runs on until it is
/// answered, unless the connection is down.
async fn first_look(
    client: &Client,
    mut looked: tokio::sync::watch::Receiver<bool>,
    mut run: std::pin::Pin<&mut impl std::future::Future<Output = Result<Option<i64>>>>,
) -> Result<Option<i64>> {
    let answered = async {
        loop {
            if *looked.borrow() {
                return Ok(None);
            }
            tokio::select! {
                outcome = &mut run => return outcome,
                _ = looked.changed() => {}
            }
        }
    };
    while_usable(client, answered).await.unwrap_or(Ok(None))
}
