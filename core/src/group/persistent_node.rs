//! A node that stays (Curator's `PersistentNode`): created at `start`, and created again
//! whenever it is deleted or its session expires, until `close`.
//!
//! Contract, including failures:
//! - An ephemeral node of the name that belongs to another session is never taken over
//!   (Curator's `PersistentNode` adopts it, so two processes believe they own one node): the
//!   node waits until that one is gone, then creates its own. One of this session (a create
//!   whose reply was lost) is adopted. Two objects of one client keep one ephemeral path in
//!   turn, as two sessions do: the second waits until the first is closed or dropped (both
//!   would otherwise take the node for their own, and the second's close delete the first's). A persistent node of the name is adopted and given this
//!   node's data, as Curator does.
//! - A sequential node is created under Curator's protected name (`_c_<uuid>-<name>`), so a
//!   create whose reply was lost is found again by its marker, never made twice.
//! - Missing parents are created as containers; `NO_AUTH` and the like stop the node, and
//!   `start` answers them.
//! - `set_data` writes the node now and is what every later re-create writes.
//! - `close` deletes the node, confirmed, and stops re-creating it; dropping the last handle
//!   stops it too (an ephemeral node then goes with its session).

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::watch;
use zookeeper_client as zk;

use crate::backoff::Backoff;
use crate::client::{delete_confirmed, Client, ConnectionState};
use crate::error::{Error, ErrorCode, Result};
use crate::observe::catalog::NODE_RECREATIONS;
use crate::observe::{recipe_event, session_hex, Recipe};

use super::turn::Turn;
use crate::{path, runtime};

/// How the node is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeMode {
    Ephemeral,
    EphemeralSequential,
    Persistent,
    PersistentSequential,
}

impl NodeMode {
    fn create_mode(self) -> zk::CreateMode {
        match self {
            NodeMode::Ephemeral => zk::CreateMode::Ephemeral,
            NodeMode::EphemeralSequential => zk::CreateMode::EphemeralSequential,
            NodeMode::Persistent => zk::CreateMode::Persistent,
            NodeMode::PersistentSequential => zk::CreateMode::PersistentSequential,
        }
    }

    fn is_sequential(self) -> bool {
        matches!(
            self,
            NodeMode::EphemeralSequential | NodeMode::PersistentSequential
        )
    }

    fn is_ephemeral(self) -> bool {
        matches!(self, NodeMode::Ephemeral | NodeMode::EphemeralSequential)
    }
}

/// What a node's keeper tells a recipe built on it (a service registration), besides the
/// node's path: that recipe passes it on as its own event.
pub(crate) enum NodeEvent<'a> {
    /// Made again after it was gone (deleted, or its session expired): the node's path.
    Recreated(&'a str),
    /// The keeper stopped for good: the server refused the node (`NO_AUTH`).
    Stopped(&'a Error),
}

pub(crate) type NodeListener = Box<dyn Fn(NodeEvent<'_>) + Send + Sync>;

#[derive(Clone)]
pub struct PersistentNode {
    shared: Arc<Shared>,
}

struct Shared {
    client: Client,
    path: String,
    mode: NodeMode,
    /// What its re-creations are counted as: `persistent_node`, `group_member` or
    /// `service_instance`.
    kind: &'static str,
    listener: Option<NodeListener>,
    /// Curator's protection marker of a sequential node: `_c_<uuid>-`.
    marker: String,
    data: Mutex<Vec<u8>>,
    /// The node's path while it exists as far as this object knows (a sequential node's
    /// name), `None` before the first create and after `close`.
    actual: watch::Sender<Option<String>>,
    failure: Mutex<Option<Error>>,
    keeper: Mutex<Option<tokio::task::AbortHandle>>,
    closed: Mutex<bool>,
    /// Held by the keeper from a create's sending until its outcome is known: `close` waits
    /// for it, so a create on its way never lands after `close` returned.
    making: tokio::sync::Mutex<()>,
    /// This object's turn at an ephemeral path among the objects of its client, from before
    /// its first create until its node is deleted.
    turn: Mutex<Option<Turn>>,
}

impl PersistentNode {
    /// The node at `path` (for a sequential mode, the prefix of its name). `INVALID_PATH` (the
    /// root too) and
    /// an oversized `data` are refused before anything is sent.
    pub fn new(
        client: &Client,
        path: &str,
        mode: NodeMode,
        data: Vec<u8>,
    ) -> Result<PersistentNode> {
        PersistentNode::of_kind(client, path, mode, data, "persistent_node", None)
    }

    /// A group member's node: an ephemeral node whose re-creations count as a member's.
    pub(super) fn group_member(
        client: &Client,
        path: &str,
        data: Vec<u8>,
    ) -> Result<PersistentNode> {
        PersistentNode::of_kind(
            client,
            path,
            NodeMode::Ephemeral,
            data,
            "group_member",
            None,
        )
    }

    /// A service registration's node: its re-creations count as an instance's, and `listener`
    /// hears them and a stop.
    pub(crate) fn service_instance(
        client: &Client,
        path: &str,
        mode: NodeMode,
        data: Vec<u8>,
        listener: NodeListener,
    ) -> Result<PersistentNode> {
        PersistentNode::of_kind(client, path, mode, data, "service_instance", Some(listener))
    }

    fn of_kind(
        client: &Client,
        path: &str,
        mode: NodeMode,
        data: Vec<u8>,
        kind: &'static str,
        listener: Option<NodeListener>,
    ) -> Result<PersistentNode> {
        path::validate(path)?;
        if path == "/" {
            return Err(Error::invalid_argument(
                "a persistent node cannot be the root",
            ));
        }
        client.check_open()?;
        check_data(client, path, &data)?;
        let shared = Shared {
            client: client.clone(),
            path: path.to_string(),
            mode,
            kind,
            listener,
            marker: format!("_c_{}-", uuid::Uuid::new_v4()),
            data: Mutex::new(data),
            actual: watch::channel(None).0,
            failure: Mutex::new(None),
            keeper: Mutex::new(None),
            closed: Mutex::new(false),
            making: tokio::sync::Mutex::new(()),
            turn: Mutex::new(None),
        };
        Ok(PersistentNode {
            shared: Arc::new(shared),
        })
    }

    pub fn path(&self) -> &str {
        &self.shared.path
    }

    /// Whether `other` is a handle of this same node object.
    pub(crate) fn is_same(&self, other: &PersistentNode) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Starts keeping the node and returns once it exists (the node goes on being kept if
    /// this call is cancelled). `CLOSED` once closed; the server's error if it cannot be
    /// created (`NO_AUTH`).
    pub async fn start(&self) -> Result<String> {
        self.launch()?;
        let mut actual = self.shared.actual.subscribe();
        loop {
            if let Some(err) = self.stopped() {
                return Err(self.about(err));
            }
            if let Some(path) = actual.borrow_and_update().clone() {
                return Ok(path);
            }
            tokio::select! {
                changed = actual.changed() => if changed.is_err() {
                    return Err(self.about(Error::closed()));
                },
                // Its keeper ends with the client: the node can never be made.
                () = self.shared.client.closed() => return Err(self.about(Error::closed())),
            }
        }
    }

    fn launch(&self) -> Result<()> {
        let shared = &self.shared;
        shared
            .client
            .start_once(self.stopped(), &shared.keeper, || {
                keep(Arc::downgrade(shared))
            })
            .map_err(|err| self.about(err))
    }

    /// Whether the keeper stopped for good (the server refused the node).
    pub(crate) fn has_failed(&self) -> bool {
        self.shared.failure.lock().unwrap().is_some()
    }

    fn stopped(&self) -> Option<Error> {
        if *self.shared.closed.lock().unwrap() {
            return Some(Error::new(ErrorCode::Closed, "the node was closed"));
        }
        self.shared.failure.lock().unwrap().clone()
    }

    /// The node's full path once created (a sequential node's name), `None` before.
    pub fn actual_path(&self) -> Option<String> {
        self.shared.actual.borrow().clone()
    }

    /// The data the node is (re-)created with.
    pub fn data(&self) -> Vec<u8> {
        self.shared.data.lock().unwrap().clone()
    }

    /// The data the node is (re-)created with, written now if the node exists.
    pub async fn set_data(&self, data: Vec<u8>) -> Result<()> {
        check_data(&self.shared.client, &self.shared.path, &data).map_err(|err| self.about(err))?;
        if let Some(err) = self.stopped() {
            return Err(self.about(err));
        }
        // Under `making`: a create on its way sent the data it read before this call, and
        // would leave the node with it once it lands (its path unknown here until then).
        let path = {
            let _making = self.shared.making.lock().await;
            *self.shared.data.lock().unwrap() = data.clone();
            self.actual_path()
        };
        let Some(path) = path else {
            return Ok(());
        };
        let data = &data;
        let path = path.as_str();
        let written = self
            .shared
            .client
            .retrying(
                None,
                |zk| async move { zk.set_data(path, data, None).await },
            )
            .await;
        match written {
            // Gone meanwhile: the keeper re-creates it with this data.
            Err(err) if err.code() == ErrorCode::NoNode => Ok(()),
            written => written.map(|_| ()).map_err(|err| self.about(err)),
        }
    }

    /// Stops re-creating the node and deletes it, confirmed. Idempotent. A create on its way
    /// is waited for (and its node deleted), so nothing of this node outlives the call. It
    /// takes effect when called: a caller that stops waiting does not stop the delete.
    pub async fn close(&self) -> Result<()> {
        *self.shared.closed.lock().unwrap() = true;
        // In a task of its own: the node's path and turn it takes out of this object are
        // nobody else's to delete (a cut close left the node, a persistent one for good).
        let shared = self.shared.clone();
        let settling = shared.client.settling();
        let closing = runtime::handle().spawn(async move {
            let _settling = settling;
            shared.close().await
        });
        let closed = closing.await;
        let closed = closed.map_err(|_| Error::new(ErrorCode::Internal, "close task ended"))?;
        closed.map_err(|err| self.about(err))
    }

    fn about(&self, err: Error) -> Error {
        self.shared
            .client
            .about(err, "persistent node", &self.shared.path)
    }
}

/// Room for the request header, the ACL and the protected name's `_c_<uuid>-` prefix.
const NODE_OVERHEAD: usize = 1024;

/// The largest data a create of `path` carries in one server packet (the server's 1 MiB
/// `jute.maxbuffer`), with room for the request, a sequential name's protection prefix and the
/// ACL: the same bound as a queue item's, far above any payload a member needs.
fn check_data(client: &Client, path: &str, data: &[u8]) -> Result<()> {
    let limit = crate::MAX_PACKET - NODE_OVERHEAD - path.len() - client.chroot_len();
    if data.len() > limit {
        return Err(Error::invalid_argument(format!(
            "a node's data is at most {limit} bytes here, this is {}",
            data.len()
        )));
    }
    Ok(())
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(keeper) = self.keeper.get_mut().unwrap().take() {
            keeper.abort();
        }
    }
}

/// What one attempt to make the node exist ended with.
enum Made {
    /// It exists at this path, ours, as it was.
    Ours(String),
    /// A create of ours made it now (or made it before its reply was lost).
    Created(String),
    /// Another session's ephemeral node has the name: wait until it is gone.
    Taken(zk::OneshotWatcher),
}

/// Keeps the node while the object lives: creates it, watches it, and creates it again after
/// a delete or a new session.
async fn keep(shared: Weak<Shared>) {
    let Some(client) = shared.upgrade().map(|s| s.client.clone()) else {
        return;
    };
    let mut states = client.state_changes();
    let mut backoff = Backoff::new(Duration::from_millis(5), Duration::from_secs(1));
    // Whether the node was ours before: a create after that is a re-creation.
    let mut had_node = false;
    if let Some(path) = shared
        .upgrade()
        .filter(|node| node.needs_turn())
        .map(|node| node.path.clone())
    {
        let Some(turn) = Turn::take(&client, &path).await else {
            return;
        };
        let Some(node) = shared.upgrade() else { return };
        *node.turn.lock().unwrap() = Some(turn);
        // A close that looked for the turn before it was stored: it is not kept for nothing
        // (`close` marks the object closed before it looks).
        if *node.closed.lock().unwrap() {
            node.turn.lock().unwrap().take();
            return;
        }
    }
    'keeping: loop {
        // A usable session.
        loop {
            match *states.borrow_and_update() {
                ConnectionState::Closed => return,
                state if state.is_usable() => break,
                _ => {}
            }
            if states.changed().await.is_err() {
                return;
            }
        }
        let Some(node) = shared.upgrade() else { return };
        let making = node.making.lock().await;
        if *node.closed.lock().unwrap() {
            return;
        }
        let made = node.make().await;
        if let Ok(Made::Ours(path) | Made::Created(path)) = &made {
            node.actual.send_replace(Some(path.clone()));
            if matches!(made, Ok(Made::Created(_))) && had_node {
                node.recreated(path);
            }
            had_node = true;
        }
        drop(making);
        // The path of a node that is ours, whose watch a data change may fire.
        let kept_path = match &made {
            Ok(Made::Ours(path) | Made::Created(path)) => Some(path.clone()),
            _ => None,
        };
        let watch = match made {
            Ok(Made::Ours(path) | Made::Created(path)) => node.watch(&path).await,
            Ok(Made::Taken(watch)) => Ok(Some(watch)),
            Err(err) if err.is_connection_loss() || err.code() == ErrorCode::SessionExpired => {
                Ok(None)
            }
            Err(err) => {
                // It does not try again: `start` answers the error, and the node stays gone.
                let (path, reason) = (node.path.as_str(), err.to_string());
                recipe_event!(
                    Recipe::Group,
                    ERROR,
                    path,
                    reason,
                    "persistent node {path}: stopped keeping the node: {reason}"
                );
                // Recorded first: a listener that looks finds the node stopped.
                *node.failure.lock().unwrap() = Some(err.clone());
                node.actual.send_modify(|_| {});
                if let Some(listener) = &node.listener {
                    listener(NodeEvent::Stopped(&err));
                }
                return;
            }
        };
        drop(node);
        // Until the node is gone (its watch fires) or the connection changes. A data change
        // (a `set_data`) fires the watch too: the node is still ours, and watching it again
        // is all there is to do (one request instead of a look and a watch).
        let mut watch = watch;
        if let Some(path) = kept_path.as_deref() {
            while let Ok(Some(fired)) = watch {
                tokio::select! {
                    event = fired.changed() => {
                        if event.event_type != zk::EventType::NodeDataChanged {
                            continue 'keeping;
                        }
                    }
                    changed = states.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        continue 'keeping;
                    }
                }
                let Some(node) = shared.upgrade() else { return };
                if *node.closed.lock().unwrap() {
                    return;
                }
                watch = node.watch(path).await;
            }
        }
        match watch {
            Ok(Some(watch)) => {
                tokio::select! {
                    _ = watch.changed() => {}
                    changed = states.changed() => if changed.is_err() { return },
                }
            }
            // The node is already gone, or the connection is: look again once usable.
            Ok(None) => {
                // The state may still say usable while the connection is already gone.
                tokio::select! {
                    changed = states.changed() => if changed.is_err() { return },
                    () = backoff.sleep() => {}
                }
            }
            Err(_) => {
                if states.changed().await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Aborts a task when dropped (on every return of `Shared::close`).
struct AbortOnDrop(Option<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

impl Shared {
    /// `close`'s work. `making` is held to the end: a create on its way finishes first, and a
    /// second close waits until this one's delete is confirmed.
    async fn close(&self) -> Result<()> {
        let _making = self.making.lock().await;
        // The keeper is stopped only once the node is deleted: its watch fires with the delete
        // and goes without a `removeWatches` request (one per close), and it cannot make the
        // node again meanwhile (it would need `making`, and `closed` is set).
        let keeper = self.keeper.lock().unwrap().take();
        let _stop_keeper = AbortOnDrop(keeper);
        let actual = self.actual.send_replace(None);
        // Released once the node is deleted, so the next object of this client never adopts a
        // node that is about to go.
        let turn = self.turn.lock().unwrap().take();
        if self.needs_turn() && turn.is_none() {
            // Never had the turn: whatever node of this session is there is another object's.
            return Ok(());
        }
        let leftover = match actual {
            Some(path) => Some(path),
            // A create whose outcome was unknown (its reply lost) may have made one.
            None => self.leftover().await,
        };
        let deleted = match leftover {
            Some(path) => delete_confirmed(&self.client, &path).await,
            None => Ok(()),
        };
        drop(turn);
        deleted
    }

    /// Counts and tells a node made again after it was gone (deleted, or its session expired).
    fn recreated(&self, actual: &str) {
        let (path, kind) = (self.path.as_str(), self.kind);
        self.client
            .registry()
            .count(&NODE_RECREATIONS, &[path, kind]);
        recipe_event!(
            Recipe::Group,
            INFO,
            path,
            kind,
            node = actual,
            "{} {path}: made again as {actual} after it was gone",
            kind.replace('_', " ")
        );
        if let Some(listener) = &self.listener {
            listener(NodeEvent::Recreated(actual));
        }
    }

    /// An ephemeral node of a fixed name is kept by one object of a client at a time (a
    /// sequential one has a name of its own).
    fn needs_turn(&self) -> bool {
        self.mode == NodeMode::Ephemeral
    }

    /// A node of this object's that a create with a lost reply may have made: an ephemeral one
    /// of this session, or a sequential one with this object's marker. (A persistent node of
    /// the name cannot be told from another process's and is left.)
    async fn leftover(&self) -> Option<String> {
        let zk = self.client.zk().ok()?;
        let session = zk.session_id().0;
        if self.mode.is_sequential() {
            return self.find_marked(&zk, session).await.ok().flatten();
        }
        if !self.mode.is_ephemeral() {
            return None;
        }
        let stat = zk.check_stat(&self.path).await.ok().flatten()?;
        (stat.ephemeral_owner == session).then(|| self.path.clone())
    }

    /// Makes the node exist (or finds it is ours already).
    async fn make(&self) -> Result<Made> {
        let zk = self.client.zk()?;
        let session = zk.session_id().0;
        let known = self.actual.borrow().clone();
        if let Some(path) = known {
            // Still there from before (a reconnect on the same session, or a persistent node).
            if let Some(stat) = zk.check_stat(&path).await.map_err(Error::from)? {
                if self.owns(&stat, session) {
                    return Ok(Made::Ours(path));
                }
            }
        }
        if self.mode.is_sequential() {
            if let Some(path) = self.find_marked(&zk, session).await? {
                return Ok(Made::Created(path));
            }
        }
        let name = self.name();
        let data = self.data.lock().unwrap().clone();
        let options = self.mode.create_mode().with_acls(self.client.acls());
        loop {
            match zk.create(&name, &data, &options).await.map_err(Error::from) {
                Ok((_, sequence)) => {
                    let path = if self.mode.is_sequential() {
                        format!("{name}{sequence}")
                    } else {
                        name.clone()
                    };
                    return Ok(Made::Created(path));
                }
                Err(err) if err.code() == ErrorCode::NoNode => {
                    let parent = &name[..name.rfind('/').unwrap_or(0).max(1)];
                    self.client.ensure_container(parent, None).await?;
                }
                Err(err) if err.code() == ErrorCode::NodeExists => {
                    let (stat, watch) =
                        zk.check_and_watch_stat(&name).await.map_err(Error::from)?;
                    let Some(stat) = stat else { continue };
                    if !self.mode.is_ephemeral() && stat.ephemeral_owner == 0 {
                        // Curator's rule for a persistent node: take it over with our data.
                        zk.set_data(&name, &data, None).await.map_err(Error::from)?;
                        return Ok(Made::Ours(name));
                    }
                    if self.owns(&stat, session) {
                        // Our own create, whose reply was lost.
                        return Ok(Made::Created(name));
                    }
                    // Another session's ephemeral node (a persistent node never writes over
                    // one: it would take a live owner's node, as two keepers of a name with
                    // different modes did, each writing its data in turn), or a persistent node
                    // where this one is ephemeral.
                    let owner = session_hex(stat.ephemeral_owner);
                    recipe_event!(
                        Recipe::Group,
                        INFO,
                        path = self.path.as_str(),
                        session = owner.as_str(),
                        "persistent node {name}: held by session {owner}; waiting until it is gone"
                    );
                    return Ok(Made::Taken(watch));
                }
                Err(err) if err.is_connection_loss() && self.mode.is_sequential() => {
                    // The create may have been applied: the marker finds it once back.
                    return Err(err);
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// Whether a node of `stat` at this object's path is its own: persistent for a persistent
    /// node, of this session for an ephemeral one.
    fn owns(&self, stat: &zk::Stat, session: i64) -> bool {
        if self.mode.is_ephemeral() {
            stat.ephemeral_owner == session
        } else {
            stat.ephemeral_owner == 0
        }
    }

    /// The name to create: for a sequential node, the prefix with Curator's protection marker.
    fn name(&self) -> String {
        if !self.mode.is_sequential() {
            return self.path.clone();
        }
        let cut = self.path.rfind('/').unwrap_or(0);
        let (parent, prefix) = (&self.path[..cut], &self.path[cut + 1..]);
        format!("{parent}/{}{prefix}", self.marker)
    }

    /// A sequential node of ours made by a create whose reply was lost.
    async fn find_marked(&self, zk: &zk::Client, session: i64) -> Result<Option<String>> {
        let name = self.name();
        let cut = name.rfind('/').unwrap_or(0);
        let parent = if cut == 0 { "/" } else { &name[..cut] };
        let children = match zk.list_children(parent).await {
            Ok(children) => children,
            Err(zk::Error::NoNode) => return Ok(None),
            Err(err) => return Err(err.into()),
        };
        for child in children.iter().filter(|c| c.starts_with(&self.marker)) {
            let path = path::join(parent, child);
            let stat = zk.check_stat(&path).await.map_err(Error::from)?;
            let ours =
                stat.is_some_and(|s| !self.mode.is_ephemeral() || s.ephemeral_owner == session);
            if ours {
                return Ok(Some(path));
            }
        }
        Ok(None)
    }

    /// A watch that fires when the node is deleted (or changed); `None` if it is gone already.
    async fn watch(&self, path: &str) -> Result<Option<zk::OneshotWatcher>> {
        let zk = self.client.zk()?;
        let (stat, watch) = zk.check_and_watch_stat(path).await.map_err(Error::from)?;
        Ok(stat.map(|_| watch))
    }
}

impl std::fmt::Debug for PersistentNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentNode")
            .field("path", &self.shared.path)
            .field("mode", &self.shared.mode)
            .field("actual", &self.actual_path())
            .finish()
    }
}
