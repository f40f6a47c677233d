//! Shared by the integration tests: one real ZooKeeper per test binary.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
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

/// A peer library driven by a Java program that prints one line per step.
pub struct Driver {
    child: Child,
    lines: std::io::Lines<BufReader<ChildStdout>>,
}

impl Driver {
    /// `java -cp <classpath> <source> <args>`: a single-file Java program of the workspace.
    pub fn spawn(classpath: &str, source: &str, args: &[&str]) -> Driver {
        let source = zk_harness::workspace_root().join(source);
        let mut child = Command::new("java")
            .arg("-cp")
            .arg(classpath)
            .arg(source)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("java");
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Driver { child, lines }
    }

    /// The next line, read on a blocking thread so the runtime keeps going.
    pub async fn line(mut self) -> (Driver, String) {
        tokio::task::spawn_blocking(move || {
            let line = self.lines.next().expect("driver ended early").unwrap();
            (self, line)
        })
        .await
        .unwrap()
    }

    pub fn finish(mut self) {
        assert!(self.child.wait().unwrap().success());
    }
}
