//! The session behind every recipe: connection states, a new session after
//! expiry, and the retry rules every recipe shares.
//!
//! `zookeeper-client` reconnects within a session by itself but never retries
//! an operation and never opens a new session; both are done here, once.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock, Weak};
use std::time::Duration;

use tokio::sync::{broadcast, watch};
use tokio::time::Instant;
use zookeeper_client as zk;

use crate::connect_diagnosis;
use crate::emitter::Emitter;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime;
use crate::security::{AclPolicy, Sasl, Tls, TlsSetup};

/// The ZooKeeper server refuses packets over `jute.maxbuffer` (1 MiB - 1 by
/// default); what is left after the request header and path is the payload limit.
pub const MAX_PACKET: usize = 0xfffff;

/// Credentials added to the session, e.g. `Auth::digest("user:secret")`.
#[derive(Clone, PartialEq, Eq)]
pub struct Auth {
    pub scheme: String,
    pub credentials: Vec<u8>,
}

/// Credentials never reach logs or error messages: `Debug` shows the scheme only.
impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("scheme", &self.scheme)
            .field("credentials", &"<redacted>")
            .finish()
    }
}

impl Auth {
    pub fn digest(user_password: &str) -> Auth {
        Auth {
            scheme: "digest".into(),
            credentials: user_password.as_bytes().to_vec(),
        }
    }
}

/// How to connect. `Default` gives a 10 s session and a 10 s connect timeout.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    pub session_timeout: Duration,
    /// The longest `connect` (and each later re-session attempt) may take.
    pub connect_timeout: Duration,
    /// With credentials, recipe nodes get an ACL that grants only the
    /// authenticated identity; without, they are open (`world:anyone`).
    pub auth: Option<Auth>,
    /// Written into lock and election nodes; defaults to the host name.
    pub identity: Option<String>,
    /// TLS to every server (`tcp+tls://` in the connect string needs it too).
    pub tls: Option<Tls>,
    /// SASL authentication (DIGEST-MD5 or Kerberos).
    pub sasl: Option<Sasl>,
    /// The ACL of every node the recipes create.
    pub acl: AclPolicy,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            session_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
            auth: None,
            identity: None,
            tls: None,
            sasl: None,
            acl: AclPolicy::Default,
        }
    }
}

impl ClientOptions {
    /// A timeout setting as a binding receives it, in `unit` (`"s"` or
    /// `"ms"`): a number in (0, 1 day], checked here for every language.
    pub fn timeout_setting(name: &str, value: f64, unit: &str) -> Result<Duration> {
        let per_second = if unit == "ms" { 1000.0 } else { 1.0 };
        let seconds = value / per_second;
        if !seconds.is_finite() || seconds <= 0.0 || seconds > 86_400.0 {
            return Err(Error::invalid_argument(format!(
                "{name} must be in (0, {}] {unit}, got {value}",
                86_400.0 * per_second
            )));
        }
        Ok(Duration::from_secs_f64(seconds))
    }
}

/// Curator's vocabulary. `Suspended`: disconnected, the session may live on.
/// `Lost`: the session expired, every ephemeral node of it is gone; the client
/// then opens a new session by itself and reports `Reconnected`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConnectionState {
    Connected,
    Suspended,
    Reconnected,
    Lost,
    Closed,
}

impl ConnectionState {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionState::Connected => "CONNECTED",
            ConnectionState::Suspended => "SUSPENDED",
            ConnectionState::Reconnected => "RECONNECTED",
            ConnectionState::Lost => "LOST",
            ConnectionState::Closed => "CLOSED",
        }
    }

    pub(crate) fn is_usable(self) -> bool {
        matches!(
            self,
            ConnectionState::Connected | ConnectionState::Reconnected
        )
    }
}

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
    /// Follows this client's held locks; started with the first hold.
    holds: OnceLock<crate::lock::monitor::Monitor>,
    /// Shared by every session of this client (certificates re-read on change).
    tls: Option<TlsSetup>,
    /// The ACL entries of every node the recipes create.
    acl: Arc<[zk::Acl]>,
    /// The identities the server authenticated (`whoami`), for `NO_AUTH` messages.
    authenticated_as: RwLock<Vec<String>>,
    /// Why the last attempt at a new session after `Lost` failed, until one succeeds.
    session_error: RwLock<Option<Error>>,
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
        if let Some(parent) = runtime::forked_after_start() {
            return Err(forked(parent));
        }
        let tls = options.tls.as_ref().map(TlsSetup::new).transpose()?;
        let tls_options = tls.as_ref().map(|tls| tls.options.clone());
        let session =
            open_session(connect_string.to_string(), options.clone(), tls_options).await?;
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
            holds: OnceLock::new(),
            tls,
            acl,
            authenticated_as: RwLock::new(authenticated_as),
            session_error: RwLock::new(None),
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
        self.inner.session_error.read().unwrap().clone()
    }

    /// The TLS settings of this client's sessions (for `inspect`'s `cons` over TLS).
    pub(crate) fn tls(&self) -> Option<&Tls> {
        self.inner.options.tls.as_ref()
    }

    /// Whether sessions run over TLS (the `tls` option or `tcp+tls://` servers).
    pub fn is_tls(&self) -> bool {
        self.inner.tls.is_some()
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

    /// The current session, or `CLOSED`.
    /// The length the chroot adds to every path on the wire (0 before a
    /// session exists: no request can be sent then either).
    pub(crate) fn chroot_len(&self) -> usize {
        self.zk().map_or(0, |zk| chroot_len(&zk))
    }

    pub(crate) fn zk(&self) -> Result<zk::Client> {
        if let Some(parent) = runtime::forked_after_start() {
            return Err(forked(parent));
        }
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
    pub(crate) fn hold_monitor(&self) -> &crate::lock::monitor::Monitor {
        self.inner
            .holds
            .get_or_init(|| crate::lock::monitor::Monitor::start(self))
    }

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

    /// Resolves once the client is closed; recipes race their waits against
    /// it, and event streams end with it.
    pub async fn closed(&self) {
        let mut state = self.inner.state.subscribe();
        let _ = state.wait_for(|s| *s == ConnectionState::Closed).await;
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
    /// one that expired), or returns `CLOSED`.
    pub(crate) async fn await_session_after(&self, old: i64) -> Result<()> {
        let mut state = self.inner.state.subscribe();
        loop {
            let now = *state.borrow_and_update();
            match now {
                ConnectionState::Closed => return Err(Error::closed()),
                s if s.is_usable() && self.session_id()? != old => return Ok(()),
                _ => {}
            }
            if state.changed().await.is_err() {
                return Err(Error::closed());
            }
        }
    }

    /// Waits until the client has a usable session again after `Lost`
    /// (or returns `CLOSED`).
    pub(crate) async fn await_new_session(&self) -> Result<()> {
        let mut state = self.inner.state.subscribe();
        loop {
            match *state.borrow_and_update() {
                ConnectionState::Closed => return Err(Error::closed()),
                s if s.is_usable() => return Ok(()),
                _ => {}
            }
            if state.changed().await.is_err() {
                return Err(Error::closed());
            }
        }
    }
}

impl Inner {
    fn publish(&self, state: ConnectionState) {
        self.state.send_replace(state);
        self.events.emit(state);
    }
}

/// Bounded, jittered exponential backoff between retries: a persistent
/// failure must never turn into a request storm against the ensemble.
pub(crate) struct Backoff {
    next: Duration,
    max: Duration,
}

impl Backoff {
    pub(crate) fn new(first: Duration, max: Duration) -> Backoff {
        Backoff { next: first, max }
    }

    /// The next delay: uniformly random in [d/2, d], d doubling up to `max`.
    pub(crate) fn delay(&mut self) -> Duration {
        let d = self.next;
        self.next = (self.next * 2).min(self.max);
        d / 2 + d.mul_f64(fastrand::f64() / 2.0)
    }

    pub(crate) async fn sleep(&mut self) {
        tokio::time::sleep(self.delay()).await;
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

/// Creates the connect string's chroot (`host:2181/myapp`) if it is missing,
/// as Curator does with its namespace: a chroot that does not exist made every
/// recipe fail with `NO_NODE` (the README's first example, on a fresh server).
/// Its ancestors and itself are open to everybody, like any shared ancestor.
async fn ensure_chroot(session: &zk::Client) -> Result<()> {
    let root = session.path().to_string();
    if root == "/" {
        return Ok(());
    }
    let Ok(base) = session.clone().chroot("/") else {
        return Ok(());
    };
    let failed = |err: zk::Error| {
        let err = Error::from(err);
        Error::new(
            err.code(),
            format!("cannot create the chroot {root} of the connect string: {err}"),
        )
    };
    if base.check_stat(&root).await.map_err(failed)?.is_some() {
        return Ok(());
    }
    let open = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    create_path(&base, &root, open).await.map_err(failed)
}

/// Creates `path` with `options` and its missing ancestors open to everybody:
/// an ancestor is shared by other applications, which must still be able to
/// create their own directories under it. The leaf is tried first: a new
/// lock name under an existing parent costs one request, not one per level.
async fn create_path(
    zk: &zk::Client,
    path: &str,
    options: zk::CreateOptions<'_>,
) -> std::result::Result<(), zk::Error> {
    let open = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    // Ancestors that turn out to be missing, deepest last.
    let mut missing: Vec<&str> = Vec::new();
    let mut at = path;
    loop {
        let options = if at == path { &options } else { &open };
        match zk.create(at, &[], options).await {
            Ok(_) | Err(zk::Error::NodeExists) => break,
            Err(zk::Error::NoNode) => match at.rfind('/') {
                Some(parent) if parent > 0 => {
                    missing.push(at);
                    at = &at[..parent];
                }
                _ => return Err(zk::Error::NoNode),
            },
            Err(err) => return Err(err),
        }
    }
    while let Some(at) = missing.pop() {
        let options = if at == path { &options } else { &open };
        match zk.create(at, &[], options).await {
            Ok(_) | Err(zk::Error::NodeExists) => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// The length the chroot adds to every path on the wire.
fn chroot_len(session: &zk::Client) -> usize {
    match session.path() {
        "/" => 0,
        root => root.len(),
    }
}

fn forked(parent: u32) -> Error {
    Error::new(
        ErrorCode::Closed,
        format!(
            "zkrecipes was started in process {parent} before it forked this one, and its \
             threads do not survive a fork: fork before the first Client, or start children \
             fresh (Python multiprocessing's \"spawn\" or \"forkserver\" method)"
        ),
    )
}

pub(crate) fn expired() -> Error {
    Error::new(ErrorCode::SessionExpired, "the ZooKeeper session expired")
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

fn validate_options(connect_string: &str, options: &ClientOptions) -> Result<()> {
    if connect_string.trim().is_empty() {
        return Err(Error::invalid_argument("connect string is empty"));
    }
    for (name, value) in [
        ("session_timeout", options.session_timeout),
        ("connect_timeout", options.connect_timeout),
    ] {
        if value.is_zero() || value > Duration::from_secs(24 * 3600) {
            return Err(Error::invalid_argument(format!(
                "{name} must be between 0 and 24 h, got {value:?}"
            )));
        }
    }
    if let Some(auth) = &options.auth {
        if auth.scheme.is_empty() {
            return Err(Error::invalid_argument("auth scheme is empty"));
        }
    }
    if let Some(identity) = &options.identity {
        check_node_data("identity", identity)?;
    }
    if let Some(sasl) = &options.sasl {
        sasl.validate()?;
    }
    let mut chroot = None;
    for spec in connect_string.split(',').filter(|h| !h.trim().is_empty()) {
        let spec = spec.trim();
        let spec = spec
            .strip_prefix("tcp+tls://")
            .or_else(|| spec.strip_prefix("tcp://"))
            .unwrap_or(spec);
        let (host, rest) = match spec.find('/') {
            Some(at) => (&spec[..at], Some(&spec[at..])),
            None => (spec, None),
        };
        if rest.is_some() {
            chroot = rest;
        }
        check_host(host).map_err(|why| {
            Error::invalid_argument(format!("bad connect string {connect_string:?}: {why}"))
        })?;
    }
    let plain_named = connect_string
        .split(',')
        .any(|spec| spec.trim().starts_with("tcp://"));
    if plain_named && options.tls.is_some() {
        return Err(Error::invalid_argument(format!(
            "{connect_string:?} names tcp:// (plain) servers, but the tls option puts every server on \
             TLS: drop tcp:// or the tls option"
        )));
    }
    let credentials = options.auth.is_some()
        || options.sasl.is_some()
        || options.tls.as_ref().is_some_and(|t| t.identity.is_some());
    if !credentials
        && matches!(
            options.acl,
            AclPolicy::Creator | AclPolicy::CreatorWorldRead
        )
    {
        return Err(Error::invalid_argument(
            "the creator ACL policies need credentials (digest auth, SASL or a client \
             certificate): without them the server refuses every node",
        ));
    }
    if connect_string.contains("tcp+tls://") && options.tls.is_none() {
        return Err(Error::invalid_argument(format!(
            "{connect_string:?} names tcp+tls:// servers: the tls option (a CA to trust) is needed"
        )));
    }
    if let Some(chroot) = chroot {
        if chroot.len() > crate::path::MAX_PATH {
            return Err(Error::invalid_argument(format!(
                "the chroot is {} bytes; at most {} are allowed",
                chroot.len(),
                crate::path::MAX_PATH
            )));
        }
    }
    Ok(())
}

/// `host:port` (or `[v6]:port`): a malformed one is a usage error at once,
/// not a connect timeout later (found by the CLI's adversarial test: `::::`
/// waited the whole connect timeout).
fn check_host(host: &str) -> std::result::Result<(), String> {
    let host = host.trim();
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    if name.is_empty() || name.trim_matches(':').is_empty() {
        return Err(format!("{host:?} has no host name"));
    }
    if let Some(port) = port {
        if !port.parse::<u16>().is_ok_and(|p| p > 0) {
            return Err(format!("{host:?} has no valid port (1 to 65535)"));
        }
    }
    Ok(())
}

/// The most an identity or an election host name may take: it is written
/// into every lock and election node, and a request over the server's packet
/// limit makes the server drop the connection (and a retry, a reconnect storm,
/// found by an adversarial test) instead of refusing it.
pub const MAX_NODE_DATA: usize = 16 * 1024;

pub(crate) fn check_node_data(what: &str, data: &str) -> Result<()> {
    if data.len() > MAX_NODE_DATA {
        return Err(Error::invalid_argument(format!(
            "{what} is {} bytes; at most {MAX_NODE_DATA} are allowed",
            data.len()
        )));
    }
    Ok(())
}

async fn open_session(
    connect_string: String,
    options: ClientOptions,
    tls: Option<zk::TlsOptions>,
) -> Result<zk::Client> {
    // Spawned on the shared runtime: the session's I/O task lives where it is
    // created, and must outlive the caller's runtime (a test, a binding call).
    let task = runtime::handle().spawn(async move {
        let mut connector = zk::Client::connector()
            .with_session_timeout(options.session_timeout)
            .with_connection_timeout(options.connect_timeout.min(options.session_timeout));
        if let Some(auth) = &options.auth {
            connector = connector.with_auth(&auth.scheme, &auth.credentials);
        }
        if let Some(sasl) = &options.sasl {
            connector = connector.with_sasl(sasl.options()?);
        }
        let secure = tls.is_some();
        if let Some(tls) = tls {
            connector = connector.with_tls(tls);
        }
        let servers = connect_diagnosis::servers(&connect_string, secure);
        if let Some(Sasl::Gssapi { service, host }) = &options.sasl {
            // One server the KDC knows is enough: the session may go to any of them.
            let mut refusal = None;
            for server in &servers {
                match crate::gssapi::check_service(service, host.as_deref().unwrap_or(&server.host))
                {
                    Ok(()) => {
                        refusal = None;
                        break;
                    }
                    Err(err) => {
                        refusal.get_or_insert(err);
                    }
                }
            }
            if let Some(err) = refusal {
                return Err(err);
            }
        }
        let connecting = async {
            let connected = match secure {
                true => connector.secure_connect(&connect_string).await,
                false => connector.connect(&connect_string).await,
            };
            connected.map_err(|err| connect_error(&connect_string, &options, err))
        };
        let diagnosis = async {
            tokio::time::sleep(connect_diagnosis::DIAGNOSE_AFTER).await;
            connect_diagnosis::refusal(servers, options.tls.clone()).await
        };
        let connected = tokio::time::timeout(options.connect_timeout, async {
            tokio::pin!(connecting);
            tokio::select! {
                connected = &mut connecting => connected,
                refused = diagnosis => match refused {
                    Some(refusal) => Err(refusal),
                    None => connecting.await,
                },
            }
        })
        .await;
        match connected {
            Ok(Ok(session)) => {
                // Within the connect timeout too: a server that stops answering
                // right after the handshake must not hang `connect`.
                match tokio::time::timeout(options.connect_timeout, ensure_chroot(&session)).await {
                    Ok(created) => created.map(|()| session),
                    Err(_) => Err(Error::new(
                        ErrorCode::ConnectionLoss,
                        format!("no answer while checking the chroot of {connect_string}"),
                    )),
                }
            }
            Ok(Err(err)) => Err(err),
            Err(_) => Err(Error::new(
                ErrorCode::ConnectionLoss,
                format!(
                    "no ZooKeeper server of {connect_string} answered within {:?}",
                    options.connect_timeout
                ),
            )),
        }
    });
    task.await
        .map_err(|err| Error::new(ErrorCode::Internal, format!("connect task failed: {err}")))?
}

fn connect_error(connect_string: &str, options: &ClientOptions, err: zk::Error) -> Error {
    match err {
        zk::Error::AuthFailed => Error::new(
            ErrorCode::AuthFailed,
            match &options.sasl {
                Some(sasl) => format!(
                    "the server refused the SASL credentials ({})",
                    sasl.describe()
                ),
                None if options.auth.is_none() => {
                    "the server refused the session: it requires SASL \
                    authentication (the sasl option), which this client did not give"
                        .to_string()
                }
                None => "the server refused the credentials".to_string(),
            },
        ),
        zk::Error::BadArguments(why) => {
            Error::invalid_argument(format!("bad connect string {connect_string:?}: {why}"))
        }
        err => Error::new(
            ErrorCode::ConnectionLoss,
            format!("cannot connect to {connect_string}: {err}"),
        ),
    }
}

/// The identities the server authenticated the session as; empty when it
/// has none, or when the server is older than 3.7 (no `whoami`).
async fn whoami(session: &zk::Client, options: &ClientOptions) -> Vec<String> {
    let secured = options.auth.is_some() || options.sasl.is_some() || options.tls.is_some();
    if !secured {
        return Vec::new();
    }
    match tokio::time::timeout(options.connect_timeout, session.list_auth_users()).await {
        Ok(Ok(users)) => users
            .iter()
            .filter(|u| u.scheme() != "ip")
            .map(|u| format!("{}:{}", u.scheme(), u.user()))
            .collect(),
        _ => Vec::new(),
    }
}

/// Translates session states into ours and opens a new session after expiry.
async fn supervise(inner: Weak<Inner>, mut watcher: zk::StateWatcher) {
    loop {
        let state = watcher.changed().await;
        let Some(strong) = inner.upgrade() else {
            return;
        };
        if strong.session.read().unwrap().is_none() {
            // Closed: the dropped session's own states are not ours to publish.
            return;
        }
        match state {
            zk::SessionState::Disconnected => strong.publish(ConnectionState::Suspended),
            zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly => {
                strong.publish(ConnectionState::Reconnected)
            }
            zk::SessionState::Expired | zk::SessionState::AuthFailed => {
                if strong.session.read().unwrap().is_none() {
                    return;
                }
                strong.publish(ConnectionState::Lost);
                drop(strong);
                match renew_session(&inner).await {
                    Some(next) => watcher = next,
                    None => return,
                }
            }
            zk::SessionState::Closed => return,
        }
    }
}

/// Opens sessions until one succeeds or the client is closed.
async fn renew_session(inner: &Weak<Inner>) -> Option<zk::StateWatcher> {
    let mut backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(2));
    loop {
        let (connect_string, options, tls) = {
            let strong = inner.upgrade()?;
            if strong.session.read().unwrap().is_none() {
                return None;
            }
            let tls = strong.tls.as_ref().map(|tls| tls.options.clone());
            (strong.connect_string.clone(), strong.options.clone(), tls)
        };
        match open_session(connect_string, options.clone(), tls).await {
            Ok(session) => {
                let authenticated_as = whoami(&session, &options).await;
                let strong = inner.upgrade()?;
                *strong.session_error.write().unwrap() = None;
                *strong.authenticated_as.write().unwrap() = authenticated_as;
                let watcher = session.state_watcher();
                let mut slot = strong.session.write().unwrap();
                // Closed while we were connecting: the new session must not survive.
                slot.as_ref()?;
                *slot = Some(session);
                drop(slot);
                strong.publish(ConnectionState::Reconnected);
                return Some(watcher);
            }
            Err(err) => {
                // A refusal (credentials, a certificate) will not pass by itself:
                // said loudly, and kept for `session_error`.
                match err.code() {
                    ErrorCode::AuthFailed | ErrorCode::InvalidArgument => {
                        tracing::error!("the server refuses a new ZooKeeper session: {err}")
                    }
                    _ => tracing::warn!("cannot open a new ZooKeeper session yet: {err}"),
                }
                if let Some(strong) = inner.upgrade() {
                    *strong.session_error.write().unwrap() = Some(err);
                }
                backoff.sleep().await;
            }
        }
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}
