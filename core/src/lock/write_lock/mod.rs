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
//!   concurrent acquirers of one object exclude each other; a write of one of
//!   them waits for the object's read holds (`holds.rs`, `refuse_upgrade`).
//! - The holder is told `SUSPENDED` / `RECONNECTED` / `LOST` (`holder.rs`);
//!   `release` reports success only once the delete is confirmed, and reports
//!   a lock lost before its release as the error it was lost with.

use crate::observe::Waiting;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use super::attempt::{Attempt, Withdraw};
use crate::client::{while_usable, Client};
use crate::emitter::Emitter;
use crate::error::Result;
use crate::path;
use crate::wait::{far_future, Wait};

mod guard;
mod holds;
pub(crate) mod lock_core;
mod owned;
mod release;
mod waiting;

pub use super::event::LockEvent;
pub use super::owner::Owner;
pub use guard::LockGuard;
use holds::{not_owner, Reentry};
pub use lock_core::Participant;
pub(crate) use lock_core::{LockCore, Side};

/// An exclusive lock (`WriteLock::new`) or one side of a `ReadWriteLock`.
#[derive(Clone)]
pub struct Lock {
    core: Arc<LockCore>,
}

/// The exclusive lock: Apache's WriteLock layout, with fencing tokens.
pub type WriteLock = Lock;

impl Lock {
    /// An exclusive, fair lock on the directory `dir` (created on first use).
    /// Fails with `INVALID_PATH` before anything is sent.
    pub fn new(client: &Client, dir: &str) -> Result<Lock> {
        Lock::with_side(client, dir, Side::Exclusive)
    }

    pub(crate) fn with_side(client: &Client, dir: &str, side: Side) -> Result<Lock> {
        let data = client.identity().as_bytes().to_vec();
        Lock::with_data(client, dir, side, data)
    }

    /// A lock that is a part of another recipe (the semaphore's mutex): its waits and holds
    /// are that recipe's, and are neither counted nor logged as a lock's.
    pub(crate) fn internal(client: &Client, dir: &str) -> Result<Lock> {
        let lock = Lock::new(client, dir)?;
        let mut core = Arc::into_inner(lock.core).expect("a new lock is not shared");
        core.observed = false;
        Ok(Lock {
            core: Arc::new(core),
        })
    }

    pub(crate) fn with_data(client: &Client, dir: &str, side: Side, data: Vec<u8>) -> Result<Lock> {
        path::validate(dir)?;
        client.check_open()?;
        let events = Emitter::new(64);
        let core = LockCore {
            client: client.clone(),
            dir: dir.to_string(),
            side,
            sibling: Mutex::new(Weak::new()),
            data,
            holds: Mutex::new(Vec::new()),
            ended: Mutex::new(Vec::new()),
            ended_count: watch::channel(0).0,
            events,
            observed: true,
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
        LockGuard::new(self.clone(), owner, fencing_token)
    }

    /// `waiting`, when given, is told whether the attempt had to queue behind another holder.
    async fn lock_as_unscoped(
        &self,
        owner: Owner,
        wait: Wait,
        waiting: Option<&mut Waiting>,
    ) -> Result<Option<i64>> {
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
        let queued = attempt.looked();
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
        if let (Some(waiting), true) = (waiting, *queued.borrow()) {
            waiting.queued();
        }
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

    /// Waits for the lock as `owner` until it is ours (its fencing token) or `stop` completes:
    /// then the attempt is withdrawn as a timed acquire's is (the delete confirmed while
    /// connected) and the answer is `None`. `queued` is called once the attempt has seen
    /// the lock held by another (its node is in line): a latch's `start` returns then.
    pub(crate) async fn acquire_until(
        &self,
        owner: Owner,
        stop: impl std::future::Future<Output = ()>,
        queued: impl FnOnce(),
    ) -> Result<Option<i64>> {
        let core = &self.core;
        core.client.zk()?;
        // A hold lost before is not this owner's to release any more.
        core.take_ended(owner);
        let mut attempt = Attempt::new(core.clone(), owner);
        let mut looked = attempt.looked();
        let outcome = {
            let run = attempt.run(false);
            tokio::pin!(run);
            tokio::pin!(stop);
            let mut queued = Some(queued);
            loop {
                tokio::select! {
                    outcome = &mut run => break outcome,
                    () = &mut stop => break Ok(None),
                    changed = looked.changed(), if queued.is_some() => {
                        if changed.is_err() || *looked.borrow() {
                            if let Some(queued) = queued.take() {
                                queued();
                            }
                        }
                    }
                }
            }
        };
        match outcome {
            Ok(Some(token)) => Ok(Some(token)),
            other => {
                attempt.abandon().await;
                other.map_err(|err| core.about(err))
            }
        }
    }

    /// Releases every hold of this object, whoever its owner (a binding's
    /// `close()`): no other thread's hold is stranded on the server.
    pub(crate) async fn release_all(&self) {
        self.core.release_all().await
    }

    /// Whether the holds of this object can still be counted on: not once the server has been
    /// silent past the grace (`Client::silent_past_grace`), which a process paused past its
    /// session sees the moment it resumes, before `LOST` comes. The answers below (what users
    /// read) say "not held" from then on; the recipe's own bookkeeping goes on until the loss
    /// is reported.
    fn in_contact(&self) -> bool {
        !self.core.client.silent_past_grace()
    }

    /// A hold that is being released no longer counts, here and below.
    pub fn is_held(&self) -> bool {
        self.in_contact() && self.core.visible(|holds| !holds.is_empty())
    }

    /// How many owners hold through this object (more than one only on the
    /// read side).
    pub fn holders(&self) -> usize {
        if !self.in_contact() {
            return 0;
        }
        self.core.visible(|holds| holds.len())
    }

    pub fn is_held_by(&self, owner: Owner) -> bool {
        self.in_contact() && self.holds(owner)
    }

    /// `owner`'s hold as the recipe keeps it, whatever the server's silence.
    pub(crate) fn holds(&self, owner: Owner) -> bool {
        self.core.hold_of(owner, |_| ()).is_some()
    }

    pub fn hold_count(&self, owner: Owner) -> u32 {
        if !self.in_contact() {
            return 0;
        }
        self.releases_owed(owner)
    }

    /// How many releases `owner` owes: its hold count as the recipe keeps it, whatever the
    /// server's silence. For a binding deciding whose hold a release ends: `hold_count` says 0
    /// after a pause, and a release routed by it ended another caller's hold.
    pub fn releases_owed(&self, owner: Owner) -> u32 {
        self.core.hold_of(owner, |h| h.count).unwrap_or(0)
    }

    /// The czxid of a lock node of ours while held (the oldest hold's):
    /// globally increasing across the ensemble, unlike the sequence number.
    pub fn fencing_token(&self) -> Option<i64> {
        if !self.in_contact() {
            return None;
        }
        self.core
            .visible(|holds| holds.first().map(|h| h.fencing_token))
    }

    /// The session `owner`'s hold belongs to.
    pub(crate) fn session_of(&self, owner: Owner) -> Option<i64> {
        self.core.hold_of(owner, |h| h.session)
    }

    /// The fencing token of `owner`'s hold.
    pub fn fencing_token_of(&self, owner: Owner) -> Option<i64> {
        if !self.in_contact() {
            return None;
        }
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

/// A lock object dropped (or closed by a binding) while held releases what it
/// holds: a hold nobody can release any more must not block everybody until
/// the session ends.
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
