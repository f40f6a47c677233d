//! One task per client follows every lock that client holds, and tells each
//! holder what happens to its hold (`SUSPENDED`, `RECONNECTED`, `LOST`).
//!
//! A task per held lock cost about 1.4 KB for each lock held (its future,
//! its connection-state receiver, its timers), more than everything else a
//! held lock keeps (issue 17). Here a hold costs one entry and one watch.
//!
//! The rules, per hold:
//! - `SUSPENDED` when the connection drops while holding (the session may
//!   still live, or may already have been expired by the server: act as if
//!   the lock might be gone); `RECONNECTED` when the same session is back and
//!   our node is still there (checked before telling); `LOST` otherwise.
//! - Disconnected for as long as the server may take to expire the session
//!   (`Client::suspended_grace`) counts as `LOST` at once, without waiting
//!   to hear it from the server (by then the server may have handed the lock
//!   to somebody else); if the session survives after all, our node is
//!   deleted so that it blocks nobody.
//! - `LOST` also when our node is deleted by somebody else (an operator).
//! - A watch is never dropped before it fires: dropping the last watcher of
//!   a path costs a request (`removeWatches`), and a released lock's watch
//!   fires with its own delete anyway.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::mpsc;
use tokio::time::Instant;
use zookeeper_client as zk;

use super::event::LockEvent;
use super::release_node::{deleted, release_node, Released};
use crate::client::{expired, Client, ConnectionState};
use crate::error::{Error, ErrorCode, Result};
use crate::observe::{recipe_event, session_hex, Recipe};
use crate::runtime;

/// A watch already set, as the monitor takes it over: the event it will deliver. (A waiter
/// hands over the watch on its own node after it has looked whether it fired.)
pub(crate) type SetWatch = std::pin::Pin<Box<dyn Future<Output = zk::WatchedEvent> + Send>>;

/// `watch` as the monitor takes it over.
pub(crate) fn set_watch(watch: zk::OneshotWatcher) -> SetWatch {
    Box::pin(watch.changed())
}

/// What keeps holds of nodes: a lock object, a semaphore (its leases). The monitor tells it
/// what happens to each hold it follows.
pub(crate) trait Keeper: Send + Sync + 'static {
    fn client(&self) -> &Client;
    /// What a held node is, in messages: "lock", "lease".
    fn noun(&self) -> &'static str;
    /// The directory of the held nodes.
    fn dir(&self) -> &str;
    fn emit(&self, event: LockEvent);
    /// The hold of `node` ended without our release (lost, closed): forget it, remember
    /// `remember` for its holder's release, tell `event`.
    fn end_hold(&self, node: &str, event: LockEvent, remember: Option<Error>);
}

/// A client's follower of held locks: made with the first hold, kept by the holds (each
/// `Following` holds it), so that its task ends with the client's last hold.
pub(crate) struct Monitor {
    commands: mpsc::UnboundedSender<Command>,
    next_id: AtomicU64,
}

/// The monitor of every client that holds locks, by client id. The registry is the lock
/// module's: the session layer knows nothing of locks.
static MONITORS: Mutex<Vec<(u64, Weak<Monitor>)>> = Mutex::new(Vec::new());

/// Kept by a hold: dropping it stops following that hold.
pub(crate) struct Following {
    id: u64,
    monitor: Arc<Monitor>,
}

impl std::fmt::Debug for Following {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Following").field("id", &self.id).finish()
    }
}

impl Drop for Following {
    fn drop(&mut self) {
        let _ = self.monitor.commands.send(Command::Forget(self.id));
    }
}

enum Command {
    Follow(Box<Followed>, Option<SetWatch>),
    Forget(u64),
    Armed {
        id: u64,
        verify: bool,
        result: Result<Option<zk::OneshotWatcher>>,
    },
}

impl Monitor {
    /// The monitor of `client`'s holds, started if it has none.
    pub(crate) fn of(client: &Client) -> Arc<Monitor> {
        let mut monitors = MONITORS.lock().unwrap();
        if let Some(monitor) = monitors
            .iter()
            .find(|(id, _)| *id == client.id())
            .and_then(|(_, monitor)| monitor.upgrade())
        {
            return monitor;
        }
        // Clients whose holds all ended leave only a dead entry: dropped here.
        monitors.retain(|(id, monitor)| *id != client.id() && monitor.strong_count() > 0);
        let monitor = Arc::new(Monitor::start(client));
        monitors.push((client.id(), Arc::downgrade(&monitor)));
        monitor
    }

    fn start(client: &Client) -> Monitor {
        let (commands, receiver) = mpsc::unbounded_channel();
        let states = client.subscribe();
        runtime::handle().spawn(run(receiver, commands.downgrade(), states));
        Monitor {
            commands,
            next_id: AtomicU64::new(0),
        }
    }

    /// Follows the hold of `node` in `session`. `first_watch`, when the
    /// acquire left one, serves as the first watch: the child watch of the
    /// listing that made us the holder (it fires with any change of the
    /// directory, our delete included), or a waiter's watch on its own node.
    pub(crate) fn follow(
        self: &Arc<Self>,
        core: Weak<dyn Keeper>,
        node: &str,
        session: i64,
        first_watch: Option<SetWatch>,
        releasing: Arc<AtomicBool>,
    ) -> Following {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let followed = Followed {
            id,
            core,
            node: node.to_string(),
            session,
            releasing,
            epoch: 0,
            watched: false,
            arming: false,
            reverify: false,
            told_suspended: false,
            suspended_until: None,
            rearm_at: None,
            failures: 0,
        };
        let _ = self
            .commands
            .send(Command::Follow(Box::new(followed), first_watch));
        Following {
            id,
            monitor: self.clone(),
        }
    }
}

/// What the monitor knows of one hold.
struct Followed {
    id: u64,
    core: Weak<dyn Keeper>,
    node: String,
    session: i64,
    /// Set before our own delete, so that it is not called a loss.
    releasing: Arc<AtomicBool>,
    /// Bumped with every watch set: events of an older watch are stale.
    epoch: u32,
    watched: bool,
    /// A watch is being set (or, after a reconnect, the node checked).
    arming: bool,
    /// Reconnected again while a check was on its way: check once more.
    reverify: bool,
    /// `SUSPENDED` was told and `RECONNECTED` not yet.
    told_suspended: bool,
    /// While disconnected: when the session may be considered gone.
    suspended_until: Option<Instant>,
    /// After a failed attempt to set the watch: when to try again.
    rearm_at: Option<Instant>,
    failures: u32,
}

enum End {
    Lost(Error),
    Closed,
}

impl Followed {
    fn emit(&self, event: LockEvent) {
        if let Some(lock) = self.core.upgrade() {
            lock.emit(event);
        }
    }

    fn timer(&self) -> Option<Instant> {
        match (self.suspended_until, self.rearm_at) {
            (Some(s), _) => Some(s),
            (None, r) => r,
        }
    }

    fn suspend(&mut self, client: &Client) {
        if !self.told_suspended {
            self.told_suspended = true;
            self.emit(LockEvent::Suspended);
        }
        if self.suspended_until.is_none() {
            self.suspended_until = Some(Instant::now() + client.suspended_grace());
        }
    }
}

/// The task: one per client with holds, alive while any hold is.
async fn run(
    mut commands: mpsc::UnboundedReceiver<Command>,
    reply: mpsc::WeakUnboundedSender<Command>,
    mut states: broadcast::Receiver<ConnectionState>,
) {
    let mut followed: HashMap<u64, Box<Followed>> = HashMap::new();
    let mut events = FuturesUnordered::new();
    let mut states_open = true;
    // Timers are set only while disconnected or after a failed watch: the
    // earliest is looked for (among all holds) only after such a change, not
    // on every hold taken.
    let mut timers_changed = false;
    let mut timer: Option<Instant> = None;
    loop {
        if std::mem::take(&mut timers_changed) {
            timer = followed.values().filter_map(|f| f.timer()).min();
        }
        tokio::select! {
            command = commands.recv() => {
                let Some(command) = command else { return };
                match command {
                    Command::Follow(mut f, watch) => {
                        let Some(lock) = f.core.upgrade() else { continue };
                        let client = lock.client().clone();
                        drop(lock);
                        match client.state() {
                            ConnectionState::Closed => {
                                finish(&f, End::Closed);
                                continue;
                            }
                            ConnectionState::Suspended => {
                                f.suspend(&client);
                                timers_changed = true;
                            }
                            _ => {}
                        }
                        match watch {
                            Some(watch) => events.push(install(&mut f, watch)),
                            None if f.suspended_until.is_none() => arm(&mut f, false, &reply),
                            None => {}
                        }
                        followed.insert(f.id, f);
                    }
                    Command::Forget(id) => {
                        followed.remove(&id);
                    }
                    Command::Armed { id, verify, result } => {
                        timers_changed = true;
                        let Some(f) = followed.get_mut(&id) else { continue };
                        match armed(f, verify, result, &reply) {
                            Ok(Some(watch)) => events.push(install(f, set_watch(watch))),
                            Ok(None) => {}
                            Err(end) => end_of(&mut followed, id, end),
                        }
                    }
                }
            }
            Some((id, epoch, event)) = events.next(), if !events.is_empty() => {
                let Some(f) = followed.get_mut(&id) else { continue };
                if f.epoch != epoch {
                    continue;
                }
                f.watched = false;
                let end = match event.event_type {
                    zk::EventType::NodeDeleted => Some(End::Lost(deleted(noun_of(f), &path_of(f)))),
                    zk::EventType::Session => Some(match event.session_state {
                        zk::SessionState::Closed => End::Closed,
                        _ => End::Lost(expired()),
                    }),
                    // A child of the directory changed, or our data: look
                    // again — unless our own delete is on its way (the
                    // release ends the hold; a new watch would be a request).
                    _ => {
                        if f.suspended_until.is_none() && !f.releasing.load(Ordering::SeqCst) {
                            arm(f, false, &reply);
                        }
                        None
                    }
                };
                if let Some(end) = end {
                    end_of(&mut followed, id, end);
                }
            }
            state = states.recv(), if states_open => {
                let state = match state {
                    Ok(state) => state,
                    Err(RecvError::Lagged(_)) => match any_client(&followed) {
                        Some(client) => client.state(),
                        None => continue,
                    },
                    Err(RecvError::Closed) => {
                        states_open = false;
                        ConnectionState::Closed
                    }
                };
                on_state(&mut followed, state, &reply);
                timers_changed = true;
            }
            () = tokio::time::sleep_until(timer.unwrap_or_else(Instant::now)), if timer.is_some() => {
                timers_changed = true;
                let now = Instant::now();
                let due: Vec<u64> = followed
                    .values()
                    .filter(|f| f.timer().is_some_and(|at| at <= now))
                    .map(|f| f.id)
                    .collect();
                for id in due {
                    let Some(f) = followed.get_mut(&id) else { continue };
                    if f.suspended_until.is_some_and(|at| at <= now) {
                        let end = match f.core.upgrade() {
                            Some(lock) => End::Lost(given_up(lock.client(), lock.noun(), &path_of(f), f.session)),
                            None => End::Closed,
                        };
                        end_of(&mut followed, id, end);
                    } else if f.rearm_at.is_some_and(|at| at <= now) {
                        f.rearm_at = None;
                        if f.suspended_until.is_none()
                            && !f.watched
                            && !f.arming
                            && !f.releasing.load(Ordering::SeqCst)
                        {
                            arm(f, false, &reply);
                        }
                    }
                }
            }
        }
    }
}

fn on_state(
    followed: &mut HashMap<u64, Box<Followed>>,
    state: ConnectionState,
    reply: &mpsc::WeakUnboundedSender<Command>,
) {
    let ids: Vec<u64> = followed.keys().copied().collect();
    for id in ids {
        let Some(f) = followed.get_mut(&id) else {
            continue;
        };
        let Some(lock) = f.core.upgrade() else {
            followed.remove(&id);
            continue;
        };
        let client = lock.client().clone();
        drop(lock);
        let end = match state {
            ConnectionState::Suspended => {
                f.suspend(&client);
                None
            }
            ConnectionState::Connected | ConnectionState::Reconnected => {
                if client.session_id().ok() != Some(f.session) {
                    Some(End::Lost(expired()))
                } else if f.told_suspended {
                    // Still ours only if the node survived: checked before
                    // telling the holder it is back.
                    f.suspended_until = None;
                    if f.arming {
                        f.reverify = true;
                    } else {
                        arm(f, true, reply);
                    }
                    None
                } else {
                    // A release that did not happen leaves a hold unwatched.
                    if !f.watched && !f.arming && !f.releasing.load(Ordering::SeqCst) {
                        arm(f, false, reply);
                    }
                    None
                }
            }
            ConnectionState::Lost => Some(End::Lost(expired())),
            ConnectionState::Closed => Some(End::Closed),
        };
        if let Some(end) = end {
            end_of(followed, id, end);
        }
    }
}

/// What a watch request (or a check after a reconnect) came back with: a
/// watch to install, nothing, or the end of the hold.
fn armed(
    f: &mut Followed,
    verify: bool,
    result: Result<Option<zk::OneshotWatcher>>,
    reply: &mpsc::WeakUnboundedSender<Command>,
) -> std::result::Result<Option<zk::OneshotWatcher>, End> {
    f.arming = false;
    let watch = match result {
        Ok(Some(watch)) => watch,
        Ok(None) => return Err(End::Lost(deleted(noun_of(f), &path_of(f)))),
        Err(err) => match err.code() {
            ErrorCode::SessionExpired => return Err(End::Lost(expired())),
            ErrorCode::Closed => return Err(End::Closed),
            _ => {
                if std::mem::take(&mut f.reverify) {
                    arm(f, true, reply);
                } else if verify {
                    // Could not check: suspended again, until the next
                    // reconnect or the session timeout.
                    if let Some(lock) = f.core.upgrade() {
                        f.suspended_until = None;
                        f.suspend(lock.client());
                    }
                } else {
                    // Disconnected, most likely: the state change that follows
                    // tells what to do; look again later in any case.
                    f.failures = (f.failures + 1).min(5);
                    let delay = Duration::from_millis(50 << f.failures).min(Duration::from_secs(1));
                    f.rearm_at = Some(Instant::now() + delay.mul_f64(0.5 + fastrand::f64() / 2.0));
                }
                return Ok(None);
            }
        },
    };
    f.failures = 0;
    if std::mem::take(&mut f.reverify) {
        // Reconnected once more meanwhile: this answer may predate it.
        arm(f, true, reply);
        return Ok(Some(watch));
    }
    if verify && f.suspended_until.is_none() {
        f.told_suspended = false;
        f.emit(LockEvent::Reconnected);
    }
    Ok(Some(watch))
}

/// Sets a data watch on our node in a task of its own (a request must not
/// hold up every other hold); `verify` after a reconnect.
fn arm(f: &mut Followed, verify: bool, reply: &mpsc::WeakUnboundedSender<Command>) {
    let Some(lock) = f.core.upgrade() else { return };
    f.arming = true;
    let (id, session, path, reply) = (f.id, f.session, path_of(f), reply.clone());
    runtime::handle().spawn(async move {
        let result = arm_watch(lock.client(), &path, session).await;
        drop(lock);
        if let Some(reply) = reply.upgrade() {
            let _ = reply.send(Command::Armed { id, verify, result });
        }
    });
}

fn install(
    f: &mut Followed,
    watch: SetWatch,
) -> impl Future<Output = (u64, u32, zk::WatchedEvent)> + use<> {
    f.epoch = f.epoch.wrapping_add(1);
    f.watched = true;
    let (id, epoch) = (f.id, f.epoch);
    async move { (id, epoch, watch.await) }
}

fn end_of(followed: &mut HashMap<u64, Box<Followed>>, id: u64, end: End) {
    if let Some(f) = followed.remove(&id) {
        finish(&f, end);
    }
}

fn finish(f: &Followed, end: End) {
    let Some(lock) = f.core.upgrade() else { return };
    match end {
        End::Closed => lock.end_hold(&f.node, LockEvent::Released, Some(Error::closed())),
        End::Lost(reason) => {
            if f.releasing.load(Ordering::SeqCst) && reason.code() == ErrorCode::NoNode {
                // Our own delete, seen before its reply: the release reports it.
                return;
            }
            lock.end_hold(
                &f.node,
                LockEvent::Lost {
                    reason: reason.clone(),
                },
                Some(reason),
            );
        }
    }
}

fn any_client(followed: &HashMap<u64, Box<Followed>>) -> Option<Client> {
    followed
        .values()
        .find_map(|f| f.core.upgrade().map(|lock| lock.client().clone()))
}

fn noun_of(f: &Followed) -> &'static str {
    f.core.upgrade().map_or("lock", |keeper| keeper.noun())
}

fn path_of(f: &Followed) -> String {
    match f.core.upgrade() {
        Some(lock) => format!("{}/{}", lock.dir(), f.node),
        None => f.node.clone(),
    }
}

/// Disconnected past the session timeout: the server may have expired us
/// and handed the lock on. If the session survives after all, our node must
/// not block anybody: it is deleted in the background.
fn given_up(client: &Client, noun: &'static str, path: &str, session: i64) -> Error {
    let node = path.to_string();
    let client = client.clone();
    runtime::handle().spawn(async move {
        if let Ok(Released::Deleted) = release_node(&client, noun, &node, session).await {
            let recipe = match noun {
                "lease" => Recipe::Semaphore,
                _ => Recipe::Lock,
            };
            let path = node.rsplit_once('/').map_or("/", |(dir, _)| dir);
            let session = session_hex(session);
            recipe_event!(
                recipe,
                INFO,
                path,
                node = node.as_str(),
                session = session.as_str(),
                "deleted {node} of a {noun} given up as lost (its session {session} survived)"
            );
        }
    });
    Error::new(
        ErrorCode::SessionExpired,
        format!("disconnected for as long as the server may take to expire the session: the {noun} may have passed to another client"),
    )
}

/// A data watch on our own node; `None` if it is gone.
async fn arm_watch(
    client: &Client,
    path: &str,
    session: i64,
) -> Result<Option<zk::OneshotWatcher>> {
    let zk = client.zk()?;
    if zk.session_id().0 != session {
        return Err(expired());
    }
    match zk.get_and_watch_data(path).await {
        Ok((_, _, watcher)) => Ok(Some(watcher)),
        Err(zk::Error::NoNode) => Ok(None),
        Err(err) => Err(err.into()),
    }
}
