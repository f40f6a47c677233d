//! What the recipes use of a client: its session per request, the retry rules every recipe
//! shares (a request retried across connection losses, a new session awaited), node helpers,
//! and the error messages that name the recipe and path.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;
use zookeeper_client as zk;

use super::create_path::create_path;
use super::{chroot_len, Client, ConnectionState, Settling};
use crate::backoff::Backoff;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime;
use crate::security::Tls;

impl Client {
    /// This client's id, unique in the process (see `Inner::id`).
    pub(crate) fn id(&self) -> u64 {
        self.inner.id
    }

    /// How long after `Suspended` the session can still be taken as alive on
    /// the server: what holders and leaders wait before giving up locally.
    ///
    /// The server expires a session one session timeout after it last heard
    /// from it, but the client notices a silent connection only some time after
    /// its last answer (8 ticks of the session crate: 2/5 of the session timeout,
    /// or the connect timeout when that is shorter). Counting the session
    /// timeout from the notice, as Curator does, reports a lock for up to 2/5 of
    /// a session timeout after another client took it (found by an adversarial
    /// test); so the notice delay comes off, and a tenth more for the one-way
    /// trip of the last answer and clock drift.
    pub(crate) fn suspended_grace(&self) -> Duration {
        let session = self
            .zk()
            .map(|zk| zk.session_timeout())
            .unwrap_or(self.inner.options.session_timeout);
        let connection = self
            .inner
            .options
            .connect_timeout
            .min(self.inner.options.session_timeout);
        let tick = if connection.is_zero() || connection > session * 3 / 5 {
            session / 20
        } else {
            connection / 8
        };
        let noticed_after = tick.max(Duration::from_millis(1)) * 8;
        session.saturating_sub(noticed_after + session / 10)
    }

    /// Whether the server has been silent for longer than it may take to expire the session
    /// (a tenth of a session timeout short of it, as `suspended_grace` counts): what a holder
    /// held may be somebody else's by now, whether or not this client has noticed. A process
    /// paused past its session (SIGSTOP, a long GC pause) learns it here the moment it resumes,
    /// on the monotonic clock: its connection state still says connected until the session's
    /// own timer runs (a latch said it led 0.3-0.8 ms after SIGCONT, while another member had
    /// led for 0.3 s: issue 47).
    pub(crate) fn silent_past_grace(&self) -> bool {
        // Under the read lock, not through `zk()`: a clone of the session's client per
        // `is_held` would cost an allocation on every answer.
        let session = self.inner.session.read().unwrap();
        let Some(zk) = session.as_ref() else {
            return true;
        };
        let timeout = zk.session_timeout();
        zk.last_heard().elapsed() > timeout.saturating_sub(timeout / 10)
    }

    /// The id of the current session (changes after `Lost` → `Reconnected`).
    /// A recipe made on a closed client fails at once, in every language.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.is_closed() {
            return Err(Error::closed());
        }
        Ok(())
    }

    /// `err` naming what it is about: `"<kind> <path>"`, plus the chroot the
    /// path is under, and for `NO_AUTH` the identities the session has.
    pub(crate) fn about(&self, err: Error, kind: &str, path: &str) -> Error {
        let chroot = self
            .inner
            .session
            .read()
            .unwrap()
            .as_ref()
            .map(|s| s.path().to_string());
        let what = match chroot.as_deref() {
            None | Some("/") => format!("{kind} {path}"),
            Some(root) => format!("{kind} {path} (chroot {root})"),
        };
        let err = err.about(&what);
        if err.code() != ErrorCode::NoAuth || err.message().contains("authenticated as") {
            return err;
        }
        let who = self.authenticated_as();
        let who = match who.is_empty() {
            true => "no identity (world:anyone)".to_string(),
            false => who.join(", "),
        };
        Error::new(
            err.code(),
            format!("{}; this session is authenticated as {who}", err.message()),
        )
    }

    /// The TLS settings of this client's sessions (for `inspect`'s `cons` over TLS).
    pub(crate) fn tls(&self) -> Option<&Tls> {
        self.inner.options.tls.as_ref()
    }

    /// The current session, or `CLOSED`.
    /// The length the chroot adds to every path on the wire (0 before a
    /// session exists: no request can be sent then either).
    pub(crate) fn chroot_len(&self) -> usize {
        self.zk().map_or(0, |zk| chroot_len(&zk))
    }

    pub(crate) fn zk(&self) -> Result<zk::Client> {
        runtime::refuse_if_forked()?;
        self.inner
            .session
            .read()
            .unwrap()
            .clone()
            .ok_or_else(Error::closed)
    }

    pub(crate) fn acls(&self) -> zk::Acls<'_> {
        zk::Acls::new(&self.inner.acl)
    }

    /// Keeps `close` waiting (up to one session timeout) until it is dropped.
    pub(crate) fn settling(&self) -> Settling {
        self.inner.settling.send_modify(|n| *n += 1);
        Settling(self.inner.clone())
    }

    /// Runs an idempotent request until it gets an answer, across connection
    /// losses and new sessions (for requests whose meaning outlives a session).
    pub(crate) async fn retrying_any_session<T, F, Fut>(&self, mut op: F) -> Result<T>
    where
        F: FnMut(zk::Client) -> Fut,
        Fut: Future<Output = std::result::Result<T, zk::Error>>,
    {
        loop {
            match self.retrying(None, &mut op).await {
                Err(err) if err.code() == ErrorCode::SessionExpired => {
                    self.await_new_session().await?
                }
                other => return other,
            }
        }
    }

    /// The connection state, for a task that must notice every change (a cache rebuilds after
    /// each reconnect): unlike `subscribe`, a slow reader sees the newest state, never a lag.
    pub(crate) fn state_changes(&self) -> tokio::sync::watch::Receiver<ConnectionState> {
        self.inner.state.subscribe()
    }

    /// Waits until a request can be sent on `session` again. A session that
    /// expired meanwhile is an error: whatever the caller owned in it is gone.
    pub(crate) async fn await_usable(&self, session: i64, deadline: Option<Instant>) -> Result<()> {
        let mut state = self.inner.state.subscribe();
        let ready = async {
            loop {
                let now = *state.borrow_and_update();
                match now {
                    ConnectionState::Closed => return Err(Error::closed()),
                    ConnectionState::Lost => return Err(expired()),
                    s if s.is_usable() => {
                        return if self.session_id()? == session {
                            Ok(())
                        } else {
                            Err(expired())
                        };
                    }
                    _ => {}
                }
                if state.changed().await.is_err() {
                    return Err(Error::closed());
                }
            }
        };
        with_deadline(deadline, ready).await?
    }

    /// Runs an idempotent request, and again after each connection loss once
    /// the session is reachable again, until `deadline`.
    pub(crate) async fn retrying<T, F, Fut>(
        &self,
        deadline: Option<Instant>,
        mut op: F,
    ) -> Result<T>
    where
        F: FnMut(zk::Client) -> Fut,
        Fut: Future<Output = std::result::Result<T, zk::Error>>,
    {
        let zk = self.zk()?;
        let session = zk.session_id().0;
        drop(zk);
        let mut backoff = Backoff::new(Duration::from_millis(5), Duration::from_secs(1));
        loop {
            let result = with_deadline(deadline, op(self.zk()?)).await?;
            match result {
                Err(zk::Error::Throttled) => {
                    // An overloaded server asks us to slow down, not to retry at once.
                    tracing::warn!(
                        target: "zkrecipes::session",
                        reason = "throttled",
                        "the server throttles this client's requests: retrying after a backoff"
                    );
                    with_deadline(deadline, backoff.sleep()).await?;
                }
                Err(err) if Error::from(err.clone()).is_connection_loss() => {
                    self.await_usable(session, deadline).await?;
                    with_deadline(deadline, backoff.sleep()).await?;
                }
                other => return other.map_err(Error::from),
            }
        }
    }

    /// The node's data and stat, `None` if it does not exist; read again after a connection
    /// loss, as `retrying` does.
    pub(crate) async fn read_if_present(&self, path: &str) -> Result<Option<(Vec<u8>, zk::Stat)>> {
        self.retrying(None, |zk| async move {
            match zk.get_data(path).await {
                Ok(found) => Ok(Some(found)),
                Err(zk::Error::NoNode) => Ok(None),
                Err(err) => Err(err),
            }
        })
        .await
    }

    /// Starts a recipe's one background task (a cache's engine, a node's keeper) unless it runs
    /// already, so that a second `start` is a no-op; refused once the recipe stopped (`stopped`)
    /// or this client closed.
    pub(crate) fn start_once<F>(
        &self,
        stopped: Option<Error>,
        running: &Mutex<Option<tokio::task::AbortHandle>>,
        task: impl FnOnce() -> F,
    ) -> Result<()>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        if let Some(err) = stopped {
            return Err(err);
        }
        self.check_open()?;
        let mut running = running.lock().unwrap();
        if running.is_none() {
            *running = Some(runtime::handle().spawn(task()).abort_handle());
        }
        Ok(())
    }

    /// The names of `dir`'s children, none if `dir` does not exist (a recipe directory not yet
    /// made, or deleted); listed again after a connection loss, as `retrying` does.
    pub(crate) async fn children_if_present(&self, dir: &str) -> Result<Vec<String>> {
        self.retrying(None, |zk| async move {
            match zk.list_children(dir).await {
                Err(zk::Error::NoNode) => Ok(Vec::new()),
                listed => listed,
            }
        })
        .await
    }

    /// Creates the recipe directory `path` with this client's ACL, and its
    /// missing ancestors open to everybody: an ancestor is shared by other
    /// applications, which must still be able to create their own directories.
    pub(crate) async fn ensure_path(&self, path: &str, deadline: Option<Instant>) -> Result<()> {
        let acls = self.acls();
        self.retrying(deadline, |zk| async move {
            create_path(&zk, path, zk::CreateMode::Persistent.with_acls(acls)).await
        })
        .await
    }

    /// Creates a recipe directory (lock, read/write lock, election root) as a
    /// container node, which the server deletes once its last child is gone,
    /// as Curator does: per-entity lock names (`/locks/order-<id>`) do not
    /// pile up for ever. A server without containers (before 3.5.3) gets a
    /// persistent node instead. A recipe whose directory vanished under it
    /// gets `NO_NODE` on its create and calls this again.
    pub(crate) async fn ensure_container(
        &self,
        path: &str,
        deadline: Option<Instant>,
    ) -> Result<()> {
        let acls = self.acls();
        if self.inner.no_containers.load(Ordering::Relaxed) {
            return self.ensure_path(path, deadline).await;
        }
        let created = self
            .retrying(deadline, |zk| async move {
                match create_path(&zk, path, zk::CreateMode::Container.with_acls(acls)).await {
                    Err(zk::Error::Unimplemented) => Ok(false),
                    done => done.map(|()| true),
                }
            })
            .await?;
        if !created {
            self.inner.no_containers.store(true, Ordering::Relaxed);
            return self.ensure_path(path, deadline).await;
        }
        Ok(())
    }

    /// Waits until the client has a usable session other than `old` (the
    /// one that expired), or returns `CLOSED`. Waits through refusals of the
    /// new session (the client keeps trying: fixed credentials recover it),
    /// as a background driver must (an election's offer).
    pub(crate) async fn await_session_after(&self, old: i64) -> Result<()> {
        self.await_session_other_than(old, false).await
    }

    /// As `await_session_after`, for a caller's own call (an acquire lining up again, a
    /// counter's update learning its outcome): the server's refusal of the new session (a
    /// password rotated, a ticket or certificate expired) ends the wait with that refusal,
    /// since it does not pass by itself (a counter's update hung for as long as the
    /// credentials stayed wrong: an adversarial review, issue 47).
    pub(crate) async fn await_session_after_unless_refused(&self, old: i64) -> Result<()> {
        self.await_session_other_than(old, true).await
    }

    async fn await_session_other_than(&self, old: i64, unless_refused: bool) -> Result<()> {
        let ready = |state: ConnectionState, client: &Client| {
            Ok(state.is_usable() && client.session_id()? != old)
        };
        self.await_session(ready, unless_refused).await
    }

    /// Waits until the client has a usable session again after `Lost`
    /// (or returns `CLOSED`), through refusals: watchers and drivers that
    /// outlive an outage wait for it to end.
    pub(crate) async fn await_new_session(&self) -> Result<()> {
        self.await_session(|state, _| Ok(state.is_usable()), false)
            .await
    }

    async fn await_session(
        &self,
        ready: impl Fn(ConnectionState, &Client) -> Result<bool>,
        unless_refused: bool,
    ) -> Result<()> {
        let mut state = self.inner.state.subscribe();
        let mut refusals = self.inner.session_error.subscribe();
        loop {
            let now = *state.borrow_and_update();
            if now == ConnectionState::Closed {
                return Err(Error::closed());
            }
            if ready(now, self)? {
                return Ok(());
            }
            let refusal = refusals
                .borrow_and_update()
                .clone()
                .filter(Error::is_refusal);
            if let Some(refused) = refusal.filter(|_| unless_refused) {
                // Only a refusal: an outage (CONNECTION_LOSS) passes by itself.
                return Err(Error::new(
                    refused.code(),
                    format!(
                        "the ZooKeeper session ended, and the server refuses a new one: {}",
                        refused.message()
                    ),
                ));
            }
            tokio::select! {
                changed = state.changed() => changed.map_err(|_| Error::closed())?,
                changed = refusals.changed() => changed.map_err(|_| Error::closed())?,
            }
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

pub(crate) fn expired() -> Error {
    Error::new(ErrorCode::SessionExpired, "the ZooKeeper session expired")
}

/// Lets a watch that is no longer needed fire on its own, in the background. Dropped unfired, it
/// would cost a request: zookeeper-client 0.11 sends `removeWatches` when the last watcher of a
/// path goes (one request per waiter under contention, issue 32); it fires with the next change
/// of what it watches, or ends with the session.
pub(crate) fn let_watch_fire(watch: zk::OneshotWatcher) {
    runtime::handle().spawn(async move {
        let _ = watch.changed().await;
    });
}

/// Bounds `future` by `deadline` (`None` = unbounded) with a `TIMEOUT` error.
pub(crate) async fn with_deadline<T>(
    deadline: Option<Instant>,
    future: impl Future<Output = T>,
) -> Result<T> {
    match deadline {
        None => Ok(future.await),
        Some(deadline) => tokio::time::timeout_at(deadline, future)
            .await
            .map_err(|_| Error::new(ErrorCode::Timeout, "the deadline passed")),
    }
}

/// `future`'s output, unless the connection stops being usable first: a
/// request already sent past a caller's deadline is waited for only while
/// its answer can still come.
pub(crate) async fn while_usable<T>(client: &Client, future: impl Future<Output = T>) -> Option<T> {
    let mut states = client.subscribe();
    tokio::pin!(future);
    loop {
        if !client.state().is_usable() {
            return None;
        }
        tokio::select! {
            output = &mut future => return Some(output),
            _ = states.recv() => {}
        }
    }
}
