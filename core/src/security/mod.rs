//! How a session proves who it is and what the recipes' nodes allow: TLS
//! (with certificates re-read when their files change), SASL and the ACL
//! policy of every node a recipe creates.
//!
//! Decided here once; every binding only converts its language's spelling
//! into these types.

mod acl;
mod identity;
mod kerberos;
mod pem;
mod sasl;
mod secret;
mod tls;

pub use acl::{Acl, AclPolicy, Perms};
pub(crate) use kerberos::check_service;
pub use pem::Pem;
pub use sasl::Sasl;
pub(crate) use sasl::SaslFields;
pub use secret::Secret;
pub use tls::Tls;
pub(crate) use tls::TlsSetup;
