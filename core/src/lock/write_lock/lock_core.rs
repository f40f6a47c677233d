//! The state one lock object shares with its attempts, holds and releases: its client, its
//! directory, which side it is, what its nodes hold, and its current holds.

use std::sync::{Arc, Mutex, Weak};

use tokio::sync::watch;
use zookeeper_client as zk;

use super::super::contenders::{self, Kind};
use super::super::event::LockEvent;
use super::super::holder::Hold;
use super::super::owner::Owner;
use super::super::release_node::release_node;
use crate::client::Client;
use crate::emitter::Emitter;
use crate::error::{Error, Result};
use crate::observe::{
    Holding, WaitCall, LOCK_ACQUIRE, LOCK_HOLDS, READ_LOCK_ACQUIRE, WRITE_LOCK_ACQUIRE,
};
use crate::runtime;

/// One contender as `participants()` reports it, holder first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Participant {
    pub node: String,
    pub identity: String,
    pub is_reader: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Exclusive,
    Read,
    Write,
    /// A leader latch's contender: exclusive, named as Curator's `LeaderLatch` names it.
    Latch,
}

impl Side {
    /// The acquire of this side's lock, as its metrics and spans name it; `None` for a latch
    /// (its own metrics).
    fn wait_call(self) -> Option<&'static WaitCall> {
        match self {
            Side::Exclusive => Some(&LOCK_ACQUIRE),
            Side::Read => Some(&READ_LOCK_ACQUIRE),
            Side::Write => Some(&WRITE_LOCK_ACQUIRE),
            Side::Latch => None,
        }
    }

    pub(in crate::lock) fn marker(self) -> &'static str {
        match self {
            Side::Exclusive => contenders::EXCLUSIVE_MARKER,
            Side::Read => contenders::READ_MARKER,
            Side::Write => contenders::WRITE_MARKER,
            Side::Latch => contenders::LATCH_MARKER,
        }
    }
}

pub(crate) struct LockCore {
    pub(in crate::lock) client: Client,
    pub(in crate::lock) dir: String,
    pub(in crate::lock) side: Side,
    /// The other side of a read/write lock, for downgrade and upgrade rules.
    pub(in crate::lock) sibling: Mutex<Weak<LockCore>>,
    /// What our nodes hold: the client's identity, or a latch's participant id.
    pub(in crate::lock) data: Vec<u8>,
    /// Current holds, one per owner (several only on the read side).
    pub(in crate::lock) holds: Mutex<Vec<Hold>>,
    /// Owners whose hold ended without their release (lost, closed): their
    /// next release answers with that reason instead of `NOT_OWNER`.
    pub(in crate::lock) ended: Mutex<Vec<(Owner, Error)>>,
    /// Bumped whenever a hold ends, for a release waiting on a lost hold.
    pub(in crate::lock) ended_count: watch::Sender<u64>,
    pub(in crate::lock) events: Emitter<LockEvent>,
    /// Whether its waits and holds are counted and logged as a lock's (`Lock::internal`).
    pub(in crate::lock) observed: bool,
}

impl Drop for LockCore {
    fn drop(&mut self) {
        let holds: Vec<Hold> = self.holds.get_mut().unwrap().drain(..).collect();
        for hold in holds {
            if hold.is_releasing() || self.node_shared(&hold.node) {
                continue;
            }
            let client = self.client.clone();
            let path = format!("{}/{}", self.dir, hold.node);
            let session = hold.session;
            runtime::handle()
                .spawn(async move { release_node(&client, "lock", &path, session).await });
        }
        crate::memory::object_dropped();
    }
}

impl crate::lock::monitor::Keeper for LockCore {
    fn client(&self) -> &Client {
        LockCore::client(self)
    }

    fn noun(&self) -> &'static str {
        "lock"
    }

    fn dir(&self) -> &str {
        LockCore::dir(self)
    }

    fn emit(&self, event: LockEvent) {
        LockCore::emit(self, event)
    }

    fn end_hold(&self, node: &str, event: LockEvent, remember: Option<Error>) {
        LockCore::end_hold(self, node, event, remember)
    }
}

impl LockCore {
    /// This lock, as the monitor of its holds tells it what happens to them.
    pub(in crate::lock) fn keeper(self: &Arc<Self>) -> Weak<dyn crate::lock::monitor::Keeper> {
        let weak: Weak<LockCore> = Arc::downgrade(self);
        weak
    }

    /// The error with the lock's directory (and chroot) in its message.
    pub(in crate::lock) fn about(&self, err: Error) -> Error {
        self.client.about(err, "lock", &self.dir)
    }

    pub(in crate::lock) fn client(&self) -> &Client {
        &self.client
    }

    pub(in crate::lock) fn dir(&self) -> &str {
        &self.dir
    }

    pub(in crate::lock) fn side(&self) -> Side {
        self.side
    }

    pub(in crate::lock) fn data(&self) -> &[u8] {
        &self.data
    }

    pub(in crate::lock) fn emit(&self, event: LockEvent) {
        self.events.emit(event);
    }

    /// The acquire of this lock, as its metrics and spans name it; `None` when it records
    /// none (a latch's contender, a recipe's internal mutex).
    pub(in crate::lock) fn wait_call(&self) -> Option<&'static WaitCall> {
        self.observed.then(|| self.side.wait_call()).flatten()
    }

    /// The numbers and events of a hold of this lock that starts now.
    pub(in crate::lock) fn holding(&self, fencing_token: i64, contended: bool) -> Option<Holding> {
        let call = self.wait_call()?;
        Some(Holding::begin(
            &self.client,
            &LOCK_HOLDS,
            &self.dir,
            call.metric_kind,
            Some(fencing_token),
            contended,
        ))
    }

    pub(in crate::lock) fn sibling(&self) -> Option<Arc<LockCore>> {
        self.sibling.lock().unwrap().upgrade()
    }

    pub(in crate::lock) async fn participants(&self) -> Result<Vec<Participant>> {
        let contenders = self.list().await?;
        let zk = self.client.zk()?;
        let paths: Vec<String> = contenders
            .iter()
            .map(|c| format!("{}/{}", self.dir, c.name))
            .collect();
        // All getData requests are sent before the first reply is awaited.
        let requests: Vec<_> = paths.iter().map(|p| zk.get_data(p)).collect();
        let mut participants = Vec::with_capacity(contenders.len());
        for (contender, request) in contenders.into_iter().zip(requests) {
            match request.await {
                Ok((data, _)) => participants.push(Participant {
                    node: contender.name,
                    identity: String::from_utf8_lossy(&data).into_owned(),
                    is_reader: contender.kind == Kind::Read,
                }),
                Err(zk::Error::NoNode) => {}
                Err(err) => return Err(err.into()),
            }
        }
        Ok(participants)
    }
}
