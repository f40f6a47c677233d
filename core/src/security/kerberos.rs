//! SASL GSSAPI (Kerberos), with the MIT Kerberos library opened at run time
//! (`tools/gssapi-runtime`): a build of ours links no Kerberos library.
//!
//! Before a session is opened the credentials are looked up once, so that a
//! missing library or a missing ticket is a clear `AUTH_FAILED` at once, not a
//! handshake retried until the connect timeout.

use zookeeper_client as zk;

use std::path::Path;

use crate::error::{Error, ErrorCode, Result};

/// Whether the MIT Kerberos library opens, or why not (naming it). Every build opens it at run
/// time (`zkrecipes-gssapi-sys`, `tools/gssapi-runtime`, by this name or
/// `ZKRECIPES_GSSAPI_LIBRARY`, which a test points at a missing one). Asked here as well, so
/// that a refusal names the library before the session crate tries it.
fn kerberos_library() -> std::result::Result<(), String> {
    // The loader's own choice of file (per OS, or the variable), so that the two never differ.
    let name = libgssapi_sys::library_name();
    // SAFETY: the library's initialisers are MIT Kerberos's own; it is loaded anyway to be used.
    match unsafe { libloading::Library::new(&name) } {
        Ok(_) => Ok(()),
        Err(err) => Err(format!(
            "cannot load {name}: {err} (install MIT Kerberos: Debian/Ubuntu libgssapi-krb5-2, RHEL krb5-libs)"
        )),
    }
}

/// The fork's GSSAPI options for a `Sasl::Gssapi`'s fields, once the library and the
/// credentials were found.
pub(super) fn options(
    service: &str,
    host: Option<&str>,
    principal: Option<&str>,
    keytab: Option<&Path>,
) -> Result<zk::GssapiSaslOptions> {
    kerberos_library().map_err(|why| {
        Error::new(
            ErrorCode::AuthFailed,
            format!("SASL GSSAPI needs the MIT Kerberos library: {why}"),
        )
    })?;
    let mut options = zk::SaslOptions::gssapi().with_username(service.to_string());
    if let Some(host) = host {
        options = options.with_hostname(host.to_string());
    }
    if let Some(principal) = principal {
        options = options.with_principal(principal.to_string());
    }
    if let Some(keytab) = keytab {
        options = options.with_keytab(keytab.to_path_buf());
    }
    if let Err(err) = options.check_credentials() {
        let (whose, what_to_do) = match (principal, keytab) {
            (None, None) => (
                "SASL GSSAPI".to_string(),
                "run kinit, or point KRB5CCNAME at a ticket cache or KRB5_CLIENT_KTNAME at a \
                 client keytab, or give a principal and keytab"
                    .to_string(),
            ),
            (Some(principal), None) => (
                principal.to_string(),
                format!("run kinit {principal}, or give its keytab"),
            ),
            (principal, Some(keytab)) => (
                format!(
                    "{} from the keytab {}",
                    principal.unwrap_or("its first principal"),
                    keytab.display()
                ),
                format!(
                    "check that the keytab holds the principal's keys: klist -k {}",
                    keytab.display()
                ),
            ),
        };
        return Err(Error::new(
            refusal_code(&err),
            format!("no Kerberos credentials for {whose}: {err}; {what_to_do}"),
        ));
    }
    Ok(options)
}

/// Whether a service ticket for `service@host` can be had with this client's
/// credentials: a wrong service name, a host the KDC does not know (an address
/// instead of the name in the principal), a keytab without the principal fail
/// here at once, by name, instead of in the SASL handshake that the session
/// crate retries until the connect timeout.
pub(crate) fn check_service(
    options: &zk::GssapiSaslOptions,
    service: &str,
    host: &str,
) -> Result<()> {
    options.check_service(host).map_err(|err| {
        Error::new(
            refusal_code(&err),
            format!(
                "no Kerberos ticket for the service {service}/{host}: {err} (connect by the host name \
                 in the server's principal, or set the SASL service and host)"
            ),
        )
    })
}

/// `AUTH_FAILED` for what the credentials or the names decide; `CONNECTION_LOSS` when no KDC
/// answered, an outage that a retry may get past.
fn refusal_code(err: &zk::GssapiError) -> ErrorCode {
    match err.is_kdc_unreachable() {
        true => ErrorCode::ConnectionLoss,
        false => ErrorCode::AuthFailed,
    }
}
