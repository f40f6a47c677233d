//! The worker processes of one seed, seen from the driver: each slot has its
//! own fault proxies (one per ZooKeeper server), so a fault hits one process.
//! Pauses, kills and replacements are recorded in the history the moment
//! they take effect.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zk_harness::FaultProxy;

use crate::resource::{Ev, History};

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
}

struct Slot {
    index: usize,
    generation: u32,
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
                .map(FaultProxy::connect_string)
                .collect::<Vec<_>>()
                .join(",")
                + &workers.spec.chroot;
            let name = format!("w{index}");
            let child = workers.spawn(&name, index, 0, &connect)?;
            let mut slot = Slot {
                index,
                generation: 0,
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
    ) -> std::io::Result<Child> {
        let spec = &self.spec;
        let seed = mix(spec.seed, index as u64, generation as u64);
        let log = File::create(spec.logs.join(format!("{name}.log")))?;
        let child = Command::new(std::env::current_exe()?)
            .arg("worker")
            .args(["--name", name])
            .args(["--seed", &seed.to_string()])
            .args(["--connect", connect])
            .args(["--resource", &spec.resource])
            .args(["--root", &spec.root])
            .args(["--session-ms", &spec.session.as_millis().to_string()])
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
        s.name = format!("w{}.{}", s.index, s.generation);
        s.child = self.spawn(&s.name, s.index, s.generation, &s.connect)?;
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

/// A worker's seed from the run's seed, its slot and generation.
fn mix(seed: u64, slot: u64, generation: u64) -> u64 {
    let mut rng =
        fastrand::Rng::with_seed(seed ^ (slot << 32) ^ (generation << 48) ^ 0x9e37_79b9_7f4a_7c15);
    rng.u64(..)
}
