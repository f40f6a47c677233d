//! The double barrier (Curator's `DistributedDoubleBarrier`): `member_count` members enter
//! together and leave together. Layout: `<path>/<uuid>` per member (ephemeral) and
//! `<path>/ready` (persistent), created by the member that makes the count.
//!
//! Contract, including failures:
//! - `enter` watches `ready` before creating the member node (Curator's order, so the
//!   creation of `ready` by the last member is never missed), and returns `true` only when
//!   `ready` exists or at least `member_count` member nodes are listed: every wake-up (a
//!   spurious one, a connection change, a new session) counts again (Curator 5.9's GH-1290
//!   passed without the quorum). `ready` itself is never counted as a member, and it opens
//!   the barrier only for members inside that are older than its last opening: a `ready`
//!   left by a gone round (its last member lost its session while leaving) is counted past,
//!   never trusted, and the member that makes the quorum writes it again (`open`).
//! - A member that dies is dropped (its node is ephemeral). A waiter whose session expired
//!   creates its member node again on the next session, within its deadline.
//! - `enter` or `leave` that times out (`false`), fails or is cancelled withdraws this
//!   member's node (CURATOR-318 left it behind, so later rounds counted a ghost).
//! - `leave` is Curator's: the lowest member waits for the highest, every other deletes its
//!   own node and waits for the lowest; `true` once at most one member is left and ours is
//!   gone; the last to leave deletes `ready` (never a member while another is still in). Members are ordered by name (ASCII), as Curator
//!   and kazoo order them.
//! - One object is one member: its `enter`s and `leave`s run one at a time (a second caller
//!   waits for its turn within its own deadline). A `leave` without an `enter` waits until at
//!   most one member is left.
//! - Member names are a uuid per object, as Curator's: a create whose reply was lost is
//!   recognised by its `ephemeralOwner`, and a node left by an earlier session of ours is
//!   replaced.

use std::sync::{Arc, Mutex};

use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;
use zookeeper_client as zk;

use super::look::{look, wait, Woke};
use crate::client::{delete_confirmed, Client};
use crate::error::{Error, ErrorCode, Result};
use crate::observe::{
    recipe_event, Recipe, WaitCall, Waiting, DOUBLE_BARRIER_ENTER, DOUBLE_BARRIER_LEAVE,
};
use crate::wait::Wait;
use crate::{path, runtime};

/// The name Curator and kazoo give the node that opens the barrier.
const READY: &str = "ready";

#[derive(Clone)]
pub struct DoubleBarrier {
    core: Arc<Core>,
}

struct Core {
    client: Client,
    path: String,
    member_count: u32,
    /// Our member node's name: a uuid, as Curator's.
    name: String,
    /// The session our member node was created in, while it may exist.
    member: Mutex<Option<i64>>,
    /// One `enter` or `leave` of this member at a time: two callers sharing the object would
    /// otherwise share its one node, and one's withdrawal would leave the other waiting
    /// uncounted.
    busy: Arc<tokio::sync::Mutex<()>>,
}

impl DoubleBarrier {
    /// A member of the double barrier at `path` for `member_count` members. Fails with
    /// `INVALID_PATH` or `INVALID_ARGUMENT` (`member_count` 0) before anything is sent.
    pub fn new(client: &Client, path: &str, member_count: u32) -> Result<DoubleBarrier> {
        path::validate(path)?;
        client.check_open()?;
        if member_count == 0 || member_count > i32::MAX as u32 {
            return Err(Error::invalid_argument(format!(
                "member_count must be between 1 and {}, got {member_count}",
                i32::MAX
            )));
        }
        let core = Core {
            client: client.clone(),
            path: path.to_string(),
            member_count,
            name: uuid::Uuid::new_v4().to_string(),
            member: Mutex::new(None),
            busy: Arc::new(tokio::sync::Mutex::new(())),
        };
        Ok(DoubleBarrier {
            core: Arc::new(core),
        })
    }

    pub fn path(&self) -> &str {
        &self.core.path
    }

    pub fn member_count(&self) -> u32 {
        self.core.member_count
    }

    /// This member's node path.
    pub fn node_path(&self) -> String {
        self.core.member_path()
    }

    /// Enters and waits until `member_count` members are in: `true`, or `false` when `wait`
    /// ran out (our node withdrawn).
    pub async fn enter(&self, wait: impl Into<Wait>) -> Result<bool> {
        let mut waiting = self.core.waiting(&DOUBLE_BARRIER_ENTER);
        let deadline = wait.into().normalized().deadline();
        let Some(turn) = self.core.turn(deadline).await else {
            waiting.end_by(&Ok(false));
            return Ok(false);
        };
        let mut withdraw = Withdraw::armed(&self.core, turn);
        let entered = self.core.enter(deadline, &mut waiting).await;
        let entered = entered.map_err(|err| self.core.about(err));
        // Answered: what follows is the withdrawal of a member that did not get in.
        waiting.end_by(&entered);
        match entered {
            Ok(true) => withdraw.disarm(),
            Ok(false) | Err(_) => withdraw.now().await,
        }
        entered
    }

    /// Leaves and waits until every member left: `true`, or `false` when `wait` ran out (our
    /// node withdrawn in any case).
    pub async fn leave(&self, wait: impl Into<Wait>) -> Result<bool> {
        let mut waiting = self.core.waiting(&DOUBLE_BARRIER_LEAVE);
        let deadline = wait.into().normalized().deadline();
        let Some(turn) = self.core.turn(deadline).await else {
            waiting.end_by(&Ok(false));
            return Ok(false);
        };
        let mut withdraw = Withdraw::armed(&self.core, turn);
        let left = self.core.leave(deadline, &mut waiting).await;
        let left = left.map_err(|err| self.core.about(err));
        waiting.end_by(&left);
        withdraw.now().await;
        left
    }

    /// Takes this member out without waiting for the others: our node is deleted (confirmed)
    /// if it is there, and `ready` only when no member is left (never closing the barrier on a
    /// member inside, never leaving it open for the next entrants of the path). For an `enter` given up after it succeeded and for a binding's
    /// `close()`. Waits for this member's `enter` or `leave` in flight; runs to its end even if
    /// the answer is not waited for.
    pub fn withdraw(&self) -> impl std::future::Future<Output = Result<()>> + Send + 'static {
        let core = self.core.clone();
        let task = runtime::handle().spawn(async move {
            let _turn = core.busy.clone().lock_owned().await;
            core.withdraw_member().await
        });
        let core = self.core.clone();
        async move {
            let withdrawn = task.await.unwrap_or(Ok(()));
            withdrawn.map_err(|err| core.about(err))
        }
    }

    /// The member nodes listed now (`ready` not among them), in Curator's order.
    pub async fn members(&self) -> Result<Vec<String>> {
        let listed = self.core.members().await;
        listed.map_err(|err| self.core.about(err))
    }

    /// Whether `ready` exists: the barrier has opened and not everybody has left.
    pub async fn is_ready(&self) -> Result<bool> {
        let ready = self.core.ready_path();
        let ready = ready.as_str();
        let stat = self
            .core
            .client
            .retrying(None, |zk| async move { zk.check_stat(ready).await })
            .await;
        stat.map(|s| s.is_some())
            .map_err(|err| self.core.about(err))
    }
}

impl Core {
    fn about(&self, err: Error) -> Error {
        self.client.about(err, "double barrier", &self.path)
    }

    /// The numbers and events of an `enter` or a `leave` (`call`), from now until answered.
    fn waiting(&self, call: &'static WaitCall) -> Waiting {
        Waiting::begin(&self.client, call, &self.path)
    }

    /// This member's turn for an `enter` or `leave`, `None` when another caller's runs past the
    /// deadline.
    async fn turn(&self, deadline: Option<Instant>) -> Option<OwnedMutexGuard<()>> {
        let busy = self.busy.clone();
        match deadline {
            None => Some(busy.lock_owned().await),
            Some(at) => match busy.clone().try_lock_owned() {
                Ok(turn) => Some(turn),
                Err(_) => tokio::time::timeout_at(at, busy.lock_owned()).await.ok(),
            },
        }
    }

    fn member_path(&self) -> String {
        format!("{}/{}", self.path, self.name)
    }

    fn ready_path(&self) -> String {
        format!("{}/{READY}", self.path)
    }

    async fn enter(&self, deadline: Option<Instant>, waiting: &mut Waiting) -> Result<bool> {
        loop {
            // Watched before our node exists: the last member's `ready` is never missed.
            let Some((mut opened, mut watch)) =
                look(&self.client, deadline, self.watch_ready()).await?
            else {
                return Ok(false);
            };
            let session = self.create_member().await?;
            loop {
                if self.client.session_id()? != session {
                    // Our node went with the session: in again on this one.
                    break;
                }
                if let Some(ready) = &opened {
                    let opened_now = self.opened_for_those_inside(ready);
                    match look(&self.client, deadline, opened_now).await? {
                        None => return Ok(false),
                        Some(true) => return Ok(true),
                        // A gone round's `ready`: this round counts its own quorum.
                        Some(false) => {}
                    }
                }
                let Some(members) = look(&self.client, deadline, self.members()).await? else {
                    return Ok(false);
                };
                if members.len() >= self.member_count as usize {
                    self.open().await?;
                    return Ok(true);
                }
                waiting.queued();
                if let Woke::Deadline = wait(&self.client, watch, deadline).await? {
                    return Ok(false);
                }
                let Some((again, rearmed)) =
                    look(&self.client, deadline, self.watch_ready()).await?
                else {
                    return Ok(false);
                };
                (opened, watch) = (again, rearmed);
            }
        }
    }

    /// `ready`'s stat, if it exists, and a watch that fires when it is created, changed or
    /// deleted.
    async fn watch_ready(&self) -> Result<(Option<zk::Stat>, zk::OneshotWatcher)> {
        let ready = self.ready_path();
        let ready = ready.as_str();
        self.client
            .retrying(
                None,
                |zk| async move { zk.check_and_watch_stat(ready).await },
            )
            .await
    }

    /// Whether `ready` (as `stat` saw it) opened the barrier for a member inside now: one of
    /// them has a node older than its last opening (`mzxid`: its creation, or `open`'s
    /// refresh), which only follows a count of the quorum. A `ready` that no member inside is
    /// older than was left by a round that is gone (its last member lost its session while
    /// leaving, so nobody deleted it): trusting it let the next entrants pass without their
    /// quorum, as Curator's and kazoo's do with that layout.
    async fn opened_for_those_inside(&self, stat: &zk::Stat) -> Result<bool> {
        for member in self.members().await? {
            let node = format!("{}/{member}", self.path);
            let node = node.as_str();
            let found = self
                .client
                .retrying(None, |zk| async move { zk.check_stat(node).await })
                .await?;
            if found.is_some_and(|found| found.czxid < stat.mzxid) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn leave(&self, deadline: Option<Instant>, waiting: &mut Waiting) -> Result<bool> {
        loop {
            let Some(members) = look(&self.client, deadline, self.members()).await? else {
                return Ok(false);
            };
            let at = members.iter().position(|m| *m == self.name);
            if members.len() <= 1 {
                if members.len() == 1 && at.is_none() {
                    // The last member left is another's: it deletes `ready` when it goes
                    // (deleting it here would close the barrier on a member still inside).
                    return Ok(true);
                }
                break;
            }
            let target = if at == Some(0) {
                members.last()
            } else {
                if at.is_some() {
                    self.delete_member().await?;
                }
                members.first()
            };
            let target = format!("{}/{}", self.path, target.expect("two members or more"));
            let target = target.as_str();
            let watched =
                self.client.retrying(
                    None,
                    |zk| async move { zk.check_and_watch_stat(target).await },
                );
            let Some((stat, watch)) = look(&self.client, deadline, watched).await? else {
                return Ok(false);
            };
            if stat.is_some() {
                waiting.queued();
                if let Woke::Deadline = wait(&self.client, watch, deadline).await? {
                    return Ok(false);
                }
            }
        }
        // The last one out: our node (if still ours) and `ready`. Our member is forgotten only
        // once both are gone: a leave cut short here leaves them to the withdrawal that
        // follows (`Withdraw`), not to nobody.
        let session = *self.member.lock().unwrap();
        self.delete_node_of(session).await?;
        self.delete_ready().await?;
        self.forget_member(session);
        Ok(true)
    }

    /// The member nodes, `ready` left out, in name order.
    async fn members(&self) -> Result<Vec<String>> {
        let mut children = self.list().await?;
        children.retain(|c| c != READY);
        children.sort();
        Ok(children)
    }

    /// The children, `ready` included.
    async fn list(&self) -> Result<Vec<String>> {
        self.client.children_if_present(&self.path).await
    }

    /// Creates our member node on the current session (or finds the one a lost reply
    /// created); its session.
    async fn create_member(&self) -> Result<i64> {
        let path = self.member_path();
        let identity = self.client.identity().as_bytes().to_vec();
        loop {
            let zk = self.client.zk()?;
            let session = zk.session_id().0;
            *self.member.lock().unwrap() = Some(session);
            let options = zk::CreateMode::Ephemeral.with_acls(self.client.acls());
            let created = zk.create(&path, &identity, &options).await;
            drop(zk);
            match created.map_err(Error::from) {
                Ok(_) => return Ok(session),
                Err(err) if err.code() == ErrorCode::NoNode => {
                    self.client.ensure_container(&self.path, None).await?;
                }
                Err(err) if err.code() == ErrorCode::NodeExists => {
                    let p = path.as_str();
                    let stat = self
                        .client
                        .retrying(None, |zk| async move { zk.check_stat(p).await })
                        .await?;
                    match stat {
                        Some(stat) if stat.ephemeral_owner == session => return Ok(session),
                        // An earlier session's node, not expired yet: ours no longer.
                        Some(_) => delete_confirmed(&self.client, &path).await?,
                        None => {}
                    }
                }
                Err(err) if err.is_connection_loss() => {
                    // Found by its name (NODE_EXISTS above) if the create happened.
                    self.client.await_usable(session, None).await?;
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// Opens the barrier for this round, once its quorum is counted: `ready` created, or, if
    /// one is there (a gone round's, or made by another member of this round meanwhile),
    /// written again. Either way its `mzxid` is now past every counted member's node
    /// (`opened_for_those_inside`), and every waiter's watch fires. Nothing is deleted here: a
    /// delete could take a `ready` that another member has just opened.
    async fn open(&self) -> Result<()> {
        let ready = self.ready_path();
        let ready = ready.as_str();
        let acls = self.client.acls();
        let identity = self.client.identity().as_bytes();
        loop {
            let created = self
                .client
                .retrying(None, |zk| async move {
                    let options = zk::CreateMode::Persistent.with_acls(acls);
                    zk.create(ready, identity, &options).await
                })
                .await;
            match created {
                Ok(_) => return Ok(()),
                Err(err) if err.code() == ErrorCode::NodeExists => {}
                Err(err) => return Err(err),
            }
            let written = self
                .client
                .retrying(None, |zk| async move {
                    zk.set_data(ready, identity, None).await
                })
                .await;
            match written {
                Ok(_) => return Ok(()),
                // Deleted meanwhile (a last leaver of the round before): made anew.
                Err(err) if err.code() == ErrorCode::NoNode => {}
                // Another user's `ready` we may not write: the members counted pass, as they
                // did before `ready` was written again; a waiter still passes on its own count.
                Err(err) if err.code() == ErrorCode::NoAuth => return Ok(()),
                Err(err) => return Err(err),
            }
        }
    }

    /// Deletes our member node; forgotten only once the server confirmed it (a call cut
    /// short before leaves it for the withdrawal that follows: no ghost member).
    async fn delete_member(&self) -> Result<()> {
        let session = *self.member.lock().unwrap();
        self.delete_node_of(session).await?;
        self.forget_member(session);
        Ok(())
    }

    /// Deletes our member node if `session` (where it was created) is the current one.
    async fn delete_node_of(&self, session: Option<i64>) -> Result<()> {
        if session.is_some() && session == self.client.session_id().ok() {
            delete_confirmed(&self.client, &self.member_path()).await?;
        }
        Ok(())
    }

    /// No member node of `session` left to withdraw (unless one of another was made since).
    fn forget_member(&self, session: Option<i64>) {
        let mut member = self.member.lock().unwrap();
        if *member == session {
            *member = None;
        }
    }

    /// Takes our member node out outside a `leave` (a timed-out, failed or cancelled call, a
    /// withdrawal): as the last member, also `ready`, as the last to leave does. Left behind
    /// with nobody inside, `ready` would let the next entrants of the path pass without their
    /// quorum.
    async fn withdraw_member(&self) -> Result<()> {
        let session = *self.member.lock().unwrap();
        if session.is_none() {
            return Ok(());
        }
        // Forgotten at the end: a withdrawal cut short is done again by the next.
        self.delete_node_of(session).await?;
        if self.members().await?.is_empty() {
            self.delete_ready().await?;
        }
        self.forget_member(session);
        Ok(())
    }

    async fn delete_ready(&self) -> Result<()> {
        let ready = self.ready_path();
        let ready = ready.as_str();
        let deleted = self
            .client
            .retrying(None, |zk| async move { zk.delete(ready, None).await })
            .await;
        match deleted {
            Err(err) if !matches!(err.code(), ErrorCode::NoNode | ErrorCode::NotEmpty) => Err(err),
            _ => Ok(()),
        }
    }
}

/// Withdraws our member node unless disarmed: at once when asked (confirmed), in the
/// background when dropped (a cancelled enter or leave). It keeps the member's turn until the
/// node is gone: a withdrawal in the background must not delete the node of the next `enter`
/// of the same object.
struct Withdraw {
    core: Option<Arc<Core>>,
    turn: Option<OwnedMutexGuard<()>>,
}

impl Withdraw {
    fn armed(core: &Arc<Core>, turn: OwnedMutexGuard<()>) -> Withdraw {
        Withdraw {
            core: Some(core.clone()),
            turn: Some(turn),
        }
    }

    fn disarm(&mut self) {
        self.core = None;
        self.turn = None;
    }

    async fn now(&mut self) {
        // Still armed while it runs: cut short, the drop withdraws in the background.
        if let Some(core) = self.core.clone() {
            let withdrawn = core.withdraw_member().await;
            self.core = None;
            if let Err(err) = withdrawn {
                let (path, node, reason) =
                    (core.path.as_str(), core.member_path(), err.to_string());
                recipe_event!(
                    Recipe::Barrier,
                    WARN,
                    path,
                    node,
                    reason,
                    "double barrier {path}: cannot withdraw {node} (it goes with the session): {reason}"
                );
            }
        }
        self.turn = None;
    }
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if let Some(core) = self.core.take() {
            let turn = self.turn.take();
            runtime::handle().spawn(async move {
                let _ = core.withdraw_member().await;
                drop(turn);
            });
        }
    }
}
