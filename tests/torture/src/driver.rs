//! One seed from start to verdict: ZooKeeper (standalone or a 3-node
//! ensemble), the resource, worker processes behind their own proxies, a
//! chaos phase with faults, a calm phase (no faults, no cancelled takes),
//! finish, the driver's own drain of the queue, the orphan scan, the checks.

use std::net::ToSocketAddrs;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;
use zk_harness::secure::Certs;
use zk_harness::{Ensemble, ZkServer};

use crate::checks::{self, Facts};
use crate::faults::Faults;
use crate::resource::{self, Ev, History};
use crate::secure::Secure;
use crate::workers::{Spec, Workers};
use crate::{report, sweep};

/// Workers' session timeout: short, so that a blackhole or a pause outlives
/// it within a short seed.
const SESSION: Duration = Duration::from_secs(3);
/// How long a worker may take to exit after `finish`.
const FINISH_GRACE: Duration = Duration::from_secs(30);

#[derive(Clone)]
pub struct Plan {
    pub seconds: f64,
    pub processes: usize,
    pub ensemble: bool,
    /// The ensemble requires TLS with a client certificate and a SASL login (`secure.rs`).
    pub secure: bool,
    /// The zkrecipes JAR: one worker slot (the last) is then a Java worker.
    pub java_jar: Option<PathBuf>,
}

impl Plan {
    fn replay(&self, seed: u64) -> String {
        let skip = std::env::var("ZK_TORTURE_SKIP")
            .map(|s| format!("ZK_TORTURE_SKIP={s} "))
            .unwrap_or_default();
        let java = self
            .java_jar
            .as_ref()
            .map(|jar| format!(" --java-jar {}", jar.display()))
            .unwrap_or_default();
        format!(
            "{skip}zk-torture run --seed {seed} --seconds {} --processes {}{}{}{java}",
            self.seconds,
            self.processes,
            if self.ensemble { " --ensemble" } else { "" },
            if self.secure { " --secure" } else { "" }
        )
    }
}

/// The servers of a run, started once and shared by its seeds.
pub struct Cluster {
    _standalone: Option<ZkServer>,
    ensemble: Option<Arc<Mutex<Ensemble>>>,
    /// Direct connect string (for the driver's own clients).
    connect: String,
    /// `ip:port` of every server (the proxies' targets), and the chroot.
    servers: Vec<String>,
    chroot: String,
    /// How every client connects to a secured ensemble (`--secure`).
    secure: Option<Secure>,
    _certs: Option<CertsDir>,
}

/// The secured variant's test certificates, deleted with the cluster.
struct CertsDir(Certs);

impl Drop for CertsDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0.dir);
    }
}

impl Cluster {
    fn start(ensemble: bool, secure: bool) -> Cluster {
        let certs = secure.then(|| {
            let dir = zk_harness::workspace_root()
                .join("target/torture-certs")
                .join(std::process::id().to_string());
            CertsDir(Certs::generate(&dir))
        });
        let (standalone, ensemble, connect) = if let Some(certs) = &certs {
            // TLS clients only: the servers' certificate names `localhost`, which the TLS
            // connect string and (through the proxies) the workers' connect strings use.
            let e = Ensemble::start_tls_sasl(3, &certs.0);
            let connect = e.tls_connect_string();
            (None, Some(Arc::new(Mutex::new(e))), connect)
        } else if ensemble {
            let e = Ensemble::start(3);
            let connect = e.connect_string();
            (None, Some(Arc::new(Mutex::new(e))), connect)
        } else {
            let server = ZkServer::start();
            let connect = server.connect_string().to_string();
            (Some(server), None, connect)
        };
        let (hosts, chroot) = match connect.find('/') {
            Some(at) => (&connect[..at], connect[at..].to_string()),
            None => (connect.as_str(), String::new()),
        };
        // The proxy needs an address, ZK_CONNECT may name hosts.
        let servers = hosts
            .split(',')
            .filter_map(|h| h.to_socket_addrs().ok()?.find(|a| a.is_ipv4()))
            .map(|a| a.to_string())
            .collect();
        Cluster {
            _standalone: standalone,
            ensemble,
            connect,
            servers,
            chroot,
            secure: certs.as_ref().map(|c| Secure::new(&c.0.dir)),
            _certs: certs,
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// `run`: the given seeds on one cluster; exit code 1 if any failed.
pub fn run_seeds(seeds: &[u64], plan: &Plan) -> i32 {
    let cluster = Cluster::start(plan.ensemble, plan.secure);
    let rt = runtime();
    let failed: Vec<u64> = seeds
        .iter()
        .copied()
        .filter(|seed| !rt.block_on(run_seed(*seed, plan, &cluster)))
        .collect();
    if failed.is_empty() {
        return 0;
    }
    for seed in &failed {
        println!("failed: {}", plan.replay(*seed));
    }
    1
}

/// `loop`: fresh seeds until `duration` has passed (every third on a
/// 3-node ensemble, every one with `--secure`); exit code 1 if any failed.
pub fn run_loop(duration: Duration, plan: &Plan) -> i32 {
    let started = std::time::Instant::now();
    let rt = runtime();
    let (mut standalone, mut ensemble) = (None, None);
    let mut rng = fastrand::Rng::with_seed(nanos() ^ u64::from(std::process::id()));
    let mut failed = Vec::new();
    let mut n = 0;
    while started.elapsed() < duration {
        let seed = rng.u64(1..1_000_000_000);
        let plan = Plan {
            ensemble: plan.secure || n % 3 == 2,
            ..plan.clone()
        };
        let cluster = if plan.ensemble {
            ensemble.get_or_insert_with(|| Cluster::start(true, plan.secure))
        } else {
            standalone.get_or_insert_with(|| Cluster::start(false, false))
        };
        if !rt.block_on(run_seed(seed, &plan, cluster)) {
            failed.push(plan.replay(seed));
        }
        n += 1;
    }
    println!(
        "loop: {n} seeds in {:.1} min, {} failed",
        started.elapsed().as_secs_f64() / 60.0,
        failed.len()
    );
    for replay in &failed {
        println!("failed: {replay}");
    }
    i32::from(!failed.is_empty())
}

fn nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Runs one seed and prints its verdict; `true` if it passed.
async fn run_seed(seed: u64, plan: &Plan, cluster: &Cluster) -> bool {
    println!("seed {seed}");
    println!("replay: {}", plan.replay(seed));
    let started = Instant::now();
    let history = History::default();
    let (resource, server) = match resource::serve(history.clone()).await {
        Ok(served) => served,
        Err(err) => return verdict_error(seed, &format!("cannot serve the resource: {err}")),
    };
    let root = format!(
        "/torture/s{seed}-{}-{}",
        std::process::id(),
        nanos() % 1_000_000
    );
    let shape = Shape::of(seed, plan);
    let logs = zk_harness::workspace_root()
        .join("target/torture-logs")
        .join(format!("seed-{seed}"));
    let spec = Spec {
        seed,
        resource,
        root: root.clone(),
        session: SESSION,
        logs: logs.clone(),
        servers: cluster.servers.clone(),
        chroot: cluster.chroot.clone(),
        java_jar: plan.java_jar.clone(),
        sem_leases: shape.sem_leases,
        dbarrier_members: shape.dbarrier_members,
        secure: cluster.secure.clone(),
    };
    let workers = match Workers::start(spec, plan.processes, history.clone()) {
        Ok(workers) => workers,
        Err(err) => return verdict_error(seed, &format!("cannot start workers: {err}")),
    };
    let reaper = {
        let workers = workers.clone();
        tokio::spawn(async move {
            loop {
                workers.reap_unexpected();
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        })
    };
    wait_ready(&history, plan.processes).await;

    let mut rng = fastrand::Rng::with_seed(seed);
    let total = Duration::from_secs_f64(plan.seconds);
    // The calm phase outlasts the liveness bound, so that the last faults' failovers are judged.
    let calm = (checks::liveness_limit(SESSION) + Duration::from_secs(1)).max(total / 4);
    let chaos = total.saturating_sub(calm).max(Duration::from_secs(1));
    history.note(Ev::Phase("chaos"));
    let faults = Faults {
        history: history.clone(),
        workers: workers.clone(),
        ensemble: cluster.ensemble.clone(),
        session: SESSION,
        // The proxies follow ZooKeeper's framing, which TLS hides: no cut at a request.
        framed: cluster.secure.is_none(),
    };
    let fault_counts = faults.run(&mut rng, Instant::now() + chaos).await;

    // Workers learn `calm` within a moment: only items offered after that
    // moment are judged for order.
    workers.tell("calm");
    tokio::time::sleep(Duration::from_millis(500)).await;
    history.note(Ev::Phase("calm"));
    tokio::time::sleep(calm).await;

    history.note(Ev::Phase("finish"));
    reaper.abort();
    let (hung, failed_exits) = workers.finish(FINISH_GRACE).await;
    let end = std::time::Instant::now();
    workers.remove_java_tmp();
    workers.stop_proxies();
    let zk = sweep::Target {
        connect: &cluster.connect,
        secure: cluster.secure.as_ref(),
    };
    let (drained, drain_error) = sweep::drain(&zk, &format!("{root}/queue")).await;
    let orphans = sweep::orphans(&zk, &root, SESSION).await;
    let work = sweep::work_state(&zk, &format!("{root}/work")).await;
    let mut counters = Vec::new();
    for node in crate::ops::counter::NODES {
        let value = sweep::counter_value(&zk, &format!("{root}/{node}")).await;
        counters.push((node, value));
    }
    sweep::cleanup(&zk, &root).await;
    server.abort();

    let records = history.records();
    let facts = Facts {
        session: SESSION,
        started: started.into_std(),
        end,
        drained,
        orphans,
        hung,
        failed_exits,
        consumers: plan.processes * crate::ops::queue::CONSUMERS,
        work,
        counters,
        sem_leases: shape.sem_leases,
        dbarrier_members: shape.dbarrier_members,
        secure: plan.secure,
    };
    let checks = checks::judge(&records, &facts);
    let pass = report::report(
        seed,
        &records,
        &checks,
        &fault_counts,
        drain_error,
        &history,
        started,
    );
    if pass {
        let _ = std::fs::remove_dir_all(&logs);
    } else {
        report::dump(&logs, &records, &facts);
        println!("worker logs and history: {}", logs.display());
        for name in crashed(&records) {
            println!(
                "--- {name} (tail of its log)\n{}",
                workers.log_tail(&name, 20)
            );
        }
    }
    pass
}

/// What the Rust workers of a seed agree on without talking: the semaphore's
/// `max_leases` (2 or 3) and the double barrier's `member_count` (2 up to the
/// number of Rust workers; 1 if there is only one). Drawn from a generator of
/// its own, so that the fault schedule does not depend on it.
struct Shape {
    sem_leases: u32,
    dbarrier_members: u32,
}

impl Shape {
    fn of(seed: u64, plan: &Plan) -> Shape {
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x5e3a_f0c1_d2b4_9e77);
        let rust = plan.processes - usize::from(plan.java_jar.is_some() && plan.processes > 0);
        let rust = u32::try_from(rust).unwrap_or(u32::MAX);
        Shape {
            sem_leases: rng.u32(2..=3),
            dbarrier_members: if rust >= 2 {
                rng.u32(2..=rust.min(3))
            } else {
                1
            },
        }
    }
}

/// Waits until every first-generation worker said READY (a fault-free start).
async fn wait_ready(history: &History, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while history.ready().len() < count && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn crashed(records: &[resource::Record]) -> Vec<String> {
    records
        .iter()
        .filter_map(|r| match &r.ev {
            Ev::Exited { w, .. } => Some(w.clone()),
            _ => None,
        })
        .collect()
}

fn verdict_error(seed: u64, why: &str) -> bool {
    println!("FAIL seed {seed}: {why}");
    false
}
