//! SASL GSSAPI (Kerberos), with the MIT Kerberos library opened at run time
//! (`tools/gssapi-runtime`): a build of ours links no Kerberos library.
//!
//! Before a session is opened the credentials are looked up once, so that a
//! missing library or a missing ticket is a clear `AUTH_FAILED` at once, not a
//! handshake retried until the connect timeout.

use libgssapi::credential::{Cred, CredUsage};
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
