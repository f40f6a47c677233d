//! Curator's `InterProcessMultiLock`: several exclusive locks taken as one, all or none.
//!
//! Contract, including failures:
//! - Each path is an exclusive lock (`Lock`, the layout Curator's `InterProcessMutex` and
//!   kazoo's `Lock` share), so a multi-lock excludes single locks on any of its paths and the
//!   multi-locks of Curator over the same paths.
//! - The locks are taken one after another in the order of their paths, sorted, whatever order
//!   they were given in: two multi-locks over overlapping paths never wait for each other in a
//!   circle (Curator takes them in the order given, and two such callers can deadlock).
//! - All or none: one deadline covers the whole call. When it passes, or a lock fails, or the
//!   call is cancelled, the locks already taken are released, the last taken first, and the
//!   waiting node is withdrawn (a timed or failed call answers only once those deletes are
//!   confirmed; a cancelled one releases in the background).
//! - Release deletes the nodes in reverse order of taking (sent in that order on the one
//!   session, so the server applies them in that order) and reports the first failure, a lock
//!   lost meanwhile included, after every release has been tried.
//! - Reentrant per owner, as `Lock` is: each path's hold count goes up together.
//! - A fencing token per path, the czxid of that path's lock node, in the order given.
//! - Its holder hears `SUSPENDED`, `RECONNECTED` and `LOST` (`subscribe`).

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::time::Instant;

use super::write_lock::{Lock, LockEvent, Owner};
use crate::client::Client;
use crate::error::{Error, ErrorCode, Result};
use crate::handoff::Handoff;
use crate::observe::{recipe_event, Recipe, Waiting, MULTI_LOCK_ACQUIRE};
use crate::runtime;
use crate::wait::Wait;

/// Several exclusive locks held together (Curator's `InterProcessMultiLock`).
#[derive(Clone)]
pub struct MultiLock {
    /// In the order the paths were given.
    locks: Arc<[Lock]>,
    /// Indexes into `locks`, in the order they are taken: by path.
    order: Arc<[usize]>,
}

impl std::fmt::Debug for MultiLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiLock")
            .field("dirs", &self.dirs())
            .finish()
    }
}

impl MultiLock {
    /// Exclusive locks on every directory of `dirs`, taken together. `INVALID_ARGUMENT` for no
    /// directory or one given twice, `INVALID_PATH` for a bad one, before anything is sent.
    pub fn new<S: AsRef<str>>(client: &Client, dirs: &[S]) -> Result<MultiLock> {
        if dirs.is_empty() {
            return Err(Error::invalid_argument(
                "a multi-lock needs at least one path",
            ));
        }
        let mut seen = BTreeSet::new();
        for dir in dirs {
            if !seen.insert(dir.as_ref()) {
                return Err(Error::invalid_argument(format!(
                    "the path {} is given twice to one multi-lock",
                    dir.as_ref()
                )));
            }
        }
        let locks: Vec<Lock> = dirs
            .iter()
            .map(|dir| Lock::new(client, dir.as_ref()))
            .collect::<Result<_>>()?;
        let mut order: Vec<usize> = (0..locks.len()).collect();
        order.sort_by(|a, b| locks[*a].dir().cmp(locks[*b].dir()));
        Ok(MultiLock {
            locks: locks.into(),
            order: order.into(),
        })
    }

    /// The path its numbers, events and spans carry: its paths as given, joined by `,`.
    pub fn observed_path(&self) -> String {
        self.dirs().join(",")
    }

    /// The lock directories, in the order given.
    pub fn dirs(&self) -> Vec<&str> {
        self.locks.iter().map(Lock::dir).collect()
    }

    /// Waits as long as it takes for every lock.
    pub async fn acquire(&self) -> Result<MultiLockGuard> {
        let owner = Owner::unique();
        let tokens = self.lock_as(owner, Wait::Forever).await?;
        Ok(self.guard(
            owner,
            tokens.expect("an unbounded wait ends with the locks"),
        ))
    }

    /// `None` unless every lock is free now (nothing is left held or queued then).
    pub async fn try_acquire(&self) -> Result<Option<MultiLockGuard>> {
        self.acquire_as(Owner::unique(), Wait::No).await
    }

    /// `None` when the locks were not all obtained within `timeout` (one deadline for the whole
    /// call); nothing is left held or queued then.
    pub async fn acquire_timeout(&self, timeout: Duration) -> Result<Option<MultiLockGuard>> {
        self.acquire_as(Owner::unique(), Wait::For(timeout)).await
    }

    /// Acquires for a caller identity of the user's choice, reentrant for that owner.
    pub async fn acquire_as(&self, owner: Owner, wait: Wait) -> Result<Option<MultiLockGuard>> {
        let tokens = self.lock_as(owner, wait).await?;
        Ok(tokens.map(|tokens| self.guard(owner, tokens)))
    }

    fn guard(&self, owner: Owner, fencing_tokens: Vec<i64>) -> MultiLockGuard {
        MultiLockGuard {
            locks: self.clone(),
            owner,
            fencing_tokens,
            released: false,
        }
    }

    /// What a holder of this object must hear: `SUSPENDED` and `RECONNECTED` once (as the first
    /// lock taken hears them: the locks share one session), and `LOST` for every lock whose
    /// hold is lost. `ACQUIRED` and `RELEASED` are the calls' own answers, not told here.
    pub fn subscribe(&self) -> broadcast::Receiver<LockEvent> {
        let (sender, receiver) = broadcast::channel(64);
        let sources = self.order.iter().enumerate().map(|(taken, &at)| {
            let events = self.locks[at].subscribe();
            stream::unfold(events, move |mut events| async move {
                loop {
                    match events.recv().await {
                        Ok(event) => return Some(((taken, event), events)),
                        Err(RecvError::Lagged(_)) => continue,
                        Err(RecvError::Closed) => return None,
                    }
                }
            })
            .boxed()
        });
        let mut merged = stream::select_all(sources);
        // Ends once nobody listens any more, or the locks are gone.
        runtime::handle().spawn(async move {
            while let Some((taken, event)) = merged.next().await {
                let told = match event {
                    LockEvent::Lost { .. } => true,
                    LockEvent::Suspended | LockEvent::Reconnected => taken == 0,
                    LockEvent::Acquired { .. } | LockEvent::Released => false,
                };
                if told && sender.send(event).is_err() {
                    return;
                }
            }
        });
        receiver
    }

    /// Whether every lock is held through this object.
    pub fn is_held(&self) -> bool {
        self.locks.iter().all(Lock::is_held)
    }

    /// Whether `owner` holds every lock.
    pub fn is_held_by(&self, owner: Owner) -> bool {
        self.locks.iter().all(|lock| lock.is_held_by(owner))
    }

    /// How many holds `owner` has of the whole (each path counts the same while it is held).
    pub fn hold_count(&self, owner: Owner) -> u32 {
        let counts = self.locks.iter().map(|lock| lock.hold_count(owner));
        counts.min().unwrap_or(0)
    }

    /// How many owners hold every lock through this object.
    pub fn holders(&self) -> usize {
        let counts = self.locks.iter().map(Lock::holders);
        counts.min().unwrap_or(0)
    }

    /// How many releases `owner` owes (as `Lock::releases_owed`, whatever the server's silence).
    pub fn releases_owed(&self, owner: Owner) -> u32 {
        let counts = self.locks.iter().map(|lock| lock.releases_owed(owner));
        counts.min().unwrap_or(0)
    }

    /// `owner`'s fencing tokens, one per path in the order given, while it holds every lock.
    pub fn fencing_tokens_of(&self, owner: Owner) -> Option<Vec<i64>> {
        let tokens = self.locks.iter().map(|lock| lock.fencing_token_of(owner));
        tokens.collect()
    }

    /// The fencing tokens of the holds of this object, while it holds every lock.
    pub fn fencing_tokens(&self) -> Option<Vec<i64>> {
        let tokens = self.locks.iter().map(Lock::fencing_token);
        tokens.collect()
    }

    /// Takes every lock for `owner`, in path order, within one deadline: the fencing tokens in
    /// the order given, or `None` with nothing left held. Dropping the future releases what it
    /// had taken.
    pub(crate) async fn lock_as(&self, owner: Owner, wait: Wait) -> Result<Option<Vec<i64>>> {
        // One wait of kind `multi` for the whole call (its locks count none of their own), its
        // path the paths as given, joined by ",".
        let path = self.observed_path();
        let waiting = Waiting::begin(self.locks[0].client(), &MULTI_LOCK_ACQUIRE, &path);
        let locked = self.lock_all_as(owner, wait).await;
        waiting.end_by(&locked);
        locked
    }

    async fn lock_all_as(&self, owner: Owner, wait: Wait) -> Result<Option<Vec<i64>>> {
        let deadline = wait.deadline();
        loop {
            let mut taken = Taken {
                locks: self,
                owner,
                held: Mutex::new(Vec::new()),
            };
            let tokens = match self.take_all(&taken, deadline).await {
                Ok(Some(tokens)) => tokens,
                Ok(None) => {
                    taken.give_back().await;
                    return Ok(None);
                }
                Err(err) => {
                    taken.give_back().await;
                    return Err(err);
                }
            };
            // All or none means all at once: the holds taken before a session expired went with
            // it, while a later lock was waited for on the next session (found by a review: the
            // acquire answered true beside another client's hold of the first path).
            if self.one_session(owner) {
                taken.held.get_mut().unwrap().clear();
                return Ok(Some(tokens));
            }
            taken.give_back().await;
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Ok(None);
            }
        }
    }

    /// Takes the locks in path order while the deadline allows waiting; once it has passed (at
    /// once for a try), tries every lock still to take together: each is one look, so a late
    /// answer costs a round trip or two, not one per path.
    async fn take_all(
        &self,
        taken: &Taken<'_>,
        deadline: Option<Instant>,
    ) -> Result<Option<Vec<i64>>> {
        let owner = taken.owner;
        let mut tokens = vec![0; self.locks.len()];
        let mut next = 0;
        while next < self.order.len() {
            let left = match deadline {
                None => Wait::Forever,
                Some(deadline) => Wait::For(deadline.saturating_duration_since(Instant::now())),
            };
            // Once the deadline has passed (at once for a try), every lock left gets one look,
            // all together; a timeout below a round trip still takes free locks.
            if left == Wait::For(Duration::ZERO) {
                break;
            }
            let at = self.order[next];
            match self.locks[at].lock_as_quietly(owner, left).await? {
                Some(token) => {
                    tokens[at] = token;
                    taken.note(at);
                }
                None => return Ok(None),
            }
            next += 1;
        }
        let tries = self.order[next..].iter().map(|&at| async move {
            let tried = self.locks[at].lock_as_quietly(owner, Wait::No).await;
            if let Ok(Some(_)) = tried {
                taken.note(at);
            }
            (at, tried)
        });
        let mut all = true;
        for (at, tried) in futures_util::future::join_all(tries).await {
            match tried? {
                Some(token) => tokens[at] = token,
                None => all = false,
            }
        }
        Ok(all.then_some(tokens))
    }

    /// Whether `owner`'s holds of every lock are of one session (none lost).
    fn one_session(&self, owner: Owner) -> bool {
        let sessions: Option<BTreeSet<i64>> = self
            .locks
            .iter()
            .map(|lock| lock.session_of(owner))
            .collect();
        sessions.is_some_and(|sessions| sessions.len() == 1)
    }

    /// Drops one hold of `owner` on every path, the last taken first, each delete confirmed
    /// before the next is sent; the first failure after trying them all. Starts when called
    /// (the first release at once: the multi-lock is no longer held when this returns) and runs
    /// to its end even if the future is dropped.
    pub(crate) fn unlock_as(
        &self,
        owner: Owner,
    ) -> impl Future<Output = Result<()>> + Send + 'static {
        let first = self.locks[*self.order.last().unwrap()].unlock_as(owner);
        let rest: Vec<Lock> = self.taking_order_reversed().skip(1).cloned().collect();
        let releasing = runtime::handle().spawn(async move {
            let mut failure = first.await.err();
            for lock in rest {
                if let Err(err) = lock.unlock_as(owner).await {
                    failure.get_or_insert(err);
                }
            }
            failure.map_or(Ok(()), Err)
        });
        async move {
            releasing.await.unwrap_or_else(|err| {
                Err(Error::new(
                    ErrorCode::Internal,
                    format!("a multi-lock release failed: {err}"),
                ))
            })
        }
    }

    /// Releases one hold of the oldest holder without a scope (Node, whose callers have no
    /// identity): the holder of the first lock taken decides, so every path drops the same one.
    pub(crate) fn unlock_one(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let first = &self.locks[self.order[0]];
        match first.oldest_unscoped_owner() {
            Some(owner) => futures_util::future::Either::Left(self.unlock_as(owner)),
            None => futures_util::future::Either::Right(first.unlock_one()),
        }
    }

    /// For a caller that gave up after `lock_as` succeeded: every hold is released, never kept.
    pub(crate) fn abandon_acquired(&self, owner: Owner) {
        let release = self.unlock_as(owner);
        let paths = self.dirs().join(",");
        runtime::handle().spawn(async move {
            if let Err(err) = release.await {
                let reason = err.to_string();
                recipe_event!(
                    Recipe::Lock,
                    DEBUG,
                    path = paths.as_str(),
                    reason,
                    "multi-lock {paths}: undoing an abandoned acquire: {reason}"
                );
            }
        });
    }

    /// Releases every hold of this object, whoever its owner, the last taken first.
    pub(crate) async fn release_all(&self) {
        for lock in self.taking_order_reversed() {
            lock.release_all().await;
        }
    }

    /// For holds carried to their caller across threads: released unless delivered.
    pub(crate) fn handoff_acquired(&self, owner: Owner) -> Handoff {
        let locks = self.clone();
        let client = self.locks[0].client();
        Handoff::new(client.settling(), move || locks.abandon_acquired(owner))
    }

    fn taking_order_reversed(&self) -> impl Iterator<Item = &Lock> {
        self.order.iter().rev().map(|&at| &self.locks[at])
    }
}

/// The locks an acquire has taken so far: given back (the last taken first) if it does not
/// finish, also when its future is dropped. Noted the moment each is taken, so that a cancel
/// between two awaits never strands one.
struct Taken<'a> {
    locks: &'a MultiLock,
    owner: Owner,
    held: Mutex<Vec<usize>>,
}

impl Taken<'_> {
    fn note(&self, at: usize) {
        self.held.lock().unwrap().push(at);
    }

    fn drain(&mut self) -> Vec<Lock> {
        let held = std::mem::take(self.held.get_mut().unwrap());
        held.into_iter()
            .rev()
            .map(|at| self.locks.locks[at].clone())
            .collect()
    }

    /// Releases what was taken, all at once (the set was never held whole, so no order is
    /// owed), and waits for the deletes: a failed or timed-out acquire answers only with
    /// nothing left behind, a round trip after giving up rather than one per path.
    async fn give_back(&mut self) {
        let owner = self.owner;
        let releases = self.drain().into_iter().map(|lock| {
            let released = lock.unlock_as(owner);
            async move { (lock, released.await) }
        });
        for (lock, released) in futures_util::future::join_all(releases).await {
            if let Err(err) = released {
                let (path, reason) = (lock.dir(), err.to_string());
                recipe_event!(
                    Recipe::Lock,
                    DEBUG,
                    path,
                    reason,
                    "lock {path}: giving back a multi-lock's partial hold: {reason}"
                );
            }
        }
    }
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        let (locks, owner) = (self.drain(), self.owner);
        if let Some((first, rest)) = locks.split_first() {
            // The first release starts now, the others follow it in order.
            let first = first.unlock_as(owner);
            let rest = rest.to_vec();
            runtime::handle().spawn(async move {
                let _ = first.await;
                for lock in rest {
                    let _ = lock.unlock_as(owner).await;
                }
            });
        }
    }
}

/// Every lock of a `MultiLock`, held. `release()` returns once every node is gone; dropping
/// the guard releases in the background.
#[must_use = "dropping the guard releases the locks"]
#[derive(Debug)]
pub struct MultiLockGuard {
    locks: MultiLock,
    owner: Owner,
    fencing_tokens: Vec<i64>,
    released: bool,
}

impl MultiLockGuard {
    /// One per path, in the order the paths were given.
    pub fn fencing_tokens(&self) -> &[i64] {
        &self.fencing_tokens
    }

    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// Whether every hold is still in place (not lost, not released).
    pub fn is_held(&self) -> bool {
        self.locks.is_held_by(self.owner)
    }

    pub async fn release(mut self) -> Result<()> {
        self.released = true;
        self.locks.unlock_as(self.owner).await
    }
}

impl Drop for MultiLockGuard {
    fn drop(&mut self) {
        if !self.released {
            let release = self.locks.unlock_as(self.owner);
            runtime::handle().spawn(release);
        }
    }
}
