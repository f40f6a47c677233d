//! Opening a session (TLS, SASL, the chroot), and the supervisor that opens a new one after
//! expiry, with backoff, keeping why it failed.

use std::sync::Weak;
use std::time::Duration;

use zookeeper_client as zk;

use super::create_path::create_path;
use super::{ClientOptions, ConnectionState, Inner};
use crate::backoff::Backoff;
use crate::connect_diagnosis;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime;
use crate::security::Sasl;

pub(super) async fn open_session(
    connect_string: String,
    options: ClientOptions,
    tls: Option<zk::TlsOptions>,
    observer: zk::RequestObserver,
) -> Result<zk::Client> {
    // Empty entries (a trailing comma, as ZooKeeper's Java client takes) were passed over
    // by the validation; the session crate calls such a string empty.
    let connect_string = connect_string
        .split(',')
        .filter(|server| !server.trim().is_empty())
        .collect::<Vec<_>>()
        .join(",");
    // Spawned on the shared runtime: the session's I/O task lives where it is
    // created, and must outlive the caller's runtime (a test, a binding call).
    let task = runtime::handle().spawn(async move {
        let mut connector = zk::Client::connector()
            .with_session_timeout(options.session_timeout)
            .with_connection_timeout(options.connect_timeout.min(options.session_timeout))
            .with_request_observer(observer);
        if let Some(auth) = &options.auth {
            connector = connector.with_auth(&auth.scheme, &auth.credentials);
        }
        // The connect timeout bounds the whole of it, Kerberos's exchange with the KDC too.
        let deadline = tokio::time::Instant::now() + options.connect_timeout;
        let secure = tls.is_some();
        let servers = connect_diagnosis::servers(&connect_string, secure);
        if let Some(sasl) = &options.sasl {
            connector = connector.with_sasl(match sasl {
                Sasl::Gssapi { .. } => kerberos_ready(sasl, &servers, deadline).await?.into(),
                Sasl::DigestMd5 { .. } => sasl.options()?,
            });
        }
        if let Some(tls) = tls {
            connector = connector.with_tls(tls);
        }
        let connecting = async {
            let connected = match secure {
                true => connector.secure_connect(&connect_string).await,
                false => connector.connect(&connect_string).await,
            };
            connected.map_err(|err| connect_error(&connect_string, &options, err))
        };
        let diagnosed = servers.clone();
        let diagnosis = async {
            tokio::time::sleep(connect_diagnosis::DIAGNOSE_AFTER).await;
            connect_diagnosis::refusal(diagnosed, options.tls.clone(), options.sasl.clone()).await
        };
        let connected = tokio::time::timeout_at(deadline, async {
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
            Ok(Err(err)) if err.code() == ErrorCode::AuthFailed && options.sasl.is_some() => {
                let sasl = options.sasl.clone().expect("checked");
                let mismatch =
                    connect_diagnosis::mechanism_mismatch(servers, options.tls.clone(), sasl);
                Err(mismatch.await.unwrap_or(err))
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

/// GSSAPI's options once this client's credentials and a service ticket for one of `servers`
/// (the session may go to any of them) were had: a wrong service name, a host the KDC does not
/// know, a keytab without the principal fail here at once, by name, instead of in the SASL
/// handshake that the session crate retries until the connect timeout. On a thread of its own
/// and within `deadline`: Kerberos asks the KDC synchronously, and a KDC that did not answer
/// held `connect` for 25 s past a connect timeout of 3 s (found by an adversarial review).
async fn kerberos_ready(
    sasl: &Sasl,
    servers: &[connect_diagnosis::Server],
    deadline: tokio::time::Instant,
) -> Result<zk::GssapiSaslOptions> {
    let (sasl, servers) = (sasl.clone(), servers.to_vec());
    let checked = tokio::task::spawn_blocking(move || {
        let Sasl::Gssapi { service, host, .. } = &sasl else {
            unreachable!("a Kerberos check of {}", sasl.describe());
        };
        let gssapi = sasl.kerberos()?;
        let mut refusal = None;
        for server in &servers {
            let host = host.as_deref().unwrap_or(&server.host);
            match crate::security::check_service(&gssapi, service, host) {
                Ok(()) => return Ok(gssapi),
                Err(err) => {
                    refusal.get_or_insert(err);
                }
            }
        }
        refusal.map_or(Ok(gssapi), Err)
    });
    match tokio::time::timeout_at(deadline, checked).await {
        Ok(Ok(checked)) => checked,
        Ok(Err(failed)) => Err(Error::new(
            ErrorCode::Internal,
            format!("the Kerberos check failed: {failed}"),
        )),
        Err(_) => Err(Error::new(
            ErrorCode::ConnectionLoss,
            "no answer from Kerberos (the KDC) within the connect timeout",
        )),
    }
}

pub(super) fn connect_error(
    connect_string: &str,
    options: &ClientOptions,
    err: zk::Error,
) -> Error {
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
pub(super) async fn whoami(session: &zk::Client, options: &ClientOptions) -> Vec<String> {
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
pub(super) async fn supervise(inner: Weak<Inner>, mut watcher: zk::StateWatcher) {
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
                // The session's state is a watch: a disconnect and the reconnect after it can
                // reach us as the reconnect alone. The disconnect still happened, and every
                // listener follows the states as they were: SUSPENDED, then RECONNECTED (a tree
                // cache once told no SUSPENDED for a 3.7 s outage: issue 47).
                if strong.state.borrow().is_usable() {
                    strong.publish(ConnectionState::Suspended);
                }
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
pub(super) async fn renew_session(inner: &Weak<Inner>) -> Option<zk::StateWatcher> {
    let mut backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(2));
    loop {
        let (connect_string, options, tls, observer) = {
            let strong = inner.upgrade()?;
            if strong.session.read().unwrap().is_none() {
                return None;
            }
            let tls = strong.tls.as_ref().map(|tls| tls.options.clone());
            let observer = crate::observe::request_observer(&strong.registry);
            (
                strong.connect_string.clone(),
                strong.options.clone(),
                tls,
                observer,
            )
        };
        match open_session(connect_string, options.clone(), tls, observer).await {
            Ok(session) => {
                let authenticated_as = whoami(&session, &options).await;
                let strong = inner.upgrade()?;
                strong.session_error.send_replace(None);
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
                let reason = err.to_string();
                if err.is_refusal() {
                    tracing::error!(
                        target: "zkrecipes::session",
                        reason,
                        "the server refuses a new ZooKeeper session: {reason}"
                    )
                } else {
                    tracing::warn!(
                        target: "zkrecipes::session",
                        reason,
                        "cannot open a new ZooKeeper session yet: {reason}"
                    )
                }
                if let Some(strong) = inner.upgrade() {
                    strong.session_error.send_replace(Some(err));
                }
                backoff.sleep().await;
            }
        }
    }
}

/// Creates the connect string's chroot (`host:2181/myapp`) if it is missing,
/// as Curator does with its namespace: a chroot that does not exist made every
/// recipe fail with `NO_NODE` (the README's first example, on a fresh server).
/// Its ancestors and itself are open to everybody, like any shared ancestor.
pub(super) async fn ensure_chroot(session: &zk::Client) -> Result<()> {
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

/// The length the chroot adds to every path on the wire.
pub(super) fn chroot_len(session: &zk::Client) -> usize {
    match session.path() {
        "/" => 0,
        root => root.len(),
    }
}

pub(super) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}
