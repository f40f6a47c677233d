//! SASL GSSAPI (Kerberos), with the MIT Kerberos library opened at run time
//! (`tools/gssapi-runtime`): a build of ours links no Kerberos library.
//!
//! Before a session is opened the credentials are looked up once, so that a
//! missing library or a missing ticket is a clear `AUTH_FAILED` at once, not a
//! handshake retried until the connect timeout.

use libgssapi::context::{ClientCtx, CtxFlags};
use libgssapi::credential::{Cred, CredUsage};
use libgssapi::name::Name;
use libgssapi::oid::{GSS_MECH_KRB5, GSS_NT_HOSTBASED_SERVICE};
use zookeeper_client as zk;

use crate::error::{Error, ErrorCode, Result};

/// Whether the MIT Kerberos library opens, or why not (naming it). Our builds open it at run
/// time (`tools/gssapi-runtime`, by this name or `ZKRECIPES_GSSAPI_LIBRARY`, which a test points
/// at a missing one); the published crate builds against crates.io's libgssapi-sys, which links
/// it, and this always succeeds there. Asked here, not of the runtime crate, so that the
/// published crate depends on nothing that is not on crates.io.
fn kerberos_library() -> std::result::Result<(), String> {
    let name = std::env::var("ZKRECIPES_GSSAPI_LIBRARY")
        .unwrap_or_else(|_| "libgssapi_krb5.so.2".to_string());
    // SAFETY: the library's initialisers are MIT Kerberos's own; it is loaded anyway to be used.
    match unsafe { libloading::Library::new(&name) } {
        Ok(_) => Ok(()),
        Err(err) => Err(format!(
            "cannot load {name}: {err} (install MIT Kerberos: Debian/Ubuntu libgssapi-krb5-2, RHEL krb5-libs)"
        )),
    }
}

pub(crate) fn options(service: &str, host: Option<&str>) -> Result<zk::SaslOptions> {
    kerberos_library().map_err(|why| {
        Error::new(
            ErrorCode::AuthFailed,
            format!("SASL GSSAPI needs the MIT Kerberos library: {why}"),
        )
    })?;
    if let Err(err) = Cred::acquire(None, None, CredUsage::Initiate, None) {
        return Err(Error::new(
            ErrorCode::AuthFailed,
            format!(
                "no Kerberos credentials for SASL GSSAPI: {err}; run kinit, or point KRB5CCNAME \
                 at a ticket cache or KRB5_CLIENT_KTNAME at a client keytab"
            ),
        ));
    }
    let mut options = zk::SaslOptions::gssapi().with_username(service.to_string());
    if let Some(host) = host {
        options = options.with_hostname(host.to_string());
    }
    Ok(options.into())
}

/// Whether a service ticket for `service@host` can be had: a wrong service
/// name, a host the KDC does not know (an address instead of the name in the
/// principal) fail here at once, by name, instead of in the SASL handshake
/// that the session crate retries until the connect timeout.
pub(crate) fn check_service(service: &str, host: &str) -> Result<()> {
    let principal = format!("{service}@{host}");
    let refused = |err: libgssapi::error::Error| {
        Error::new(
            ErrorCode::AuthFailed,
            format!(
                "no Kerberos ticket for the service {service}/{host}: {err} (connect by the host name \
                 in the server's principal, or set the SASL service and host)"
            ),
        )
    };
    let name = Name::new(principal.as_bytes(), Some(&GSS_NT_HOSTBASED_SERVICE)).map_err(refused)?;
    let mut context = ClientCtx::new(
        None,
        name,
        CtxFlags::GSS_C_MUTUAL_FLAG,
        Some(&GSS_MECH_KRB5),
    );
    context.step(None, None).map(|_| ()).map_err(refused)
}
