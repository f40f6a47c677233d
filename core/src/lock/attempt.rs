//! One attempt to take a lock: its own node, its own identity, its own cleanup.
//!
//! Every attempt writes a fresh uuid into its node name, so a node left by an
//! abandoned attempt (a create still in flight when the deadline passed, a
//! reply lost in a connection drop) can be found and deleted by that attempt
//! alone — without waiting for, or ever being mistaken for, another attempt of
//! the same lock object. (With one uuid per object, a late node of an
//! abandoned attempt sat before the next attempt's node and blocked the lock
//! for every process while its cleanup waited behind that attempt.)

use std::sync::Arc;
use std::time::Duration;

use zookeeper_client as zk;

use super::contenders;
use super::monitor::{set_watch, SetWatch};
use super::owner::Owner;
use super::write_lock::lock_core::LockCore;
use crate::backoff::Backoff;
use crate::client::{delete_confirmed, expired, Client};
use crate::error::{Error, ErrorCode, Result};
use crate::observe::{recipe_event, Recipe};
use crate::runtime;

/// Our contender node right after its create, with what was pipelined behind it.
pub(super) struct Created {
    pub node: String,
    pub fencing_token: i64,
    pub session: i64,
    pub listing: Option<Vec<String>>,
    /// A watch that can follow the hold at no extra request: the child watch
    /// of the listing (it fires before the reply of our own delete), or a
    /// waiter's watch on its own node.
    pub watch: Option<SetWatch>,
}

/// How long a timed acquire that gave up waits for its node's delete.
const ABANDON_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

pub(super) struct Attempt {
    core: Arc<LockCore>,
    owner: Owner,
    /// `_c_<uuid>-<marker>`: the name of our node without its sequence.
    prefix: String,
    /// Session of the last create sent; `None` until one is sent.
    session: Option<i64>,
    /// Our node, once its create is known to have happened.
    node: Option<String>,
    /// Cleared once the node became a hold: nothing is left to clean up.
    armed: bool,
    /// Set once the attempt knows the lock is held by another (its first
    /// look is answered): until then a deadline does not cut it.
    looked: tokio::sync::watch::Sender<bool>,
}

impl Attempt {
    pub(super) fn new(core: Arc<LockCore>, owner: Owner) -> Attempt {
        let prefix = format!("_c_{}-{}", uuid::Uuid::new_v4(), core.side().marker());
        Attempt {
            core,
            owner,
            prefix,
            session: None,
            node: None,
            armed: true,
            looked: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Becomes true once the attempt has seen the lock held by another.
    pub(super) fn looked(&self) -> tokio::sync::watch::Receiver<bool> {
        self.looked.subscribe()
    }

    /// Contends until the lock is ours (its fencing token), or `None` when
    /// `try_only` and somebody else holds it. Unbounded: the caller bounds it
    /// and then calls `abandon`.
    pub(super) async fn run(&mut self, try_only: bool) -> Result<Option<i64>> {
        loop {
            let session = self.core.client().session_id()?;
            match self.contend(try_only).await {
                // A waiter whose session expired lost its place, not the lock:
                // it lines up again on the client's next session.
                Err(err) if err.code() == ErrorCode::SessionExpired => {
                    self.node = None;
                    self.core
                        .client()
                        .await_session_after_unless_refused(session)
                        .await?;
                }
                other => return other,
            }
        }
    }

    async fn contend(&mut self, try_only: bool) -> Result<Option<i64>> {
        let core = self.core.clone();
        if try_only && core.visibly_blocked(&core.list().await?) {
            return Ok(None);
        }
        let mut created = self.create().await?;
        loop {
            let contenders = match created.listing.take() {
                Some(children) => contenders::sorted(&children),
                None => {
                    let (contenders, watch) = core.list_watched().await?;
                    created.watch = watch.map(set_watch);
                    contenders
                }
            };
            let Some(ours) = contenders.iter().position(|c| c.name == created.node) else {
                if core.client().session_id()? != created.session {
                    return Err(expired());
                }
                // Deleted by somebody else while we waited: take a new place in line.
                self.node = None;
                created = self.create().await?;
                continue;
            };
            let Some(blocker) = core.blocker(&contenders, ours) else {
                // No await from here to the return: a caller's deadline can
                // never drop an attempt that already became a hold.
                self.armed = false;
                let token = created.fencing_token;
                core.take_hold(self.owner, created, *self.looked.borrow());
                return Ok(Some(token));
            };
            if try_only {
                return Ok(None);
            }
            self.looked.send_replace(true);
            // A waiter must not keep the child watch: it would wake on every join. Nor drop
            // it unfired: that costs a request.
            if let Some(watch) = created.watch.take() {
                drop(runtime::handle().spawn(watch));
            }
            let blocker = blocker.name.clone();
            let next = core.blocked_only_by_blocker(&contenders, ours);
            // Nor the listing: W waiters each keeping W names grew as W².
            drop(contenders);
            if !next {
                core.wait_for_change(&blocker).await?;
                continue;
            }
            // Boxed as `wait_for_change` is inside: every waiter's future would grow by its size.
            let waited = Box::pin(core.wait_as_next(&blocker, &created.node)).await?;
            if let Some(own_watch) = waited {
                // Next in line, the blocker deleted and our node still there: the lock is
                // ours without looking again, so a hand-off costs the holder's delete and
                // its notification, not also a listing's round trip. No await from here on.
                self.armed = false;
                let token = created.fencing_token;
                created.watch = Some(own_watch);
                core.take_hold(self.owner, created, *self.looked.borrow());
                return Ok(Some(token));
            }
        }
    }

    /// Creates our node with the children listing pipelined behind it.
    async fn create(&mut self) -> Result<Created> {
        let core = self.core.clone();
        let client = core.client();
        let dir = core.dir();
        let path_prefix = format!("{dir}/{}", self.prefix);
        let options = zk::CreateMode::EphemeralSequential.with_acls(client.acls());
        let identity = core.data().to_vec();
        // A create that keeps losing its connection (a server that drops every create, one past
        // its packet limit) must not become a reconnect storm: ~300 a second without it.
        let mut backoff = Backoff::new(Duration::from_millis(5), Duration::from_secs(1));
        loop {
            let zk = client.zk()?;
            let session = zk.session_id().0;
            // The request leaves with this call: from here on a cleanup is owed.
            self.session = Some(session);
            let create = zk.create(&path_prefix, &identity, &options);
            let list = zk.list_and_watch_children(dir);
            let (created, listed) = tokio::join!(create, list);
            drop(zk);
            match created.map_err(Error::from) {
                Ok((stat, sequence)) => {
                    let node = format!("{}{}", self.prefix, sequence);
                    self.node = Some(node.clone());
                    let (listing, children_watch) = match listed {
                        Ok((children, watch)) => (Some(children), Some(set_watch(watch))),
                        Err(_) => (None, None),
                    };
                    return Ok(Created {
                        node,
                        fencing_token: stat.czxid,
                        session,
                        listing,
                        watch: children_watch,
                    });
                }
                Err(err) if err.code() == ErrorCode::NoNode => {
                    client.ensure_container(dir, None).await?;
                }
                Err(err) if err.is_connection_loss() => {
                    client.await_usable(session, None).await?;
                    if let Some((node, fencing_token)) = self.find_own_node(session).await? {
                        self.node = Some(node.clone());
                        return Ok(Created {
                            node,
                            fencing_token,
                            session,
                            listing: None,
                            watch: None,
                        });
                    }
                    backoff.sleep().await;
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// After a lost create reply: our node, if the create happened. The
    /// listing is sent after the create on the same session, so it sees it.
    async fn find_own_node(&self, session: i64) -> Result<Option<(String, i64)>> {
        let client = self.core.client();
        let dir = self.core.dir();
        for child in own_children(client, dir, &self.prefix).await? {
            let path = format!("{dir}/{child}");
            let p = path.as_str();
            let stat = client
                .retrying(None, |zk| async move { zk.check_stat(p).await })
                .await?;
            match stat {
                Some(stat) if stat.ephemeral_owner == session => {
                    return Ok(Some((child, stat.czxid)))
                }
                Some(_) => delete_confirmed(client, &path).await?,
                None => {}
            }
        }
        Ok(None)
    }
}

impl Withdraw for Attempt {
    fn client(&self) -> &Client {
        self.core.client()
    }

    fn withdrawal(&mut self) -> Option<impl std::future::Future<Output = ()> + Send + 'static> {
        let session = disarmed(&mut self.armed, self.session)?;
        let client = self.core.client().clone();
        let dir = self.core.dir().to_string();
        let prefix = self.prefix.clone();
        let node = self.node.take();
        Some(async move {
            if let Err(err) = sweep(&client, &dir, &prefix, node, session).await {
                let reason = err.to_string();
                recipe_event!(
                    Recipe::Lock,
                    WARN,
                    path = dir.as_str(),
                    reason,
                    "lock {dir}: cannot withdraw an abandoned attempt's node (it goes with the session): {reason}"
                );
            }
        })
    }
}

impl Drop for Attempt {
    /// Cancellation (a dropped future) must never leave a contender behind
    /// that blocks everybody until our session ends.
    fn drop(&mut self) {
        self.withdraw_in_background();
    }
}

/// The session of an attempt's nodes, if a withdrawal is still owed (once: disarmed now); none
/// when it was taken already or nothing was created.
pub(crate) fn disarmed(armed: &mut bool, session: Option<i64>) -> Option<i64> {
    if !std::mem::take(armed) {
        return None;
    }
    session
}

/// What a lock's attempt and a semaphore's lease attempt share: the nodes an attempt may have
/// created are withdrawn exactly once — when it is abandoned, or else when it is dropped.
pub(crate) trait Withdraw {
    fn client(&self) -> &Client;

    /// The withdrawal still owed; taking it disarms the attempt (`None` after that, or when
    /// nothing was created).
    fn withdrawal(&mut self) -> Option<impl std::future::Future<Output = ()> + Send + 'static>;

    /// Withdraws whatever this attempt created, and waits (briefly) until the server
    /// confirmed it, so that a timed acquire that answered "no" has left nothing behind.
    /// The withdrawal itself runs to its end in the background even if this wait is cut short.
    async fn abandon(mut self)
    where
        Self: Sized,
    {
        if let Some(withdrawal) = self.withdrawal() {
            withdraw_briefly(self.client(), withdrawal).await;
        }
    }

    /// For `Drop`: a dropped future (cancellation) cannot wait, so the withdrawal runs alone.
    fn withdraw_in_background(&mut self) {
        if let Some(withdrawal) = self.withdrawal() {
            runtime::handle().spawn(withdrawal);
        }
    }
}

/// Runs an abandoned attempt's `cleanup` to its end in the background, and waits a moment for
/// it while the connection is up (one round trip or two); never long past the caller's
/// deadline — a silent partition must not turn a 1 ms timeout into seconds.
pub(crate) async fn withdraw_briefly(
    client: &Client,
    cleanup: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let task = runtime::handle().spawn(cleanup);
    if client.state().is_usable() {
        let _ = tokio::time::timeout(ABANDON_GRACE.min(client.session_timeout()), task).await;
    }
}

/// Children of `dir` written by the attempt with `prefix`.
pub(crate) async fn own_children(client: &Client, dir: &str, prefix: &str) -> Result<Vec<String>> {
    let mut children = client.children_if_present(dir).await?;
    children.retain(|c| c.starts_with(prefix));
    Ok(children)
}

/// Deletes the node of an abandoned attempt. When its name is unknown (the
/// create was in flight or its reply lost), the listing finds it: it is sent
/// after the create on the same session. Nothing is owed once that session
/// has ended, since the node was ephemeral.
async fn sweep(
    client: &Client,
    dir: &str,
    prefix: &str,
    node: Option<String>,
    session: i64,
) -> Result<()> {
    if let Some(node) = node {
        return delete_confirmed(client, &format!("{dir}/{node}")).await;
    }
    if client.session_id().ok() != Some(session) {
        return Ok(());
    }
    let children = match own_children(client, dir, prefix).await {
        Ok(children) => children,
        Err(err) if matches!(err.code(), ErrorCode::SessionExpired | ErrorCode::Closed) => {
            return Ok(())
        }
        Err(err) => return Err(err),
    };
    for child in children {
        delete_confirmed(client, &format!("{dir}/{child}")).await?;
    }
    Ok(())
}
