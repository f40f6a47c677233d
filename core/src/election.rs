//! Leader election with the nodes, data and events of Apache's
//! `LeaderElectionSupport` (`n_<seq>` children holding the host name).
//!
//! Contract, including failures:
//! - The member with the lowest sequence leads; each other member watches
//!   only its predecessor (data watch) and re-determines after any event.
//! - Events in Apache's order: `START, OFFER_START, OFFER_COMPLETE,
//!   DETERMINE_START, DETERMINE_COMPLETE`, then `ELECTED_START,
//!   ELECTED_COMPLETE` or `READY_START, READY_COMPLETE`; `STOP_START,
//!   STOP_COMPLETE` on stop.
//! - Unlike Apache's recipe, a leader is told when it stops being one: its
//!   node vanished or its session expired → `FAILED` with the reason; the
//!   member then offers itself again as soon as the client has a new session,
//!   unless stopped. Closing the client stops a started member:
//!   `STOP_START, STOP_COMPLETE`, not `FAILED`. A leader whose connection drops is told `SUSPENDED`
//!   (then `RECONNECTED`, or `FAILED` once disconnected past the session
//!   timeout, when the server may have elected somebody else).
//! - `start` that fails (no such chroot, `NO_AUTH`, a root that cannot have
//!   children) returns the error and leaves the member stopped: nothing keeps
//!   trying behind the caller's back. A lost connection or an expired
//!   session is not such a failure: the offer waits for the next session.
//!   Later failures are retried with a bounded, jittered backoff, never in a
//!   tight loop.
//! - A `stop` withdraws the offer in a task of its own, so a caller that
//!   gives up on it leaves nothing behind; a later `stop` waits for it.
//! - The root is created if missing; foreign children are ignored.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::sync::{broadcast, oneshot, watch};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use zookeeper_client as zk;

use crate::backoff::Backoff;
use crate::client::{delete_confirmed, expired, with_deadline, Client, ConnectionState};
use crate::emitter::Emitter;
use crate::error::{Error, ErrorCode, Result};
use crate::lock::contenders::{sort_by_sequence, split_sequence};
use crate::observe::{Candidacy, ELECTION_AWAIT_LEADERSHIP, ELECTION_TERMS};
use crate::wait::Wait;
use crate::{path, runtime};

const OFFER_PREFIX: &str = "n_";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElectionEvent {
    Start,
    OfferStart,
    OfferComplete,
    DetermineStart,
    DetermineComplete,
    ElectedStart,
    ElectedComplete,
    ReadyStart,
    ReadyComplete,
    Failed(Error),
    StopStart,
    StopComplete,
    /// The leader's connection dropped: it may no longer lead.
    Suspended,
    /// The leader's session is back and its offer still leads.
    Reconnected,
}

impl ElectionEvent {
    /// Apache's name of the event (`"ELECTED_COMPLETE"`).
    pub fn name(&self) -> &'static str {
        use ElectionEvent::*;
        match self {
            Start => "START",
            OfferStart => "OFFER_START",
            OfferComplete => "OFFER_COMPLETE",
            DetermineStart => "DETERMINE_START",
            DetermineComplete => "DETERMINE_COMPLETE",
            ElectedStart => "ELECTED_START",
            ElectedComplete => "ELECTED_COMPLETE",
            ReadyStart => "READY_START",
            ReadyComplete => "READY_COMPLETE",
            Failed(_) => "FAILED",
            StopStart => "STOP_START",
            StopComplete => "STOP_COMPLETE",
            Suspended => "SUSPENDED",
            Reconnected => "RECONNECTED",
        }
    }
}

#[derive(Clone)]
pub struct LeaderElectionSupport {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    root: String,
    host_name: String,
    run: Mutex<Run>,
    leader: watch::Sender<bool>,
    events: Emitter<ElectionEvent>,
}

#[derive(Default)]
struct Run {
    driver: Option<AbortHandle>,
    /// Path of our offer node while it exists.
    offer: Option<String>,
    /// Set while an offer is being created: `stop` waits for it.
    creating: Option<watch::Receiver<bool>>,
    /// Bumped by every start and stop: a driver (or its detached create)
    /// from before may still be running after its abort, and must neither
    /// register an offer nor clear the current driver.
    generation: u64,
    /// The last stop's withdrawal: its outcome once done.
    withdrawing: Option<watch::Receiver<Option<Result<()>>>>,
}

/// Deletes a stopped member's offer, one still being created included, and
/// says `STOP_COMPLETE`.
async fn withdraw(
    inner: Arc<Inner>,
    offer: Option<String>,
    creating: Option<watch::Receiver<bool>>,
) -> Result<()> {
    if let Some(mut creating) = creating {
        // A create in flight withdraws its own offer (it sees the stop). Cut
        // off from the server, that waits for the connection: a stop waits
        // at most a session timeout for it, and the create still withdraws
        // its offer whenever it completes.
        let created = creating.wait_for(|done| *done);
        let _ = tokio::time::timeout(inner.client.session_timeout(), created).await;
    }
    let mut result = Ok(());
    if let Some(offer) = offer {
        result = delete_confirmed(&inner.client, &offer).await;
        live_offers().lock().unwrap().remove(&offer);
        if let Err(err) = &result {
            inner.emit(ElectionEvent::Failed(err.clone()));
        }
    }
    inner.emit(ElectionEvent::StopComplete);
    result
}

/// Offers that members of this process hold, so that the orphan sweep after a
/// lost create reply never deletes a sibling member's node of the same session.
fn live_offers() -> &'static Mutex<HashSet<String>> {
    static OFFERS: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    OFFERS.get_or_init(Default::default)
}

impl LeaderElectionSupport {
    pub fn new(client: &Client, root: &str, host_name: &str) -> Result<LeaderElectionSupport> {
        path::validate(root)?;
        crate::client::check_node_data("host name", host_name)?;
        client.check_open()?;
        let (leader, _) = watch::channel(false);
        let events = Emitter::new(256);
        let inner = Inner {
            client: client.clone(),
            root: root.to_string(),
            host_name: host_name.to_string(),
            run: Mutex::default(),
            leader,
            events,
        };
        Ok(LeaderElectionSupport {
            inner: Arc::new(inner),
        })
    }

    /// Events from now on. Subscribe before `start` to see all of them.
    pub fn subscribe(&self) -> broadcast::Receiver<ElectionEvent> {
        self.inner.events.subscribe()
    }

    /// Offers this member and resolves once it knows whether it leads (or
    /// the first attempt failed). Starting a started member does nothing.
    ///
    /// The start takes effect when called, not when first polled: `start()`
    /// then `stop()` stop the member even if the bindings run the two
    /// futures in another order.
    pub fn start(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let inner = self.inner.clone();
        let registered = inner.client.zk().map(|_| {
            let mut run = inner.run.lock().unwrap();
            if run.driver.is_some() {
                return None;
            }
            let (first, determined) = oneshot::channel();
            inner.emit(ElectionEvent::Start);
            run.generation += 1;
            let driver = runtime::handle().spawn(drive(inner.clone(), run.generation, first));
            run.driver = Some(driver.abort_handle());
            Some(determined)
        });
        async move {
            let Some(determined) = registered.map_err(|err| inner.about(err))? else {
                return Ok(());
            };
            let started = determined.await.unwrap_or(Ok(()));
            started.map_err(|err| inner.about(err))
        }
    }

    /// Withdraws the offer (confirmed delete); a leader hands over. Like
    /// `start`, it takes effect when called; it resolves once no offer of
    /// this member is left on the server, one still being created included
    /// (waiting at most a session timeout for that one while disconnected).
    pub fn stop(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let inner = self.inner.clone();
        let (withdrawing, ours) = {
            let mut run = inner.run.lock().unwrap();
            let ours = run.driver.take().map(|driver| {
                // Under the run lock, so that a driver still mid-step cannot
                // say it leads after this (see `Inner::current`).
                run.generation += 1;
                inner.emit(ElectionEvent::StopStart);
                inner.leader.send_replace(false);
                driver.abort();
                // The withdrawal is a task of its own: a caller that gives up
                // on the stop (a cancelled await) must not leave the offer
                // behind to lead for the rest of the session.
                let (done, withdrawing) = watch::channel(None);
                run.withdrawing = Some(withdrawing);
                let task = withdraw(inner.clone(), run.offer.take(), run.creating.take());
                runtime::handle().spawn(async move { done.send_replace(Some(task.await)) });
            });
            (run.withdrawing.clone(), ours.is_some())
        };
        async move {
            // A stop on a stopped member still waits for an earlier stop
            // whose caller gave up: stopped means no offer of it is left.
            // Only the stop that withdrew reports how that went.
            let Some(mut withdrawing) = withdrawing else {
                return Ok(());
            };
            let withdrawn = withdrawing.wait_for(Option::is_some).await.ok();
            match withdrawn.and_then(|outcome| outcome.clone()) {
                Some(Err(err)) if ours => Err(inner.about(err)),
                _ => Ok(()),
            }
        }
    }

    pub fn is_leader(&self) -> bool {
        *self.inner.leader.borrow()
    }

    /// `true` once this member leads; `false` if `timeout` passed first.
    /// `timeout`: a `Wait`, or what converts to one (`None` waits forever).
    pub async fn await_leadership(&self, timeout: impl Into<Wait>) -> Result<bool> {
        let mut leader = self.inner.leader.subscribe();
        let deadline = timeout.into().deadline();
        let led = with_deadline(deadline, async {
            tokio::select! {
                r = leader.wait_for(|l| *l) => r.map(|_| ()).map_err(|_| Error::closed()),
                _ = self.inner.client.closed() => Err(Error::closed()),
            }
        })
        .await;
        match led {
            Ok(result) => result.map(|_| true),
            Err(_) => Ok(false),
        }
    }

    /// The host name in the current leader's node, `None` with no members.
    pub async fn leader_host_name(&self) -> Result<Option<String>> {
        let named = self.leader_host_name_unscoped().await;
        named.map_err(|err| self.inner.about(err))
    }

    async fn leader_host_name_unscoped(&self) -> Result<Option<String>> {
        loop {
            let offers = self.inner.offers().await?;
            let Some(first) = offers.first() else {
                return Ok(None);
            };
            let path = format!("{}/{}", self.inner.root, first);
            if let Some((data, _)) = self.inner.client.read_if_present(&path).await? {
                return Ok(Some(String::from_utf8_lossy(&data).into_owned()));
            }
        }
    }
}

impl Inner {
    fn emit(&self, event: ElectionEvent) {
        self.events.emit(event);
    }

    /// The error with the election's root (and chroot) in its message.
    fn about(&self, err: Error) -> Error {
        self.client.about(err, "election", &self.root)
    }

    /// Runs `step` unless a `stop` (or a newer `start`) came since
    /// `generation`. An aborted driver runs on until its next await, maybe on
    /// another thread: its events and its leadership must not land after the
    /// stop's (the adversarial suite saw `is_leader()` true after `stop`).
    fn current<T>(&self, generation: u64, step: impl FnOnce(&mut Run) -> T) -> Option<T> {
        let mut run = self.run.lock().unwrap();
        (run.generation == generation).then(|| step(&mut run))
    }

    /// Emits `event` for the driver of `generation` if it is still current.
    fn emit_for(&self, generation: u64, event: ElectionEvent) {
        self.current(generation, |_| self.emit(event));
    }

    /// The member is stopped by its driver giving up, unless a `stop` (and
    /// maybe a new `start`) came first.
    fn end_driver(&self, generation: u64) {
        self.current(generation, |run| run.driver = None);
    }

    /// Our offers' names in order (foreign children ignored).
    async fn offers(&self) -> Result<Vec<String>> {
        let root = self.root.as_str();
        let children = match self
            .client
            .retrying(None, |zk| async move { zk.list_children(root).await })
            .await
        {
            Ok(children) => children,
            Err(err) if err.code() == ErrorCode::NoNode => return Ok(Vec::new()),
            Err(err) => return Err(err),
        };
        let mut offers: Vec<(i64, String)> = children
            .into_iter()
            .filter_map(|c| match split_sequence(&c) {
                Some((OFFER_PREFIX, sequence)) => Some((sequence, c)),
                _ => None,
            })
            .collect();
        offers.sort_by(|a, b| a.1.cmp(&b.1));
        sort_by_sequence(&mut offers, |(sequence, _)| *sequence);
        Ok(offers.into_iter().map(|(_, name)| name).collect())
    }

    /// Creates our offer in a task of its own that a `stop` never cancels:
    /// an aborted create may still be applied by the server, and an offer
    /// nobody knows of would lead the line for the rest of the session. The
    /// task registers the offer only if no stop came since `generation`;
    /// otherwise it withdraws the offer itself.
    async fn make_offer(self: &Arc<Self>, generation: u64) -> Result<(String, i64)> {
        let inner = self.clone();
        let (done, creating) = watch::channel(false);
        let created = {
            let mut run = self.run.lock().unwrap();
            if run.generation != generation {
                return Err(Error::closed());
            }
            self.emit(ElectionEvent::OfferStart);
            run.creating = Some(creating);
            runtime::handle().spawn(async move {
                let result = inner.register_offer(generation).await;
                let _ = done.send(true);
                result
            })
        };
        let created = created.await.map_err(|_| Error::closed())??;
        self.emit_for(generation, ElectionEvent::OfferComplete);
        Ok(created)
    }

    /// Creates the offer and registers it as ours, unless a stop came since
    /// `generation`: then it withdraws the offer itself.
    async fn register_offer(&self, generation: u64) -> Result<(String, i64)> {
        let (offer, session) = self.create_offer().await?;
        let current = {
            let mut run = self.run.lock().unwrap();
            let current = run.generation == generation;
            if current {
                run.creating = None;
                live_offers().lock().unwrap().insert(offer.clone());
                run.offer = Some(offer.clone());
            }
            current
        };
        if current {
            Ok((offer, session))
        } else {
            let _ = delete_confirmed(&self.client, &offer).await;
            Err(Error::closed())
        }
    }

    async fn create_offer(&self) -> Result<(String, i64)> {
        let prefix = format!("{}/{}", self.root, OFFER_PREFIX);
        let options = zk::CreateMode::EphemeralSequential.with_acls(self.client.acls());
        // As a lock's create: a connection lost on every offer backs off instead of storming.
        let mut backoff = Backoff::new(Duration::from_millis(5), Duration::from_secs(1));
        loop {
            let zk = self.client.zk()?;
            let session = zk.session_id().0;
            let created = zk
                .create(&prefix, self.host_name.as_bytes(), &options)
                .await;
            drop(zk);
            match created {
                Ok((_, sequence)) => return Ok((format!("{prefix}{sequence}"), session)),
                Err(zk::Error::NoNode) => self.client.ensure_container(&self.root, None).await?,
                // The session's end took whatever the lost create made, and
                // is not the caller's error: offer on the next session.
                Err(zk::Error::SessionExpired) => self.client.await_session_after(session).await?,
                Err(zk::Error::ConnectionLoss) => {
                    match self.client.await_usable(session, None).await {
                        Ok(()) => self.sweep_orphans(session).await?,
                        Err(err) if err.code() == ErrorCode::SessionExpired => {
                            self.client.await_session_after(session).await?
                        }
                        Err(err) => return Err(err),
                    }
                    backoff.sleep().await;
                }
                Err(err) => return Err(err.into()),
            }
        }
    }

    /// After a lost create reply: delete any offer of our session with our
    /// host name that no member of this process owns, then offer again.
    async fn sweep_orphans(&self, session: i64) -> Result<()> {
        for name in self.offers().await? {
            let path = format!("{}/{}", self.root, name);
            if live_offers().lock().unwrap().contains(&path) {
                continue;
            }
            if let Some((data, stat)) = self.client.read_if_present(&path).await? {
                if stat.ephemeral_owner == session && data == self.host_name.as_bytes() {
                    delete_confirmed(&self.client, &path).await?;
                }
            }
        }
        Ok(())
    }

    /// One determination, ending with a watch armed on the node to wait for:
    /// our own as leader (to learn that we lost it), else the predecessor.
    async fn determine(&self, generation: u64, offer: &str, session: i64) -> Result<Step> {
        self.emit_for(generation, ElectionEvent::DetermineStart);
        let offers = self.offers().await?;
        let name = &offer[self.root.len() + 1..];
        let Some(position) = offers.iter().position(|o| o == name) else {
            return Ok(Step::OfferGone);
        };
        self.emit_for(generation, ElectionEvent::DetermineComplete);
        if position == 0 {
            // The watch on our own node is armed before we say we lead: a
            // connection that drops while arming it must not leave a leader
            // that nobody tells SUSPENDED (found by the torture suite).
            let Some(watcher) = self.watch_node(offer, session).await? else {
                return Ok(Step::OfferGone);
            };
            let elected = self.current(generation, |_| {
                self.emit(ElectionEvent::ElectedStart);
                self.leader.send_replace(true);
                self.emit(ElectionEvent::ElectedComplete);
            });
            if elected.is_none() {
                return Err(Error::closed());
            }
            return Ok(Step::Leading(watcher));
        }
        let predecessor = format!("{}/{}", self.root, offers[position - 1]);
        let Some(watcher) = self.watch_node(&predecessor, session).await? else {
            return Ok(Step::Again);
        };
        self.current(generation, |_| {
            self.emit(ElectionEvent::ReadyStart);
            self.emit(ElectionEvent::ReadyComplete);
        });
        Ok(Step::Following(watcher))
    }

    async fn watch_node(&self, path: &str, session: i64) -> Result<Option<zk::OneshotWatcher>> {
        self.client
            .retrying(None, |zk| async move {
                if zk.session_id().0 != session {
                    return Err(zk::Error::SessionExpired);
                }
                match zk.get_and_watch_data(path).await {
                    Ok((_, _, watcher)) => Ok(Some(watcher)),
                    Err(zk::Error::NoNode) => Ok(None),
                    Err(err) => Err(err),
                }
            })
            .await
    }
}

enum Step {
    Leading(zk::OneshotWatcher),
    Following(zk::OneshotWatcher),
    Again,
    OfferGone,
}

/// The member's life: offer, determine, wait, and after losing the session
/// offer again on the next one. Ends by `stop` (abort), client close, or a
/// first attempt that failed (then `start` returns the error).
async fn drive(inner: Arc<Inner>, generation: u64, first: oneshot::Sender<Result<()>>) {
    let mut first = Some(first);
    let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(10));
    // Dropped with the driver (a stop, the client's close): a wait cancelled, a term stepped down.
    let mut candidacy = Candidacy::new(
        &inner.client,
        &ELECTION_AWAIT_LEADERSHIP,
        &ELECTION_TERMS,
        &inner.root,
    );
    loop {
        let mut determined = false;
        candidacy.in_line();
        let once = run_once(
            &inner,
            generation,
            &mut first,
            &mut determined,
            &mut candidacy,
        );
        let reason = match once.await {
            Ok(()) => continue,
            Err(err) => err,
        };
        // A stopped driver can run on until its next await: `stop` has
        // already withdrawn its offer and said so, and a newer driver may own
        // the state now.
        let Some(offer) = inner.current(generation, |run| {
            inner.leader.send_replace(false);
            run.offer.take()
        }) else {
            return;
        };
        if let Some(offer) = &offer {
            live_offers().lock().unwrap().remove(offer);
        }
        if inner.client.is_closed() && first.is_none() {
            // Closing the client is a deliberate shutdown, not a failure: the
            // member stops as if `stop` had been called (the session's end
            // took the offer with it).
            inner.current(generation, |run| {
                run.driver = None;
                inner.emit(ElectionEvent::StopStart);
                inner.emit(ElectionEvent::StopComplete);
            });
            return;
        }
        let reason = inner.about(reason);
        let closed = reason.code() == ErrorCode::Closed;
        // A stop and the client's close returned above: a term that ends here is lost.
        candidacy.term_ended(Some(&reason));
        inner.emit_for(generation, ElectionEvent::Failed(reason.clone()));
        if let Some(first) = first.take() {
            candidacy.failed(&reason);
            // Failed to start: withdraw what exists and stay stopped.
            if let Some(offer) = offer {
                // A task of its own, as `give_up`'s: out of `run`, the offer is nobody else's
                // to delete, and `stop` aborts this driver at any await.
                let client = inner.client.clone();
                let deleting =
                    runtime::handle().spawn(async move { delete_confirmed(&client, &offer).await });
                let _ = deleting.await;
            }
            inner.end_driver(generation);
            let _ = first.send(Err(reason));
            return;
        }
        if determined {
            backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(10));
        } else {
            backoff.sleep().await;
        }
        if closed || inner.client.await_new_session().await.is_err() {
            inner.end_driver(generation);
            return;
        }
    }
}

/// Offers once and follows the election until the offer is lost (error).
async fn run_once(
    inner: &Arc<Inner>,
    generation: u64,
    first: &mut Option<oneshot::Sender<Result<()>>>,
    determined: &mut bool,
    candidacy: &mut Candidacy,
) -> Result<()> {
    let (offer, session) = inner.make_offer(generation).await?;
    // Subscribed after the offer: a start that waited out an expired session
    // must not take that session's `LOST` for its new offer's. What happens
    // to the connection from here on is seen by `determine`'s requests first.
    let mut states = inner.client.subscribe();
    loop {
        let step = inner.determine(generation, &offer, session).await?;
        *determined = true;
        if let Some(first) = first.take() {
            let _ = first.send(Ok(()));
        }
        let (watcher, leading) = match step {
            Step::Again => continue,
            Step::OfferGone => return Err(offer_gone(inner, &offer, session)),
            Step::Leading(watcher) => {
                candidacy.elected(None);
                (watcher, true)
            }
            Step::Following(watcher) => (watcher, false),
        };
        let mut changed = std::pin::pin!(watcher.changed());
        let mut suspended_until: Option<Instant> = None;
        let event = loop {
            let give_up = async {
                match suspended_until {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                event = &mut changed => break event,
                _ = inner.client.closed() => return Err(Error::closed()),
                state = states.recv() => match state.unwrap_or_else(|_| inner.client.state()) {
                    ConnectionState::Suspended if leading && suspended_until.is_none() => {
                        suspended_until = Some(Instant::now() + inner.client.suspended_grace());
                        inner.emit_for(generation, ElectionEvent::Suspended);
                    }
                    ConnectionState::Connected | ConnectionState::Reconnected => {
                        if inner.client.session_id().ok() != Some(session) {
                            return Err(expired());
                        }
                        if suspended_until.take().is_some() {
                            inner.emit_for(generation, ElectionEvent::Reconnected);
                        }
                    }
                    ConnectionState::Lost => return Err(expired()),
                    _ => {}
                },
                () = give_up => {
                    // The server may have elected somebody else by now; our
                    // offer must not survive to lead again unnoticed.
                    let client = inner.client.clone();
                    let offer = offer.clone();
                    runtime::handle().spawn(async move {
                        let _ = delete_confirmed(&client, &offer).await;
                    });
                    return Err(Error::new(
                        ErrorCode::SessionExpired,
                        "disconnected for as long as the server may take to expire the session: leadership may have passed",
                    ));
                }
            }
        };
        match event.event_type {
            zk::EventType::Session => return Err(expired()),
            zk::EventType::NodeDeleted if leading => {
                return Err(offer_gone(inner, &offer, session))
            }
            // Any event on the predecessor (or a data change on our node): look again.
            _ => {}
        }
    }
}

fn offer_gone(inner: &Inner, offer: &str, session: i64) -> Error {
    match inner.client.session_id() {
        Ok(current) if current == session => Error::new(
            ErrorCode::NoNode,
            format!("election offer {offer} was deleted"),
        ),
        Ok(_) => expired(),
        Err(err) => err,
    }
}
