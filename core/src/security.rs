//! How a session proves who it is and what the recipes' nodes allow: TLS
//! (with certificates re-read when their files change), SASL and the ACL
//! policy of every node a recipe creates.
//!
//! Decided here once; every binding only converts its language's spelling
//! into these types.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use zookeeper_client as zk;

use crate::error::{Error, Result};
use crate::runtime;

/// PEM text, given as a file (re-read when it changes) or as its contents.
#[derive(Clone, PartialEq, Eq)]
pub enum Pem {
    File(PathBuf),
    Bytes(Vec<u8>),
}

impl Pem {
    /// A binding's string: PEM text if it holds a PEM header, else a path
    /// (what Node's `tls.connect` users and `zookeeper.ssl.*` users pass).
    pub fn from_text_or_path(value: &str) -> Pem {
        if looks_like_pem(value) {
            Pem::Bytes(value.as_bytes().to_vec())
        } else {
            Pem::File(PathBuf::from(value))
        }
    }

    fn name(&self, what: &str) -> String {
        match self {
            // PEM text given where a path was expected must not land in a message: it may be a key.
            Pem::File(path) if looks_like_pem(&path.to_string_lossy()) => {
                format!("{what} (PEM text given as a path: pass it as PEM bytes/text)")
            }
            Pem::File(path) => format!("{what} {}", path.display()),
            Pem::Bytes(bytes) => match source_of(bytes) {
                Some(source) => format!("{what} {source}"),
                None => format!("{what} (PEM given in memory)"),
            },
        }
    }

    fn modified(&self) -> Option<SystemTime> {
        match self {
            Pem::File(path) => std::fs::metadata(path).and_then(|m| m.modified()).ok(),
            Pem::Bytes(_) => None,
        }
    }

    fn text(&self, what: &str) -> Result<String> {
        let bytes = match self {
            Pem::File(path) if path.as_os_str().is_empty() => {
                return Err(Error::invalid_argument(format!(
                    "{what} is empty: give the path of a PEM file, or the PEM itself"
                )))
            }
            Pem::Bytes(bytes) if bytes.is_empty() => {
                return Err(Error::invalid_argument(format!(
                    "{what} is empty: give the path of a PEM file, or the PEM itself"
                )))
            }
            Pem::File(path) => read_limited(path).map_err(|err| {
                Error::invalid_argument(format!("cannot read {}: {err}", self.name(what)))
            })?,
            Pem::Bytes(bytes) => bytes.clone(),
        };
        if bytes.len() > MAX_PEM {
            return Err(Error::invalid_argument(format!(
                "{} is over {} KiB: not a certificate or key file",
                self.name(what),
                MAX_PEM / 1024
            )));
        }
        String::from_utf8(bytes)
            .map_err(|_| Error::invalid_argument(format!("{} is not PEM text", self.name(what))))
    }
}

/// Where PEM made in memory came from, for messages: a binding that converts
/// a key store (Java's PKCS#12 and JKS) writes `# source: <its path>` as the
/// first line (text before `-----BEGIN` is no part of PEM, parsers skip it).
/// Only certificates are named so; never a key.
const SOURCE_LINE: &str = "# source: ";

fn source_of(bytes: &[u8]) -> Option<&str> {
    let first = bytes.split(|&byte| byte == b'\n').next()?;
    let source = std::str::from_utf8(first).ok()?.strip_prefix(SOURCE_LINE)?;
    (!source.is_empty() && source.len() <= 1024).then_some(source.trim_end())
}

/// Certificate bundles of whole CA stores stay well under this; `/dev/zero` does not.
const MAX_PEM: usize = 4 * 1024 * 1024;

/// PEM text, or something that may be a damaged piece of it (a key with a
/// broken header, its newlines lost): never a path to print or open.
fn looks_like_pem(text: &str) -> bool {
    text.contains('\n') || text.to_ascii_uppercase().contains("BEGIN ") || text.len() > 4096
}

/// Up to one byte more than `MAX_PEM`: enough to tell a file is too big.
fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_PEM as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

impl std::fmt::Debug for Pem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pem::File(path) if looks_like_pem(&path.to_string_lossy()) => f.write_str("<PEM text>"),
            Pem::File(path) => write!(f, "{}", path.display()),
            Pem::Bytes(bytes) => match source_of(bytes) {
                Some(source) => f.write_str(source),
                None => write!(f, "<{} bytes of PEM>", bytes.len()),
            },
        }
    }
}

impl From<&str> for Pem {
    fn from(path: &str) -> Pem {
        Pem::File(PathBuf::from(path))
    }
}

impl From<String> for Pem {
    fn from(path: String) -> Pem {
        Pem::File(PathBuf::from(path))
    }
}

impl From<&Path> for Pem {
    fn from(path: &Path) -> Pem {
        Pem::File(path.to_path_buf())
    }
}

impl From<PathBuf> for Pem {
    fn from(path: PathBuf) -> Pem {
        Pem::File(path)
    }
}

impl From<Vec<u8>> for Pem {
    fn from(bytes: Vec<u8>) -> Pem {
        Pem::Bytes(bytes)
    }
}

/// TLS to every server: `Tls::new("ca.pem").identity("client.pem", "client-key.pem")`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tls {
    pub ca: Pem,
    /// The client certificate (chain) and its private key, for mutual TLS.
    pub identity: Option<(Pem, Pem)>,
    /// On by default; `no_hostname_verification` turns it off.
    pub verify_hostname: bool,
}

impl Tls {
    pub fn new(ca: impl Into<Pem>) -> Tls {
        Tls {
            ca: ca.into(),
            identity: None,
            verify_hostname: true,
        }
    }

    /// Presents `cert` (PEM, leaf first) with `key` (PKCS#8, PKCS#1 or SEC1 PEM).
    pub fn identity(mut self, cert: impl Into<Pem>, key: impl Into<Pem>) -> Tls {
        self.identity = Some((cert.into(), key.into()));
        self
    }

    /// Accepts a server certificate issued by the CA for any host name.
    /// Unsafe against a man in the middle holding any certificate of that CA.
    pub fn no_hostname_verification(mut self) -> Tls {
        self.verify_hostname = false;
        self
    }

    /// The certificates as they are now; every failure names the file.
    pub(crate) fn load(&self) -> Result<zk::TlsCerts> {
        let ca_text = self.ca.text("tls ca")?;
        let ca = zk::TlsCa::from_pem(&ca_text).map_err(|_| {
            Error::invalid_argument(format!(
                "{} holds no CA certificate (PEM `-----BEGIN CERTIFICATE-----`)",
                self.ca.name("tls ca")
            ))
        })?;
        let mut certs = zk::TlsCerts::builder().with_ca(ca);
        if let Some((cert, key)) = &self.identity {
            let cert_text = cert.text("tls cert")?;
            let key_text = key.text("tls key")?;
            if !cert_text.contains("-----BEGIN CERTIFICATE-----") {
                return Err(Error::invalid_argument(format!(
                    "{} holds no PEM certificate",
                    cert.name("tls cert")
                )));
            }
            let pair = format!("{} / {}", cert.name("tls cert"), key.name("tls key"));
            if key_text.contains("ENCRYPTED PRIVATE KEY")
                || key_text.contains("Proc-Type: 4,ENCRYPTED")
            {
                return Err(Error::invalid_argument(format!(
                    "{pair}: the key is encrypted; give it unencrypted (e.g. `openssl pkey -in KEY -out KEY.pem`)"
                )));
            }
            let identity = zk::TlsIdentity::from_pem(&cert_text, &key_text).map_err(|err| {
                Error::invalid_argument(format!(
                    "{pair}: {err} (a PEM certificate and a PKCS#8, PKCS#1 or SEC1 PEM key)"
                ))
            })?;
            crate::connect_diagnosis::check_identity(&cert_text, &key_text)
                .map_err(|why| Error::invalid_argument(format!("{pair}: {why}")))?;
            certs = certs.with_identity(identity);
        }
        certs
            .build()
            .map_err(|err| Error::invalid_argument(format!("tls: {err}")))
    }

    pub(crate) fn load_ca_pem(&self) -> Result<String> {
        self.ca.text("tls ca")
    }

    pub(crate) fn load_identity_pem(&self) -> Result<Option<(String, String)>> {
        match &self.identity {
            None => Ok(None),
            Some((cert, key)) => Ok(Some((cert.text("tls cert")?, key.text("tls key")?))),
        }
    }

    fn files(&self) -> Vec<&Pem> {
        let mut files = vec![&self.ca];
        if let Some((cert, key)) = &self.identity {
            files.extend([cert, key]);
        }
        files
    }
}

/// The TLS settings of a client, built once: every session of the client
/// (the first and each one after an expiry) shares the same certificates,
/// which a background task replaces when their files change.
pub(crate) struct TlsSetup {
    pub options: zk::TlsOptions,
    _rotation: Option<Rotation>,
}

impl TlsSetup {
    pub fn new(tls: &Tls) -> Result<TlsSetup> {
        let dynamic = zk::TlsDynamicCerts::new(tls.load()?);
        let mut options = zk::TlsOptions::new().with_certs(dynamic.clone());
        if !tls.verify_hostname {
            // SAFETY: the user turned verification off by name (`no_hostname_verification`).
            options = unsafe { options.with_no_hostname_verification() };
        }
        let rotation = tls
            .files()
            .iter()
            .any(|pem| matches!(pem, Pem::File(_)))
            .then(|| Rotation::start(tls.clone(), dynamic));
        Ok(TlsSetup {
            options,
            _rotation: rotation,
        })
    }
}

/// How often certificate files are looked at: a rotated certificate is used
/// from the next connection on, and a connection lives on across a rotation.
const ROTATION_CHECK: Duration = Duration::from_secs(1);

/// Re-reads the certificate files when one of them changes; ends with the client.
struct Rotation {
    task: tokio::task::AbortHandle,
}

impl Rotation {
    fn start(tls: Tls, dynamic: zk::TlsDynamicCerts) -> Rotation {
        let stamps = |tls: &Tls| -> Vec<Option<SystemTime>> {
            tls.files().iter().map(|pem| pem.modified()).collect()
        };
        let task = runtime::handle().spawn(async move {
            let mut seen = stamps(&tls);
            loop {
                tokio::time::sleep(ROTATION_CHECK).await;
                let now = stamps(&tls);
                if now == seen {
                    continue;
                }
                // A file half written (cert updated, key not yet) fails to load:
                // keep the old certificates and look again at the next check.
                match tls.load() {
                    Ok(certs) => {
                        dynamic.update(certs);
                        seen = now;
                        tracing::info!("reloaded the TLS certificates");
                    }
                    Err(err) => {
                        tracing::warn!("TLS certificates changed but do not load yet: {err}")
                    }
                }
            }
        });
        Rotation {
            task: task.abort_handle(),
        }
    }
}

impl Drop for Rotation {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A secret kept only as long as the client needs it (every new session
/// authenticates again), overwritten when dropped, never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Vec<u8>);

impl Secret {
    pub fn new(secret: impl Into<Vec<u8>>) -> Secret {
        Secret(secret.into())
    }

    pub(crate) fn expose(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        for byte in self.0.iter_mut() {
            // Volatile: the compiler may not drop the overwrite of memory about to be freed.
            unsafe { std::ptr::write_volatile(byte, 0) };
        }
    }
}

/// SASL authentication of the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sasl {
    /// A user of the server's JAAS `Server` section (`DigestLoginModule`).
    DigestMd5 { username: String, password: Secret },
    /// Kerberos: by default the process's credentials, from the ticket cache (`KRB5CCNAME`)
    /// or a client keytab (`KRB5_CLIENT_KTNAME`), as every MIT Kerberos client finds them;
    /// or a principal and keytab of this client's own.
    Gssapi {
        /// The server principal's first part (`zookeeper`).
        service: String,
        /// The server principal's host part; by default the host connected to.
        host: Option<String>,
        /// Log in as this client principal (`name@REALM`), not the default one.
        principal: Option<String>,
        /// Log in from this client keytab; tickets are kept in memory, per principal and keytab.
        keytab: Option<PathBuf>,
    },
}

/// The SASL values a binding was given, each as its language had it.
#[doc(hidden)]
#[derive(Default)]
pub struct SaslFields {
    pub username: Option<String>,
    pub password: Option<Vec<u8>>,
    pub service: Option<String>,
    pub host: Option<String>,
    pub principal: Option<String>,
    pub keytab: Option<PathBuf>,
}

impl Sasl {
    pub fn digest_md5(username: &str, password: impl Into<Vec<u8>>) -> Sasl {
        Sasl::DigestMd5 {
            username: username.to_string(),
            password: Secret::new(password),
        }
    }

    pub fn gssapi() -> Sasl {
        Sasl::Gssapi {
            service: "zookeeper".to_string(),
            host: None,
            principal: None,
            keytab: None,
        }
    }

    /// The server principal's service (GSSAPI only).
    pub fn service(mut self, to: &str) -> Sasl {
        if let Sasl::Gssapi { service, .. } = &mut self {
            *service = to.to_string();
        }
        self
    }

    /// The server principal's host (GSSAPI only).
    pub fn host(mut self, to: &str) -> Sasl {
        if let Sasl::Gssapi { host, .. } = &mut self {
            *host = Some(to.to_string());
        }
        self
    }

    /// The client principal to log in as (GSSAPI only).
    pub fn principal(mut self, to: &str) -> Sasl {
        if let Sasl::Gssapi { principal, .. } = &mut self {
            *principal = Some(to.to_string());
        }
        self
    }

    /// The client keytab to log in from (GSSAPI only).
    pub fn keytab(mut self, to: impl Into<PathBuf>) -> Sasl {
        if let Sasl::Gssapi { keytab, .. } = &mut self {
            *keytab = Some(to.into());
        }
        self
    }

    /// A binding's mechanism name: `DIGEST-MD5` or `GSSAPI` (any case, `digest` and
    /// `kerberos` too); credentials as the binding got them.
    pub fn from_mechanism(mechanism: &str, given: SaslFields) -> Result<Sasl> {
        let SaslFields {
            username,
            password,
            service,
            host,
            principal,
            keytab,
        } = given;
        match mechanism.to_ascii_uppercase().as_str() {
            "DIGEST-MD5" | "DIGEST" => {
                let (Some(username), Some(password)) = (username, password) else {
                    return Err(Error::invalid_argument(
                        "SASL DIGEST-MD5 needs a username and a password",
                    ));
                };
                // Ignored, they would let a user believe the server principal was checked.
                if service.is_some() || host.is_some() || principal.is_some() || keytab.is_some() {
                    return Err(Error::invalid_argument(
                        "a SASL service, host, principal and keytab are GSSAPI's (Kerberos): \
                         DIGEST-MD5 takes a username and a password only",
                    ));
                }
                Ok(Sasl::digest_md5(&username, password))
            }
            "GSSAPI" | "KERBEROS" => {
                // Ignored, a password would let a user believe it logged in with it.
                if username.is_some() || password.is_some() {
                    return Err(Error::invalid_argument(
                        "SASL GSSAPI takes no username or password: it logs in with the Kerberos \
                         ticket cache (kinit, KRB5CCNAME) or a client keytab (KRB5_CLIENT_KTNAME), \
                         or as a principal from a keytab given as the SASL principal and keytab",
                    ));
                }
                let mut sasl = Sasl::gssapi();
                if let Some(service) = service {
                    sasl = sasl.service(&service);
                }
                if let Some(host) = host {
                    sasl = sasl.host(&host);
                }
                if let Some(principal) = principal {
                    sasl = sasl.principal(&principal);
                }
                if let Some(keytab) = keytab {
                    sasl = sasl.keytab(keytab);
                }
                Ok(sasl)
            }
            other => Err(Error::invalid_argument(format!(
                "unknown SASL mechanism {other:?}: DIGEST-MD5 (digest) or GSSAPI (gssapi)"
            ))),
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        match self {
            Sasl::DigestMd5 { username, password } => {
                if username.is_empty() {
                    return Err(Error::invalid_argument("SASL DIGEST-MD5 username is empty"));
                }
                if std::str::from_utf8(password.expose()).is_err() {
                    return Err(Error::invalid_argument(
                        "SASL DIGEST-MD5 password is not UTF-8",
                    ));
                }
                Ok(())
            }
            Sasl::Gssapi {
                service,
                host,
                principal,
                keytab,
            } => {
                if service.is_empty()
                    || host.as_deref() == Some("")
                    || principal.as_deref() == Some("")
                    || keytab.as_ref().is_some_and(|k| k.as_os_str().is_empty())
                {
                    return Err(Error::invalid_argument(
                        "SASL GSSAPI service, host, principal and keytab must not be empty",
                    ));
                }
                if let Some(keytab) = keytab {
                    if let Err(err) = std::fs::File::open(keytab) {
                        return Err(Error::invalid_argument(format!(
                            "cannot read the keytab {}: {err}",
                            keytab.display()
                        )));
                    }
                }
                Ok(())
            }
        }
    }

    pub(crate) fn options(&self) -> Result<zk::SaslOptions> {
        match self {
            Sasl::DigestMd5 { username, password } => {
                let password = String::from_utf8(password.expose().to_vec()).map_err(|_| {
                    Error::invalid_argument("SASL DIGEST-MD5 password is not UTF-8")
                })?;
                Ok(zk::SaslOptions::digest_md5(username.clone(), password).into())
            }
            Sasl::Gssapi { .. } => crate::gssapi::options(self).map(Into::into),
        }
    }

    /// How the ACL identity reads (`sasl:<user>`), as far as known before connecting.
    pub(crate) fn describe(&self) -> String {
        match self {
            Sasl::DigestMd5 { username, .. } => format!("sasl:{username}"),
            Sasl::Gssapi {
                principal: Some(principal),
                ..
            } => format!("sasl:{principal}"),
            Sasl::Gssapi { .. } => "sasl:<Kerberos principal>".to_string(),
        }
    }
}

/// `scheme:id:perms` entries separated by commas; a comma inside an id (an
/// x509 name, `x509:O=acme,CN=app:r`) does not start an entry: only one that
/// is followed by a scheme (lowercase letters and digits) and a colon does.
fn split_entries(spec: &str) -> Vec<&str> {
    let starts_entry = |rest: &str| {
        rest.trim_start()
            .split_once(':')
            .is_some_and(|(scheme, _)| {
                !scheme.is_empty()
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            })
    };
    let mut entries = Vec::new();
    let mut start = 0;
    for (at, _) in spec.match_indices(',') {
        if starts_entry(&spec[at + 1..]) {
            entries.push(&spec[start..at]);
            start = at + 1;
        }
    }
    entries.push(&spec[start..]);
    entries
}

/// ZooKeeper's permission bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Perms(pub u8);

impl Perms {
    pub const READ: Perms = Perms(1);
    pub const WRITE: Perms = Perms(2);
    pub const CREATE: Perms = Perms(4);
    pub const DELETE: Perms = Perms(8);
    pub const ADMIN: Perms = Perms(16);
    pub const ALL: Perms = Perms(31);

    /// `"rwcda"` letters (any order, any subset) or `"all"`, as ZooKeeper's CLI
    /// writes them, or the bitmask as a decimal integer (`"31"`), as the
    /// bindings' integer permissions arrive.
    pub fn parse(letters: &str) -> Result<Perms> {
        if letters.eq_ignore_ascii_case("all") {
            return Ok(Perms::ALL);
        }
        let number = letters.strip_prefix('-').unwrap_or(letters);
        if !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit()) {
            // Any integer, however large or negative, is a bitmask: its message is the range's.
            return match letters.parse::<u8>() {
                Ok(bits) if (1..=31).contains(&bits) => Ok(Perms(bits)),
                _ => Err(Error::invalid_argument(format!(
                    "ACL permissions {letters} are out of range: a bitmask from 1 (read) to 31 \
                     (all, rwcda)"
                ))),
            };
        }
        let mut bits = 0;
        for letter in letters.chars() {
            bits |= match letter.to_ascii_lowercase() {
                'r' => 1,
                'w' => 2,
                'c' => 4,
                'd' => 8,
                'a' => 16,
                other => {
                    return Err(Error::invalid_argument(format!(
                        "bad permission {other:?} in {letters:?}: letters of rwcda, or all"
                    )))
                }
            };
        }
        if bits == 0 {
            return Err(Error::invalid_argument("an ACL entry needs a permission"));
        }
        Ok(Perms(bits))
    }
}

/// One ACL entry: `Acl::new(Perms::ALL, "sasl", "alice")`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acl {
    pub perms: Perms,
    pub scheme: String,
    pub id: String,
}

impl Acl {
    pub fn new(perms: Perms, scheme: &str, id: &str) -> Acl {
        Acl {
            perms,
            scheme: scheme.to_string(),
            id: id.to_string(),
        }
    }
}

/// The ACL of every node a recipe creates (its directories too). A
/// directory that exists already keeps the ACL it has.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum AclPolicy {
    /// Everybody may do everything (`world:anyone`). The default without credentials.
    Open,
    /// Only the session's authenticated identities (digest, SASL, the client
    /// certificate's x509): ZooKeeper's `auth` scheme. The default with credentials.
    Creator,
    /// `Creator`, and everybody may read.
    CreatorWorldRead,
    /// Exactly these entries.
    List(Vec<Acl>),
    /// `Open` without credentials, `Creator` with any.
    #[default]
    Default,
}

impl AclPolicy {
    /// A binding's name: `open`, `creator`, `creator-world-read` (`_` too), `default`.
    pub fn from_name(name: &str) -> Result<AclPolicy> {
        match name.to_ascii_lowercase().replace('_', "-").as_str() {
            "open" | "world" => Ok(AclPolicy::Open),
            "creator" => Ok(AclPolicy::Creator),
            "creator-world-read" => Ok(AclPolicy::CreatorWorldRead),
            "default" | "" => Ok(AclPolicy::Default),
            other => Err(Error::invalid_argument(format!(
                "unknown ACL policy {other:?}: open, creator, creator-world-read or a list of \
                 (perms, scheme, id)"
            ))),
        }
    }

    /// The CLI's spelling: a policy name, or entries `scheme:id:perms` separated by commas.
    pub fn parse(spec: &str) -> Result<AclPolicy> {
        if !spec.contains(':') {
            return AclPolicy::from_name(spec);
        }
        let entries = split_entries(spec)
            .into_iter()
            .map(|entry| {
                let mut parts = entry.trim().rsplitn(2, ':');
                let perms = parts.next().unwrap_or_default();
                let Some((scheme, id)) = parts.next().and_then(|rest| rest.split_once(':')) else {
                    return Err(Error::invalid_argument(format!(
                        "bad ACL entry {entry:?}: scheme:id:perms, e.g. sasl:alice:rwcda"
                    )));
                };
                Ok(Acl::new(Perms::parse(perms)?, scheme, id))
            })
            .collect::<Result<Vec<_>>>()?;
        AclPolicy::List(entries).validated()
    }

    pub fn validated(self) -> Result<AclPolicy> {
        if let AclPolicy::List(entries) = &self {
            if entries.is_empty() {
                return Err(Error::invalid_argument(
                    "an ACL list needs at least one entry",
                ));
            }
            for entry in entries {
                if entry.scheme.is_empty() || entry.perms.0 == 0 || entry.perms.0 > 31 {
                    return Err(Error::invalid_argument(format!(
                        "bad ACL entry {entry:?}: a scheme and permissions in 1..=31"
                    )));
                }
            }
        }
        Ok(self)
    }

    /// An explicit list must let the session itself create and delete, or
    /// the first directory it makes locks it out (and stays behind, with the
    /// ACL, for good: an existing directory keeps its ACL). `identities` are
    /// the session's (`whoami`); an empty list (an old server) is not judged.
    pub(crate) fn check_grants(&self, credentials: bool, identities: &[String]) -> Result<()> {
        let AclPolicy::List(entries) = self else {
            return Ok(());
        };
        // With credentials but no `whoami` answer (a server before 3.7) there is nothing to judge by;
        // without credentials only world (and ip) entries can grant anything.
        if credentials && identities.is_empty() {
            return Ok(());
        }
        let needed = Perms::CREATE.0 | Perms::DELETE.0;
        let ours = |entry: &Acl| match entry.scheme.as_str() {
            "world" => entry.id == "anyone",
            "ip" => true,
            "auth" => credentials,
            // A digest id is `user:base64(sha1)`; whoami names the user.
            "digest" => identities.iter().any(|who| {
                who.strip_prefix("digest:")
                    .is_some_and(|user| entry.id.split(':').next() == Some(user))
            }),
            scheme => identities.contains(&format!("{scheme}:{}", entry.id)),
        };
        if entries
            .iter()
            .any(|e| ours(e) && e.perms.0 & needed == needed)
        {
            return Ok(());
        }
        let who = match identities.is_empty() {
            true => "no credentials".to_string(),
            false => identities.join(", "),
        };
        Err(Error::invalid_argument(format!(
            "the ACL list gives this session ({who}) no create and delete permission: the \
             directories it makes would lock it out"
        )))
    }

    /// The entries the server gets, given whether the session has credentials.
    pub(crate) fn entries(&self, authenticated: bool) -> Arc<[zk::Acl]> {
        let all = zk::Permission::ALL;
        let creator = zk::Acl::new(all, zk::AuthId::authed());
        let world_read = zk::Acl::new(zk::Permission::READ, zk::AuthId::anyone());
        let open = zk::Acl::new(all, zk::AuthId::anyone());
        match self {
            AclPolicy::Open => Arc::from([open]),
            AclPolicy::Creator => Arc::from([creator]),
            AclPolicy::CreatorWorldRead => Arc::from([creator, world_read]),
            AclPolicy::Default if authenticated => Arc::from([creator]),
            AclPolicy::Default => Arc::from([open]),
            AclPolicy::List(entries) => entries
                .iter()
                .map(|e| zk::Acl::new(permission(e.perms), zk::AuthId::new(&e.scheme, &e.id)))
                .collect(),
        }
    }
}

fn permission(perms: Perms) -> zk::Permission {
    [
        (Perms::READ, zk::Permission::READ),
        (Perms::WRITE, zk::Permission::WRITE),
        (Perms::CREATE, zk::Permission::CREATE),
        (Perms::DELETE, zk::Permission::DELETE),
        (Perms::ADMIN, zk::Permission::ADMIN),
    ]
    .into_iter()
    .filter(|(ours, _)| perms.0 & ours.0 != 0)
    .fold(zk::Permission::NONE, |all, (_, theirs)| all | theirs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn any_integer_out_of_range_gets_the_range() {
        for perms in ["0", "32", "999", "-1", "99999999999999999999"] {
            let err = Perms::parse(perms).unwrap_err();
            assert!(err.message().contains("1 (read) to 31"), "{perms}: {err}");
        }
        assert_eq!(Perms::parse("31").unwrap(), Perms::ALL);
        assert!(Perms::parse("rx").unwrap_err().message().contains("rwcda"));
    }

    #[test]
    fn the_cli_spelling_takes_a_bitmask_as_the_bindings_do() {
        // The CLI's `--acl` used to read "31" as letters ("bad permission '3'").
        let policy = AclPolicy::parse("world:anyone:31,sasl:alice:rwcda").unwrap();
        assert_eq!(
            policy,
            AclPolicy::List(vec![
                Acl::new(Perms::ALL, "world", "anyone"),
                Acl::new(Perms::ALL, "sasl", "alice"),
            ])
        );
        let err = AclPolicy::parse("world:anyone:999").unwrap_err();
        assert!(err.message().contains("1 (read) to 31"), "{err}");
    }

    #[test]
    fn credentials_of_the_other_mechanism_are_refused_not_ignored() {
        let fields = |f: fn(&mut SaslFields)| {
            let mut given = SaslFields::default();
            f(&mut given);
            given
        };
        let gssapi_with_password =
            Sasl::from_mechanism("GSSAPI", fields(|f| f.password = Some(b"pw".to_vec())))
                .unwrap_err();
        assert!(
            gssapi_with_password.message().contains("ticket cache"),
            "{gssapi_with_password}"
        );
        let gssapi_with_user =
            Sasl::from_mechanism("gssapi", fields(|f| f.username = Some("alice".into())))
                .unwrap_err();
        assert_eq!(gssapi_with_user.code(), ErrorCode::InvalidArgument);
        assert!(
            gssapi_with_user.message().contains("principal and keytab"),
            "{gssapi_with_user}"
        );
        for digest_with in [
            fields(|f| f.service = Some("zookeeper".into())),
            fields(|f| f.principal = Some("alice@REALM".into())),
            fields(|f| f.keytab = Some("alice.keytab".into())),
        ] {
            let given = SaslFields {
                username: Some("alice".into()),
                password: Some(b"pw".to_vec()),
                ..digest_with
            };
            let err = Sasl::from_mechanism("DIGEST-MD5", given).unwrap_err();
            assert!(err.message().contains("GSSAPI's"), "{err}");
        }
        let kerberos = Sasl::from_mechanism(
            "GSSAPI",
            SaslFields {
                service: Some("zk".into()),
                host: Some("h".into()),
                principal: Some("alice@REALM".into()),
                keytab: Some("alice.keytab".into()),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(kerberos.describe(), "sasl:alice@REALM");
    }

    #[test]
    fn an_empty_or_unreadable_keytab_is_refused_by_name() {
        let empty = Sasl::gssapi().keytab("").validate().unwrap_err();
        assert_eq!(empty.code(), ErrorCode::InvalidArgument);
        let missing = Sasl::gssapi()
            .principal("alice@REALM")
            .keytab("/no/such/alice.keytab")
            .validate()
            .unwrap_err();
        assert_eq!(missing.code(), ErrorCode::InvalidArgument);
        assert!(
            missing.message().contains("/no/such/alice.keytab"),
            "{missing}"
        );
        assert!(Sasl::gssapi().principal("").validate().is_err());
    }
}
