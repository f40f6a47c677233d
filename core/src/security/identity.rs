//! Whether a client certificate and its key go together, asked before connecting.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// Whether `key` belongs to the first certificate of `cert` (PEM texts).
///
/// By the key's public key (its SubjectPublicKeyInfo, DER) inside the certificate, where it is
/// encoded verbatim: rustls's own check parses the certificate with webpki, which refuses X.509
/// v1 certificates (`UnsupportedCertVersion`), and said of such a pair that the key did not go
/// with it (issue 47); the server accepts them, and so does our TLS connection (the fork's
/// client offers the certificate without parsing it).
pub(crate) fn check_identity(cert: &str, key: &str) -> std::result::Result<(), String> {
    let end_entity = CertificateDer::pem_slice_iter(cert.as_bytes())
        .flatten()
        .next()
        .ok_or_else(|| "no certificate".to_string())?;
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes())
        .map_err(|err| format!("no private key: {err:?}"))?;
    let provider = rustls::ClientConfig::builder().crypto_provider().clone();
    let signing = provider
        .key_provider
        .load_private_key(key)
        .map_err(|err| format!("the key cannot sign: {err}"))?;
    let Some(spki) = signing.public_key() else {
        return Ok(()); // a key type whose public key the provider cannot tell: the server judges
    };
    let spki: &[u8] = spki.as_ref();
    let der: &[u8] = end_entity.as_ref();
    if der.windows(spki.len()).any(|window| window == spki) {
        Ok(())
    } else {
        Err("the key does not belong to the certificate".to_string())
    }
}
