//! Why a connect does not succeed, when no retry will fix it.
//!
//! The session crate turns every failed TLS handshake into a bare connection
//! loss and tries again until the connect timeout: an unknown CA, a hostname
//! mismatch or a plain client at a TLS port would wait the whole timeout and
//! then say nothing useful. A connect that has not succeeded shortly after it
//! began gets a diagnosis: one handshake of our own with every server, and
//! when each of them refuses for a reason no retry can change, the connect
//! fails at once with that reason. A server that is down or slow is not a
//! refusal: the connect goes on until its timeout.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{AlertDescription, CertificateError};

use crate::error::{Error, ErrorCode};
use crate::sasl_probe::{server_sasl, ServerSasl};
use crate::security::{Sasl, Tls};

/// A healthy connect on a LAN is done by then; a diagnosis costs one handshake.
pub(crate) const DIAGNOSE_AFTER: Duration = Duration::from_millis(300);

/// How long one probe may wait for the server's answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// One server of a connect string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Server {
    pub host: String,
    pub port: u16,
    pub tls: bool,
}

/// `host:port[,…][/chroot]` with optional `tcp://` / `tcp+tls://` per server;
/// `tls` is whether the client has the `tls` option (it applies to all).
pub(crate) fn servers(connect_string: &str, tls: bool) -> Vec<Server> {
    connect_string
        .split(',')
        .filter_map(|spec| {
            let spec = spec.trim();
            let (spec, secure) = match spec {
                s if s.starts_with("tcp+tls://") => (&s["tcp+tls://".len()..], true),
                s if s.starts_with("tcp://") => (&s["tcp://".len()..], false),
                s => (s, tls),
            };
            let hostport = spec.split('/').next()?;
            let (host, port) = match hostport.rsplit_once(':') {
                Some((host, port)) if !host.ends_with(':') => (host, port.parse().ok()?),
                _ => (hostport, 2181),
            };
            let host = host.trim_start_matches('[').trim_end_matches(']');
            Some(Server {
                host: host.to_string(),
                port,
                tls: secure,
            })
        })
        .collect()
}

/// The refusal every server gave, or `None` while any may still accept.
pub(crate) async fn refusal(
    servers: Vec<Server>,
    tls: Option<Tls>,
    sasl: Option<Sasl>,
) -> Option<Error> {
    let probes = servers.into_iter().map(|server| {
        let tls = tls.clone();
        let sasl = sasl.clone();
        tokio::task::spawn_blocking(move || {
            probe(&server, tls.as_ref())
                .or_else(|| sasl_mismatch(&server, tls.as_ref(), sasl.as_ref()?))
        })
    });
    let mut first = None;
    for probe in futures_util::future::join_all(probes).await {
        match probe.ok().flatten() {
            Some(err) => {
                first.get_or_insert(err);
            }
            None => return None,
        }
    }
    first
}

/// Why a server refused the SASL credentials, when it is the mechanism and
/// not the credentials (the refusal looks the same); `None` otherwise.
pub(crate) async fn mechanism_mismatch(
    servers: Vec<Server>,
    tls: Option<Tls>,
    sasl: Sasl,
) -> Option<Error> {
    tokio::task::spawn_blocking(move || {
        servers
            .iter()
            .find_map(|server| sasl_mismatch(server, tls.as_ref(), &sasl))
    })
    .await
    .ok()
    .flatten()
}

/// The server's SASL mechanism is not the client's: it would close every
/// connection the session crate opens (see `sasl_probe`).
fn sasl_mismatch(server: &Server, tls: Option<&Tls>, sasl: &Sasl) -> Option<Error> {
    let at = format!("{}:{}", server.host, server.port);
    let stream = open(server)?;
    let answer = match (server.tls, tls) {
        (true, Some(tls)) => {
            let config = probe_config(roots(tls)?, identity(tls)).ok()?;
            let connection = client_connection(config, &server.host).ok()?;
            server_sasl(&mut rustls::StreamOwned::new(connection, stream))?
        }
        (true, None) => return None,
        (false, _) => server_sasl(&mut { stream })?,
    };
    let why = match (sasl, answer) {
        (Sasl::Gssapi { .. }, ServerSasl::DigestMd5) => format!(
            "{at} authenticates SASL clients with DIGEST-MD5 (user passwords in its JAAS Server \
             section), not Kerberos: give sasl DIGEST-MD5 credentials, or connect to a server \
             with a Kerberos principal"
        ),
        (Sasl::DigestMd5 { .. }, ServerSasl::NeedsInitialToken) => format!(
            "{at} refused a DIGEST-MD5 start: its SASL mechanism is another one (Kerberos? then \
             give sasl GSSAPI)"
        ),
        _ => return None,
    };
    Some(Error::new(ErrorCode::AuthFailed, why))
}

fn open(server: &Server) -> Option<TcpStream> {
    let address = (server.host.as_str(), server.port)
        .to_socket_addrs()
        .ok()?
        .next()?;
    let stream = TcpStream::connect_timeout(&address, PROBE_TIMEOUT).ok()?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(PROBE_TIMEOUT)).ok()?;
    Some(stream)
}

/// A definitive refusal of `server`, or `None` (accepted, down, or unclear).
fn probe(server: &Server, tls: Option<&Tls>) -> Option<Error> {
    let at = format!("{}:{}", server.host, server.port);
    let stream = open(server)?;
    match (server.tls, tls) {
        (true, Some(tls)) => tls_probe(&at, server, stream, tls),
        (true, None) => Some(Error::invalid_argument(format!(
            "{at} is given as tcp+tls:// but the client has no tls option (a CA to trust)"
        ))),
        (false, _) => plain_probe(&at, stream),
    }
}

/// A plain client at a TLS port: a TLS server answers a ClientHello with a
/// TLS record; a plain ZooKeeper server closes the connection.
fn plain_probe(at: &str, mut stream: TcpStream) -> Option<Error> {
    let config = probe_config(rustls::RootCertStore::empty(), None).ok()?;
    let name = ServerName::try_from("zookeeper").ok()?;
    let mut hello = Vec::new();
    rustls::ClientConnection::new(Arc::new(config), name)
        .ok()?
        .write_tls(&mut hello)
        .ok()?;
    stream.write_all(&hello).ok()?;
    let mut header = [0u8; 3];
    stream.read_exact(&mut header).ok()?;
    let tls_record = matches!(header[0], 0x15 | 0x16) && header[1] == 3;
    tls_record.then(|| {
        Error::new(
            ErrorCode::TlsRefused,
            format!(
                "{at} speaks TLS (a secureClientPort): give the tls option (a CA) or write \
                 tcp+tls://{at}"
            ),
        )
    })
}

fn tls_probe(at: &str, server: &Server, stream: TcpStream, tls: &Tls) -> Option<Error> {
    let roots = roots(tls)?;
    let identity = identity(tls);
    let given_identity = identity.is_some();
    let config = probe_config(roots, identity).ok()?;
    let mut connection = client_connection(config, &server.host).ok()?;
    let mut stream = stream;
    let mut tls_stream = rustls::Stream::new(&mut connection, &mut stream);
    // Handshake, then one read: with TLS 1.3 a server that wants a client
    // certificate says so only after our side of the handshake is done.
    let outcome = tls_stream.flush().and_then(|()| {
        let mut byte = [0u8; 1];
        tls_stream.read(&mut byte).map(|_| ())
    });
    let err = match outcome {
        Ok(()) => return None,
        Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => return None,
        Err(err) if err.kind() == std::io::ErrorKind::TimedOut => return None,
        Err(err) => err,
    };
    let handshaken = !connection.is_handshaking();
    let tls_error = err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .cloned();
    let why = match tls_error {
        Some(rustls::Error::InvalidCertificate(cert)) => certificate_problem(&cert, server, tls)?,
        Some(rustls::Error::AlertReceived(alert)) => alert_problem(alert, given_identity),
        Some(rustls::Error::InvalidMessage(_))
        | Some(rustls::Error::InappropriateMessage { .. }) => not_tls(),
        Some(other) => format!("the TLS handshake failed: {other}"),
        None if !handshaken && err.kind() == std::io::ErrorKind::UnexpectedEof => not_tls(),
        None if !handshaken && err.kind() == std::io::ErrorKind::ConnectionReset => not_tls(),
        None => return None,
    };
    Some(Error::new(
        ErrorCode::TlsRefused,
        format!("TLS to {at}: {why}"),
    ))
}

fn not_tls() -> String {
    "the server does not speak TLS on this port (a plain clientPort?): give its \
     secureClientPort, or connect without the tls option"
        .to_string()
}

fn certificate_problem(cert: &CertificateError, server: &Server, tls: &Tls) -> Option<String> {
    let text = format!("{cert:?}");
    let why = match cert {
        CertificateError::UnknownIssuer => format!(
            "the server's certificate is not issued by a CA in {:?} (unknown CA)",
            tls.ca
        ),
        CertificateError::Expired => "the server's certificate has expired".to_string(),
        CertificateError::BadSignature => format!(
            "the server's certificate names a CA in {:?} as its issuer but is not signed by its \
             key (a CA re-issued under the same name? trust the CA that signed the server)",
            tls.ca
        ),
        CertificateError::NotValidYet => "the server's certificate is not valid yet".to_string(),
        CertificateError::NotValidForName if !tls.verify_hostname => return None,
        CertificateError::NotValidForName => format!(
            "the server's certificate is not for host {:?} (hostname mismatch; connect by the \
             name in its certificate)",
            server.host
        ),
        _ if text.starts_with("ExpiredContext") => {
            "the server's certificate has expired".to_string()
        }
        _ if text.starts_with("NotValidForNameContext") && !tls.verify_hostname => return None,
        _ if text.starts_with("NotValidForNameContext") => format!(
            "the server's certificate is not for host {:?} (hostname mismatch; connect by the \
             name in its certificate)",
            server.host
        ),
        _ if text.starts_with("NotValidYetContext") => {
            "the server's certificate is not valid yet".to_string()
        }
        other => format!("the server's certificate is refused: {other:?}"),
    };
    Some(why)
}

fn alert_problem(alert: AlertDescription, given_identity: bool) -> String {
    match (alert, given_identity) {
        (
            AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::HandshakeFailure,
            false,
        ) => "the server requires a client certificate (give the tls cert and key)".to_string(),
        (AlertDescription::CertificateExpired, true) => {
            "the server refused our client certificate: it has expired".to_string()
        }
        (_, true) => format!(
            "the server refused our client certificate ({alert:?}: expired, or not issued by a CA \
             the server trusts?)"
        ),
        (_, false) => format!("the server refused the handshake ({alert:?})"),
    }
}

fn roots(tls: &Tls) -> Option<rustls::RootCertStore> {
    let ca = tls.load_ca_pem().ok()?;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca.as_bytes()).flatten() {
        let _ = roots.add(cert);
    }
    (!roots.is_empty()).then_some(roots)
}

fn identity(tls: &Tls) -> Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let (cert, key) = tls.load_identity_pem().ok()??;
    let chain: Vec<_> = CertificateDer::pem_slice_iter(cert.as_bytes())
        .flatten()
        .collect();
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).ok()?;
    Some((chain, key))
}

/// A four-letter word over TLS (`cons` to a `secureClientPort`): the reply,
/// read until the server closes.
pub(crate) fn tls_four_letter(server: &str, tls: &Tls, command: &str) -> std::io::Result<String> {
    let invalid =
        |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, why.to_string());
    let (host, port) = server.rsplit_once(':').ok_or_else(|| invalid("no port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port: u16 = port.parse().map_err(|_| invalid("bad port"))?;
    let address = (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| invalid("no address"))?;
    let config = probe_config(roots(tls).ok_or_else(|| invalid("no CA"))?, identity(tls))
        .map_err(|err| invalid(&err.to_string()))?;
    let mut connection =
        client_connection(config, host).map_err(|err| invalid(&err.to_string()))?;
    let mut stream = TcpStream::connect_timeout(&address, PROBE_TIMEOUT)?;
    stream.set_read_timeout(Some(PROBE_TIMEOUT))?;
    stream.set_write_timeout(Some(PROBE_TIMEOUT))?;
    let mut tls_stream = rustls::Stream::new(&mut connection, &mut stream);
    tls_stream.write_all(command.as_bytes())?;
    tls_stream.flush()?;
    let mut reply = Vec::new();
    match tls_stream.read_to_end(&mut reply) {
        Ok(_) => {}
        // The server closes without close_notify: what came before is the reply.
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof && !reply.is_empty() => {}
        Err(err) => return Err(err),
    }
    Ok(String::from_utf8_lossy(&reply).into_owned())
}

/// A probe's TLS connection to `host`, with the server name indication the session's own
/// connection sends: none for a name with an underscore (`zk_1`), which the Java server answers
/// with an alert (the same rule as the session crate's `TlsInnerClient::connect`).
fn client_connection(
    mut config: rustls::ClientConfig,
    host: &str,
) -> Result<rustls::ClientConnection, rustls::Error> {
    let name = ServerName::try_from(host.to_string())
        .map_err(|_| rustls::Error::General(format!("{host:?} is no host name")))?;
    config.enable_sni = !host.contains('_');
    rustls::ClientConnection::new(Arc::new(config), name)
}

fn probe_config(
    roots: rustls::RootCertStore,
    identity: Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>,
) -> Result<rustls::ClientConfig, rustls::Error> {
    let builder = rustls::ClientConfig::builder().with_root_certificates(roots);
    match identity {
        Some((chain, key)) => builder.with_client_auth_cert(chain, key),
        None => Ok(builder.with_no_client_auth()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_of_a_connect_string() {
        let parsed = servers("a:1,tcp+tls://b:2,tcp://[::1]:3/chroot", false);
        assert_eq!(
            parsed,
            vec![
                Server {
                    host: "a".into(),
                    port: 1,
                    tls: false
                },
                Server {
                    host: "b".into(),
                    port: 2,
                    tls: true
                },
                Server {
                    host: "::1".into(),
                    port: 3,
                    tls: false
                },
            ]
        );
        assert!(servers("a:1", true)[0].tls);
    }
}
