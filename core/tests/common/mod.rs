//! Shared by the integration tests: one real ZooKeeper per test binary.
#![allow(dead_code)]

pub mod rolling;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::time::Instant;
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

/// The runtime of the observers' raw sessions. `zookeeper-client` runs a
/// session's I/O task on the runtime that connected it, and every
/// `#[tokio::test]` has a runtime of its own that ends with the test: a
/// session kept for the whole binary must live on a runtime that does too.
fn observer_runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("observer")
            .enable_all()
            .build()
            .expect("observer runtime")
    })
}

/// One raw session per connect string, shared by every test of the binary
/// (a new session per look cost a connect handshake and a session close, and
/// left sessions behind for the server to expire when a test died).
static OBSERVERS: Mutex<Option<HashMap<String, zookeeper_client::Client>>> = Mutex::new(None);

async fn observer(connect: &str) -> zookeeper_client::Client {
    if let Some(zk) = OBSERVERS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .get(connect)
    {
        return zk.clone();
    }
    let target = connect.to_string();
    let zk = observer_runtime()
        .spawn(async move { zookeeper_client::Client::connect(&target).await })
        .await
        .unwrap()
        .unwrap_or_else(|err| panic!("observer session to {connect}: {err}"));
    OBSERVERS
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .entry(connect.to_string())
        .or_insert(zk)
        .clone()
}

fn forget_observer(connect: &str) {
    if let Some(observers) = OBSERVERS.lock().unwrap().as_mut() {
        observers.remove(connect);
    }
}

/// Children of `path` as the server sees them, through a separate raw session
/// (one per connect string, kept for the binary). Answers within 30 s or fails.
pub async fn children(connect: &str, path: &str) -> Vec<String> {
    let look = async {
        for _ in 0..3 {
            let zk = observer(connect).await;
            let owned = path.to_string();
            // On the observer runtime: the request's reply is read there.
            let listed = observer_runtime()
                .spawn(async move { zk.list_children(&owned).await })
                .await
                .unwrap();
            match listed {
                Ok(c) => return c,
                Err(zookeeper_client::Error::NoNode) => return vec![],
                // A server that went away (another test's own server, a
                // killed ensemble member) or a session it expired: a new one.
                Err(
                    zookeeper_client::Error::ConnectionLoss
                    | zookeeper_client::Error::SessionExpired
                    | zookeeper_client::Error::ClientClosed,
                ) => forget_observer(connect),
                Err(e) => panic!("list {path}: {e}"),
            }
        }
        panic!("list {path}: no answer from {connect} on three sessions");
    };
    tokio::time::timeout(Duration::from_secs(30), look)
        .await
        .unwrap_or_else(|_| panic!("list {path} on {connect}: no answer within 30 s"))
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

/// The sessions (hex ids as the server prints them, `0x…`) that watch
/// `path`, from the server's `wchc` four-letter word.
pub fn watchers_of(port: u16, path: &str) -> Vec<String> {
    let reply = zk_harness::four_letter(port, "wchc").unwrap_or_default();
    let mut session = None;
    let mut watching = Vec::new();
    for line in reply.lines() {
        if line.starts_with("0x") {
            session = Some(line.trim().to_string());
        } else if line.trim() == path {
            watching.extend(session.clone());
        }
    }
    watching
}

/// `session` as the server's four-letter words print it.
pub fn session_hex(session: i64) -> String {
    format!("0x{session:x}")
}

/// Whether the server on `port` has a connection of `session` (`cons`). A server that did not
/// answer is taken to have it still: an unanswered query must not pass for an expiry.
pub fn has_session(port: u16, session: i64) -> bool {
    match zk_harness::four_letter(port, "cons") {
        Ok(cons) => cons.contains(&format!("sid={}", session_hex(session))),
        Err(_) => true,
    }
}

/// Resolves once the server has expired `session`, cut off from it (its
/// connection closes with it): the length of a fault "past the session".
pub async fn until_expired(port: u16, session: i64) {
    until(
        "the server expires the cut-off session",
        Duration::from_secs(30),
        || !has_session(port, session),
    )
    .await;
}

/// How long a peer program may stay silent before the test fails.
pub const DRIVER_SILENCE: Duration = Duration::from_secs(60);

/// A peer library driven by a Java program that prints one line per step.
/// Its output is read by a thread of its own, so every read has a deadline:
/// a peer that hangs fails the test instead of hanging it.
pub struct Driver {
    child: Child,
    /// What the test tells the driver (`say`), one line per step.
    stdin: Option<std::process::ChildStdin>,
    lines: tokio::sync::mpsc::UnboundedReceiver<std::io::Result<String>>,
}

impl Driver {
    /// `java -cp <classpath> <source> <args>`: a single-file Java program of the workspace.
    pub fn spawn(classpath: &str, source: &str, args: &[&str]) -> Driver {
        Driver::spawn_with(classpath, source, &[], args)
    }

    /// With JVM options (`-Dzookeeper.client.secure=true`) before the program.
    pub fn spawn_with(
        classpath: &str,
        source: &str,
        jvm_options: &[String],
        args: &[&str],
    ) -> Driver {
        let source = zk_harness::workspace_root().join(source);
        let mut child = Command::new("java")
            .args(jvm_options)
            .arg("-cp")
            .arg(classpath)
            .arg(source)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("java");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        Driver {
            child,
            stdin,
            lines,
        }
    }

    /// Sends the driver one line on its standard input (a step it waits for).
    pub fn say(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("the driver's stdin");
        writeln!(stdin, "{line}").expect("writing to the driver");
        stdin.flush().expect("writing to the driver");
    }

    /// The next line, within `DRIVER_SILENCE`.
    pub async fn line(self) -> (Driver, String) {
        self.line_within(DRIVER_SILENCE).await
    }

    /// The next line, within `limit`; the driver is killed and the test fails
    /// when it stays silent or ends first.
    pub async fn line_within(mut self, limit: Duration) -> (Driver, String) {
        match tokio::time::timeout(limit, self.lines.recv()).await {
            Ok(Some(Ok(line))) => (self, line),
            Ok(Some(Err(err))) => panic!("reading the driver's output: {err}"),
            Ok(None) => panic!("driver ended early ({:?})", self.child.try_wait()),
            Err(_) => panic!("the driver printed nothing within {limit:?}"),
        }
    }

    /// A line the driver has printed already, if any: never waits.
    pub fn printed(&mut self) -> Option<String> {
        match self.lines.try_recv() {
            Ok(Ok(line)) => Some(line),
            _ => None,
        }
    }

    /// Waits (up to `DRIVER_SILENCE`) for the driver to exit with success.
    pub fn finish(mut self) {
        let deadline = std::time::Instant::now() + DRIVER_SILENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "driver failed: {status}");
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the driver did not exit within {DRIVER_SILENCE:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Driver {
    /// A failed test leaves no peer program running (holding a lock, say).
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Resolves once `check` holds, polling; fails after `timeout`.
pub async fn until<F>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> bool,
{
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < timeout, "{what}: not within {timeout:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until a session other than `ours` watches `node` (a peer's waiter
/// that queued behind it has armed its watch: it decided to wait), or the
/// driver printed a line first, which is returned: a peer that got in while
/// we held says `ACQUIRED` instead of watching. Fails after 30 s.
pub async fn peer_waits_on(driver: &mut Driver, node: &str, ours: i64) -> Option<String> {
    let ours = session_hex(ours);
    let start = Instant::now();
    loop {
        if let Some(line) = driver.printed() {
            return Some(line);
        }
        if watchers_of(server().port(), node)
            .iter()
            .any(|s| *s != ours)
        {
            return driver.printed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no peer session watches {node} within 30 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// For each item, how many later items were delivered before it; the worst.
pub fn max_overtaking(delivered: &[usize]) -> usize {
    let mut worst = 0;
    for (at, item) in delivered.iter().enumerate() {
        let overtaken = delivered[..at]
            .iter()
            .filter(|earlier| *earlier > item)
            .count();
        worst = worst.max(overtaken);
    }
    worst
}
