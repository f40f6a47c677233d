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

pub(crate) fn options(service: &str, host: Option<&str>) -> Result<zk::SaslOptions> {
    libgssapi_sys::library().map_err(|why| {
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
