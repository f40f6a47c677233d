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

use std::collections::HashSet;
use std::future::Future;
use std::net::IpAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use zookeeper_client as zk;

use crate::backoff::Backoff;
use crate::client::Client;
use crate::error::{Error, ErrorCode, Result};
use crate::lock::contenders::{self, Kind};
use crate::path;

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

/// Which recipe writes a child named `name` (with `data`), and which
/// libraries write that exact form; `None` when it is not a recipe node.
///
/// zkrecipes deliberately writes Curator's names, so only the data can tell
/// the two apart: Curator writes the client's IP address by default, we write
/// the identity (the host name by default).
pub fn layout(name: &str, data: &[u8]) -> Option<(&'static str, &'static [&'static str])> {
    const OURS_OR_APACHE: &[&str] = &["zkrecipes", "apache"];
    let (prefix, _) = contenders::split_sequence(name)?;
    if prefix == "n_" {
        return Some(("election", OURS_OR_APACHE));
    }
    if prefix == "qn-" {
        return Some(("queue", &["zkrecipes", "apache", "curator"]));
    }
    if is_kazoo_queue_entry(prefix) {
        return Some(("queue", &["kazoo"]));
    }
    if let Some(rest) = protected_rest(prefix) {
        let curator_data = std::str::from_utf8(data)
            .ok()
            .is_some_and(|d| d.trim().parse::<IpAddr>().is_ok());
        return Some(match rest {
            "latch-" if curator_data => ("latch", &["curator"]),
            "latch-" => ("latch", &["zkrecipes"]),
            "lease-" if curator_data => ("semaphore", &["curator"]),
            "lease-" => ("semaphore", &["zkrecipes"]),
            "lock-" | "__READ__" | "__WRIT__" if curator_data => ("lock", &["curator"]),
            "lock-" | "__READ__" | "__WRIT__" => ("lock", &["zkrecipes"]),
            _ => ("lock", &["curator"]),
        });
    }
    if let Some(session) = prefix.strip_prefix("x-").and_then(|r| r.strip_suffix('-')) {
        if session
            .trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            return Some(("lock", &["apache"]));
        }
    }
    for marker in ["__lock__", "__rlock__"] {
        if let Some(id) = prefix.strip_suffix(marker) {
            if id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Some(("lock", &["kazoo"]));
            }
        }
    }
    Some(("lock", &["unknown"]))
}

/// `_c_<36-char uuid>-<rest>` → `rest`.
fn protected_rest(prefix: &str) -> Option<&str> {
    let after = prefix.strip_prefix("_c_")?;
    let (uuid, rest) = (after.get(..36)?, after.get(36..)?);
    let dashed = uuid.bytes().filter(|&b| b == b'-').count() == 4;
    (dashed && rest.starts_with('-')).then(|| &rest[1..])
}

/// A double barrier member: a uuid as Curator and we write it (36 characters, dashed), or as
/// kazoo does (32 hex digits).
fn is_member_name(name: &str) -> bool {
    let hex = |s: &str| s.bytes().all(|b| b.is_ascii_hexdigit());
    match name.len() {
        32 => hex(name),
        36 => {
            let parts: Vec<&str> = name.split('-').collect();
            parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12]) && parts.iter().all(|p| hex(p))
        }
        _ => false,
    }
}

/// kazoo's `Queue` writes `entry-<priority:03>-<seq>` right under its path.
fn is_kazoo_queue_entry(prefix: &str) -> bool {
    prefix
        .strip_prefix("entry-")
        .and_then(|r| r.strip_suffix('-'))
        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
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
    status.other_children = directories;
    status.sessions_note = check_sessions(client, &mut nodes).await;
    flag_orphans(&mut nodes);
    status.nodes = nodes;
    Ok(status)
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

async fn list(client: &Client, dir: &str) -> Result<Option<Vec<String>>> {
    let listed = client
        .retrying(None, |zk| async move { zk.list_children(dir).await })
        .await;
    match listed {
        Ok(children) => Ok(Some(children)),
        Err(err) if err.code() == ErrorCode::NoNode => Ok(None),
        Err(err) => Err(err),
    }
}

/// Data and stat of each child; a child deleted meanwhile is left out.
async fn read_nodes(
    zk: &zk::Client,
    dir: &str,
    names: &[String],
) -> Result<Vec<(String, Vec<u8>, zk::Stat)>> {
    let paths: Vec<String> = names.iter().map(|n| format!("{dir}/{n}")).collect();
    // All requests are sent before the first reply is awaited.
    let requests: Vec<_> = paths.iter().map(|p| zk.get_data(p)).collect();
    let mut read = Vec::with_capacity(names.len());
    for (name, request) in names.iter().zip(requests) {
        match request.await {
            Ok((data, stat)) => read.push((name.clone(), data, stat)),
            Err(zk::Error::NoNode) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(read)
}

async fn lock_nodes(zk: &zk::Client, dir: &str, names: &[String]) -> Result<Vec<NodeStatus>> {
    let ordered = contenders::sorted(names);
    let names: Vec<String> = ordered.iter().map(|c| c.name.clone()).collect();
    let read = read_nodes(zk, dir, &names).await?;
    // The lock's own rule: a writer holds when it is first; a reader holds
    // when no writer is before it.
    let mut writer_seen = false;
    let mut nodes = Vec::with_capacity(read.len());
    for (i, (name, data, stat)) in read.into_iter().enumerate() {
        let kind = contenders::Contender::parse(&name).map(|c| c.kind);
        let holds = match kind {
            Some(Kind::Read) => !writer_seen,
            _ => i == 0,
        };
        if kind != Some(Kind::Read) {
            writer_seen = true;
        }
        let role = if holds { Role::Holder } else { Role::Waiter };
        let kind = Some(if kind == Some(Kind::Read) {
            "read"
        } else {
            "write"
        });
        nodes.push(node(name, role, kind, &data, &stat));
    }
    Ok(nodes)
}

async fn election_nodes(
    zk: &zk::Client,
    dir: &str,
    mut names: Vec<String>,
) -> Result<Vec<NodeStatus>> {
    contenders::sort_by_sequence(&mut names, |n| {
        contenders::split_sequence(n).map_or(0, |(_, s)| s)
    });
    let read = read_nodes(zk, dir, &names).await?;
    Ok(read
        .into_iter()
        .enumerate()
        .map(|(i, (name, data, stat))| {
            let role = if i == 0 {
                Role::Leader
            } else {
                Role::Candidate
            };
            node(name, role, None, &data, &stat)
        })
        .collect())
}

fn node(
    name: String,
    role: Role,
    kind: Option<&'static str>,
    data: &[u8],
    stat: &zk::Stat,
) -> NodeStatus {
    let (recipe, libraries) = match role {
        Role::Claim => ("work queue", &["zkrecipes", "kazoo"][..]),
        Role::Member => (
            "double barrier",
            if name.len() == 32 {
                &["kazoo"][..]
            } else {
                &["zkrecipes", "curator"][..]
            },
        ),
        _ => layout(&name, data).unwrap_or(("lock", &["unknown"])),
    };
    let mut text = String::from_utf8_lossy(data).into_owned();
    if text.len() > DATA_SHOWN {
        let mut end = DATA_SHOWN;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    let session = (stat.ephemeral_owner != 0).then_some(stat.ephemeral_owner);
    NodeStatus {
        sequence: contenders::split_sequence(&name).map(|(_, s)| s),
        name,
        role,
        kind,
        recipe,
        libraries,
        data: text,
        session,
        session_state: if session.is_some() {
            SessionState::Unknown
        } else {
            SessionState::Persistent
        },
        created_ms: stat.ctime,
        czxid: stat.czxid,
        orphan: None,
    }
}

fn flag_orphans(nodes: &mut [NodeStatus]) {
    for node in nodes {
        node.orphan = match node.session_state {
            SessionState::Disconnected => Some(format!(
                "session {:#x} has no connection to any server: its process died or is cut off; \
                 the server deletes this node only when the session expires",
                node.session.unwrap_or_default()
            )),
            SessionState::Persistent => Some(
                "persistent: no session will ever delete it; it stays in line until somebody does"
                    .to_string(),
            ),
            SessionState::Alive | SessionState::Unknown => None,
        };
    }
}

/// Sets each ephemeral node's session state from the servers' `cons`;
/// returns why states stay unknown, if they do.
async fn check_sessions(client: &Client, nodes: &mut [NodeStatus]) -> Option<String> {
    if nodes.iter().all(|n| n.session.is_none()) {
        return None;
    }
    let (connected, note) = connected_sessions(client, &servers(client.connect_string())).await;
    for node in nodes.iter_mut() {
        if let Some(session) = node.session {
            node.session_state = if connected.contains(&session) {
                SessionState::Alive
            } else if note.is_none() {
                SessionState::Disconnected
            } else {
                SessionState::Unknown
            };
        }
    }
    note
}

/// The `host:port` of every server in a connect string.
fn servers(connect_string: &str) -> Vec<String> {
    let hosts = connect_string.split('/').next().unwrap_or_default();
    hosts
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(|h| {
            if h.rsplit_once(':')
                .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
            {
                h.to_string()
            } else {
                format!("{h}:2181")
            }
        })
        .collect()
}

/// Sessions with a connection on any of `servers`, and a note when a server
/// did not tell (then a session missing from the set may still be alive).
///
/// `cons` lists the connections of the port it is asked on only: a TLS
/// client asks its TLS ports and also the plain port each server names in
/// `conf`; a plain client cannot ask a TLS port, so a server that has one
/// leaves the states unknown rather than calling TLS sessions disconnected
/// (found by an adversarial review: a live TLS holder shown as an orphan).
async fn connected_sessions(client: &Client, servers: &[String]) -> (HashSet<i64>, Option<String>) {
    let tls = client.tls().cloned();
    let ask = |server: String, command: &'static str| {
        let tls = tls.clone();
        async move {
            match tls {
                Some(tls) => {
                    let exchange = tokio::task::spawn_blocking(move || {
                        crate::connect_diagnosis::tls_four_letter(&server, &tls, command)
                    });
                    match tokio::time::timeout(FOUR_LETTER_TIMEOUT, exchange).await {
                        Ok(Ok(reply)) => reply,
                        _ => Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            "no answer to a four-letter word over TLS",
                        )),
                    }
                }
                None => four_letter(&server, command).await,
            }
        }
    };
    let mut sessions = HashSet::new();
    let mut silent = Vec::new();
    let replies = futures_util::future::join_all(
        servers
            .iter()
            .map(|s| async { (ask(s.clone(), "cons").await, ask(s.clone(), "conf").await) }),
    )
    .await;
    for (server, (reply, conf)) in servers.iter().zip(replies) {
        match reply {
            Ok(text) if text.contains("sid=") => sessions.extend(parse_cons(&text)),
            Ok(text) if text.contains("not in the whitelist") || text.contains("not executed") => {
                silent.push(format!(
                    "{server} refuses `cons` (add it to 4lw.commands.whitelist)"
                ))
            }
            Ok(_) => {}
            Err(err) => silent.push(format!("{server}: {err}")),
        }
        let conf = conf.unwrap_or_default();
        let host = server.rsplit_once(':').map_or(server.as_str(), |(h, _)| h);
        match (tls.is_some(), conf_port(&conf, "clientPort"), conf_port(&conf, "secureClientPort")) {
            (true, Some(plain), _) => match four_letter(&format!("{host}:{plain}"), "cons").await {
                Ok(text) => sessions.extend(parse_cons(&text)),
                Err(err) => silent.push(format!("{host}:{plain} (its plain port): {err}")),
            },
            (false, _, Some(secure)) => silent.push(format!(
                "{server} also serves TLS clients (secureClientPort {secure}), whose sessions a plain \
                 `cons` does not list: look with the TLS options to see them"
            )),
            _ => {}
        }
    }
    let note =
        (!silent.is_empty()).then(|| format!("session liveness unknown: {}", silent.join("; ")));
    (sessions, note)
}

/// `name=PORT` of a `conf` reply (a server without it has no such port).
fn conf_port(conf: &str, name: &str) -> Option<u16> {
    conf.lines()
        .find_map(|line| {
            line.strip_prefix(name)?
                .strip_prefix('=')?
                .trim()
                .parse()
                .ok()
        })
        .filter(|port| *port > 0)
}

fn parse_cons(text: &str) -> impl Iterator<Item = i64> + '_ {
    text.split("sid=0x").skip(1).filter_map(|rest| {
        let hex: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
        u64::from_str_radix(&hex, 16).ok().map(|v| v as i64)
    })
}

async fn four_letter(server: &str, command: &str) -> std::io::Result<String> {
    let exchange = async {
        let mut stream = TcpStream::connect(server).await?;
        stream.write_all(command.as_bytes()).await?;
        let mut reply = String::new();
        stream.read_to_string(&mut reply).await?;
        Ok(reply)
    };
    match tokio::time::timeout(FOUR_LETTER_TIMEOUT, exchange).await {
        Ok(reply) => reply,
        Err(_) => Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "no answer to a four-letter word",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "8f1b3a2e-0000-4000-8000-000000000000";

    #[test]
    fn tells_every_peer_layout_apart() {
        let lib = |name: &str, data: &str| layout(name, data.as_bytes()).map(|(r, l)| (r, l[0]));
        assert_eq!(
            lib(&format!("_c_{UUID}-lock-0000000001"), "web-1"),
            Some(("lock", "zkrecipes"))
        );
        assert_eq!(
            lib(&format!("_c_{UUID}-lock-0000000001"), "10.0.0.7"),
            Some(("lock", "curator"))
        );
        assert_eq!(
            lib(&format!("_c_{UUID}-__READ__0000000001"), "::1"),
            Some(("lock", "curator"))
        );
        assert_eq!(
            lib(&format!("_c_{UUID}-latch-0000000001"), "10.0.0.7"),
            Some(("latch", "curator"))
        );
        assert_eq!(
            lib(&format!("_c_{UUID}-latch-0000000001"), "web-1"),
            Some(("latch", "zkrecipes"))
        );
        assert_eq!(
            lib(&format!("_c_{UUID}-lease-0000000001"), "10.0.0.7"),
            Some(("semaphore", "curator"))
        );
        assert!(is_member_name(UUID));
        assert!(is_member_name("0123456789abcdef0123456789abcdef"));
        assert!(!is_member_name("ready") && !is_member_name("entries"));
        assert_eq!(
            lib("x-72057594037927936-0000000012", "\u{12}4"),
            Some(("lock", "apache"))
        );
        assert_eq!(
            lib("0123456789abcdef0123456789abcdef__lock__0000000003", ""),
            Some(("lock", "kazoo"))
        );
        assert_eq!(
            lib("0123456789abcdef0123456789abcdef__rlock__0000000003", ""),
            Some(("lock", "kazoo"))
        );
        assert_eq!(lib("n_0000000004", "host"), Some(("election", "zkrecipes")));
        assert_eq!(lib("qn-0000000004", "x"), Some(("queue", "zkrecipes")));
        assert_eq!(lib("entry-100-0000000004", "x"), Some(("queue", "kazoo")));
        assert_eq!(lib("something-0000000004", ""), Some(("lock", "unknown")));
        assert_eq!(lib("entries", ""), None);
        assert_eq!(lib("locks", ""), None);
    }

    #[test]
    fn reads_sessions_from_cons() {
        let text = " /127.0.0.1:52110[1](queued=0,recved=3,sent=3,sid=0x1000b2c3d0002,lop=PING)\n \
                    /127.0.0.1:52112[0](queued=0,recved=1,sent=0)\n \
                    /10.0.0.2:40000[1](queued=0,sid=0xffff000000000001,lop=GETD)\n";
        let sessions: Vec<i64> = parse_cons(text).collect();
        assert_eq!(
            sessions,
            vec![0x1000b2c3d0002, 0xffff000000000001u64 as i64]
        );
    }

    #[test]
    fn finds_every_server_of_a_connect_string() {
        assert_eq!(
            servers("a:2181, b:2182,c/chroot/x"),
            vec!["a:2181", "b:2182", "c:2181"]
        );
    }
}
