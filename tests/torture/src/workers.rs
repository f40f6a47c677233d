//! The worker processes of one seed, seen from the driver: each slot has its
//! own fault proxies (one per ZooKeeper server), so a fault hits one process.
//! Pauses, kills and replacements are recorded in the history the moment
//! they take effect.
//!
//! With a zkrecipes JAR (`--java-jar`), the last slot runs the Java worker
//! (`JavaWorker.java` under Java's source launcher) instead of this binary,
//! its replacements too; it is named `j<slot>` instead of `w<slot>`.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zk_harness::FaultProxy;

use crate::resource::{Ev, History};
use crate::secure::Secure;

/// How to start a worker of this seed.
pub struct Spec {
    pub seed: u64,
    pub resource: String,
    pub root: String,
    pub session: Duration,
    pub logs: PathBuf,
    /// Proxy targets: every server's `ip:port`, and the chroot if any.
    pub servers: Vec<String>,
    pub chroot: String,
    /// The zkrecipes JAR of the Java worker slot, if any.
    pub java_jar: Option<PathBuf>,
    /// The semaphore's `max_leases` and the double barrier's `member_count` (Rust workers).
    pub sem_leases: u32,
    pub dbarrier_members: u32,
    /// A secured ensemble: every worker connects over TLS with the client certificate and
    /// logs in with SASL, through its proxies by `localhost` (the servers' certificate name).
    pub secure: Option<Secure>,
}

impl Spec {
    /// Whether slot `index` of `count` runs the Java worker: the last one.
    fn is_java(&self, index: usize, count: usize) -> bool {
        self.java_jar.is_some() && index + 1 == count
    }

    /// How a worker names `proxy`: `127.0.0.1:<port>`, or `localhost:<port>` on a secured
    /// ensemble, so that the servers' certificate (for `localhost`) passes the name check.
    fn proxy_address(&self, proxy: &FaultProxy) -> String {
        let address = proxy.connect_string();
        match (&self.secure, address.rsplit_once(':')) {
            (Some(_), Some((_, port))) => format!("localhost:{port}"),
            _ => address,
        }
    }

    /// The Java worker's temporary files (the native library the JAR
    /// extracts), which a killed JVM cannot delete itself.
    fn java_tmp(&self) -> PathBuf {
        self.logs.join("java-tmp")
    }
}

/// The source of the Java worker, run by `java` without a build step.
const JAVA_WORKER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/JavaWorker.java");

struct Slot {
    index: usize,
    generation: u32,
    /// Runs the Java worker (and so do its replacements).
    java: bool,
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    proxies: Vec<FaultProxy>,
    connect: String,
    /// Set once it was killed or told to finish: its exit is no surprise.
    leaving: bool,
}

#[derive(Clone)]
pub struct Workers {
    slots: Arc<Mutex<Vec<Slot>>>,
    spec: Arc<Spec>,
    history: History,
}

impl Workers {
    pub fn start(spec: Spec, count: usize, history: History) -> std::io::Result<Workers> {
        std::fs::create_dir_all(&spec.logs)?;
        let workers = Workers {
            slots: Arc::new(Mutex::new(Vec::new())),
            spec: Arc::new(spec),
            history,
        };
        for index in 0..count {
            let proxies: Vec<FaultProxy> = workers
                .spec
                .servers
                .iter()
                .map(|s| FaultProxy::start(s))
                .collect();
            let connect = proxies
                .iter()
                .map(|p| workers.spec.proxy_address(p))
                .collect::<Vec<_>>()
                .join(",")
                + &workers.spec.chroot;
            let java = workers.spec.is_java(index, count);
            let name = format!("{}{index}", if java { "j" } else { "w" });
            let child = workers.spawn(&name, index, 0, &connect, java)?;
            let mut slot = Slot {
                index,
                generation: 0,
                java,
                name,
                stdin: None,
                child,
                proxies,
                connect,
                leaving: false,
            };
            slot.stdin = slot.child.stdin.take();
            workers.slots.lock().unwrap().push(slot);
        }
        Ok(workers)
    }

    fn spawn(
        &self,
        name: &str,
        index: usize,
        generation: u32,
        connect: &str,
        java: bool,
    ) -> std::io::Result<Child> {
        let spec = &self.spec;
        let seed = mix(spec.seed, index as u64, generation as u64);
        let log = File::create(spec.logs.join(format!("{name}.log")))?;
        let mut command = match (&spec.java_jar, java) {
            (Some(jar), true) => {
                let tmp = spec.java_tmp();
                std::fs::create_dir_all(&tmp)?;
                let mut command = Command::new(java_binary());
                command
                    // A small, quick JVM: 2 cores serve every process of a seed.
                    .args(["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m"])
                    .arg(format!("-Djava.io.tmpdir={}", tmp.display()))
                    .arg("-cp")
                    .arg(jar)
                    .arg(JAVA_WORKER);
                command
            }
            _ => {
                let mut command = Command::new(worker_binary()?);
                command.arg("worker");
                command
            }
        };
        if let Some(secure) = &spec.secure {
            command.args(secure.flags());
        }
        let child = command
            .args(["--name", name])
            .args(["--seed", &seed.to_string()])
            .args(["--connect", connect])
            .args(["--resource", &spec.resource])
            .args(["--root", &spec.root])
            .args(["--session-ms", &spec.session.as_millis().to_string()])
            .args(["--sem-leases", &spec.sem_leases.to_string()])
            .args(["--dbarrier-members", &spec.dbarrier_members.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()?;
        self.history.note(Ev::Spawned {
            w: name.to_string(),
        });
        Ok(child)
    }

    pub fn count(&self) -> usize {
        self.slots.lock().unwrap().len()
    }

    pub fn name(&self, slot: usize) -> String {
        self.slots.lock().unwrap()[slot].name.clone()
    }

    /// The slot of the worker called `name`, if it is still running.
    pub fn slot_of(&self, name: &str) -> Option<usize> {
        let slots = self.slots.lock().unwrap();
        slots.iter().position(|s| s.name == name)
    }

    pub fn proxies(&self, slot: usize, act: impl Fn(&FaultProxy)) {
        let slots = self.slots.lock().unwrap();
        slots[slot].proxies.iter().for_each(act);
    }

    pub fn pause(&self, slot: usize) {
        let slots = self.slots.lock().unwrap();
        let s = &slots[slot];
        signal(&s.child, libc::SIGSTOP);
        // Recorded once stopped: a section cut here began before the stop.
        self.history.note(Ev::Paused { w: s.name.clone() });
    }

    pub fn resume(&self, slot: usize) {
        let slots = self.slots.lock().unwrap();
        let s = &slots[slot];
        self.history.note(Ev::Resumed { w: s.name.clone() });
        signal(&s.child, libc::SIGCONT);
    }

    /// SIGKILL, then a replacement in the same slot (same proxies).
    pub fn kill_and_replace(&self, slot: usize) -> std::io::Result<()> {
        let mut slots = self.slots.lock().unwrap();
        let s = &mut slots[slot];
        s.leaving = true;
        let _ = s.child.kill();
        let _ = s.child.wait();
        self.history.note(Ev::Killed { w: s.name.clone() });
        self.replace(s)
    }

    fn replace(&self, s: &mut Slot) -> std::io::Result<()> {
        s.generation += 1;
        let prefix = if s.java { "j" } else { "w" };
        s.name = format!("{prefix}{}.{}", s.index, s.generation);
        s.child = self.spawn(&s.name, s.index, s.generation, &s.connect, s.java)?;
        s.stdin = s.child.stdin.take();
        s.leaving = false;
        Ok(())
    }

    /// Workers that exited on their own during the run (a crash, a panic)
    /// are recorded and replaced.
    pub fn reap_unexpected(&self) {
        let mut slots = self.slots.lock().unwrap();
        for s in slots.iter_mut() {
            if s.leaving {
                continue;
            }
            if let Ok(Some(status)) = s.child.try_wait() {
                self.history.note(Ev::Exited {
                    w: s.name.clone(),
                    status: status.to_string(),
                });
                if let Err(err) = self.replace(s) {
                    eprintln!("cannot replace {}: {err}", s.name);
                }
            }
        }
    }

    /// Tells every worker `line` on its standard input.
    pub fn tell(&self, line: &str) {
        let mut slots = self.slots.lock().unwrap();
        for s in slots.iter_mut() {
            if let Some(stdin) = s.stdin.as_mut() {
                let _ = writeln!(stdin, "{line}");
                let _ = stdin.flush();
            }
        }
    }

    /// `finish` to all, then waits up to `grace` for every exit; the names
    /// of those that did not exit (killed then) and of those that exited
    /// with a failure.
    pub async fn finish(&self, grace: Duration) -> (Vec<String>, Vec<(String, String)>) {
        {
            let mut slots = self.slots.lock().unwrap();
            for s in slots.iter_mut() {
                s.leaving = true;
                if let Some(mut stdin) = s.stdin.take() {
                    let _ = writeln!(stdin, "finish");
                }
            }
        }
        let deadline = Instant::now() + grace;
        let mut failed = Vec::new();
        loop {
            let mut running = 0;
            {
                let mut slots = self.slots.lock().unwrap();
                for s in slots.iter_mut() {
                    match s.child.try_wait() {
                        Ok(Some(status)) if !status.success() && !status_seen(&failed, &s.name) => {
                            failed.push((s.name.clone(), status.to_string()));
                        }
                        Ok(Some(_)) => {}
                        _ => running += 1,
                    }
                }
            }
            if running == 0 || Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let mut hung = Vec::new();
        let mut slots = self.slots.lock().unwrap();
        for s in slots.iter_mut() {
            if let Ok(None) = s.child.try_wait() {
                hung.push(s.name.clone());
                let _ = s.child.kill();
                let _ = s.child.wait();
                self.history.note(Ev::Killed { w: s.name.clone() });
            }
        }
        (hung, failed)
    }

    /// Drops the proxies (after every worker is gone).
    pub fn stop_proxies(&self) {
        let mut slots = self.slots.lock().unwrap();
        for s in slots.iter_mut() {
            s.proxies.clear();
        }
    }

    /// Deletes the Java workers' temporary files (after every worker is gone).
    pub fn remove_java_tmp(&self) {
        let _ = std::fs::remove_dir_all(self.spec.java_tmp());
    }

    /// The tail of a worker's log, for a failure report.
    pub fn log_tail(&self, name: &str, lines: usize) -> String {
        let text =
            std::fs::read_to_string(self.spec.logs.join(format!("{name}.log"))).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

fn status_seen(failed: &[(String, String)], name: &str) -> bool {
    failed.iter().any(|(n, _)| n == name)
}

fn signal(child: &Child, signal: libc::c_int) {
    // SAFETY: kill(2) on the pid of our own child, which has not been reaped
    // (we hold its `Child`), so the pid cannot have been reused.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
}

/// This binary, as it was when the driver started: a rebuild during a run
/// replaces the file, after which `current_exe()` names a deleted one.
pub fn worker_binary() -> std::io::Result<PathBuf> {
    static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(exe) = EXE.get() {
        return Ok(exe.clone());
    }
    let exe = std::env::current_exe()?;
    Ok(EXE.get_or_init(|| exe).clone())
}

/// `$JAVA_HOME/bin/java` if there is one, else `java` on the PATH.
fn java_binary() -> PathBuf {
    std::env::var_os("JAVA_HOME")
        .map(|home| PathBuf::from(home).join("bin/java"))
        .filter(|java| java.is_file())
        .unwrap_or_else(|| PathBuf::from("java"))
}

/// A worker's seed from the run's seed, its slot and generation.
fn mix(seed: u64, slot: u64, generation: u64) -> u64 {
    let mut rng =
        fastrand::Rng::with_seed(seed ^ (slot << 32) ^ (generation << 48) ^ 0x9e37_79b9_7f4a_7c15);
    rng.u64(..)
}
