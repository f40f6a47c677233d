//! Faults injected at seeded random times, one at a time, each recorded as a
//! window in the history (`FaultStart` … `FaultEnd`) so that the checks know
//! when a stall, a hang or a lost hold is excused.
//!
//! The kinds are dealt from a shuffled deck, so that even a short seed sees
//! several different faults.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fastrand::Rng;
use tokio::time::Instant;
use zk_harness::{Cut, Ensemble, FaultProxy, Request, Then};

use crate::resource::{CatchAt, Ev, History};
use crate::workers::Workers;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Every connection of one worker cut (it reconnects, same session); half the time at its
    /// next atomic-long write, before the server has it or once it has.
    DropAll,
    /// Requests applied, replies lost for a moment, then the connection cut; half the time only
    /// the reply of its next atomic-long write is lost (applied, then the connection cut).
    DropReplies,
    /// Added latency on every chunk for a while.
    Latency,
    /// A partition longer than the session timeout: the session expires.
    Blackhole,
    /// SIGSTOP, sometimes past the session timeout, then SIGCONT.
    Pause,
    /// SIGKILL (half the time the elected leader), then a replacement.
    Kill,
    /// kill -9 of a ZooKeeper server (half the time the quorum leader), restarted later.
    ServerKill,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::DropAll => "drop_all",
            Kind::DropReplies => "drop_replies",
            Kind::Latency => "latency",
            Kind::Blackhole => "blackhole",
            Kind::Pause => "pause",
            Kind::Kill => "kill",
            Kind::ServerKill => "server_kill",
        }
    }
}

pub struct Faults {
    pub history: History,
    pub workers: Workers,
    pub ensemble: Option<Arc<Mutex<Ensemble>>>,
    pub session: Duration,
    /// The proxies can follow the requests (plain connections): a cut at a worker's next write
    /// is possible. Not over TLS, where `drop_all`/`drop_replies` cut at a random moment only.
    pub framed: bool,
}

impl Faults {
    /// Injects faults until `until`; returns how many of each kind.
    pub async fn run(&self, rng: &mut Rng, until: Instant) -> BTreeMap<&'static str, u64> {
        let mut deck = vec![
            Kind::DropAll,
            Kind::DropReplies,
            Kind::Latency,
            Kind::Blackhole,
            Kind::Pause,
            Kind::Kill,
        ];
        if self.ensemble.is_some() {
            deck.push(Kind::ServerKill);
        }
        let mut counts = BTreeMap::new();
        let mut dealt = deck.len();
        let mut id = 0;
        loop {
            tokio::time::sleep(Duration::from_millis(rng.u64(300..2000))).await;
            // A fault that would run far past the chaos phase is not started.
            if Instant::now() + Duration::from_secs(2) >= until {
                return counts;
            }
            if dealt == deck.len() {
                rng.shuffle(&mut deck);
                // On an ensemble, a server kill comes first in the first deal,
                // so that even a short seed has one.
                if id == 0 {
                    if let Some(at) = deck.iter().position(|k| *k == Kind::ServerKill) {
                        deck.swap(0, at);
                    }
                }
                dealt = 0;
            }
            let kind = deck[dealt];
            dealt += 1;
            id += 1;
            let name = self.inject(rng, kind, id).await;
            *counts.entry(name).or_insert(0) += 1;
            if kind == Kind::Kill {
                // Quiet after a kill for as long as the failover may take, so that it is judged.
                let judged = crate::checks::liveness_limit(self.session);
                tokio::time::sleep(judged + Duration::from_millis(500)).await;
            }
        }
    }

    /// Injects one fault; its name as counted (a variant's own).
    async fn inject(&self, rng: &mut Rng, kind: Kind, id: u64) -> &'static str {
        let slot = self.target(rng, kind);
        let target = match kind {
            Kind::ServerKill => None,
            _ => Some(self.workers.name(slot)),
        };
        // The Java worker has no atomic long.
        let writes = self.framed && target.as_ref().is_some_and(|w| !w.starts_with('j'));
        let at_write = match kind {
            Kind::DropAll if writes && rng.bool() => {
                Some(if rng.bool() { Cut::Before } else { Cut::After })
            }
            Kind::DropReplies if writes && rng.bool() => Some(Cut::After),
            _ => None,
        };
        let name = match (kind, at_write) {
            (Kind::DropAll, Some(_)) => "drop_all_at_write",
            (Kind::DropReplies, Some(_)) => "drop_replies_at_write",
            _ => kind.name(),
        };
        self.history.note(Ev::FaultStart {
            id,
            kind: name,
            target,
        });
        if let Some(cut) = at_write {
            self.cut_at_a_write(slot, cut).await;
            self.history.note(Ev::FaultEnd { id });
            return name;
        }
        let session = self.session;
        let proxies = |act: &dyn Fn(&FaultProxy)| self.workers.proxies(slot, act);
        match kind {
            Kind::DropAll => proxies(&|p| p.drop_all()),
            Kind::DropReplies => {
                proxies(&|p| p.set_drop_replies(true));
                sleep_ms(rng.u64(10..300)).await;
                // The reply stream has holes now: cut it, as a real loss would.
                proxies(&|p| p.drop_all());
                proxies(&|p| p.set_drop_replies(false));
            }
            Kind::Latency => {
                let ms = rng.u64(20..400);
                proxies(&|p| p.set_latency(ms));
                sleep_ms(rng.u64(500..2500)).await;
                proxies(&|p| p.set_latency(0));
            }
            Kind::Blackhole => {
                proxies(&|p| p.set_blackhole(true));
                tokio::time::sleep(session + Duration::from_millis(rng.u64(500..2500))).await;
                proxies(&|p| p.set_blackhole(false));
            }
            Kind::Pause if rng.u8(..3) == 0 => self.freeze_a_holder(rng, CatchAt::Job).await,
            Kind::Pause if rng.u8(..4) == 0 => self.freeze_a_holder(rng, CatchAt::Lease).await,
            Kind::Pause if rng.bool() => {
                let at = if rng.bool() {
                    CatchAt::End
                } else {
                    CatchAt::Begin
                };
                self.freeze_a_holder(rng, at).await
            }
            Kind::Pause => {
                let long = rng.bool();
                self.workers.pause(slot);
                if long {
                    tokio::time::sleep(session + Duration::from_millis(rng.u64(500..2500))).await;
                } else {
                    sleep_ms(rng.u64(200..1500)).await;
                }
                self.workers.resume(slot);
            }
            Kind::Kill if rng.u8(..3) == 0 => self.kill_a_job_holder().await,
            Kind::Kill => {
                if let Err(err) = self.workers.kill_and_replace(slot) {
                    eprintln!("cannot replace a killed worker: {err}");
                }
            }
            Kind::ServerKill => self.server_kill(rng).await,
        }
        self.history.note(Ev::FaultEnd { id });
        name
    }

    /// Cuts the worker's connection at its next `setData` (only the atomic longs write one),
    /// `cut` before the server has it or once applied with its reply lost: the lost-write path
    /// `counter-exact` judges, which a cut at a random moment seldom hits. Given up after 2 s
    /// (the worker paused, its counter skipped).
    async fn cut_at_a_write(&self, slot: usize, cut: Cut) {
        let cuts = || {
            let n = std::sync::atomic::AtomicU64::new(0);
            self.workers.proxies(slot, |p| {
                n.fetch_add(p.cuts(), std::sync::atomic::Ordering::SeqCst);
            });
            n.into_inner()
        };
        let before = cuts();
        self.workers.proxies(slot, |p| {
            p.cut_at_request(Request::SetData, cut, Then::Reconnect)
        });
        let deadline = Instant::now() + Duration::from_secs(2);
        while cuts() == before && Instant::now() < deadline {
            sleep_ms(5).await;
        }
        // On an ensemble the other servers' proxies are still armed.
        self.workers.proxies(slot, |p| p.disarm_cut());
    }

    /// SIGSTOPs the next worker to begin (or to end: then its release is the
    /// first thing it does on waking) an exclusive critical section, to begin
    /// one under a semaphore lease, or to get a job, for longer than its
    /// session: the server expires it and hands the lock (the lease, the job)
    /// on, and the worker must learn of the loss once it runs again.
    async fn freeze_a_holder(&self, rng: &mut Rng, at: CatchAt) {
        let caught = self.history.catch_next(at);
        match tokio::time::timeout(Duration::from_secs(3), caught).await {
            Ok(Ok((w, frozen))) => {
                let Some(slot) = self.workers.slot_of(&w) else {
                    let _ = frozen.send(());
                    return;
                };
                self.workers.pause(slot);
                let _ = frozen.send(());
                tokio::time::sleep(self.session + Duration::from_millis(rng.u64(1500..3000))).await;
                self.workers.resume(slot);
            }
            _ => self.history.cancel_catch(),
        }
    }

    /// SIGKILLs the next worker to get a job, before it can settle it: the
    /// job must be delivered again once the session of the dead expired.
    async fn kill_a_job_holder(&self) {
        let caught = self.history.catch_next(CatchAt::Job);
        match tokio::time::timeout(Duration::from_secs(3), caught).await {
            Ok(Ok((w, killed))) => {
                if let Some(slot) = self.workers.slot_of(&w) {
                    if let Err(err) = self.workers.kill_and_replace(slot) {
                        eprintln!("cannot replace a killed worker: {err}");
                    }
                }
                let _ = killed.send(());
            }
            _ => self.history.cancel_catch(),
        }
    }

    /// The worker a fault hits; a kill hits the elected leader half the time.
    fn target(&self, rng: &mut Rng, kind: Kind) -> usize {
        if kind == Kind::Kill && rng.bool() {
            let leaders = self.history.leaders();
            if let Some(slot) = leaders.iter().find_map(|w| self.workers.slot_of(w)) {
                return slot;
            }
        }
        rng.usize(..self.workers.count())
    }

    async fn server_kill(&self, rng: &mut Rng) {
        let Some(ensemble) = self.ensemble.clone() else {
            return;
        };
        let prefer_leader = rng.bool();
        let random = rng.usize(..3);
        let down = Duration::from_millis(rng.u64(1000..4000));
        let e = ensemble.clone();
        let member = tokio::task::spawn_blocking(move || {
            let mut ensemble = e.lock().unwrap();
            let member = if prefer_leader {
                ensemble.leader().unwrap_or(random)
            } else {
                random
            };
            ensemble.kill(member);
            member
        })
        .await
        .unwrap_or(random);
        tokio::time::sleep(down).await;
        let _ = tokio::task::spawn_blocking(move || ensemble.lock().unwrap().restart(member)).await;
    }
}

async fn sleep_ms(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}
