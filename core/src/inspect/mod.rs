//! What is at a recipe path, as an operator needs to see it: who holds a
//! lock and who waits, who leads, how deep a queue is, which library made
//! each node, and which nodes outlived the process that made them.
//!
//! The rules that decide "holder" and "leader" are the recipes' own
//! (`contenders::sorted`, lowest `n_` leads), so `status` can never disagree
//! with what a lock or an election of this library would do on that path.
//!
//! A node's session is "alive" when some server of the ensemble has a
//! connection for it (the `cons` four-letter word). A killed or paused
//! process keeps its ephemeral nodes until its session expires; those nodes
//! are the ones that jam a lock for everybody, so they are flagged. Servers
//! that refuse `cons` (not in `4lw.commands.whitelist`) make the state
//! "unknown", never "dead".

mod layout;
mod nodes;
mod sessions;

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use zookeeper_client as zk;

use crate::backoff::Backoff;
use crate::client::Client;
use crate::discovery::ServiceInstance;
use crate::error::{Error, ErrorCode, Result};
use crate::lock::contenders::{self, Kind};
use crate::path;
use layout::is_member_name;
pub use layout::layout;
use nodes::{election_nodes, flag_orphans, list, lock_nodes, node, read_nodes};
use sessions::check_sessions;

/// Longest data shown per node: identities and host names are short; a
/// node with a large payload is not shown whole in a status.
const DATA_SHOWN: usize = 200;
const FOUR_LETTER_TIMEOUT: Duration = Duration::from_secs(3);

/// The role a node plays in its recipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Holds the lock (the first writer, or a reader with no writer before it).
    Holder,
    /// Waits for the lock, in this order.
    Waiter,
    /// The lowest offer of an election.
    Leader,
    /// An offer behind the leader.
    Candidate,
    /// A work queue job claimed by a consumer (`taken/<entry>`).
    Claim,
    /// A semaphore's lease node (`leases/<node>`): held, or made by an acquirer that is
    /// counting while it holds the semaphore's mutex.
    Lease,
    /// A double barrier's member node.
    Member,
    /// An instance registered in Curator's service discovery registry.
    Instance,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Holder => "holder",
            Role::Waiter => "waiter",
            Role::Leader => "leader",
            Role::Candidate => "candidate",
            Role::Claim => "claim",
            Role::Lease => "lease",
            Role::Member => "member",
            Role::Instance => "instance",
        }
    }
}

/// Whether the session that owns an ephemeral node is still connected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionState {
    /// A server has a connection for the session.
    Alive,
    /// No server has a connection for it: its process is dead or cut
    /// off, and the server deletes its nodes when the session expires.
    Disconnected,
    /// Not every server answered `cons`.
    Unknown,
    /// The node is persistent: no session will ever take it away.
    Persistent,
}

impl SessionState {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Alive => "alive",
            SessionState::Disconnected => "disconnected",
            SessionState::Unknown => "unknown",
            SessionState::Persistent => "persistent",
        }
    }
}

/// One coordination node (lock contender, election offer, job claim).
#[derive(Clone, Debug)]
pub struct NodeStatus {
    pub name: String,
    pub role: Role,
    /// `"read"` or `"write"` for lock contenders.
    pub kind: Option<&'static str>,
    pub sequence: Option<i64>,
    /// Which recipe writes nodes named like this one.
    pub recipe: &'static str,
    /// Which libraries write this layout (see `layout`).
    pub libraries: &'static [&'static str],
    /// The node's data as text (identity, host name, consumer), shortened.
    pub data: String,
    /// The owning session, or `None` for a persistent node.
    pub session: Option<i64>,
    pub session_state: SessionState,
    /// Server time of creation, milliseconds since the epoch.
    pub created_ms: i64,
    /// The node's czxid: a lock holder's fencing token.
    pub czxid: i64,
    /// Why this node is likely left over, if it is.
    pub orphan: Option<String>,
}

/// Counts of a work queue (`entries/`, `taken/`, `dead/`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkQueueCounts {
    pub ready: usize,
    pub claimed: usize,
    pub dead: usize,
}

/// Counts of a semaphore (`leases/`, `locks/`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SemaphoreCounts {
    pub leases: usize,
    /// Nodes of the semaphore's mutex: acquirers counting or waiting to count.
    pub acquiring: usize,
}

/// A double barrier's state: its members, and whether `ready` exists (it opened).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DoubleBarrierState {
    pub members: usize,
    pub ready: bool,
}

/// Everything `status` reports about one path.
#[derive(Clone, Debug)]
pub struct Status {
    pub path: String,
    pub exists: bool,
    /// Lock contenders in lock order, then election offers in order, then
    /// work queue claims.
    pub nodes: Vec<NodeStatus>,
    /// Items of a simple queue (`qn-`, and kazoo's `entry-` form).
    pub queue_items: usize,
    pub work_queue: Option<WorkQueueCounts>,
    pub semaphore: Option<SemaphoreCounts>,
    pub double_barrier: Option<DoubleBarrierState>,
    /// At a service discovery registry's base: each service with its instance count.
    pub services: Vec<(String, usize)>,
    /// Children that are none of the above (directories, foreign nodes).
    pub other_children: Vec<String>,
    /// Why session states are `Unknown`, if they are.
    pub sessions_note: Option<String>,
    /// Whether the looking session runs over TLS.
    pub tls: bool,
    /// The identities the server authenticated the looking session as.
    pub authenticated_as: Vec<String>,
}

impl Status {
    pub fn holders(&self) -> impl Iterator<Item = &NodeStatus> {
        self.nodes.iter().filter(|n| n.role == Role::Holder)
    }

    pub fn leader(&self) -> Option<&NodeStatus> {
        self.nodes.iter().find(|n| n.role == Role::Leader)
    }

    pub fn orphans(&self) -> impl Iterator<Item = &NodeStatus> {
        self.nodes.iter().filter(|n| n.orphan.is_some())
    }
}

/// What is at `dir`, with each coordination node's session checked against
/// the servers of the client's connect string.
pub async fn status(client: &Client, dir: &str) -> Result<Status> {
    path::validate(dir)?;
    status_unscoped(client, dir)
        .await
        .map_err(|err| client.about(err, "status of", dir))
}

async fn status_unscoped(client: &Client, dir: &str) -> Result<Status> {
    let mut status = Status {
        path: dir.to_string(),
        exists: true,
        nodes: Vec::new(),
        queue_items: 0,
        work_queue: None,
        semaphore: None,
        double_barrier: None,
        services: Vec::new(),
        other_children: Vec::new(),
        sessions_note: None,
        tls: client.is_tls(),
        authenticated_as: client.authenticated_as(),
    };
    let children = match list(client, dir).await? {
        Some(children) => children,
        None => {
            status.exists = false;
            return Ok(status);
        }
    };
    let mut lockers = Vec::new();
    let mut offers = Vec::new();
    let mut directories = Vec::new();
    for child in children {
        match layout(&child, b"") {
            Some(("queue", _)) => status.queue_items += 1,
            Some(("election" | "latch", _)) => offers.push(child),
            Some(_) => lockers.push(child),
            None => directories.push(child),
        }
    }
    let is_work_queue = directories.iter().any(|d| d == "entries");
    let zk = client.zk()?;
    let mut nodes = lock_nodes(&zk, dir, &lockers).await?;
    nodes.extend(election_nodes(&zk, dir, offers).await?);
    if is_work_queue {
        let count = |sub: &str| {
            let sub = format!("{dir}/{sub}");
            async move { Ok::<_, Error>(list(client, &sub).await?.unwrap_or_default()) }
        };
        let (entries, taken, dead) = tokio::join!(count("entries"), count("taken"), count("dead"));
        let taken = taken?;
        status.work_queue = Some(WorkQueueCounts {
            ready: entries?.len().saturating_sub(taken.len()),
            claimed: taken.len(),
            dead: dead?.len(),
        });
        let mut claims = read_nodes(&zk, &format!("{dir}/taken"), &taken).await?;
        claims.sort_by(|a, b| a.0.cmp(&b.0));
        nodes.extend(
            claims
                .into_iter()
                .map(|(name, data, stat)| node(name, Role::Claim, None, &data, &stat)),
        );
        for known in ["entries", "taken", "dead"] {
            directories.retain(|d| d != known);
        }
    }
    if directories.iter().any(|d| d == "leases") {
        let leases = list(client, &format!("{dir}/leases"))
            .await?
            .unwrap_or_default();
        let acquiring = list(client, &format!("{dir}/locks"))
            .await?
            .unwrap_or_default();
        status.semaphore = Some(SemaphoreCounts {
            leases: leases.len(),
            acquiring: acquiring.len(),
        });
        let mut names = leases;
        contenders::sort_by_sequence(&mut names, |n| {
            contenders::split_sequence(n).map_or(i64::MAX, |(_, s)| s)
        });
        let read = read_nodes(&zk, &format!("{dir}/leases"), &names).await?;
        nodes.extend(
            read.into_iter()
                .map(|(name, data, stat)| node(name, Role::Lease, None, &data, &stat)),
        );
        directories.retain(|d| d != "leases" && d != "locks");
    }
    let members: Vec<String> = directories
        .iter()
        .filter(|d| is_member_name(d))
        .cloned()
        .collect();
    let ready = directories.iter().any(|d| d == "ready");
    if !members.is_empty() || ready {
        status.double_barrier = Some(DoubleBarrierState {
            members: members.len(),
            ready,
        });
        let mut members = members;
        members.sort();
        let read = read_nodes(&zk, dir, &members).await?;
        nodes.extend(
            read.into_iter()
                .map(|(name, data, stat)| node(name, Role::Member, None, &data, &stat)),
        );
        directories.retain(|d| d != "ready" && !is_member_name(d));
    }
    registry(&zk, dir, &mut directories, &mut nodes, &mut status.services).await?;
    status.other_children = directories;
    status.sessions_note = check_sessions(client, &mut nodes).await;
    flag_orphans(&mut nodes);
    status.nodes = nodes;
    Ok(status)
}

/// The most service directories `status` looks into at a registry's base.
const SERVICES_LOOKED_AT: usize = 200;

/// Curator's service discovery registry: at a service, the children whose data is an instance
/// (as `Role::Instance` nodes, their sessions checked like any); at the base, the services whose
/// first instance reads as one, with their instance counts. What is recognized leaves
/// `directories`.
async fn registry(
    zk: &zk::Client,
    dir: &str,
    directories: &mut Vec<String>,
    nodes: &mut Vec<NodeStatus>,
    services: &mut Vec<(String, usize)>,
) -> Result<()> {
    if directories.is_empty() {
        return Ok(());
    }
    let read = read_nodes(zk, dir, directories).await?;
    let mut instances = Vec::new();
    for (name, data, stat) in read {
        if let Ok(instance) = ServiceInstance::from_json(&data) {
            let mut status = node(name, Role::Instance, None, &data, &stat);
            let or_dash = |value: Option<String>| value.unwrap_or_else(|| "-".into());
            status.data = format!(
                "{}:{}",
                or_dash(instance.address),
                or_dash(instance.port.or(instance.ssl_port).map(|p| p.to_string()))
            );
            instances.push(status);
        }
    }
    if !instances.is_empty() {
        directories.retain(|d| !instances.iter().any(|i| &i.name == d));
        nodes.extend(instances);
        return Ok(());
    }
    for service in directories.iter().take(SERVICES_LOOKED_AT) {
        let path = path::join(dir, service);
        let Ok(children) = zk.list_children(&path).await else {
            continue;
        };
        let Some(first) = children.first() else {
            continue;
        };
        let looks_so = match zk.get_data(&path::join(&path, first)).await {
            Ok((data, _)) => ServiceInstance::from_json(&data).is_ok(),
            Err(_) => false,
        };
        if looks_so {
            services.push((service.clone(), children.len()));
        }
    }
    directories.retain(|d| !services.iter().any(|(s, _)| s == d));
    Ok(())
}

/// A watch on the children of a directory (or on its creation). Set it
/// before reading what it guards: a change between the read and the watch
/// would go unseen until the next one (found by the adversarial test: `elect
/// --observe` missed a whole one-second term on a new election path).
pub struct Change(Option<zk::OneshotWatcher>);

impl Change {
    /// Returns once the watched children change, or `timeout` passes.
    pub async fn changed(self, timeout: Duration) {
        if let Some(watcher) = self.0 {
            let _ = tokio::time::timeout(timeout, watcher.changed()).await;
        }
    }
}

/// Watches the children of `dir`; see `Change`.
pub async fn watch_change(client: &Client, dir: &str) -> Result<Change> {
    path::validate(dir)?;
    let zk = client.zk()?;
    match zk.list_and_watch_children(dir).await {
        Ok((_, watcher)) => Ok(Change(Some(watcher))),
        Err(zk::Error::NoNode) => match zk.check_and_watch_stat(dir).await {
            // Made between the two requests: that is the change.
            Ok((Some(_), _)) => Ok(Change(None)),
            Ok((None, watcher)) => Ok(Change(Some(watcher))),
            Err(err) => Err(Error::from(err)),
        },
        Err(err) => Err(Error::from(err)),
    }
}

/// `read` again after each connection loss or session expiry, once the
/// client is usable again: a watcher (`elect --observe`, `status --watch`)
/// must keep watching through an outage, not exit, and whatever it reads in
/// a new session describes the directory afresh.
pub async fn through_outages<T, F, Fut>(client: &Client, mut read: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    // The error can come before the state it is caused by is published.
    let mut backoff = Backoff::new(Duration::from_millis(20), Duration::from_secs(2));
    loop {
        match read().await {
            Err(err) if err.is_connection_loss() || err.code() == ErrorCode::SessionExpired => {
                backoff.sleep().await;
                client.await_new_session().await?;
            }
            other => return other,
        }
    }
}
