//! The security options as `zkrecipes.Client` passes them (a dict built by
//! `zkrecipes/security.py`), converted into the core's settings.

use pyo3::prelude::*;
use zkrecipes::ffi::SecuritySettings;
use zkrecipes::Pem;

/// A PEM as Python gives it: a path (`str`) or the PEM itself (`bytes`).
#[derive(FromPyObject)]
pub enum PemArg {
    Path(String),
    Bytes(Vec<u8>),
}

impl From<PemArg> for Pem {
    fn from(pem: PemArg) -> Pem {
        match pem {
            PemArg::Path(path) => Pem::File(path.into()),
            PemArg::Bytes(bytes) => Pem::Bytes(bytes),
        }
    }
}

/// Whether a `str` given for a PEM is the text itself (the core's rule): `zkrecipes.Tls` keeps
/// such a string as bytes, which its `repr` never shows.
#[pyfunction]
pub fn _pem_is_text(value: &str) -> bool {
    zkrecipes::ffi::pem_is_text(value)
}

#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct SecurityArgs {
    tls_ca: Option<PemArg>,
    tls_cert: Option<PemArg>,
    tls_key: Option<PemArg>,
    tls_verify_hostname: Option<bool>,
    sasl_mechanism: Option<String>,
    sasl_username: Option<String>,
    sasl_password: Option<Vec<u8>>,
    sasl_service: Option<String>,
    sasl_host: Option<String>,
    sasl_principal: Option<String>,
    sasl_keytab: Option<String>,
    acl_policy: Option<String>,
    acl_entries: Option<Vec<(String, String, String)>>,
}

impl From<SecurityArgs> for SecuritySettings {
    fn from(args: SecurityArgs) -> SecuritySettings {
        SecuritySettings {
            tls_ca: args.tls_ca.map(Pem::from),
            tls_cert: args.tls_cert.map(Pem::from),
            tls_key: args.tls_key.map(Pem::from),
            tls_verify_hostname: args.tls_verify_hostname,
            sasl_mechanism: args.sasl_mechanism,
            sasl_username: args.sasl_username,
            sasl_password: args.sasl_password,
            sasl_service: args.sasl_service,
            sasl_host: args.sasl_host,
            sasl_principal: args.sasl_principal,
            sasl_keytab: args.sasl_keytab,
            acl_policy: args.acl_policy,
            acl_entries: args.acl_entries,
        }
    }
}
