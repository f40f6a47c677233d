//! One attempt to take leases while holding the semaphore's mutex: its own uuid in every node
//! name, its own cleanup.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use zookeeper_client as zk;

use super::{SemaphoreCore, LEASE_MARKER};
use crate::backoff::Backoff;
use crate::client::{delete_confirmed, expired, Client};
use crate::error::{Error, ErrorCode, Result};
use crate::lock::attempt::{disarmed, own_children, Withdraw};
use crate::lock::monitor::Keeper;
use crate::observe::{recipe_event, Recipe};

/// Leases the count allowed, with the session they belong to.
pub(super) struct Granted {
    pub(super) nodes: Vec<(String, i64)>,
    pub(super) session: i64,
    /// The listing's child watch: the first lease's loss detector at no extra request.
    pub(super) children_watch: Option<zk::OneshotWatcher>,
}

pub(super) struct LeaseAttempt {
    core: Arc<SemaphoreCore>,
    count: usize,
    /// `_c_<uuid>-lease-`: our nodes' names without their sequences.
    prefix: String,
    /// Session of the last create sent; `None` until one is sent.
    session: Option<i64>,
    /// Our nodes known to exist, with their fencing tokens.
    nodes: Vec<(String, i64)>,
    /// Creates were sent whose outcome is unknown: the cleanup must look for them by name.
    in_doubt: bool,
    /// Cleared once the nodes became leases: nothing is left to clean up.
    armed: bool,
    /// Set once it found every lease taken and waited for one.
    waited: bool,
}

impl LeaseAttempt {
    pub(super) fn new(core: Arc<SemaphoreCore>, count: u32) -> LeaseAttempt {
        LeaseAttempt {
            core,
            count: count as usize,
            prefix: format!("_c_{}-{LEASE_MARKER}", uuid::Uuid::new_v4()),
            session: None,
            nodes: Vec::new(),
            in_doubt: false,
            armed: true,
            waited: false,
        }
    }

    /// Whether it had to wait for a lease to be released.
    pub(super) fn waited(&self) -> bool {
        self.waited
    }

    /// Creates our nodes and waits until the leases number at most `max_leases`. `None` when
    /// the deadline passed first (after one look at least) or, for a try, at the first look.
    pub(super) async fn run(
        &mut self,
        deadline: Option<Instant>,
        try_only: bool,
    ) -> Result<Option<Granted>> {
        let core = self.core.clone();
        let dir = core.leases_dir();
        loop {
            let session = self.create_missing().await?;
            // Taken before the listing: a change of a shared count after it wakes the wait.
            let mut limit_changes = core.limit_changes();
            let listed = core
                .client()
                .retrying(
                    None,
                    |zk| async move { zk.list_and_watch_children(dir).await },
                )
                .await;
            let (children, watch) = match listed {
                Ok((children, watch)) => (children, Some(watch)),
                Err(err) if err.code() == ErrorCode::NoNode => (Vec::new(), None),
                Err(err) => return Err(err),
            };
            if core.client().session_id()? != session {
                return Err(expired());
            }
            let before = self.nodes.len();
            self.nodes.retain(|(n, _)| children.contains(n));
            if self.nodes.len() != before {
                // Deleted by somebody else (an operator): made again in the next round.
                continue;
            }
            if children.len() <= core.max_leases() as usize {
                // No await from here to the return: a caller's deadline can never drop an
                // attempt whose nodes became leases.
                self.armed = false;
                return Ok(Some(Granted {
                    nodes: std::mem::take(&mut self.nodes),
                    session,
                    children_watch: watch,
                }));
            }
            if try_only || deadline.is_some_and(|at| Instant::now() >= at) {
                return Ok(None);
            }
            self.waited = true;
            // A wait without a watch (the directory vanished) looks again after a moment.
            let changed = async {
                match watch {
                    Some(watch) => drop(watch.changed().await),
                    None => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            };
            let until = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let limit_changed = async {
                match &mut limit_changes {
                    Some(changes) => drop(changes.recv().await),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = changed => {}
                () = limit_changed => {}
                () = until => return Ok(None),
                () = core.client().closed() => return Err(Error::closed()),
            }
        }
    }

    /// Creates the nodes still missing (pipelined), returning the session they belong to.
    async fn create_missing(&mut self) -> Result<i64> {
        let core = self.core.clone();
        let client = core.client();
        let dir = core.leases_dir();
        let path_prefix = format!("{dir}/{}", self.prefix);
        let options = zk::CreateMode::EphemeralSequential.with_acls(client.acls());
        let identity = client.identity().as_bytes().to_vec();
        let mut backoff = Backoff::new(Duration::from_millis(5), Duration::from_secs(1));
        loop {
            let zk = client.zk()?;
            let session = zk.session_id().0;
            if self.session.is_some_and(|s| s != session) {
                // The session of our nodes and of the mutex we hold ended: leases made in
                // the next one would be made without the mutex. The caller starts over.
                return Err(expired());
            }
            let missing = self.count - self.nodes.len();
            if missing == 0 {
                return Ok(session);
            }
            // The requests leave with this call: from here on a cleanup is owed.
            self.session = Some(session);
            self.in_doubt = true;
            let creates: Vec<_> = (0..missing)
                .map(|_| zk.create(&path_prefix, &identity, &options))
                .collect();
            let mut failed = None;
            for create in creates {
                match create.await.map_err(Error::from) {
                    Ok((stat, sequence)) => self
                        .nodes
                        .push((format!("{}{}", self.prefix, sequence), stat.czxid)),
                    Err(err) => failed = failed.or(Some(err)),
                }
            }
            drop(zk);
            match failed {
                None => {
                    self.in_doubt = false;
                    return Ok(session);
                }
                Some(err) if err.code() == ErrorCode::NoNode => {
                    self.in_doubt = false;
                    client.ensure_container(dir, None).await?;
                }
                Some(err) if err.is_connection_loss() => {
                    client.await_usable(session, None).await?;
                    self.find_own_nodes(session).await?;
                    self.in_doubt = false;
                    backoff.sleep().await;
                }
                Some(err) => return Err(err),
            }
        }
    }

    /// After lost create replies: adopts the nodes of ours that were created (the listing is
    /// sent after the creates on the same session, so it sees them).
    async fn find_own_nodes(&mut self, session: i64) -> Result<()> {
        let core = self.core.clone();
        let client = core.client();
        let dir = core.leases_dir();
        let children = match client
            .retrying(None, |zk| async move { zk.list_children(dir).await })
            .await
        {
            Ok(children) => children,
            Err(err) if err.code() == ErrorCode::NoNode => Vec::new(),
            Err(err) => return Err(err),
        };
        for child in children {
            if !child.starts_with(&self.prefix) || self.nodes.iter().any(|(n, _)| *n == child) {
                continue;
            }
            let path = format!("{dir}/{child}");
            let p = path.as_str();
            let stat = client
                .retrying(None, |zk| async move { zk.check_stat(p).await })
                .await?;
            match stat {
                Some(stat) if stat.ephemeral_owner == session => {
                    if self.nodes.len() < self.count {
                        self.nodes.push((child, stat.czxid));
                    } else {
                        delete_confirmed(client, &path).await?;
                    }
                }
                Some(_) => delete_confirmed(client, &path).await?,
                None => {}
            }
        }
        Ok(())
    }
}

impl Withdraw for LeaseAttempt {
    fn client(&self) -> &Client {
        self.core.client()
    }

    fn withdrawal(&mut self) -> Option<impl std::future::Future<Output = ()> + Send + 'static> {
        let session = disarmed(&mut self.armed, self.session)?;
        let client = self.core.client().clone();
        let dir = self.core.leases_dir().to_string();
        let prefix = self.prefix.clone();
        let known: Vec<String> = self.nodes.drain(..).map(|(n, _)| n).collect();
        let in_doubt = self.in_doubt;
        Some(async move {
            if !in_doubt {
                for node in known {
                    if let Err(err) = delete_confirmed(&client, &format!("{dir}/{node}")).await {
                        cannot_withdraw(&dir, &node, &err);
                    }
                }
                return;
            }
            // Every node of ours, also those whose create reply never came: the listing is
            // sent after the creates on the same session.
            if client.session_id().ok() != Some(session) {
                return;
            }
            let Ok(children) = own_children(&client, &dir, &prefix).await else {
                return;
            };
            for child in children {
                if let Err(err) = delete_confirmed(&client, &format!("{dir}/{child}")).await {
                    cannot_withdraw(&dir, &child, &err);
                }
            }
        })
    }
}

impl Drop for LeaseAttempt {
    /// Cancellation (a dropped future) must never leave a lease node behind that takes a
    /// permit until our session ends.
    fn drop(&mut self) {
        self.withdraw_in_background();
    }
}

/// A withdrawal that failed: the node takes a permit until its session ends.
fn cannot_withdraw(dir: &str, node: &str, err: &Error) {
    let reason = err.to_string();
    recipe_event!(
        Recipe::Semaphore,
        WARN,
        path = dir,
        node,
        reason,
        "semaphore {dir}: cannot withdraw the abandoned lease node {node} (it holds a permit until its session ends): {reason}"
    );
}
