//! Which SASL mechanism a server authenticates with, asked the way a client
//! begins: a session request, then a SASL request with an empty token.
//!
//! A ZooKeeper server has one mechanism, chosen by its JAAS `Server` section
//! (Kerberos principals: GSSAPI; user passwords: DIGEST-MD5). A client that
//! speaks the other one is not refused with an error: the server closes the
//! connection, the session crate calls that a connection loss and tries
//! again until the connect timeout, and the user learns nothing. Asked with
//! an empty token, the servers answer apart: DIGEST-MD5 with its challenge
//! (`realm=…,nonce=…`), GSSAPI with an error (an empty token is no Kerberos
//! ticket), a server without SASL with no token at all.

use std::io::{Read, Write};

/// What a server answered to an empty SASL token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ServerSasl {
    /// A DIGEST-MD5 challenge.
    DigestMd5,
    /// An error: a mechanism that needs a first token (GSSAPI).
    NeedsInitialToken,
    /// No token and no error: the server has no SASL configured.
    NoSasl,
}

/// `opcode.sasl` of ZooKeeper's protocol.
const SASL_OPCODE: i32 = 102;

/// The server's answer, or `None` when it did not give one (closed, slow, not ZooKeeper).
pub(crate) fn server_sasl<S: Read + Write>(stream: &mut S) -> Option<ServerSasl> {
    // ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd, readOnly.
    let mut connect = Vec::with_capacity(45);
    connect.extend_from_slice(&0i32.to_be_bytes());
    connect.extend_from_slice(&0i64.to_be_bytes());
    connect.extend_from_slice(&10_000i32.to_be_bytes());
    connect.extend_from_slice(&0i64.to_be_bytes());
    connect.extend_from_slice(&16i32.to_be_bytes());
    connect.extend_from_slice(&[0u8; 16]);
    connect.push(0);
    write_frame(stream, &connect).ok()?;
    read_frame(stream)?;
    // RequestHeader (xid, type) and GetSASLRequest (an empty token).
    let mut sasl = Vec::with_capacity(12);
    sasl.extend_from_slice(&1i32.to_be_bytes());
    sasl.extend_from_slice(&SASL_OPCODE.to_be_bytes());
    sasl.extend_from_slice(&0i32.to_be_bytes());
    write_frame(stream, &sasl).ok()?;
    let reply = read_frame(stream)?;
    // ReplyHeader (xid, zxid, err) then SetSASLResponse (token).
    let err = i32::from_be_bytes(reply.get(12..16)?.try_into().ok()?);
    if err != 0 {
        return Some(ServerSasl::NeedsInitialToken);
    }
    let token = reply.get(20..).unwrap_or_default();
    let text = String::from_utf8_lossy(token);
    Some(match text.contains("nonce=") {
        true => ServerSasl::DigestMd5,
        false => ServerSasl::NoSasl,
    })
}

fn write_frame<S: Write>(stream: &mut S, body: &[u8]) -> std::io::Result<()> {
    let length = i32::try_from(body.len()).expect("a probe frame is small");
    stream.write_all(&length.to_be_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

fn read_frame<S: Read>(stream: &mut S) -> Option<Vec<u8>> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).ok()?;
    let length = usize::try_from(i32::from_be_bytes(length)).ok()?;
    // A ZooKeeper reply to these two requests is tens of bytes; anything
    // larger is not a ZooKeeper server.
    if length > 4096 {
        return None;
    }
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).ok()?;
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted server: what it answers, after what the client wrote.
    struct Scripted {
        answer: std::io::Cursor<Vec<u8>>,
        written: Vec<u8>,
    }

    impl Read for Scripted {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.answer.read(buf)
        }
    }

    impl Write for Scripted {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = (body.len() as i32).to_be_bytes().to_vec();
        out.extend_from_slice(body);
        out
    }

    fn answering(err: i32, token: Option<&[u8]>) -> Scripted {
        let mut answer = frame(&[0u8; 37]);
        let mut reply = 1i32.to_be_bytes().to_vec();
        reply.extend_from_slice(&0i64.to_be_bytes());
        reply.extend_from_slice(&err.to_be_bytes());
        match token {
            Some(token) => {
                reply.extend_from_slice(&(token.len() as i32).to_be_bytes());
                reply.extend_from_slice(token);
            }
            None => reply.extend_from_slice(&(-1i32).to_be_bytes()),
        }
        answer.extend(frame(&reply));
        Scripted {
            answer: std::io::Cursor::new(answer),
            written: Vec::new(),
        }
    }

    #[test]
    fn the_three_answers_are_told_apart() {
        let challenge = br#"realm="zk",nonce="abc",charset=utf-8,algorithm=md5-sess"#;
        assert_eq!(
            server_sasl(&mut answering(0, Some(challenge))),
            Some(ServerSasl::DigestMd5)
        );
        assert_eq!(
            server_sasl(&mut answering(-124, None)),
            Some(ServerSasl::NeedsInitialToken)
        );
        assert_eq!(
            server_sasl(&mut answering(0, None)),
            Some(ServerSasl::NoSasl)
        );
    }

    #[test]
    fn a_closed_or_foreign_server_gives_no_answer() {
        let mut closed = Scripted {
            answer: std::io::Cursor::new(Vec::new()),
            written: Vec::new(),
        };
        assert_eq!(server_sasl(&mut closed), None);
        let mut huge = Scripted {
            answer: std::io::Cursor::new(frame(&[0u8; 5000])),
            written: Vec::new(),
        };
        assert_eq!(server_sasl(&mut huge), None);
    }

    #[test]
    fn the_requests_are_a_session_then_an_empty_sasl_token() {
        let mut server = answering(0, None);
        server_sasl(&mut server);
        let written = server.written;
        assert_eq!(&written[..4], &45i32.to_be_bytes());
        let sasl = &written[49..];
        assert_eq!(&sasl[..4], &12i32.to_be_bytes());
        assert_eq!(&sasl[8..12], &SASL_OPCODE.to_be_bytes());
        assert_eq!(&sasl[12..16], &0i32.to_be_bytes());
    }
}
