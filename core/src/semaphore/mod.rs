//! A counting semaphore with leases, on Curator's `InterProcessSemaphoreV2` layout: a Curator
//! mutex at `<path>/locks` and one `<path>/leases/_c_<uuid>-lease-<seq>` node per lease.
//!
//! Contract, including failures:
//! - An acquirer takes the mutex, creates its leases and, still holding the mutex, waits until
//!   the lease nodes number at most `max_leases` (its own included), as Curator does: a mixed
//!   group of Curator and zkrecipes processes shares one count. `acquire(n)` takes its `n`
//!   leases under one hold of the mutex, so two acquirers of several leases never each hold
//!   part of what they need (with Curator's one mutex hold per lease they can wait for each
//!   other until their timeouts).
//! - A timed acquire answers `None` when the deadline passes, at any stage, and has withdrawn
//!   its lease nodes and its mutex node (CURATOR-462: a lease left behind by an interrupted
//!   acquire). A dropped (cancelled) acquire withdraws them in the background.
//! - A create whose reply was lost is found again by its uuid and adopted only if its
//!   `ephemeralOwner` is our session (CURATOR-315/335: orphans after a reconnect during
//!   acquire).
//! - A waiter whose session expires lost its place, not its wait: it lines up again on the
//!   client's next session, within its deadline.
//! - Each lease has a fencing token (its node's czxid). A holder is told `SUSPENDED`,
//!   `RECONNECTED` and `LOST` as a lock holder is (CURATOR-595: Curator never tells), by the
//!   same monitor (`lock/monitor.rs`): disconnected past the grace counts as lost, and a
//!   lease that survives that is deleted, so live leases never exceed `max_leases` among live
//!   sessions.
//! - Safety does not rest on the mutex: a lease is granted only when a listing made after our
//!   creates shows at most `max_leases` nodes, and nodes are only added by acquirers and removed
//!   by releases, so two grants can never both see the other missing (one create comes first,
//!   and the later listing sees it, also on a lagging follower). The mutex gives the order and
//!   keeps two waiters from blocking each other's counts.
//! - `max_leases` is each process's own: Curator does not check that they agree, and neither
//!   do we (the layout has nowhere to keep it).

use std::sync::{Arc, Mutex, Weak};

use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::client::Client;
use crate::counter::{SharedCount, VersionedCount};
use crate::emitter::Emitter;
use crate::error::{Error, ErrorCode, Result};
use crate::lock::attempt::Withdraw;
use crate::lock::contenders;
use crate::lock::monitor::Keeper;
use crate::lock::write_lock::{Lock, LockEvent, Owner};
use crate::observe::{Waiting, SEMAPHORE_ACQUIRE};
use crate::wait::Wait;
use crate::{path, runtime};

mod attempt;
mod held;
mod lease;
mod slot;

use attempt::LeaseAttempt;
use held::HeldLease;
pub use lease::Lease;
pub use slot::LeaseSlot;

/// The marker Curator's semaphore writes after `_c_<uuid>-` in a lease node's name.
pub(crate) const LEASE_MARKER: &str = "lease-";

/// A counting semaphore: at most `max_leases` leases held at once across every process.
#[derive(Clone)]
pub struct Semaphore {
    core: Arc<SemaphoreCore>,
}

pub(crate) struct SemaphoreCore {
    client: Client,
    path: String,
    leases_dir: String,
    limit: Limit,
    mutex: Lock,
    held: Mutex<Vec<HeldLease>>,
    /// Leases that ended without their release (lost, closed), by node: their release answers
    /// with that reason.
    ended: Mutex<Vec<(String, Error)>>,
    events: Emitter<LockEvent>,
}

/// Where the number of leases comes from.
enum Limit {
    Fixed(u32),
    /// Curator's `InterProcessSemaphoreV2(client, path, SharedCountReader)`: the count's value
    /// now (none while it is 0 or below), and a waiter looks again whenever it changes.
    Shared(SharedCount),
}

impl Semaphore {
    /// A semaphore of `max_leases` leases at `path` (created on first use). Fails with
    /// `INVALID_PATH` or `INVALID_ARGUMENT` (`max_leases` 0) before anything is sent.
    pub fn new(client: &Client, path: &str, max_leases: u32) -> Result<Semaphore> {
        path::validate(path)?;
        client.check_open()?;
        if max_leases == 0 {
            return Err(bad_count("max_leases", 0));
        }
        Semaphore::with_limit(client, path, Limit::Fixed(max_leases))
    }

    /// A semaphore whose number of leases is `count`'s value, following it as it changes
    /// (Curator's semaphore with a `SharedCountReader`): raising it lets waiters in at once,
    /// lowering it takes no lease back but grants none until the leases number fewer. The
    /// count is started by the first acquire if it was not.
    pub fn with_shared_count(
        client: &Client,
        path: &str,
        count: &SharedCount,
    ) -> Result<Semaphore> {
        path::validate(path)?;
        client.check_open()?;
        Semaphore::with_limit(client, path, Limit::Shared(count.clone()))
    }

    fn with_limit(client: &Client, path: &str, limit: Limit) -> Result<Semaphore> {
        let mutex = Lock::internal(client, &format!("{path}/locks"))?;
        let core = SemaphoreCore {
            client: client.clone(),
            path: path.to_string(),
            leases_dir: format!("{path}/leases"),
            limit,
            mutex,
            held: Mutex::new(Vec::new()),
            ended: Mutex::new(Vec::new()),
            events: Emitter::new(64),
        };
        Ok(Semaphore {
            core: Arc::new(core),
        })
    }

    pub fn path(&self) -> &str {
        &self.core.path
    }

    /// The number of leases now (a shared count's cached value; 0 before it is started).
    pub fn max_leases(&self) -> u32 {
        self.core.max_leases()
    }

    /// One lease, waiting as long as it takes.
    pub async fn acquire(&self) -> Result<Lease> {
        let mut leases = self.acquire_many(1, Wait::Forever).await?;
        Ok(leases
            .take()
            .and_then(|mut l| l.pop())
            .expect("an unbounded wait ends with the leases"))
    }

    /// `count` leases, all or none, within `wait` (one deadline for the whole call): `None`
    /// when they were not obtained, and then nothing of this call is left on the server.
    /// `INVALID_ARGUMENT` for a count of 0 or above `max_leases`.
    pub async fn acquire_many(&self, count: u32, wait: Wait) -> Result<Option<Vec<Lease>>> {
        let acquired = self.core.acquire(count, wait).await;
        acquired.map_err(|err| self.core.about(err))
    }

    /// One lease within `wait`, `None` if not obtained.
    pub async fn try_acquire(&self, wait: Wait) -> Result<Option<Lease>> {
        let leases = self.acquire_many(1, wait).await?;
        Ok(leases.and_then(|mut l| l.pop()))
    }

    /// How many leases this object holds now (not lost, not released); none once the server has
    /// been silent past the grace, as a lease's `is_held`.
    pub fn held(&self) -> usize {
        if self.core.client.silent_past_grace() {
            return 0;
        }
        self.core.held.lock().unwrap().len()
    }

    /// The lease nodes on the server now, every process's (a waiter's nodes included while it
    /// waits holding the mutex).
    pub async fn lease_nodes(&self) -> Result<Vec<String>> {
        let listed = self.core.list().await;
        listed.map_err(|err| self.core.about(err))
    }

    /// `SUSPENDED`, `RECONNECTED`, `LOST` (with the reason, naming the lease node) and
    /// `RELEASED` for the leases of this object, `ACQUIRED` with each lease's token.
    pub fn subscribe(&self) -> broadcast::Receiver<LockEvent> {
        self.core.events.subscribe()
    }

    /// Releases the oldest lease this object holds, whoever took it: `threading.Semaphore`'s
    /// `release()` for bindings whose callers give back a permit, not a lease. `NOT_OWNER`
    /// when it holds none.
    pub(crate) fn release_one(
        &self,
    ) -> impl std::future::Future<Output = Result<()>> + Send + 'static {
        let oldest = {
            let held = self.core.held.lock().unwrap();
            // Marked here, at the call: two calls at once pick two leases
            // (found by an adversarial review: both picked the oldest, one
            // answered NO_NODE and the other lease stayed held).
            let lease = held.iter().find(|h| h.mark_releasing());
            lease.map(|h| h.node.clone())
        };
        let release = oldest.map(|node| self.core.release(node));
        let core = self.core.clone();
        async move {
            match release {
                Some(release) => release.await,
                None => Err(core.about(Error::new(
                    ErrorCode::NotOwner,
                    "this object holds no lease to release",
                ))),
            }
        }
    }

    /// Releases every lease this object holds (a binding's `close()`).
    pub(crate) async fn release_all(&self) {
        let nodes: Vec<String> = {
            let held = self.core.held.lock().unwrap();
            held.iter().map(|h| h.node.clone()).collect()
        };
        for node in nodes {
            let _ = self.core.release(node).await;
        }
    }

    pub(crate) fn core(&self) -> &Arc<SemaphoreCore> {
        &self.core
    }
}

impl SemaphoreCore {
    fn about(&self, err: Error) -> Error {
        self.client.about(err, "semaphore", &self.path)
    }

    pub(super) fn max_leases(&self) -> u32 {
        match &self.limit {
            Limit::Fixed(max) => *max,
            Limit::Shared(count) => count.get().map_or(0, |n| n.max(0) as u32),
        }
    }

    /// Wakes a waiter when the number of leases may have changed (never, for a fixed one).
    pub(super) fn limit_changes(&self) -> Option<broadcast::Receiver<VersionedCount>> {
        match &self.limit {
            Limit::Fixed(_) => None,
            Limit::Shared(count) => Some(count.subscribe()),
        }
    }

    pub(super) fn leases_dir(&self) -> &str {
        &self.leases_dir
    }

    async fn acquire(self: &Arc<Self>, count: u32, wait: Wait) -> Result<Option<Vec<Lease>>> {
        let fixed = match &self.limit {
            Limit::Fixed(max) => Some(*max),
            Limit::Shared(shared) => {
                shared.start().await?;
                None
            }
        };
        // With a shared count, more than it allows now waits for it to grow (as in Curator).
        if count == 0 || fixed.is_some_and(|max| count > max) {
            return Err(Error::new(
                ErrorCode::InvalidArgument,
                format!(
                    "cannot acquire {count} leases of a semaphore of {}",
                    self.max_leases()
                ),
            ));
        }
        self.client.zk()?;
        let mut waiting = Waiting::begin(&self.client, &SEMAPHORE_ACQUIRE, &self.path);
        let acquired = self.acquire_counted(count, wait, &mut waiting).await;
        waiting.end_with(&acquired, |leases| {
            leases.first().map_or(0, Lease::fencing_token)
        });
        acquired
    }

    async fn acquire_counted(
        self: &Arc<Self>,
        count: u32,
        wait: Wait,
        waiting: &mut Waiting,
    ) -> Result<Option<Vec<Lease>>> {
        let wait = wait.normalized();
        let deadline = wait.deadline();
        loop {
            let session = self.client.session_id()?;
            let left = match deadline {
                None => Wait::Forever,
                Some(at) => Wait::For(at.saturating_duration_since(Instant::now())),
            };
            // Curator's mutex: only its holder creates leases and counts them.
            let Some(mutex) = self.mutex.acquire_as(Owner::unique(), left).await? else {
                return Ok(None);
            };
            let mut attempt = LeaseAttempt::new(self.clone(), count);
            let outcome = attempt.run(deadline, wait == Wait::No).await;
            // The mutex goes as soon as the count is judged (after our nodes were withdrawn,
            // when they were), and the call returns once the server has deleted it: this
            // object's next try must not find its own mutex still there (`release_mutex`).
            match outcome {
                Ok(Some(granted)) => {
                    if attempt.waited() {
                        waiting.queued();
                    }
                    // Leases before the await: a caller cancelled while the mutex goes drops
                    // them, and a dropped lease releases itself (as tuples, they were held by
                    // nobody until the session ended; the Kotlin suite's racing cancels found it).
                    let semaphore = Semaphore { core: self.clone() };
                    let leases: Vec<Lease> = self
                        .take(granted, waiting.contended())
                        .into_iter()
                        .map(|(node, token)| Lease::new(semaphore.clone(), node, token))
                        .collect();
                    release_mutex(mutex).await;
                    return Ok(Some(leases));
                }
                Ok(None) => {
                    attempt.abandon().await;
                    release_mutex(mutex).await;
                    return Ok(None);
                }
                // A waiter whose session expired lines up again on the next session.
                Err(err)
                    if err.code() == ErrorCode::SessionExpired
                        && deadline.is_none_or(|at| Instant::now() < at) =>
                {
                    drop((attempt, mutex));
                    self.client
                        .await_session_after_unless_refused(session)
                        .await?;
                }
                Err(err) => {
                    attempt.abandon().await;
                    release_mutex(mutex).await;
                    return Err(err);
                }
            }
        }
    }

    async fn list(&self) -> Result<Vec<String>> {
        let dir = self.leases_dir.as_str();
        let mut children = self.client.children_if_present(dir).await?;
        contenders::sort_by_sequence(&mut children, |c| {
            contenders::split_sequence(c).map_or(i64::MAX, |(_, seq)| seq)
        });
        Ok(children)
    }
}

/// A lease count as a binding received it: 1 to 2^31-1, else `INVALID_ARGUMENT` naming it.
pub(crate) fn lease_count(name: &str, value: i64) -> Result<u32> {
    u32::try_from(value)
        .ok()
        .filter(|n| (1..=MAX_LEASES).contains(n))
        .ok_or_else(|| bad_count(name, value))
}

/// Curator's `maxLeases` is a Java `int`.
const MAX_LEASES: u32 = i32::MAX as u32;

fn bad_count(name: &str, value: i64) -> Error {
    Error::invalid_argument(format!(
        "{name} must be between 1 and {MAX_LEASES}, got {value}"
    ))
}

impl Keeper for SemaphoreCore {
    fn client(&self) -> &Client {
        &self.client
    }

    fn noun(&self) -> &'static str {
        "lease"
    }

    fn dir(&self) -> &str {
        &self.leases_dir
    }

    fn emit(&self, event: LockEvent) {
        self.events.emit(event);
    }

    fn end_hold(&self, node: &str, event: LockEvent, remember: Option<Error>) {
        let ended = {
            let mut held = self.held.lock().unwrap();
            let at = held.iter().position(|h| h.node == node);
            at.map(|at| held.remove(at))
        };
        if let Some(mut lease) = ended {
            if let LockEvent::Lost { reason } = &event {
                lease.holding.lose(reason);
            }
            drop(lease);
            if let Some(reason) = remember {
                self.ended.lock().unwrap().push((node.to_string(), reason));
            }
            self.events.emit(event);
        }
    }
}

/// A semaphore object dropped while it holds leases releases them: a lease nobody can release
/// any more must not take a permit until the session ends.
impl Drop for SemaphoreCore {
    fn drop(&mut self) {
        let held: Vec<HeldLease> = self.held.get_mut().unwrap().drain(..).collect();
        for lease in held {
            if lease.is_releasing() {
                continue;
            }
            let client = self.client.clone();
            let path = format!("{}/{}", self.leases_dir, lease.node);
            let session = lease.session;
            runtime::handle().spawn(async move {
                let _ =
                    crate::lock::release_node::release_node(&client, "lease", &path, session).await;
            });
        }
        crate::memory::object_dropped();
    }
}

pub(crate) fn weak_keeper(core: &Arc<SemaphoreCore>) -> Weak<dyn Keeper> {
    let weak: Weak<SemaphoreCore> = Arc::downgrade(core);
    weak
}

/// Releases the semaphore's mutex and returns once the server has deleted it. Dropping the guard
/// released it from a spawned task, which under load ran after this object's next request: a
/// `Wait::No` try right after a call found its own mutex still there and gave up (the suite's
/// "two free" failed so). Spawned all the same, so a caller cancelled here still releases it.
async fn release_mutex(mutex: crate::lock::write_lock::LockGuard) {
    let released = runtime::handle().spawn(async move { mutex.release().await });
    let _ = released.await;
}
