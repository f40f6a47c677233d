//! TLS to every server, with certificate files re-read when they change.

use std::time::{Duration, SystemTime};

use zookeeper_client as zk;

use super::Pem;
use crate::error::{Error, Result};
use crate::runtime;

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
            super::identity::check_identity(&cert_text, &key_text)
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
                        tracing::info!(target: "zkrecipes::security", "reloaded the TLS certificates");
                    }
                    // The error names the file and what is wrong with it, never its contents.
                    Err(err) => {
                        let reason = err.to_string();
                        tracing::warn!(
                            target: "zkrecipes::security",
                            reason,
                            "TLS certificates changed but do not load yet: {reason}"
                        )
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
