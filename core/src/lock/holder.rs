//! A held lock: what the holder is told while it holds, and its release.
//!
//! - `SUSPENDED` when the connection drops while holding (the session may
//!   still live, or may already have been expired by the server: act as if
//!   the lock might be gone); `RECONNECTED` when the same session is back and
//!   our node is still there; `LOST` otherwise.
//! - Disconnected for longer than the session timeout counts as `LOST` at
//!   once, without waiting to hear it from the server (by then the server may
//!   have handed the lock to somebody else); if the session survives after
//!   all, our node is deleted so that it blocks nobody.
//! - `LOST` also when our node is deleted by somebody else (an operator).
//! - A release reports success only when the server confirmed our delete; a
//!   release that finds the lock already lost says so (the error, and one
//!   `LOST` event), never "released".

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::task::AbortHandle;
use tokio::time::Instant;
use zookeeper_client as zk;

use super::write_lock::{LockCore, LockEvent, Owner};
use crate::client::{expired, Backoff, Client, ConnectionState};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime;

#[derive(Debug)]
pub(super) struct Hold {
    pub owner: Owner,
    pub count: u32,
    pub node: String,
    pub fencing_token: i64,
    pub session: i64,
    monitor: AbortHandle,
    /// Set before our own delete, so that the monitor does not call it a loss.
    releasing: Arc<AtomicBool>,
}

impl Hold {
    pub(super) fn new(
        core: &Arc<LockCore>,
        owner: Owner,
        node: String,
        fencing_token: i64,
        session: i64,
        children_watch: Option<zk::OneshotWatcher>,
    ) -> Hold {
        let releasing = Arc::new(AtomicBool::new(false));
        let monitor = runtime::handle()
            .spawn(monitor(
                Arc::downgrade(core),
                node.clone(),
                session,
                children_watch,
                releasing.clone(),
            ))
            .abort_handle();
        Hold {
            owner,
            count: 1,
            node,
            fencing_token,
            session,
            monitor,
            releasing,
        }
    }

    pub(super) fn start_release(&self) {
        self.releasing.store(true, Ordering::SeqCst);
    }

    pub(super) fn cancel_release(&self) {
        self.releasing.store(false, Ordering::SeqCst);
    }

    pub(super) fn is_releasing(&self) -> bool {
        self.releasing.load(Ordering::SeqCst)
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.monitor.abort();
    }
}

/// How a release ended on the server.
pub(super) enum Released {
    Deleted,
    /// The node was already gone (session expired, deleted by somebody else).
    Lost(Error),
}

/// Deletes our node `path` of `session`, retrying across connection losses
/// in that session. A node that is gone before our first delete, or a session
/// that ended, is a lost lock, not a release.
pub(super) async fn release_node(client: &Client, path: &str, session: i64) -> Result<Released> {
    let mut retried = false;
    loop {
        let zk = client.zk()?;
        if zk.session_id().0 != session {
            return Ok(Released::Lost(expired()));
        }
        match zk.delete(path, None).await.map_err(Error::from) {
            Ok(()) => return Ok(Released::Deleted),
            // After a lost reply, "no node" is our own earlier delete.
            Err(err) if err.code() == ErrorCode::NoNode && retried => return Ok(Released::Deleted),
            Err(err) if err.code() == ErrorCode::NoNode => {
                return Ok(Released::Lost(deleted(path)))
            }
            Err(err) if err.code() == ErrorCode::SessionExpired => {
                return Ok(Released::Lost(expired()))
            }
            Err(err) if err.is_connection_loss() => {
                drop(zk);
                retried = true;
                match client.await_usable(session, None).await {
                    Ok(()) => {}
                    Err(err) if err.code() == ErrorCode::SessionExpired => {
                        return Ok(Released::Lost(expired()))
                    }
                    Err(err) => return Err(err),
                }
            }
            Err(err) => return Err(err),
        }
    }
}

fn deleted(path: &str) -> Error {
    Error::new(
        ErrorCode::NoNode,
        format!("lock node {path} was deleted by somebody else"),
    )
}

/// Follows a hold until it ends: our release (`releasing`), a loss, or close.
async fn monitor(
    core: Weak<LockCore>,
    node: String,
    session: i64,
    children_watch: Option<zk::OneshotWatcher>,
    releasing: Arc<AtomicBool>,
) {
    let Some((client, path)) = core
        .upgrade()
        .map(|lock| (lock.client().clone(), format!("{}/{}", lock.dir(), node)))
    else {
        return;
    };
    let end = follow(&core, &client, &path, session, children_watch, &releasing).await;
    let Some(lock) = core.upgrade() else { return };
    match end {
        End::Closed => lock.end_hold(&node, LockEvent::Released, Some(Error::closed())),
        End::Lost(reason) => {
            if releasing.load(Ordering::SeqCst) && reason.code() == ErrorCode::NoNode {
                // Our own delete, seen before its reply: the release reports it.
                return;
            }
            tracing::warn!("lost lock {path}: {reason}");
            lock.end_hold(
                &node,
                LockEvent::Lost {
                    reason: reason.clone(),
                },
                Some(reason),
            );
        }
    }
}

enum End {
    Lost(Error),
    Closed,
}

type NodeEvent = Pin<Box<dyn Future<Output = zk::WatchedEvent> + Send>>;

async fn follow(
    core: &Weak<LockCore>,
    client: &Client,
    path: &str,
    session: i64,
    children_watch: Option<zk::OneshotWatcher>,
    releasing: &AtomicBool,
) -> End {
    let emit = |event: LockEvent| {
        if let Some(lock) = core.upgrade() {
            lock.emit(event);
        }
    };
    let mut states = client.subscribe();
    let mut watch: Option<NodeEvent> = children_watch.map(|w| Box::pin(w.changed()) as NodeEvent);
    // Set while disconnected: when the session may be considered gone.
    let mut suspended_until: Option<Instant> = None;
    // Set after a failed attempt to arm the watch: when to try again.
    let mut rearm_at: Option<Instant> = None;
    let mut backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(1));
    match client.state() {
        ConnectionState::Suspended => {
            emit(LockEvent::Suspended);
            suspended_until = Some(Instant::now() + client.suspended_grace());
        }
        ConnectionState::Closed => return End::Closed,
        _ => {}
    }
    loop {
        let due = rearm_at.is_none_or(|at| at <= Instant::now());
        // While our own delete is on its way, a directory change is ours: no
        // new watch (a request) — the release ends this monitor.
        let releasing = releasing.load(Ordering::SeqCst);
        if watch.is_none() && suspended_until.is_none() && due && !releasing {
            rearm_at = None;
            match arm_watch(client, path, session).await {
                Ok(Some(w)) => {
                    watch = Some(Box::pin(w.changed()));
                    backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(1));
                }
                Ok(None) => return End::Lost(deleted(path)),
                Err(err) => match err.code() {
                    ErrorCode::SessionExpired => return End::Lost(expired()),
                    ErrorCode::Closed => return End::Closed,
                    // Disconnected, most likely: the state change that follows
                    // tells what to do; look again later in any case.
                    _ => rearm_at = Some(Instant::now() + backoff.delay()),
                },
            }
        }
        let node_event = async {
            match watch.as_mut() {
                Some(event) => event.await,
                None => std::future::pending().await,
            }
        };
        let timer = suspended_until.or(rearm_at);
        let wake = async {
            match timer {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = node_event => {
                watch = None;
                match event.event_type {
                    zk::EventType::NodeDeleted => return End::Lost(deleted(path)),
                    zk::EventType::Session => {
                        return match event.session_state {
                            zk::SessionState::Closed => End::Closed,
                            _ => End::Lost(expired()),
                        }
                    }
                    // A child of the directory changed, or our data: look again.
                    _ => {}
                }
            },
            state = states.recv() => {
                let state = match state {
                    Ok(state) => state,
                    Err(RecvError::Lagged(_)) => client.state(),
                    Err(RecvError::Closed) => return End::Closed,
                };
                match state {
                    ConnectionState::Suspended => {
                        if suspended_until.is_none() {
                            suspended_until = Some(Instant::now() + client.suspended_grace());
                            emit(LockEvent::Suspended);
                        }
                    }
                    ConnectionState::Connected | ConnectionState::Reconnected => {
                        if client.session_id().ok() != Some(session) {
                            return End::Lost(expired());
                        }
                        if suspended_until.take().is_some() {
                            // Still ours only if the node survived: checked
                            // before telling the holder it is back.
                            match arm_watch(client, path, session).await {
                                Ok(Some(w)) => {
                                    watch = Some(Box::pin(w.changed()));
                                    emit(LockEvent::Reconnected);
                                }
                                Ok(None) => return End::Lost(deleted(path)),
                                Err(err) if err.code() == ErrorCode::Closed => return End::Closed,
                                Err(err) if err.code() == ErrorCode::SessionExpired => {
                                    return End::Lost(expired())
                                }
                                Err(_) => {
                                    suspended_until =
                                        Some(Instant::now() + client.suspended_grace());
                                }
                            }
                        }
                    }
                    ConnectionState::Lost => return End::Lost(expired()),
                    ConnectionState::Closed => return End::Closed,
                }
            },
            () = wake => {
                if suspended_until.is_some_and(|at| at <= Instant::now()) {
                    return End::Lost(given_up(client, path, session));
                }
            },
        }
    }
}

/// Disconnected past the session timeout: the server may have expired us
/// and handed the lock on. If the session survives after all, our node must
/// not block anybody: it is deleted in the background.
fn given_up(client: &Client, path: &str, session: i64) -> Error {
    let node = path.to_string();
    let client = client.clone();
    runtime::handle().spawn(async move {
        if let Ok(Released::Deleted) = release_node(&client, &node, session).await {
            tracing::info!("deleted {node} of a lock given up as lost");
        }
    });
    Error::new(
        ErrorCode::SessionExpired,
        "disconnected for longer than the session timeout: the lock may have passed to another client",
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
