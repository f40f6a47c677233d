//! A leader latch on Curator's `LeaderLatch` layout: one `<path>/_c_<uuid>-latch-<seq>` node per
//! started participant, holding its id (UTF-8); the lowest sequence leads.
//!
//! Contract, including failures:
//! - The latch is a lock that is never released while started: the participant waits in line
//!   behind its predecessor (a data watch on it, the children read again after any event), and
//!   leads once its node is first. The node comes from the lock's attempt, so a create whose
//!   reply was lost is adopted only if its `ephemeralOwner` is our session, and a node is never
//!   taken for ours after our session changed (CURATOR-696's stale path and the double leaders
//!   of CURATOR-504/620/652): leadership is declared only for a node of the session the client
//!   has now.
//! - The leader gets a fencing token (its node's czxid), increasing across leaders.
//! - A leader is told `SUSPENDED` when its connection drops, `RECONNECTED` when the same
//!   session is back with its node, and `NOT_LEADER` (with the reason) once its node is gone,
//!   its session expired, or it was disconnected for as long as the server may take to expire
//!   the session: by then another participant may lead. `has_leadership` is false from that
//!   moment, also before the event is delivered. The participant then lines up again (a new
//!   node, on the client's next session), as Curator's `reset` does.
//! - `start` returns once the participant is in line (leading or waiting), or with the error
//!   that kept it out (`NO_AUTH`, a missing chroot); the latch is then not started and can be
//!   started again. Later failures are retried with a bounded, jittered backoff.
//! - `close` withdraws the node (confirmed while connected) and ends leadership with
//!   `NOT_LEADER`; a closed latch cannot be started again (Curator's rule). Closing the client
//!   closes the latch.
//! - Listeners may call back into the latch: events are delivered from a channel, never under
//!   a lock of ours.

use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use crate::client::Client;
use crate::emitter::Emitter;
use crate::error::{Error, ErrorCode, Result};
use crate::lock::write_lock::{Lock, Owner, Side};
use crate::wait::Wait;
use crate::{path, runtime};

mod event;
mod participate;

pub use event::LatchEvent;

/// One participant of a latch as `participants()` reports it, the leader first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LatchParticipant {
    /// The id the participant started with (its node's data).
    pub id: String,
    pub node: String,
    pub is_leader: bool,
}

/// A leader latch: start it to take part, close it to leave. Dropping the last clone of a
/// started latch closes it in the background.
#[derive(Clone)]
pub struct LeaderLatch {
    core: Arc<LatchCore>,
    /// Held by the user's clones only (the participation holds `core`): its drop is the last
    /// clone's.
    _close_on_drop: Arc<CloseOnDrop>,
}

struct CloseOnDrop(Arc<LatchCore>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close_now();
    }
}

pub(crate) struct LatchCore {
    client: Client,
    path: String,
    id: String,
    lock: Lock,
    /// The one owner of every hold of `lock`.
    owner: Owner,
    phase: Mutex<Phase>,
    /// The fencing token while leading.
    leadership: watch::Sender<Option<i64>>,
    events: Emitter<LatchEvent>,
}

enum Phase {
    Latent,
    /// Participating until `stop` is sent; `done` ends with the participation; `joined` is
    /// the answer of the first join (every caller of `start` waits for it).
    Started {
        stop: watch::Sender<bool>,
        done: watch::Receiver<bool>,
        joined: watch::Receiver<Option<Result<()>>>,
    },
    Closed,
}

impl LeaderLatch {
    /// A latch at `path` (created on first use) for a participant named `id`. Fails with
    /// `INVALID_PATH`, or `INVALID_ARGUMENT` for an id longer than a node may hold, before
    /// anything is sent.
    pub fn new(client: &Client, path: &str, id: &str) -> Result<LeaderLatch> {
        path::validate(path)?;
        client.check_open()?;
        crate::client::check_node_data("a latch participant id", id)?;
        let lock = Lock::with_data(client, path, Side::Latch, id.as_bytes().to_vec())?;
        let core = LatchCore {
            client: client.clone(),
            path: path.to_string(),
            id: id.to_string(),
            lock,
            owner: Owner::unique(),
            phase: Mutex::new(Phase::Latent),
            leadership: watch::Sender::new(None),
            events: Emitter::new(64),
        };
        let core = Arc::new(core);
        Ok(LeaderLatch {
            _close_on_drop: Arc::new(CloseOnDrop(core.clone())),
            core,
        })
    }

    pub fn path(&self) -> &str {
        &self.core.path
    }

    pub fn id(&self) -> &str {
        &self.core.id
    }

    /// Takes part: returns once our node is in line (leading or not), also for a second caller
    /// while the first one's join is on its way. Starting a started latch does nothing more; a
    /// closed one answers `CLOSED`. The start happens when this is called, not when the future
    /// is first polled.
    pub fn start(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let started = self.core.start();
        let core = self.core.clone();
        async move {
            let mut joined = started.map_err(|err| core.about(err))?;
            let answer = match joined.wait_for(Option::is_some).await {
                Ok(answer) => answer.clone(),
                Err(_) => None,
            };
            match answer {
                Some(result) => result.map_err(|err| core.about(err)),
                None => Err(core.about(core.closed_error())),
            }
        }
    }

    /// Leaves: the node is withdrawn and leadership, if held, ends with `NOT_LEADER`.
    /// Idempotent; the latch cannot be started again. The close happens when this is called;
    /// the future waits until the node is withdrawn.
    pub fn close(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let done = self.core.close_now();
        async move {
            if let Some(mut done) = done {
                let _ = done.wait_for(|done| *done).await;
            }
            Ok(())
        }
    }

    /// Whether this participant leads now: its node is first and held in its current session.
    pub fn has_leadership(&self) -> bool {
        self.core.leads()
    }

    /// The fencing token while leading.
    pub fn fencing_token(&self) -> Option<i64> {
        if self.core.leads() {
            *self.core.leadership.borrow()
        } else {
            None
        }
    }

    pub fn is_started(&self) -> bool {
        matches!(*self.core.phase.lock().unwrap(), Phase::Started { .. })
    }

    pub fn is_closed(&self) -> bool {
        matches!(*self.core.phase.lock().unwrap(), Phase::Closed)
    }

    /// Waits until this participant leads (its fencing token), `None` when `wait` ran out.
    /// `INVALID_ARGUMENT` on a latch never started, `CLOSED` once it is closed (also while
    /// waiting).
    pub async fn await_leadership(&self, wait: impl Into<Wait>) -> Result<Option<i64>> {
        let waited = self.core.await_leadership(wait.into()).await;
        waited.map_err(|err| self.core.about(err))
    }

    /// The current leader's id, `None` when nobody takes part.
    pub async fn leader(&self) -> Result<Option<LatchParticipant>> {
        let participants = self.participants().await?;
        Ok(participants.into_iter().next())
    }

    /// Every participant in line, the leader first (Curator's and ours alike).
    pub async fn participants(&self) -> Result<Vec<LatchParticipant>> {
        let listed = self.core.lock.participants().await;
        let listed = listed.map_err(|err| self.core.about(err))?;
        Ok(listed
            .into_iter()
            .enumerate()
            .map(|(at, p)| LatchParticipant {
                id: p.identity,
                node: p.node,
                is_leader: at == 0,
            })
            .collect())
    }

    /// `IS_LEADER` (with the token), `NOT_LEADER` (with the reason when it was lost),
    /// `SUSPENDED` and `RECONNECTED` while leading.
    pub fn subscribe(&self) -> broadcast::Receiver<LatchEvent> {
        self.core.events.subscribe()
    }

    /// Our node's path while leading.
    pub fn node_path(&self) -> Option<String> {
        self.core.lock.node_path_of(self.core.owner)
    }
}

impl LatchCore {
    fn about(&self, err: Error) -> Error {
        self.client.about(err, "leader latch", &self.path)
    }

    fn leads(&self) -> bool {
        self.leadership.borrow().is_some() && self.lock.is_held_by(self.owner)
    }

    /// Starts the participation if it does not run yet: what its first join answers.
    fn start(self: &Arc<Self>) -> Result<watch::Receiver<Option<Result<()>>>> {
        self.client.zk()?;
        let mut phase = self.phase.lock().unwrap();
        match &*phase {
            Phase::Started { joined, .. } => return Ok(joined.clone()),
            Phase::Closed => {
                return Err(Error::new(
                    ErrorCode::Closed,
                    "the latch was closed: a closed latch cannot be started again",
                ))
            }
            Phase::Latent => {}
        }
        let (stop, stopped) = watch::channel(false);
        let (finished, done) = watch::channel(false);
        let (joined, answer) = watch::channel(None);
        *phase = Phase::Started {
            stop,
            done,
            joined: answer.clone(),
        };
        drop(phase);
        let core = self.clone();
        runtime::handle().spawn(async move {
            core.participate(stopped, joined).await;
            finished.send_replace(true);
        });
        Ok(answer)
    }

    /// `CLOSED` as the latch's: its own close, or its client's.
    fn closed_error(&self) -> Error {
        if self.client.is_closed() {
            Error::closed()
        } else {
            Error::new(ErrorCode::Closed, "the latch was closed")
        }
    }

    /// Marks the latch closed and tells the participation to end: its end, if it ran.
    fn close_now(&self) -> Option<watch::Receiver<bool>> {
        let mut phase = self.phase.lock().unwrap();
        match std::mem::replace(&mut *phase, Phase::Closed) {
            Phase::Started { stop, done, .. } => {
                stop.send_replace(true);
                Some(done)
            }
            Phase::Latent | Phase::Closed => None,
        }
    }

    /// After a first join that failed: the latch is latent again (unless closed meanwhile).
    fn unstart(&self) {
        let mut phase = self.phase.lock().unwrap();
        if matches!(*phase, Phase::Started { .. }) {
            *phase = Phase::Latent;
        }
    }

    async fn await_leadership(&self, wait: Wait) -> Result<Option<i64>> {
        let mut done = match &*self.phase.lock().unwrap() {
            Phase::Latent => {
                return Err(Error::invalid_argument(
                    "the latch is not started: start() it first",
                ))
            }
            Phase::Closed => return Err(self.closed_error()),
            Phase::Started { done, .. } => done.clone(),
        };
        let mut leadership = self.leadership.subscribe();
        let deadline = wait.normalized().deadline();
        let led = async {
            loop {
                if self.leads() {
                    if let Some(token) = *leadership.borrow_and_update() {
                        return Ok(Some(token));
                    }
                }
                tokio::select! {
                    changed = leadership.changed() => {
                        if changed.is_err() {
                            return Err(self.closed_error());
                        }
                    }
                    _ = done.wait_for(|done| *done) => return Err(self.closed_error()),
                }
            }
        };
        match deadline {
            None => led.await,
            Some(at) if at <= Instant::now() => {
                Ok(self.leads().then(|| *self.leadership.borrow()).flatten())
            }
            Some(at) => tokio::time::timeout_at(at, led).await.unwrap_or(Ok(None)),
        }
    }
}

impl Drop for LatchCore {
    fn drop(&mut self) {
        crate::memory::object_dropped();
    }
}
