//! SASL authentication: DIGEST-MD5 or Kerberos (GSSAPI), and the rules of its options.

use std::path::PathBuf;

use zookeeper_client as zk;

use super::Secret;
use crate::error::{Error, Result};

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

    /// The client keytab to log in from (GSSAPI only): a path, `FILE:` before it or not.
    pub fn keytab(mut self, to: impl Into<PathBuf>) -> Sasl {
        if let Sasl::Gssapi { keytab, .. } = &mut self {
            let path: PathBuf = to.into();
            *keytab = Some(match path.to_str().and_then(|p| p.strip_prefix("FILE:")) {
                Some(file) => PathBuf::from(file),
                None => path,
            });
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
                check_name("DIGEST-MD5 username", username)?;
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
                check_name("GSSAPI service", service)?;
                if let Some(host) = host {
                    check_name("GSSAPI host", host)?;
                }
                if let Some(principal) = principal {
                    check_name("GSSAPI principal", principal)?;
                }
                match keytab {
                    Some(keytab) => check_keytab(keytab),
                    None => Ok(()),
                }
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
            Sasl::Gssapi { .. } => self.kerberos().map(Into::into),
        }
    }

    /// GSSAPI's options, kept by a session to ask for a service ticket with the same
    /// credentials before connecting (`kerberos::check_service`).
    pub(crate) fn kerberos(&self) -> Result<zk::GssapiSaslOptions> {
        match self {
            Sasl::Gssapi {
                service,
                host,
                principal,
                keytab,
            } => super::kerberos::options(
                service,
                host.as_deref(),
                principal.as_deref(),
                keytab.as_deref(),
            ),
            Sasl::DigestMd5 { .. } => Err(Error::invalid_argument(
                "Kerberos options of a DIGEST-MD5 login",
            )),
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

/// Longer than any principal, service or host name; a message quoting more would be unreadable.
const MAX_NAME: usize = 1024;

/// A name the SASL libraries take as a C string: a NUL would cut it short, and the login would
/// be another identity's (found by an adversarial review: `client\0evil@REALM` logged in as
/// `client`).
fn check_name(what: &str, name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(Error::invalid_argument(format!("the SASL {what} is empty")));
    }
    if name.len() > MAX_NAME {
        return Err(Error::invalid_argument(format!(
            "the SASL {what} is {} bytes long, more than {MAX_NAME}",
            name.len()
        )));
    }
    if name.contains('\0') {
        return Err(Error::invalid_argument(format!(
            "the SASL {what} {:?} holds a NUL character",
            name.replace('\0', "\\0")
        )));
    }
    Ok(())
}

/// A keytab must be a regular file this process can read. Anything else is refused at once:
/// opening a pipe without a writer would block the connect for good, and a pipe or a device
/// cannot be read the twice that Kerberos reads a keytab.
fn check_keytab(keytab: &std::path::Path) -> Result<()> {
    let refused = |why: String| {
        Error::invalid_argument(format!(
            "cannot read the keytab {}: {why}",
            keytab.display()
        ))
    };
    if keytab.as_os_str().is_empty() {
        return Err(Error::invalid_argument("the SASL GSSAPI keytab is empty"));
    }
    if keytab.to_str().is_none_or(|k| k.contains('\0')) {
        return Err(refused(
            "its path is not UTF-8 or holds a NUL character".to_string(),
        ));
    }
    let metadata = std::fs::metadata(keytab).map_err(|err| refused(err.to_string()))?;
    if !metadata.is_file() {
        return Err(refused("not a regular file".to_string()));
    }
    std::fs::File::open(keytab).map_err(|err| refused(err.to_string()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

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
