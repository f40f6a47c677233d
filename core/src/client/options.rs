//! What a client is opened with, and every check on it before a connection is tried.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::security::{AclPolicy, Sasl, Tls};

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

/// The session timeout `ClientOptions::default()` asks the server for.
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest `connect` takes by default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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
    /// Whether metrics carry the recipe's path as an attribute (on by default). Off, every
    /// lock's numbers add up into one series per kind: for a lock per entity, where paths are
    /// unbounded. On, paths past `metrics::MAX_PATHS` are recorded as `"_other"`.
    pub metric_paths: bool,
    /// Whether the client records metrics at all (on by default; `make bench` measures their
    /// cost with them off). Off, `Client::metrics` is empty.
    pub metrics: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            session_timeout: DEFAULT_SESSION_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            auth: None,
            identity: None,
            tls: None,
            sasl: None,
            acl: AclPolicy::Default,
            metric_paths: true,
            metrics: true,
        }
    }
}

pub(super) fn validate_options(connect_string: &str, options: &ClientOptions) -> Result<()> {
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
        let tls = spec.starts_with("tcp+tls://")
            || (options.tls.is_some() && !spec.starts_with("tcp://"));
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
        check_host(host, tls).map_err(|why| {
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
fn check_host(host: &str, tls: bool) -> std::result::Result<(), String> {
    let host = host.trim();
    let (name, port) = match host.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    if name.is_empty() || name.trim_matches(':').is_empty() {
        return Err(format!("{host:?} has no host name"));
    }
    // TLS checks the server's certificate against the name: one that is neither a DNS name
    // nor an IP address (`zk-`) can never pass, and the session would retry it until the
    // connect timeout and then say CONNECTION_LOSS (an adversarial review).
    if tls && rustls::pki_types::ServerName::try_from(name).is_err() {
        return Err(format!(
            "{name:?} is neither a DNS name nor an IP address, which TLS needs to check the \
             server's certificate against"
        ));
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
