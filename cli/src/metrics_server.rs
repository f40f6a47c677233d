//! `--metrics-addr HOST:PORT`: this process's metrics in the Prometheus text format on
//! `GET /metrics`, for as long as the command runs (a held lock, a leadership, a consumer).
//!
//! A scrape is one short request; the answer is made from `Client::metrics` when asked.
//! HTTP/1.1 with `Connection: close`, enough for Prometheus, curl and any agent that scrapes.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use zkrecipes::Client;

use crate::exit::Failure;

/// What a request may take to arrive, and its largest size: a scraper sends a few hundred bytes.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
const REQUEST_LIMIT: usize = 16 * 1024;

/// Bound before the connection to ZooKeeper is made: an address in use is a usage error at once.
pub fn bind(addr: &str) -> Result<std::net::TcpListener, Failure> {
    let addr: SocketAddr = addr.parse().map_err(|_| {
        Failure::usage(format!(
            "--metrics-addr must be HOST:PORT (e.g. 127.0.0.1:9464), got {addr:?}"
        ))
    })?;
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|err| Failure::usage(format!("--metrics-addr {addr}: {err}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|err| Failure::usage(format!("--metrics-addr {addr}: {err}")))?;
    Ok(listener)
}

/// Answers scrapes until the process ends.
pub fn serve(listener: std::net::TcpListener, client: Client) -> Result<(), Failure> {
    let listener = TcpListener::from_std(listener)
        .map_err(|err| Failure::usage(format!("--metrics-addr: {err}")))?;
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let client = client.clone();
            tokio::spawn(async move {
                let _ = tokio::time::timeout(REQUEST_TIMEOUT, answer(stream, &client)).await;
            });
        }
    });
    Ok(())
}

/// How a request's head arrived.
enum Head {
    Complete(Vec<u8>),
    /// Past `REQUEST_LIMIT`: answered 431, not cut off.
    TooLarge,
    /// The client went away first.
    Closed,
}

async fn read_head(stream: &mut TcpStream) -> std::io::Result<Head> {
    let mut request = Vec::with_capacity(512);
    let mut buffer = [0u8; 1024];
    // The head ends at a blank line; HTTP/1.1 lets a server take a bare LF for CRLF (RFC 9112
    // 2.2), and some hand-written scrapers send them.
    let ended =
        |r: &[u8]| r.windows(4).any(|w| w == b"\r\n\r\n") || r.windows(2).any(|w| w == b"\n\n");
    while !ended(&request) {
        let read = stream.read(&mut buffer).await?;
        if read == 0 {
            return Ok(Head::Closed);
        }
        if request.len() + read > REQUEST_LIMIT {
            return Ok(Head::TooLarge);
        }
        request.extend_from_slice(&buffer[..read]);
    }
    Ok(Head::Complete(request))
}

async fn answer(mut stream: TcpStream, client: &Client) -> std::io::Result<()> {
    let request = match read_head(&mut stream).await? {
        Head::Complete(request) => request,
        Head::Closed => return Ok(()),
        Head::TooLarge => return refuse_too_large(stream).await,
    };
    let first = String::from_utf8_lossy(&request);
    let mut words = first.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            client.metrics().to_prometheus(),
        ),
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            "text/plain",
            "metrics are at /metrics\n".to_string(),
        ),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "GET /metrics\n".to_string(),
        ),
    };
    respond(&mut stream, status, content_type, &body, method != "HEAD").await?;
    stream.shutdown().await
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
    with_body: bool,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    if with_body {
        stream.write_all(body.as_bytes()).await?;
    }
    Ok(())
}

/// A head past `REQUEST_LIMIT` gets 431, then what the client still sends is read and dropped
/// until it stops (within the request's time): closing a socket with unread data resets it,
/// and the client would see the reset instead of the answer.
async fn refuse_too_large(mut stream: TcpStream) -> std::io::Result<()> {
    let body = format!("a scrape's request head is at most {REQUEST_LIMIT} bytes\n");
    respond(
        &mut stream,
        "431 Request Header Fields Too Large",
        "text/plain",
        &body,
        true,
    )
    .await?;
    stream.shutdown().await?;
    let mut buffer = [0u8; 8192];
    while stream.read(&mut buffer).await? > 0 {}
    Ok(())
}
