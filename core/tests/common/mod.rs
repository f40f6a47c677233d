//! Shared by the integration tests: one real ZooKeeper per test binary.
#![allow(dead_code)]

use std::sync::OnceLock;
use std::time::Duration;

use zk_harness::ZkServer;
use zkrecipes::{Client, ClientOptions};

pub fn server() -> &'static ZkServer {
    static SERVER: OnceLock<ZkServer> = OnceLock::new();
    SERVER.get_or_init(ZkServer::start)
}

pub fn options(session_timeout: Duration) -> ClientOptions {
    ClientOptions {
        session_timeout,
        connect_timeout: Duration::from_secs(10),
        ..Default::default()
    }
}

pub async fn client() -> Client {
    Client::connect(server().connect_string(), options(Duration::from_secs(10)))
        .await
        .expect("connect")
}

pub async fn client_at(connect: &str, session_timeout: Duration) -> Client {
    Client::connect(connect, options(session_timeout))
        .await
        .expect("connect")
}

/// A path no other test uses.
pub fn unique(name: &str) -> String {
    format!("/test/{name}-{}", uuid())
}

fn uuid() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// Children of `path` as the server sees them, through a separate raw session.
pub async fn children(connect: &str, path: &str) -> Vec<String> {
    let zk = zookeeper_client::Client::connect(connect).await.unwrap();
    match zk.list_children(path).await {
        Ok(c) => c,
        Err(zookeeper_client::Error::NoNode) => vec![],
        Err(e) => panic!("list {path}: {e}"),
    }
}

pub async fn raw() -> zookeeper_client::Client {
    zookeeper_client::Client::connect(server().connect_string())
        .await
        .unwrap()
}

pub async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let start = tokio::time::Instant::now();
    while start.elapsed() < timeout {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: not within {timeout:?}");
}
