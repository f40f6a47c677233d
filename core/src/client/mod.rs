//! The session behind every recipe: connection states, a new session after
//! expiry, and the retry rules every recipe shares.
//!
//! `zookeeper-client` reconnects within a session by itself but never retries
//! an operation and never opens a new session; both are done here, once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio::time::Instant;
use zookeeper_client as zk;

use crate::emitter::Emitter;
use crate::error::{Error, Result};
use crate::observe::{self, MetricsSnapshot, Registry};
use crate::runtime;
use crate::security::TlsSetup;
use options::validate_options;
use session::{host_name, open_session, supervise, whoami};

mod create_path;
mod options;
mod recipes;
mod session;
mod state;

pub(crate) use options::check_node_data;
pub use options::{
    Auth, ClientOptions, DEFAULT_CONNECT_TIMEOUT, DEFAULT_SESSION_TIMEOUT, MAX_NODE_DATA,
    MAX_PACKET,
};
pub(crate) use recipes::{delete_confirmed, expired, let_watch_fire, while_usable, with_deadline};
use session::chroot_len;
pub use state::ConnectionState;

static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A ZooKeeper client shared by any number of recipes. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    connect_string: String,
    options: ClientOptions,
    identity: String,
    /// `None` once closed. Recipes clone the current session per request and
    /// never keep it across a wait, so that dropping it here ends the session.
    session: RwLock<Option<zk::Client>>,
    state: watch::Sender<ConnectionState>,
    events: Emitter<ConnectionState>,
    /// Work that must finish before the session ends (a queue item on its way
    /// back): `close` waits for it, up to one session timeout.
    settling: watch::Sender<usize>,
    /// The server refused a container node (older than 3.5.3).
    no_containers: AtomicBool,
    /// Distinguishes this client from every other in the process, for registries keyed by
    /// client (the lock module's monitor of held locks).
    id: u64,
    /// Shared by every session of this client (certificates re-read on change).
    tls: Option<TlsSetup>,
    /// The ACL entries of every node the recipes create.
    acl: Arc<[zk::Acl]>,
    /// The identities the server authenticated (`whoami`), for `NO_AUTH` messages.
    authenticated_as: RwLock<Vec<String>>,
    /// Why the last attempt at a new session after `Lost` failed, until one succeeds; a watch,
    /// so that a call waiting for the next session learns of a refusal (`await_session_after`).
    session_error: watch::Sender<Option<Error>>,
    /// This client's metrics, shared with its sessions' request observer.
    registry: Arc<Registry>,
    /// The servers refused a persistent watch (ZooKeeper before 3.6, which also closes the
    /// connection then): this client's caches use one-shot watches from then on.
    no_persistent_watches: AtomicBool,
    /// The servers refused a `multiRead` (before 3.6, closing the connection too): this
    /// client's queues read one request at a time from then on.
    no_multi_read: AtomicBool,
}

/// A client that a background task follows without keeping it alive.
#[derive(Clone)]
pub(crate) struct WeakClient(std::sync::Weak<Inner>);

impl WeakClient {
    pub(crate) fn upgrade(&self) -> Option<Client> {
        self.0.upgrade().map(|inner| Client { inner })
    }
}

/// Held while work that `close` waits for is in progress.
pub(crate) struct Settling(Arc<Inner>);

impl Drop for Settling {
    fn drop(&mut self) {
        self.0.settling.send_modify(|n| *n -= 1);
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("connect_string", &self.inner.connect_string)
            .field("state", &self.state())
            .finish()
    }
}

impl Client {
    /// Opens a session to `connect_string` (`host:port[,host:port…][/chroot]`).
    ///
    /// Fails with `CONNECTION_LOSS` when no server answers within
    /// `connect_timeout`, `AUTH_FAILED` when the server refuses the credentials.
    pub async fn connect(connect_string: &str, options: ClientOptions) -> Result<Client> {
        validate_options(connect_string, &options)?;
        runtime::refuse_if_forked()?;
        let tls = options.tls.as_ref().map(TlsSetup::new).transpose()?;
        let tls_options = tls.as_ref().map(|tls| tls.options.clone());
        let registry = Registry::new(options.metrics, options.metric_paths);
        let observer = observe::request_observer(&registry);
        let session = open_session(
            connect_string.to_string(),
            options.clone(),
            tls_options,
            observer,
        )
        .await?;
        observe::state_changed(
            &registry,
            ConnectionState::Connected,
            Some(session.session_id().0),
        );
        let authenticated_as = whoami(&session, &options).await;
        let credentials = options.auth.is_some()
            || options.sasl.is_some()
            || options.tls.as_ref().is_some_and(|t| t.identity.is_some());
        if let Err(err) = options.acl.check_grants(credentials, &authenticated_as) {
            drop(session);
            return Err(err);
        }
        let acl = options.acl.entries(credentials);
        let watcher = session.state_watcher();
        let identity = options.identity.clone().unwrap_or_else(host_name);
        let (state, _) = watch::channel(ConnectionState::Connected);
        let events = Emitter::new(64);
        let (settling, _) = watch::channel(0);
        let inner = Arc::new(Inner {
            connect_string: connect_string.to_string(),
            options,
            identity,
            session: RwLock::new(Some(session)),
            state,
            events,
            settling,
            no_containers: AtomicBool::new(false),
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            tls,
            acl,
            authenticated_as: RwLock::new(authenticated_as),
            session_error: watch::Sender::new(None),
            registry,
            no_persistent_watches: AtomicBool::new(false),
            no_multi_read: AtomicBool::new(false),
        });
        runtime::handle().spawn(supervise(Arc::downgrade(&inner), watcher));
        Ok(Client { inner })
    }

    pub fn state(&self) -> ConnectionState {
        *self.inner.state.borrow()
    }

    /// Every state change from now on. A slow receiver loses the oldest
    /// changes (`RecvError::Lagged`), never blocks the client.
    pub fn subscribe(&self) -> broadcast::Receiver<ConnectionState> {
        self.inner.events.subscribe()
    }

    /// The data written into this client's lock and election nodes.
    /// The connect string this client was made with.
    pub fn connect_string(&self) -> &str {
        &self.inner.connect_string
    }

    pub fn identity(&self) -> &str {
        &self.inner.identity
    }

    pub fn session_timeout(&self) -> Duration {
        self.inner.options.session_timeout
    }

    /// The identities the server authenticated this session as
    /// (`["digest:alice", "x509:CN=app"]`), read once per session.
    pub fn authenticated_as(&self) -> Vec<String> {
        self.inner.authenticated_as.read().unwrap().clone()
    }

    /// Asks the server which identities this session has now (ZooKeeper
    /// 3.7+ `whoami`; `[]` from older servers), e.g. after a certificate rotation.
    pub async fn whoami(&self) -> Result<Vec<String>> {
        let zk = self.zk()?;
        let users = with_deadline(
            Some(Instant::now() + self.inner.options.connect_timeout),
            zk.list_auth_users(),
        )
        .await??;
        let who: Vec<String> = users
            .iter()
            .filter(|u| u.scheme() != "ip")
            .map(|u| format!("{}:{}", u.scheme(), u.user()))
            .collect();
        *self.inner.authenticated_as.write().unwrap() = who.clone();
        Ok(who)
    }

    /// Why the client has no session after `Lost`: the last failed attempt
    /// at a new one (a password rotated on the server, an expired ticket or
    /// certificate), until an attempt succeeds. Holders were told `Lost` with
    /// the expiry; this says why no new session comes.
    pub fn session_error(&self) -> Option<Error> {
        self.inner.session_error.borrow().clone()
    }

    /// Whether sessions run over TLS (the `tls` option or `tcp+tls://` servers).
    pub fn is_tls(&self) -> bool {
        self.inner.tls.is_some()
    }

    /// Whether the servers refused a persistent watch to this client (`refuses_persistent_watches`).
    pub(crate) fn has_no_persistent_watches(&self) -> bool {
        self.inner.no_persistent_watches.load(Ordering::Relaxed)
    }

    /// A server refused a persistent watch: ZooKeeper before 3.6 answers UNIMPLEMENTED and
    /// closes the connection, so that every later cache of this client asks no more.
    pub(crate) fn refuses_persistent_watches(&self) {
        self.inner
            .no_persistent_watches
            .store(true, Ordering::Relaxed);
    }

    /// Whether the servers refused a `multiRead` to this client (`refuses_multi_read`).
    pub(crate) fn has_no_multi_read(&self) -> bool {
        self.inner.no_multi_read.load(Ordering::Relaxed)
    }

    /// A server refused a `multiRead` (ZooKeeper before 3.6, closing the connection): this
    /// client's later reads go one at a time.
    pub(crate) fn refuses_multi_read(&self) {
        self.inner.no_multi_read.store(true, Ordering::Relaxed);
    }

    pub(crate) fn downgrade(&self) -> WeakClient {
        WeakClient(Arc::downgrade(&self.inner))
    }

    pub fn session_id(&self) -> Result<i64> {
        Ok(self.zk()?.session_id().0)
    }

    pub fn is_closed(&self) -> bool {
        self.state() == ConnectionState::Closed
    }

    /// Ends the session. The server deletes its ephemeral nodes at once, so
    /// held locks are released and election offers withdrawn; recipes see
    /// `CLOSED` and report it to their listeners. Closing twice is harmless.
    pub async fn close(&self) {
        if self.is_closed() {
            return;
        }
        // Items on their way back to a queue would be lost with the session.
        let mut settling = self.inner.settling.subscribe();
        let _ = tokio::time::timeout(
            self.session_timeout(),
            settling.wait_for(|pending| *pending == 0),
        )
        .await;
        let session = self.inner.session.write().unwrap().take();
        if session.is_none() {
            return;
        }
        self.inner.publish(ConnectionState::Closed);
        if let Some(session) = session {
            // Dropping the last handle sends closeSession; wait until the server
            // has acknowledged so that "closed" means "ephemerals are gone".
            let mut watcher = session.state_watcher();
            drop(session);
            let _ = tokio::time::timeout(Duration::from_secs(5), async {
                while !watcher.peek_state().is_terminated() {
                    watcher.changed().await;
                }
            })
            .await;
        }
    }

    /// What this client has recorded so far: every recipe's waits, holds and outcomes, the
    /// requests sent and the connection state changes (`zkrecipes::metrics::CATALOG`).
    pub fn metrics(&self) -> MetricsSnapshot {
        self.inner.registry.snapshot()
    }

    /// Tells `observer` of every recording of this client from now on, until the subscription
    /// is dropped; the subscription holds what was recorded before (`initial`). What feeds
    /// another metrics API: see `metrics::export_to_metrics_crate` (feature `metrics-rs`).
    pub fn observe_metrics(
        &self,
        observer: impl Fn(&observe::Recording) + Send + Sync + 'static,
    ) -> observe::MetricsSubscription {
        self.inner.registry.observe(Arc::new(observer))
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.inner.registry
    }

    /// Resolves once the client is closed; recipes race their waits against
    /// it, and event streams end with it.
    pub async fn closed(&self) {
        let mut state = self.inner.state.subscribe();
        let _ = state.wait_for(|s| *s == ConnectionState::Closed).await;
    }
}

impl Inner {
    fn publish(&self, state: ConnectionState) {
        let session = self
            .session
            .read()
            .unwrap()
            .as_ref()
            .map(|s| s.session_id().0);
        observe::state_changed(&self.registry, state, session);
        self.state.send_replace(state);
        self.events.emit(state);
    }
}
