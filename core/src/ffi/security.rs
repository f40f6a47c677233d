//! The security options as every binding receives them: flat values of its
//! language (paths or PEM text, a mechanism name, policy names), turned into
//! the core's types here so that no binding decides anything.

use crate::client::ClientOptions;
use crate::error::{Error, Result};
use std::path::PathBuf;

use crate::security::{Acl, AclPolicy, Pem, Perms, Sasl, SaslFields, Tls};

/// Filled by a binding from its language's options; `apply` checks and converts.
#[doc(hidden)]
#[derive(Default)]
pub struct SecuritySettings {
    /// Paths, or PEM text (anything holding `-----BEGIN `), or PEM bytes.
    pub tls_ca: Option<Pem>,
    pub tls_cert: Option<Pem>,
    pub tls_key: Option<Pem>,
    /// `None`: verified (the default).
    pub tls_verify_hostname: Option<bool>,
    /// `DIGEST-MD5` or `GSSAPI` (see `Sasl::from_mechanism`).
    pub sasl_mechanism: Option<String>,
    pub sasl_username: Option<String>,
    pub sasl_password: Option<Vec<u8>>,
    pub sasl_service: Option<String>,
    pub sasl_host: Option<String>,
    /// GSSAPI: the client principal and the keytab to log in from (a path).
    pub sasl_principal: Option<String>,
    pub sasl_keytab: Option<String>,
    /// `open`, `creator`, `creator-world-read`, `default`, or entries
    /// `scheme:id:perms,…` (`AclPolicy::parse`); ignored when entries are given.
    pub acl_policy: Option<String>,
    /// `(perms, scheme, id)`; perms as letters (`rwcda`, `all`) or a number (1 to 31).
    pub acl_entries: Option<Vec<(String, String, String)>>,
}

impl SecuritySettings {
    /// A binding's string for a PEM: text or path.
    pub fn pem(value: Option<String>) -> Option<Pem> {
        value.map(|v| super::pem(&v))
    }

    pub fn apply(self, options: &mut ClientOptions) -> Result<()> {
        options.tls = match (self.tls_ca, self.tls_cert, self.tls_key) {
            (None, None, None) => {
                if self.tls_verify_hostname.is_some() {
                    return Err(Error::invalid_argument(
                        "tls verifyHostname given without a tls ca",
                    ));
                }
                None
            }
            (None, _, _) => {
                return Err(Error::invalid_argument(
                    "a tls client certificate needs the CA to trust (tls ca)",
                ))
            }
            (Some(ca), cert, key) => {
                let mut tls = Tls::new(ca);
                tls = match (cert, key) {
                    (Some(cert), Some(key)) => tls.identity(cert, key),
                    (None, None) => tls,
                    _ => {
                        return Err(Error::invalid_argument(
                            "tls cert and tls key go together: give both or neither",
                        ))
                    }
                };
                if self.tls_verify_hostname == Some(false) {
                    tls = tls.no_hostname_verification();
                }
                Some(tls)
            }
        };
        options.sasl = match self.sasl_mechanism {
            // Ignored, they would let a caller believe it logged in (the CLI's `--sasl-keytab`
            // without `--sasl gssapi` ran with no credentials, found by an adversarial review).
            None if self.sasl_service.is_some()
                || self.sasl_host.is_some()
                || self.sasl_principal.is_some()
                || self.sasl_keytab.is_some() =>
            {
                return Err(Error::invalid_argument(
                    "a SASL service, host, principal or keytab was given without a SASL \
                     mechanism: give the mechanism GSSAPI (the CLI's --sasl gssapi)",
                ))
            }
            None => None,
            Some(mechanism) => Some(Sasl::from_mechanism(
                &mechanism,
                SaslFields {
                    username: self.sasl_username,
                    password: self.sasl_password,
                    service: self.sasl_service,
                    host: self.sasl_host,
                    principal: self.sasl_principal,
                    keytab: self.sasl_keytab.map(PathBuf::from),
                },
            )?),
        };
        options.acl = match self.acl_entries {
            Some(entries) => AclPolicy::List(
                entries
                    .iter()
                    .map(|(perms, scheme, id)| Ok(Acl::new(Perms::parse(perms)?, scheme, id)))
                    .collect::<Result<Vec<_>>>()?,
            )
            .validated()?,
            None => match self.acl_policy.as_deref() {
                Some(spec) => AclPolicy::parse(spec)?,
                None => AclPolicy::Default,
            },
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_an_identity_is_refused() {
        let settings = SecuritySettings {
            tls_ca: Some(Pem::from("ca.pem")),
            tls_cert: Some(Pem::from("c.pem")),
            ..Default::default()
        };
        let err = settings.apply(&mut ClientOptions::default()).unwrap_err();
        assert!(err.message().contains("both or neither"), "{err}");
    }

    #[test]
    fn entries_take_letters_or_numbers() {
        let settings = SecuritySettings {
            acl_entries: Some(vec![
                ("31".into(), "sasl".into(), "alice".into()),
                ("r".into(), "world".into(), "anyone".into()),
            ]),
            ..Default::default()
        };
        let mut options = ClientOptions::default();
        settings.apply(&mut options).unwrap();
        assert_eq!(
            options.acl,
            AclPolicy::List(vec![
                Acl::new(Perms::ALL, "sasl", "alice"),
                Acl::new(Perms::READ, "world", "anyone")
            ])
        );
        let bad = SecuritySettings {
            acl_entries: Some(vec![("64".into(), "sasl".into(), "a".into())]),
            ..Default::default()
        };
        assert!(bad.apply(&mut ClientOptions::default()).is_err());
    }

    #[test]
    fn pem_text_or_path() {
        assert_eq!(
            SecuritySettings::pem(Some("/etc/ca.pem".into())),
            Some(Pem::File("/etc/ca.pem".into()))
        );
        assert!(matches!(
            SecuritySettings::pem(Some("-----BEGIN CERTIFICATE-----\n".into())),
            Some(Pem::Bytes(_))
        ));
    }

    #[test]
    fn kerberos_settings_without_a_mechanism_are_refused() {
        let settings = SecuritySettings {
            sasl_keytab: Some("app.keytab".into()),
            ..Default::default()
        };
        let err = settings.apply(&mut ClientOptions::default()).unwrap_err();
        assert!(err.message().contains("without a SASL mechanism"), "{err}");
    }
}
