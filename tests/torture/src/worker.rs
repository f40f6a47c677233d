//! One worker process: a client behind its own fault proxy, the shared recipe
//! objects, and tasks drawing random operations from the worker's seed.
//!
//! Lines on standard input steer it: `calm` (no more cancelled takes, so the
//! queue order bound can be judged), `finish` (or end of input): every task
//! ends its current operation, releases, and the process closes its client
//! and exits. The driver judges a worker that does not exit in time as hung.

use std::collections::BTreeMap;
use std::future::Future;
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;
use tokio::time::Instant;
use zkrecipes::{
    Client, ClientOptions, DistributedQueue, Error, ErrorCode, Lock, Owner, ReadWriteLock,
    Semaphore, WriteLock,
};

use crate::ops;
use crate::resource::Link;
use crate::secure::Secure;

/// A call that should answer within its own bound and has not answered this
/// much later is reported as hung (the driver excuses it during faults).
pub const HANG: Duration = Duration::from_secs(10);

pub struct Args {
    pub name: String,
    pub seed: u64,
    pub connect: String,
    pub resource: String,
    pub root: String,
    pub session: Duration,
    /// The semaphore's `max_leases`, the same in every worker of the seed.
    pub sem_leases: u32,
    /// The double barrier's `member_count`, the same in every worker of the seed.
    pub dbarrier_members: u32,
    /// TLS with the client certificate and a SASL login (`--tls-dir`, `--sasl`).
    pub secure: Option<Secure>,
}

/// What every task of the worker shares.
pub struct Ctx {
    pub name: String,
    pub client: Client,
    pub resource: String,
    pub root: String,
    /// About one round trip to ZooKeeper, for timeouts "of a few RTTs".
    pub rtt: Duration,
    pub stats: Stats,
    finish: AtomicBool,
    calm: AtomicBool,
    /// Bumped on every SUSPENDED or LOST a recipe tells us: a hold taken
    /// before the bump must not be written under any more.
    epoch: AtomicU64,
    next_owner: AtomicU64,
    alarms: mpsc::UnboundedSender<String>,
    /// Operations left out (`ZK_TORTURE_SKIP`), to look past a known bug.
    skip: Vec<String>,
    /// Stretches in which this process did not run (SIGSTOP), as the pause
    /// detector saw them: (last tick before, first tick after).
    pauses: std::sync::Mutex<Vec<(std::time::Instant, std::time::Instant)>>,
    /// Sessions this worker's client learnt it lost (`LOST`): an ack that
    /// succeeds after one since its delivery is a violation.
    pub sessions_lost: AtomicU64,
    /// The double barrier's `member_count`.
    pub dbarrier_members: u32,
    /// How the worker's own raw sessions (the cache writers') connect on a secured ensemble.
    pub secure: Option<Secure>,
}

impl Ctx {
    pub fn finishing(&self) -> bool {
        self.finish.load(Ordering::SeqCst)
    }

    pub fn calm(&self) -> bool {
        self.calm.load(Ordering::SeqCst)
    }

    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    pub fn disturb(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Whether a hold taken at `epoch` may still be written under: no
    /// recipe said SUSPENDED or LOST since. Only what the recipes tell counts
    /// (not the client's own state): a lock that fails to tell its holder is
    /// exactly what the checks are after.
    pub fn steady(&self, epoch: u64) -> bool {
        self.epoch() == epoch
    }

    /// A fresh owner identity (several tasks share one lock object).
    pub fn owner(&self) -> Owner {
        Owner(self.next_owner.fetch_add(1, Ordering::SeqCst))
    }

    /// Sends a line on the worker's alarm link (order does not matter for it).
    pub fn alarm(&self, line: String) {
        let _ = self.alarms.send(line);
    }

    pub fn skips(&self, op: &str) -> bool {
        self.skip.iter().any(|s| s == op)
    }

    /// The longest stretch this process was frozen that began after `since`.
    pub fn paused_since(&self, since: std::time::Instant) -> Option<Duration> {
        let pauses = self.pauses.lock().unwrap();
        pauses
            .iter()
            .filter(|(before, _)| *before >= since)
            .map(|(before, after)| *after - *before)
            .max()
    }

    pub fn violation(&self, text: String) {
        self.stats.bump("violations");
        self.alarm(format!("VIOLATION {} {text}", self.name));
    }

    /// Counts an error of `op` by its code.
    pub fn error(&self, op: &str, err: &Error) {
        self.stats.bump(format!("err.{op}.{}", err.code()));
    }

    /// A recipe object a task cannot go on without: making one only checks its path, so a
    /// failure is a violation, reported as `<what> failed`.
    pub fn made<T>(&self, what: &str, made: zkrecipes::Result<T>) -> Option<T> {
        made.map_err(|err| self.violation(format!("{what} failed: {err}")))
            .ok()
    }

    /// A path of this run's tree.
    pub fn dir(&self, name: &str) -> String {
        format!("{}/{name}", self.root)
    }
}

/// Counters by name, reported to the driver at exit.
#[derive(Default)]
pub struct Stats(Mutex<BTreeMap<String, u64>>);

impl Stats {
    pub fn bump(&self, key: impl Into<String>) {
        *self.0.lock().unwrap().entry(key.into()).or_insert(0) += 1;
    }

    fn line(&self) -> String {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Awaits `fut`; if it has not answered `budget + HANG` later, reports a
/// hang once and keeps waiting (the call is not cancelled by the watch).
pub async fn watched<T>(
    ctx: &Ctx,
    what: &str,
    budget: Duration,
    fut: impl Future<Output = T>,
) -> T {
    let started = Instant::now();
    let mut fut = std::pin::pin!(fut);
    tokio::select! {
        out = &mut fut => return out,
        _ = tokio::time::sleep(budget + HANG) => {}
    }
    let ms = started.elapsed().as_millis();
    ctx.stats.bump("hangs");
    // The client's state and session at the moment, for the history: a stall is judged
    // after the run, from this line alone (issue 47's poll_many stall did not replay).
    ctx.alarm(format!(
        "HANG {} {ms} {what} (client {:?}, session {:#x})",
        ctx.name,
        ctx.client.state(),
        ctx.client.session_id().unwrap_or(0)
    ));
    fut.await
}

/// Spawns `count` tasks of a kind, each given its number and a seed drawn in turn.
fn spawn_tasks<F>(
    tasks: &mut tokio::task::JoinSet<()>,
    rng: &mut fastrand::Rng,
    count: usize,
    task: impl Fn(usize, u64) -> F,
) where
    F: Future<Output = ()> + Send + 'static,
{
    for n in 0..count {
        tasks.spawn(task(n, rng.u64(..)));
    }
}

/// Microseconds of the wall clock: comparable across the worker processes.
pub fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

pub fn main(args: Args) -> ! {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let code = runtime.block_on(run(args));
    std::process::exit(code);
}

async fn run(args: Args) -> i32 {
    let mut link = Link::connect(&args.resource).await;
    link.ask(format!("HELLO {} {}", args.name, std::process::id()))
        .await;
    let (finish_tx, calm_tx) = steering();
    let client = match connect(&args, &finish_tx).await {
        Some(client) => client,
        None => {
            link.ask(format!("BYE {} not_connected=1", args.name)).await;
            return 0;
        }
    };
    let (alarms, mut alarm_rx) = mpsc::unbounded_channel::<String>();
    let mut alarm_link = Link::connect(&args.resource).await;
    let reporter = tokio::spawn(async move {
        while let Some(line) = alarm_rx.recv().await {
            if line == FLUSH {
                break;
            }
            alarm_link.ask(line).await;
        }
    });
    let mut ctx = Ctx {
        name: args.name.clone(),
        client: client.clone(),
        resource: args.resource.clone(),
        root: args.root.clone(),
        rtt: Duration::from_millis(1),
        stats: Stats::default(),
        finish: AtomicBool::new(false),
        calm: AtomicBool::new(false),
        epoch: AtomicU64::new(0),
        next_owner: AtomicU64::new(1),
        alarms,
        skip: std::env::var("ZK_TORTURE_SKIP")
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        pauses: Default::default(),
        sessions_lost: AtomicU64::new(0),
        dbarrier_members: args.dbarrier_members,
        secure: args.secure.clone(),
    };
    let shared = Shared::new(&ctx, args.sem_leases).unwrap_or_else(|err| {
        eprintln!("{}: cannot create the recipe objects: {err}", ctx.name);
        std::process::exit(4)
    });
    ctx.rtt = measure_rtt(&shared.queue).await;
    let ctx = Arc::new(ctx);
    detect_pauses(ctx.clone());
    forward(&finish_tx, &calm_tx, &ctx);
    let mut rng = fastrand::Rng::with_seed(args.seed);
    let listeners = vec![
        listen_client(ctx.clone()),
        ops::listen_lock(ctx.clone(), shared.lock.clone(), "lock"),
        ops::listen_lock(ctx.clone(), shared.rw.read_lock().clone(), "read"),
        ops::listen_lock(ctx.clone(), shared.rw.write_lock().clone(), "write"),
        ops::semaphore::listen(ctx.clone(), shared.sem.clone(), "sem"),
    ];
    link.ask(format!("READY {} {}", args.name, std::process::id()))
        .await;
    let mut tasks = tokio::task::JoinSet::new();
    // Seeds are drawn in this order: a worker's seed replays its tasks.
    spawn_tasks(&mut tasks, &mut rng, 3, |task, seed| {
        ops::lock::run(ctx.clone(), task, seed, shared.lock.clone())
    });
    spawn_tasks(&mut tasks, &mut rng, 2, |task, seed| {
        ops::rw::run(ctx.clone(), task, seed, shared.rw.clone())
    });
    spawn_tasks(&mut tasks, &mut rng, ops::queue::CONSUMERS, |task, seed| {
        ops::queue::consume(ctx.clone(), task, seed, shared.queue.clone())
    });
    tasks.spawn(ops::queue::produce(ctx.clone(), rng.u64(..)));
    let work = ops::work_queue::shared(&ctx, &mut rng).unwrap_or_else(|err| {
        eprintln!("{}: cannot create the work queue: {err}", ctx.name);
        std::process::exit(4)
    });
    spawn_tasks(
        &mut tasks,
        &mut rng,
        ops::work_queue::CONSUMERS,
        |task, seed| ops::work_queue::consume(ctx.clone(), task, seed, work.clone()),
    );
    tasks.spawn(ops::work_queue::produce(ctx.clone(), rng.u64(..)));
    tasks.spawn(ops::election::run(ctx.clone(), rng.u64(..)));
    spawn_tasks(&mut tasks, &mut rng, ops::semaphore::TASKS, |task, seed| {
        ops::semaphore::run(ctx.clone(), task, seed, shared.sem.clone())
    });
    tasks.spawn(ops::latch::run(ctx.clone(), rng.u64(..)));
    spawn_tasks(&mut tasks, &mut rng, ops::barrier::TASKS, |_, seed| {
        ops::barrier::run_barrier(ctx.clone(), seed)
    });
    tasks.spawn(ops::barrier::run_double(ctx.clone(), rng.u64(..)));
    tasks.spawn(ops::counter::run(ctx.clone(), rng.u64(..)));
    tasks.spawn(ops::cache::run(ctx.clone(), rng.u64(..)));
    tasks.spawn(ops::discovery::run(ctx.clone(), rng.u64(..)));
    while tasks.join_next().await.is_some() {}
    // Every hold was released or dropped: no object may still report one.
    tokio::join!(
        ops::lock::expect_no_holds(&ctx, &shared.lock, "shared lock"),
        ops::lock::expect_no_holds(&ctx, shared.rw.read_lock(), "shared rw read"),
        ops::lock::expect_no_holds(&ctx, shared.rw.write_lock(), "shared rw write"),
        ops::semaphore::expect_no_leases(&ctx, &shared.sem, "shared sem"),
    );
    for listener in listeners {
        listener.abort();
    }
    // Background work of the library (a give-back after a cancelled take, the
    // release of a dropped guard) gets a moment before the session ends.
    tokio::time::sleep(Duration::from_millis(300)).await;
    client.close().await;
    // Alarms are sent in order: once the reporter reads this, all are out.
    ctx.alarm(FLUSH.to_string());
    let _ = tokio::time::timeout(Duration::from_secs(5), reporter).await;
    link.ask(format!("BYE {} {}", ctx.name, ctx.stats.line()))
        .await;
    0
}

const FLUSH: &str = "\u{0}flush";

/// Reports the client's own states (`CLIENT <w> LOST` …): a session lost
/// while a dropped take's claim was under way may have taken its item along
/// (documented), which the queue check must know.
fn listen_client(ctx: Arc<Ctx>) -> tokio::task::JoinHandle<()> {
    let mut states = ctx.client.subscribe();
    tokio::spawn(async move {
        let mut link = Link::connect(&ctx.resource).await;
        loop {
            match states.recv().await {
                Ok(state) => {
                    if state == zkrecipes::ConnectionState::Lost {
                        ctx.sessions_lost.fetch_add(1, Ordering::SeqCst);
                    }
                    ctx.stats.bump(format!("event.client.{}", state.as_str()));
                    link.ask(format!("CLIENT {} {}", ctx.name, state.as_str()))
                        .await;
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(_) => return,
            }
        }
    })
}

/// The objects every task of one kind shares.
struct Shared {
    lock: Lock,
    rw: ReadWriteLock,
    queue: DistributedQueue,
    sem: Semaphore,
}

impl Shared {
    fn new(ctx: &Ctx, sem_leases: u32) -> zkrecipes::Result<Shared> {
        Ok(Shared {
            lock: WriteLock::new(&ctx.client, &ctx.dir("lock"))?,
            rw: ReadWriteLock::new(&ctx.client, &ctx.dir("rw"))?,
            queue: DistributedQueue::new(&ctx.client, &ctx.dir("queue"))?,
            sem: ops::semaphore::open(ctx, sem_leases)?,
        })
    }
}

/// Connects through the proxy; a fault may be under way, so it keeps trying
/// until connected or told to finish.
async fn connect(args: &Args, finish: &Arc<AtomicBool>) -> Option<Client> {
    let mut options = ClientOptions {
        session_timeout: args.session,
        connect_timeout: Duration::from_secs(10),
        identity: Some(args.name.clone()),
        ..Default::default()
    };
    if let Some(secure) = &args.secure {
        options = secure.options(options);
    }
    loop {
        match Client::connect(&args.connect, options.clone()).await {
            Ok(client) => return Some(client),
            Err(err) if finish.load(Ordering::SeqCst) => {
                eprintln!("{}: not connected before finish: {err}", args.name);
                return None;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// Reads `calm` / `finish` from standard input on a thread of its own.
fn steering() -> (Arc<AtomicBool>, Arc<AtomicBool>) {
    let finish = Arc::new(AtomicBool::new(false));
    let calm = Arc::new(AtomicBool::new(false));
    let (f, c) = (finish.clone(), calm.clone());
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line.as_deref().map(str::trim) {
                Ok("calm") => c.store(true, Ordering::SeqCst),
                Ok("finish") | Err(_) => break,
                Ok(_) => {}
            }
        }
        f.store(true, Ordering::SeqCst);
    });
    (finish, calm)
}

/// Mirrors the steering flags into the context (they were set up before it).
fn forward(finish: &Arc<AtomicBool>, calm: &Arc<AtomicBool>, ctx: &Arc<Ctx>) {
    let (finish, calm, ctx) = (finish.clone(), calm.clone(), ctx.clone());
    tokio::spawn(async move {
        loop {
            ctx.calm
                .store(calm.load(Ordering::SeqCst), Ordering::SeqCst);
            if finish.load(Ordering::SeqCst) {
                ctx.finish.store(true, Ordering::SeqCst);
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

/// The median of a few one-request calls.
async fn measure_rtt(queue: &DistributedQueue) -> Duration {
    let mut samples = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        if queue.size().await.is_ok() {
            samples.push(started.elapsed());
        }
    }
    samples.sort();
    samples
        .get(samples.len() / 2)
        .copied()
        .unwrap_or(Duration::from_millis(1))
        .max(Duration::from_micros(50))
}

/// Whether `err` is the code a bounded call must never answer.
pub fn is_timeout(err: &Error) -> bool {
    err.code() == ErrorCode::Timeout
}

/// Notices that the whole process was frozen (SIGSTOP, a long GC-like
/// stall): a tick that comes far later than asked for. A thread of its own,
/// so that a busy runtime is not mistaken for a pause.
fn detect_pauses(ctx: Arc<Ctx>) {
    std::thread::spawn(move || {
        let tick = Duration::from_millis(50);
        let mut last = std::time::Instant::now();
        loop {
            std::thread::sleep(tick);
            let now = std::time::Instant::now();
            if now - last > Duration::from_millis(500) {
                ctx.pauses.lock().unwrap().push((last, now));
            }
            last = now;
        }
    });
}
