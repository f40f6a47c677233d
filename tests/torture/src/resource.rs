//! The protected resource and the global history.
//!
//! Workers report every step over one request/response line per step on a
//! local TCP port, and wait for the answer before going on: the order in
//! which the driver records the lines is therefore a true global order (a
//! holder's `END` is recorded before its release lets the next `BEGIN` start).
//! Like a storage service that defends itself, the resource refuses a `BEGIN`
//! whose fencing token is older than one it has already seen (`STALE`). A
//! semaphore's leases overlap by design, so there a newer token does not make
//! an older one stale: the resource refuses only a lease token another worker
//! already wrote under (one lease node, one holder); the count is judged by
//! `sem-max-leases`.
//!
//! Three lines are answered with what the resource knows, so that workers agree
//! without talking: `BPICK` names a barrier that is up (set, its removal not
//! begun, its setter alive), `DJOIN` hands out double-barrier rounds, each to
//! `N` distinct workers (the first `N` askers get round 1, the next `N` round
//! 2, ...; a worker that asks again before its round is full starts the next),
//! `CACHEWAIT` says `GO` once every live Rust worker's cache writers stopped.
//!
//!
//! Protocol (worker → driver; answer `OK` unless said otherwise):
//!
//! ```text
//! HELLO|READY <w> <pid>            BYE <w> k=v...              (statistics)
//! [R|W|S]BEGIN <w> <token> -> OK|STALE   [R|W|S]END <w> <token>   [R|W|S]ABORT <w> <token>
//! [S]WAITING <w> | [S]WAITED <w>    (around a blocking acquire of the exclusive lock, the semaphore)
//! OFFER <id> <seq> | OFFERFAIL <id>
//! TAKING <w> <task> [<up to n items>] | GOT <id> <w> <task> <at_us> | TAKEN <w> <task> none|cancelled|gaveback|error
//! LEADER <w> on|off | ELECT <w> start|stop
//! LATCH <w> on <token> | LATCH <w> off
//! BSET <w> <path> | BREMOVE <w> <path> start|ok|err:<code> | BPICK <w> -> <path>|NONE
//! BWAIT <w> <waiter> <path> <timeout ms> | BWAITED <w> <waiter> <path> released|timeout|cancelled|err:<code>
//! DJOIN <w> <N> -> ROUND <k>
//! DBAR <w> <k> ENTERING|ENTERED|ENTER_TIMEOUT|ENTER_ERROR:<code>|ENTER_CANCELLED|LEAVING|LEFT|LEAVE_TIMEOUT|LEAVE_ERROR:<code>|LEAVE_CANCELLED
//! WQOFFER <id> <entry name> | WQOFFERFAIL <id> | WQGOT <id> <w> <task> <delivery count> <at_us>
//! WQSETTLE <id> <w> <count> acking|acked|ackfail:<code>|ackcancelled|nack|nackfail:<code>|drop
//! WQOBJECT <w> <object> <prefetch>  (the objects a worker consumes with in the calm phase)
//! CTRY <w> <counter> <n> | CDONE <w> <counter> <n> ok <post value>|unknown <code>|failed <code>|cancelled|none
//! CACHE <w> quiet | CACHEWAIT <w> -> GO|WAIT   (the cache writers stopped; all live Rust workers' have)
//! CACHEMATCH <w> <cache> ok nodes=<n>|differs <text>|failed <text>|unjudged <text>
//! CACHEREPLAY <w> <cache> fits <name>=<count>...|misfit <text>|failed <text>|unjudged <text>
//! SUSPENDED|LOST|RECONNECTED <w> <object>   CLIENT <w> <state>
//! VIOLATION <w> <text>              HANG <w> <ms> <what>
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};

/// Which critical section a `BEGIN` opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sec {
    Excl,
    Read,
    Write,
    /// A semaphore lease.
    Sem,
}

impl Sec {
    pub fn prefix(self) -> &'static str {
        match self {
            Sec::Excl => "",
            Sec::Read => "R",
            Sec::Write => "W",
            Sec::Sem => "S",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Ev {
    Hello,
    Ready {
        w: String,
    },
    Bye {
        w: String,
        stats: Vec<(String, u64)>,
    },
    Begin {
        sec: Sec,
        w: String,
        token: i64,
        stale: bool,
    },
    End {
        sec: Sec,
        w: String,
        token: i64,
    },
    /// Around a blocking acquire: of the exclusive lock (`Excl`) or the semaphore (`Sem`).
    Waiting {
        sec: Sec,
        w: String,
    },
    Waited {
        sec: Sec,
        w: String,
    },
    Offer {
        id: String,
        seq: i64,
    },
    OfferFail {
        id: String,
    },
    Taking {
        w: String,
        task: String,
        /// How many items the take may claim at once (a batch: more than 1).
        up_to: usize,
    },
    Got {
        id: String,
        w: String,
        task: String,
        at_us: u64,
    },
    Taken {
        w: String,
        task: String,
        how: String,
    },
    WqOffer {
        id: String,
        name: String,
    },
    WqOfferFail {
        id: String,
    },
    WqGot {
        id: String,
        w: String,
        count: u32,
        at_us: u64,
    },
    WqSettle {
        id: String,
        w: String,
        count: u32,
        how: String,
    },
    WqObject {
        w: String,
        object: String,
        prefetch: usize,
    },
    Leader {
        w: String,
        on: bool,
    },
    Elect {
        w: String,
        started: bool,
    },
    /// Service discovery (`ops/discovery.rs`): `up`, `down`, `session`, `back` of the
    /// worker's own instance; `add`/`del` of `id` in its service cache.
    Disc {
        w: String,
        what: String,
        id: Option<String>,
    },
    /// A leader latch's participant leads with this token (`None`: no longer).
    Latch {
        w: String,
        token: Option<i64>,
    },
    BarrierSet {
        w: String,
        path: String,
    },
    /// `start` (before the call), `ok`, `err:<code>`.
    BarrierRemove {
        w: String,
        path: String,
        how: String,
    },
    /// `waiter`: the waiting task (two tasks of one worker may wait on one barrier).
    BarrierWait {
        w: String,
        waiter: String,
        path: String,
        timeout_ms: u64,
    },
    /// `released`, `timeout`, `cancelled`, `err:<code>`.
    BarrierWaited {
        w: String,
        waiter: String,
        path: String,
        how: String,
    },
    /// The double-barrier round the resource handed to `w`.
    DRound {
        w: String,
        round: u64,
    },
    /// A step of a double-barrier member (`ENTERING`, `ENTERED`, ...).
    DBar {
        w: String,
        round: u64,
        what: String,
    },
    /// An attempt `n` of `w` to add one to an atomic long (`counter`: its node's name), before
    /// the call.
    CounterTry {
        w: String,
        counter: String,
        n: u64,
    },
    /// How it ended: `ok` (with the value it wrote), `unknown:<code>`, `failed:<code>`,
    /// `cancelled`, `none`.
    CounterDone {
        w: String,
        counter: String,
        n: u64,
        how: String,
        post: Option<i64>,
    },
    /// The writers of `w`'s caches have stopped.
    CacheQuiet {
        w: String,
    },
    /// How one cache of `w` compared with the server at the end (`ok`, `differs`, `failed`,
    /// `unjudged`), and what.
    CacheMatch {
        w: String,
        cache: String,
        how: String,
        text: String,
    },
    /// Whether one cache's events replayed to its copy (`fits`, `misfit`, `failed`,
    /// `unjudged`), and what.
    CacheReplay {
        w: String,
        cache: String,
        how: String,
        text: String,
    },
    /// SUSPENDED / LOST / RECONNECTED told to the worker by a recipe.
    Conn {
        w: String,
        what: String,
    },
    /// The client's own connection state (`LOST` = session expired).
    Client {
        w: String,
        state: String,
    },
    Violation {
        w: String,
        text: String,
    },
    Hang {
        w: String,
        ms: u64,
        what: String,
    },
    // Recorded by the driver itself.
    FaultStart {
        id: u64,
        kind: &'static str,
        target: Option<String>,
    },
    FaultEnd {
        id: u64,
    },
    Paused {
        w: String,
    },
    Resumed {
        w: String,
    },
    Killed {
        w: String,
    },
    Spawned {
        w: String,
    },
    Exited {
        w: String,
        status: String,
    },
    Phase(&'static str),
}

#[derive(Clone, Debug)]
pub struct Record {
    pub t: Instant,
    pub ev: Ev,
}

/// The highest fencing tokens seen, to refuse stale holders.
#[derive(Default)]
struct Fences {
    excl: Option<(i64, String)>,
    rw_write: Option<(i64, String)>,
    rw_any: i64,
    /// Every lease token written under, with the worker that did.
    sem: std::collections::HashMap<i64, String>,
}

/// A fault waiting for the next holder of the exclusive lock (or of a job):
/// it gets the worker's name and answers once it has frozen it, before the
/// line is answered, so that the worker is frozen inside its critical
/// section (or while it holds the job).
type Catch = tokio::sync::oneshot::Sender<(String, tokio::sync::oneshot::Sender<()>)>;

/// Which line a catch waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatchAt {
    /// A `BEGIN` of the exclusive lock: frozen inside the section.
    Begin,
    /// An `END`: the release is the first thing it does on waking.
    End,
    /// A `WQGOT`: frozen while it holds a job.
    Job,
    /// An `SBEGIN`: frozen inside a section under a semaphore lease.
    Lease,
}

#[derive(Default)]
struct Inner {
    records: Vec<Record>,
    fences: Fences,
    lines: u64,
    catch: Option<(Catch, CatchAt)>,
    /// Barriers up (set, removal not begun, setter alive): (path, setter).
    barriers: Vec<(String, String)>,
    /// The double-barrier round being handed out, and who got it.
    round: (u64, Vec<String>),
}

/// The history of one seed, shared by the resource server and the driver.
#[derive(Clone, Default)]
pub struct History(Arc<Mutex<Inner>>);

impl History {
    pub fn note(&self, ev: Ev) {
        let mut inner = self.0.lock().unwrap();
        // A dead setter removes nothing: its barriers are not handed out any more.
        if let Ev::Killed { w } | Ev::Exited { w, .. } = &ev {
            inner.barriers.retain(|(_, setter)| setter != w);
        }
        inner.records.push(Record {
            t: Instant::now(),
            ev,
        });
    }

    pub fn records(&self) -> Vec<Record> {
        self.0.lock().unwrap().records.clone()
    }

    pub fn lines(&self) -> u64 {
        self.0.lock().unwrap().lines
    }

    /// Names of workers that said READY.
    pub fn ready(&self) -> Vec<String> {
        let inner = self.0.lock().unwrap();
        inner
            .records
            .iter()
            .filter_map(|r| match &r.ev {
                Ev::Ready { w } => Some(w.clone()),
                _ => None,
            })
            .collect()
    }

    /// Who currently reports leadership (the last `LEADER on` not yet off).
    pub fn leaders(&self) -> Vec<String> {
        let inner = self.0.lock().unwrap();
        let mut on: BTreeMap<&str, bool> = BTreeMap::new();
        for r in &inner.records {
            match &r.ev {
                Ev::Leader { w, on: now } => {
                    on.insert(w, *now);
                }
                Ev::Killed { w } | Ev::Paused { w } => {
                    on.insert(w, false);
                }
                _ => {}
            }
        }
        on.into_iter()
            .filter(|(_, on)| *on)
            .map(|(w, _)| w.to_string())
            .collect()
    }

    /// The name of the next worker that sends an `at` line, with the sender
    /// that lets that line be answered (see `Catch`).
    pub fn catch_next(
        &self,
        at: CatchAt,
    ) -> tokio::sync::oneshot::Receiver<(String, tokio::sync::oneshot::Sender<()>)> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.0.lock().unwrap().catch = Some((tx, at));
        rx
    }

    pub fn cancel_catch(&self) {
        self.0.lock().unwrap().catch = None;
    }

    /// Records one protocol line under the lock, so the record order is the
    /// global order; returns the answer, and what to wait for before sending
    /// it (a fault freezing this worker first).
    fn handle(&self, line: &str) -> (String, Option<tokio::sync::oneshot::Receiver<()>>) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let mut inner = self.0.lock().unwrap();
        inner.lines += 1;
        if let Some(answer) = inner.answer(&words) {
            return (answer, None);
        }
        let (ev, answer) = match parse(&words, &mut inner.fences) {
            Some(parsed) => parsed,
            None => return (format!("ERR {line}"), None),
        };
        match &ev {
            Ev::BarrierSet { w, path } => inner.barriers.push((path.clone(), w.clone())),
            Ev::BarrierRemove { path, how, .. } if how == "start" => {
                inner.barriers.retain(|(p, _)| p != path)
            }
            _ => {}
        }
        let mut hold_back = None;
        let holder = match &ev {
            Ev::Begin {
                sec: Sec::Excl,
                w,
                stale: false,
                ..
            } => Some((w.clone(), CatchAt::Begin)),
            Ev::End {
                sec: Sec::Excl, w, ..
            } => Some((w.clone(), CatchAt::End)),
            Ev::WqGot { w, .. } => Some((w.clone(), CatchAt::Job)),
            Ev::Begin {
                sec: Sec::Sem,
                w,
                stale: false,
                ..
            } => Some((w.clone(), CatchAt::Lease)),
            _ => None,
        };
        if let Some((w, at)) = holder {
            if inner.catch.as_ref().is_some_and(|(_, want)| *want == at) {
                let (catch, _) = inner.catch.take().expect("checked");
                let (ack, wait) = tokio::sync::oneshot::channel();
                if catch.send((w, ack)).is_ok() {
                    hold_back = Some(wait);
                }
            }
        }
        inner.records.push(Record {
            t: Instant::now(),
            ev,
        });
        (answer.to_string(), hold_back)
    }
}

fn parse(words: &[&str], fences: &mut Fences) -> Option<(Ev, &'static str)> {
    let s = |i: usize| words.get(i).map(|w| w.to_string());
    let n = |i: usize| words.get(i).and_then(|w| w.parse::<i64>().ok());
    let ok = |ev| Some((ev, "OK"));
    let (cmd, rest) = words.split_first()?;
    let section = |name: &str| -> Option<(Sec, &'static str)> {
        for sec in [Sec::Excl, Sec::Read, Sec::Write, Sec::Sem] {
            for (what, tag) in [("BEGIN", "B"), ("END", "E"), ("ABORT", "E")] {
                if name == format!("{}{what}", sec.prefix()) {
                    return Some((sec, tag));
                }
            }
        }
        None
    };
    if let Some((sec, tag)) = section(cmd) {
        let (w, token) = (s(1)?, n(2)?);
        if tag == "E" {
            return ok(Ev::End { sec, w, token });
        }
        let stale = fences.stale(sec, &w, token);
        let answer = if stale { "STALE" } else { "OK" };
        return Some((
            Ev::Begin {
                sec,
                w,
                token,
                stale,
            },
            answer,
        ));
    }
    match *cmd {
        "HELLO" => ok(Ev::Hello),
        "READY" => ok(Ev::Ready { w: s(1)? }),
        "BYE" => {
            let stats = rest[1..]
                .iter()
                .filter_map(|kv| kv.split_once('='))
                .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
                .collect();
            ok(Ev::Bye { w: s(1)?, stats })
        }
        "WAITING" | "SWAITING" => ok(Ev::Waiting {
            sec: if *cmd == "WAITING" {
                Sec::Excl
            } else {
                Sec::Sem
            },
            w: s(1)?,
        }),
        "WAITED" | "SWAITED" => ok(Ev::Waited {
            sec: if *cmd == "WAITED" {
                Sec::Excl
            } else {
                Sec::Sem
            },
            w: s(1)?,
        }),
        "OFFER" => ok(Ev::Offer {
            id: s(1)?,
            seq: n(2)?,
        }),
        "OFFERFAIL" => ok(Ev::OfferFail { id: s(1)? }),
        "TAKING" => ok(Ev::Taking {
            w: s(1)?,
            task: s(2)?,
            up_to: n(3).map_or(1, |n| n.max(1) as usize),
        }),
        "GOT" => ok(Ev::Got {
            id: s(1)?,
            w: s(2)?,
            task: s(3)?,
            at_us: n(4)? as u64,
        }),
        "TAKEN" => ok(Ev::Taken {
            w: s(1)?,
            task: s(2)?,
            how: s(3)?,
        }),
        "WQOFFER" => ok(Ev::WqOffer {
            id: s(1)?,
            name: s(2)?,
        }),
        "WQOFFERFAIL" => ok(Ev::WqOfferFail { id: s(1)? }),
        "WQGOT" => ok(Ev::WqGot {
            id: s(1)?,
            w: s(2)?,
            count: u32::try_from(n(4)?).ok()?,
            at_us: n(5)? as u64,
        }),
        "WQSETTLE" => ok(Ev::WqSettle {
            id: s(1)?,
            w: s(2)?,
            count: u32::try_from(n(3)?).ok()?,
            how: s(4)?,
        }),
        "WQOBJECT" => ok(Ev::WqObject {
            w: s(1)?,
            object: s(2)?,
            prefetch: usize::try_from(n(3)?).ok()?,
        }),
        "LEADER" => ok(Ev::Leader {
            w: s(1)?,
            on: s(2)? == "on",
        }),
        "ELECT" => ok(Ev::Elect {
            w: s(1)?,
            started: s(2)? == "start",
        }),
        "DISC" => ok(Ev::Disc {
            w: s(1)?,
            what: s(2)?,
            id: s(3),
        }),
        "LATCH" => ok(Ev::Latch {
            w: s(1)?,
            token: match s(2)?.as_str() {
                "on" => Some(n(3)?),
                "off" => None,
                _ => return None,
            },
        }),
        "BSET" => ok(Ev::BarrierSet {
            w: s(1)?,
            path: s(2)?,
        }),
        "BREMOVE" => ok(Ev::BarrierRemove {
            w: s(1)?,
            path: s(2)?,
            how: s(3)?,
        }),
        "BWAIT" => ok(Ev::BarrierWait {
            w: s(1)?,
            waiter: s(2)?,
            path: s(3)?,
            timeout_ms: u64::try_from(n(4)?).ok()?,
        }),
        "BWAITED" => ok(Ev::BarrierWaited {
            w: s(1)?,
            waiter: s(2)?,
            path: s(3)?,
            how: s(4)?,
        }),
        "DBAR" => ok(Ev::DBar {
            w: s(1)?,
            round: u64::try_from(n(2)?).ok()?,
            what: s(3)?,
        }),
        "CTRY" => ok(Ev::CounterTry {
            w: s(1)?,
            counter: s(2)?,
            n: u64::try_from(n(3)?).ok()?,
        }),
        "CDONE" => {
            let how = s(4)?;
            let (how, post) = if how == "ok" {
                (how, Some(n(5)?))
            } else {
                // `failed:SESSION_EXPIRED`, `unknown:CONNECTION_LOSS`, `cancelled`, `none`.
                (rest.get(3..)?.join(":"), None)
            };
            ok(Ev::CounterDone {
                w: s(1)?,
                counter: s(2)?,
                n: u64::try_from(n(3)?).ok()?,
                how,
                post,
            })
        }
        "CACHE" if s(2)? == "quiet" => ok(Ev::CacheQuiet { w: s(1)? }),
        "CACHEMATCH" | "CACHEREPLAY" => {
            let (w, cache, how) = (s(1)?, s(2)?, s(3)?);
            let text = rest.get(3..)?.join(" ");
            ok(if *cmd == "CACHEMATCH" {
                Ev::CacheMatch {
                    w,
                    cache,
                    how,
                    text,
                }
            } else {
                Ev::CacheReplay {
                    w,
                    cache,
                    how,
                    text,
                }
            })
        }
        "SUSPENDED" | "LOST" | "RECONNECTED" => ok(Ev::Conn {
            w: s(1)?,
            what: cmd.to_string(),
        }),
        "CLIENT" => ok(Ev::Client {
            w: s(1)?,
            state: s(2)?,
        }),
        "VIOLATION" => ok(Ev::Violation {
            w: s(1)?,
            text: rest[1..].join(" "),
        }),
        "HANG" => ok(Ev::Hang {
            w: s(1)?,
            ms: n(2)? as u64,
            what: rest[2..].join(" "),
        }),
        _ => None,
    }
}

impl Inner {
    /// The lines answered with what the resource knows (`BPICK`, `DJOIN`, `CACHEWAIT`); `None`
    /// for the others. A round handed out is recorded (`DRound`), a pick or a wait is not.
    fn answer(&mut self, words: &[&str]) -> Option<String> {
        match words {
            ["BPICK", _] => Some(match self.barriers.last() {
                Some((path, _)) => path.clone(),
                None => "NONE".to_string(),
            }),
            ["DJOIN", w, n] => {
                let n = n.parse::<usize>().ok().filter(|n| *n > 0)?;
                let (round, given) = &mut self.round;
                // N distinct workers a round: one that asks again starts the next.
                if *round == 0 || given.len() >= n || given.iter().any(|g| g == w) {
                    *round += 1;
                    given.clear();
                }
                given.push(w.to_string());
                let round = *round;
                self.records.push(Record {
                    t: Instant::now(),
                    ev: Ev::DRound {
                        w: w.to_string(),
                        round,
                    },
                });
                Some(format!("ROUND {round}"))
            }
            ["CACHEWAIT", _] => Some(
                if self.cache_writers_quiet() {
                    "GO"
                } else {
                    "WAIT"
                }
                .to_string(),
            ),
            _ => None,
        }
    }

    /// Whether every live Rust worker (the Java worker writes no cache) said its cache writers
    /// stopped.
    fn cache_writers_quiet(&self) -> bool {
        let mut live = std::collections::BTreeSet::new();
        let mut quiet = std::collections::BTreeSet::new();
        for r in &self.records {
            match &r.ev {
                Ev::Spawned { w } if !w.starts_with('j') => {
                    live.insert(w.as_str());
                }
                Ev::Killed { w } | Ev::Exited { w, .. } | Ev::Bye { w, .. } => {
                    live.remove(w.as_str());
                }
                Ev::CacheQuiet { w } => {
                    quiet.insert(w.as_str());
                }
                _ => {}
            }
        }
        live.is_subset(&quiet)
    }
}

impl Fences {
    /// Fencing: a holder's token must be newer than every token of a section
    /// it must follow. Exclusive: every earlier holder (an equal token is the
    /// same node, so only from the same worker). Write side: every earlier
    /// reader and writer. Read side: every earlier writer (readers share).
    fn stale(&mut self, sec: Sec, w: &str, token: i64) -> bool {
        match sec {
            Sec::Excl => {
                let stale = match &self.excl {
                    Some((max, owner)) => token < *max || (token == *max && owner != w),
                    None => false,
                };
                if !stale {
                    self.excl = Some((token, w.to_string()));
                }
                stale
            }
            Sec::Write => {
                // A writer's later sections of one hold repeat its token.
                let again = self.rw_write.as_ref() == Some(&(token, w.to_string()));
                let stale = token < self.rw_any || (token == self.rw_any && !again);
                if !stale {
                    self.rw_write = Some((token, w.to_string()));
                    self.rw_any = token;
                }
                stale
            }
            Sec::Read => {
                let stale = self.rw_write.as_ref().is_some_and(|(max, _)| token < *max);
                if !stale {
                    self.rw_any = self.rw_any.max(token);
                }
                stale
            }
            // Leases overlap: only a token another worker wrote under is refused.
            Sec::Sem => {
                self.sem
                    .entry(token)
                    .or_insert_with(|| w.to_string())
                    .as_str()
                    != w
            }
        }
    }
}

/// Accepts worker connections on a free loopback port; one task per
/// connection. Aborting the returned task stops accepting.
pub async fn serve(history: History) -> std::io::Result<(String, tokio::task::JoinHandle<()>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?.to_string();
    let server = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let history = history.clone();
            tokio::spawn(async move {
                let _ = stream.set_nodelay(true);
                let (read, mut write) = stream.into_split();
                let mut lines = BufReader::new(read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let (answer, hold_back) = history.handle(&line);
                    if let Some(frozen) = hold_back {
                        let _ =
                            tokio::time::timeout(std::time::Duration::from_secs(5), frozen).await;
                    }
                    let answer = answer + "\n";
                    if write.write_all(answer.as_bytes()).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    Ok((address, server))
}

/// A worker's connection to the resource: one request, one answer.
pub struct Link {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl Link {
    /// Connects, or ends the worker: without its driver it has no purpose.
    pub async fn connect(address: &str) -> Link {
        match TcpStream::connect(address).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                let (read, writer) = stream.into_split();
                Link {
                    reader: BufReader::new(read),
                    writer,
                }
            }
            Err(err) => gone(err),
        }
    }

    pub async fn ask(&mut self, line: String) -> String {
        if let Err(err) = self.writer.write_all((line + "\n").as_bytes()).await {
            gone(err);
        }
        let mut answer = String::new();
        match self.reader.read_line(&mut answer).await {
            Ok(0) => gone(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(_) => answer.trim().to_string(),
            Err(err) => gone(err),
        }
    }
}

fn gone(err: std::io::Error) -> ! {
    eprintln!("zk-torture worker: the driver's resource is gone ({err}); exiting");
    std::process::exit(3);
}
