//! Shared by the integration tests: one real ZooKeeper per test binary (`tests/with-zk`'s, when
//! it runs them).
#![allow(dead_code)]

pub mod rolling;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::time::Instant;
use zk_harness::{FaultProxy, ZkServer};
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

/// A client through a fault proxy of its own before the test server, and the proxy: the
/// test's way to drop, cut or delay that client's connection.
pub async fn behind_proxy(session_timeout: Duration) -> (FaultProxy, Client) {
    let proxy = FaultProxy::start(server().connect_string());
    let client = client_at(&proxy.connect_string(), session_timeout).await;
    (proxy, client)
}

/// A test's usual start: a path no other test uses (of `name`), a client, and a recipe object
/// `make` makes of them.
pub async fn recipe<T>(
    name: &str,
    make: impl FnOnce(&Client, &str) -> zkrecipes::Result<T>,
) -> (String, Client, T) {
    let path = unique(name);
    let client = client().await;
    let made = make(&client, &path).expect("the recipe object");
    (path, client, made)
}

/// A maker of election members of host name `host`, for `recipe`.
pub fn election_member(
    host: &str,
) -> impl Fn(&Client, &str) -> zkrecipes::Result<zkrecipes::LeaderElectionSupport> + '_ {
    move |client, root| zkrecipes::LeaderElectionSupport::new(client, root, host)
}

/// `N` recipe objects on one fresh path (of `name`), each of a client of its own: contenders
/// as `N` processes see the path.
pub async fn recipes<T, const N: usize>(
    name: &str,
    make: impl Fn(&Client, &str) -> zkrecipes::Result<T>,
) -> (String, [(Client, T); N]) {
    let path = unique(name);
    let mut each = Vec::with_capacity(N);
    for _ in 0..N {
        let client = client().await;
        let made = make(&client, &path).expect("the recipe object");
        each.push((client, made));
    }
    let each = each.try_into().unwrap_or_else(|_| unreachable!("{N} made"));
    (path, each)
}

/// The output of `task` (a caller the test spawned) within `limit`: a deadline against a
/// hang, not a measure.
pub async fn joined<T>(task: tokio::task::JoinHandle<T>, limit: Duration, what: &str) -> T {
    tokio::time::timeout(limit, task)
        .await
        .unwrap_or_else(|_| panic!("{what}: not within {limit:?}"))
        .expect("the task ran to its end")
}

/// A lock on a fresh path (of `name`) of a client of its own, held: the path, the client, the
/// lock and the hold.
pub async fn held_lock(name: &str) -> (String, Client, zkrecipes::Lock, zkrecipes::LockGuard) {
    let (path, client, lock) = recipe(name, zkrecipes::WriteLock::new).await;
    let guard = lock.acquire().await.unwrap();
    (path, client, lock, guard)
}

/// Runs `call` on a clone of `recipe` in a task of its own: a caller that waits (or is
/// cancelled) beside the test.
pub fn spawn_on<R, F>(recipe: &R, call: impl FnOnce(R) -> F) -> tokio::task::JoinHandle<F::Output>
where
    R: Clone,
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(call(recipe.clone()))
}

/// The next event of `events` within `limit`: a deadline against a hang, not a measure.
pub async fn next_within<T: Clone>(
    events: &mut tokio::sync::broadcast::Receiver<T>,
    limit: Duration,
) -> T {
    tokio::time::timeout(limit, events.recv())
        .await
        .unwrap_or_else(|_| panic!("no event within {limit:?}"))
        .expect("the events go on")
}

/// A hold of `lock`, and the lock's events from its `ACQUIRED` (asserted) on.
pub async fn held_with_events(
    lock: &zkrecipes::Lock,
) -> (
    zkrecipes::LockGuard,
    tokio::sync::broadcast::Receiver<zkrecipes::LockEvent>,
) {
    let mut events = lock.subscribe();
    let guard = lock.acquire().await.unwrap();
    assert!(matches!(
        events.recv().await.unwrap(),
        zkrecipes::LockEvent::Acquired { .. }
    ));
    (guard, events)
}

/// A hold of `lock` that must be granted within `limit` (`why`: what frees it by then).
pub async fn acquired_within(
    lock: &zkrecipes::Lock,
    limit: Duration,
    why: &str,
) -> zkrecipes::LockGuard {
    let acquired = lock.acquire_timeout(limit).await.unwrap();
    acquired.unwrap_or_else(|| panic!("not acquired within {limit:?}: {why}"))
}

/// The ids of a latch's participants, in line order.
pub async fn latch_ids(latch: &zkrecipes::LeaderLatch) -> Vec<String> {
    let participants = latch.participants().await.unwrap();
    participants.into_iter().map(|p| p.id).collect()
}

/// Resolves once the session `session` (a client's id) watches `node` on the test server:
/// a waiter there has decided to wait. Fails after 20 s.
pub async fn until_watched_by(what: &str, node: &str, session: i64) {
    let (port, session) = (server().port(), session_hex(session));
    until(what, Duration::from_secs(20), || {
        watchers_of(port, node).contains(&session)
    })
    .await;
}

/// Resolves once some session watches `node` on the test server. Fails after 20 s.
pub async fn until_watched(what: &str, node: &str) {
    let port = server().port();
    until(what, Duration::from_secs(20), || {
        !watchers_of(port, node).is_empty()
    })
    .await;
}

/// Resolves once `states` (a client's, subscribed before the cause) tells `state`; fails after
/// 30 s.
pub async fn until_told(
    states: &mut tokio::sync::broadcast::Receiver<zkrecipes::ConnectionState>,
    state: zkrecipes::ConnectionState,
) {
    while next_within(states, Duration::from_secs(30)).await != state {}
}

/// The children of `dir` on the test server (through the observer session).
pub async fn children_of(dir: &str) -> Vec<String> {
    children(server().connect_string(), dir).await
}

/// Resolves once `dir` has `count` children on the test server; fails after `limit`.
pub async fn until_child_count(what: &str, dir: &str, count: usize, limit: Duration) {
    eventually(what, limit, || async {
        children_of(dir).await.len() == count
    })
    .await;
}

/// Persistent and open to anyone: nodes the tests make as another library or an operator would.
pub fn open_persistent() -> zookeeper_client::CreateOptions<'static> {
    zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_all())
}

/// A fresh path (of `name`) whose parent exists: `zk` made it unless it was there.
pub async fn with_parent(zk: &zookeeper_client::Client, name: &str) -> String {
    let path = unique(name);
    let parent = path.rsplit_once('/').unwrap().0;
    zk.create(parent, &[], &open_persistent()).await.ok();
    path
}

/// A fresh node (of `name`, persistent and empty) made by a raw session, as another library or
/// an operator makes one; and the session.
pub async fn made_by_raw(name: &str) -> (String, zookeeper_client::Client) {
    let path = unique(name);
    let raw = raw().await;
    raw.mkdir(&path, &open_persistent()).await.unwrap();
    (path, raw)
}

/// A fresh directory (of `name`) made by a raw session, holding `children` (name, data) of
/// another library: a recipe must pass over them. The directory, and the raw session.
pub async fn foreign_dir(
    name: &str,
    children: &[(&str, &[u8])],
) -> (String, zookeeper_client::Client) {
    let (dir, raw) = made_by_raw(name).await;
    for (child, data) in children {
        let path = format!("{dir}/{child}");
        raw.create(&path, data, &open_persistent()).await.unwrap();
    }
    (dir, raw)
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

/// Offers the items `numbers`, each its number (zero-padded: they sort as they count).
pub async fn offer_numbered(queue: &zkrecipes::DistributedQueue, numbers: std::ops::Range<usize>) {
    for i in numbers {
        queue.offer(format!("{i:05}").as_bytes()).await.unwrap();
    }
}

/// A queue on a fresh path (of `name`) holding the items `0..items` (`offer_numbered`), with
/// its path and client.
pub async fn numbered_queue(
    name: &str,
    items: usize,
) -> (String, Client, zkrecipes::DistributedQueue) {
    let (path, client, queue) = recipe(name, zkrecipes::DistributedQueue::new).await;
    offer_numbered(&queue, 0..items).await;
    (path, client, queue)
}

/// The number an item of `offer_numbered` carries.
pub fn number(item: &[u8]) -> usize {
    String::from_utf8(item.to_vec()).unwrap().parse().unwrap()
}

/// Every item of `0..items` delivered, each exactly once.
pub fn assert_each_once(delivered: &[usize], items: usize) {
    let mut sorted = delivered.to_vec();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (0..items).collect::<Vec<_>>(),
        "every item exactly once"
    );
}

/// No item was overtaken by more than `bound` later items.
pub fn assert_overtaken_at_most(delivered: &[usize], bound: usize) {
    let worst = max_overtaking(delivered);
    assert!(
        worst <= bound,
        "an item was overtaken by {worst} later items (bound {bound})"
    );
}

/// `n` items in `seen`, no two alike: nothing lost, nothing twice (`what`).
pub fn assert_n_distinct<T: std::hash::Hash + Eq>(seen: &[T], n: usize, what: &str) {
    let distinct: std::collections::HashSet<&T> = seen.iter().collect();
    assert_eq!(seen.len(), n, "{what}");
    assert_eq!(distinct.len(), n, "{what}");
}

/// `count` consumers of the queue on `dir`, each of a client of its own, in a task of its
/// own: `consume` (given the queue object and the consumer's number) returns what it took.
/// What they took, once `gathered`.
pub async fn spawn_consumers<T, F>(
    dir: &str,
    count: usize,
    consume: impl Fn(zkrecipes::DistributedQueue, usize) -> F,
) -> Vec<tokio::task::JoinHandle<Vec<T>>>
where
    T: Send + 'static,
    F: std::future::Future<Output = Vec<T>> + Send + 'static,
{
    let mut consumers = Vec::new();
    for which in 0..count {
        let c = client().await;
        let taking = consume(zkrecipes::DistributedQueue::new(&c, dir).unwrap(), which);
        consumers.push(tokio::spawn(async move {
            let took = taking.await;
            c.close().await;
            took
        }));
    }
    consumers
}

/// Everything the tasks returned, once each has.
pub async fn gathered<T>(tasks: Vec<tokio::task::JoinHandle<Vec<T>>>) -> Vec<T> {
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all
}

/// A queue crossing over with another library's: its items `<theirs>-0` to `-24` are polled
/// from `queue` in order, then ours (`ours-0` to `-24`) offered for it to drain.
pub async fn poll_theirs_and_offer_ours(queue: &zkrecipes::DistributedQueue, theirs: &str) {
    for i in 0..25 {
        assert_eq!(
            queue.poll().await.unwrap().unwrap(),
            format!("{theirs}-{i}").as_bytes()
        );
    }
    for i in 0..25 {
        queue.offer(format!("ours-{i}").as_bytes()).await.unwrap();
    }
}

/// A maker of semaphores of `max_leases`, for `recipe`.
pub fn semaphore_of(
    max_leases: u32,
) -> impl Fn(&Client, &str) -> zkrecipes::Result<zkrecipes::Semaphore> {
    move |client, path| zkrecipes::Semaphore::new(client, path, max_leases)
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

/// Runs `call` cut short after `cut`, with the next `request` of `c` lost with its connection
/// (the call sends one, cut short or not); returns once `c` is back on its session.
pub async fn cut_short_across_a_loss(
    proxy: &zk_harness::FaultProxy,
    c: &zkrecipes::Client,
    request: zk_harness::Request,
    cut: Duration,
    call: impl std::future::Future,
) {
    let mut states = c.subscribe();
    proxy.cut_at_request(
        request,
        zk_harness::Cut::Before,
        zk_harness::Then::Reconnect,
    );
    let _ = tokio::time::timeout(cut, call).await;
    until_told(&mut states, zkrecipes::ConnectionState::Reconnected).await;
}
