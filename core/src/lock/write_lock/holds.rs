//! The holds of one lock object: reentry per owner, the read/write rules (no upgrade, a
//! downgrade keeps the node), and why a hold ended without its release.

use std::sync::Arc;

use super::{LockCore, LockEvent, Owner, Side};
use crate::client::expired;
use crate::error::{Error, ErrorCode, Result};
use crate::lock::attempt::Created;
use crate::lock::holder::Hold;

pub(super) enum Reentry {
    NotHeld,
    Held(i64),
    Releasing(String),
}

pub(super) fn not_owner() -> Error {
    Error::new(ErrorCode::NotOwner, "not held by this owner")
}

impl LockCore {
    /// Reads the holds that are not being released, oldest first.
    pub(super) fn visible<T>(&self, read: impl FnOnce(Vec<&Hold>) -> T) -> T {
        let holds = self.holds.lock().unwrap();
        read(holds.iter().filter(|h| !h.is_releasing()).collect())
    }

    pub(super) fn hold_of<T>(&self, owner: Owner, read: impl FnOnce(&Hold) -> T) -> Option<T> {
        self.visible(|holds| holds.into_iter().find(|h| h.owner == owner).map(read))
    }

    /// Another hold of an owner that holds: the same token, no request. A hold
    /// whose session is gone is not handed out again: it is reported lost.
    pub(super) fn reenter(&self, owner: Owner) -> Result<Reentry> {
        let current = self.client.session_id()?;
        let mut holds = self.holds.lock().unwrap();
        let Some(at) = holds.iter().position(|h| h.owner == owner) else {
            return Ok(Reentry::NotHeld);
        };
        let hold = &mut holds[at];
        if hold.is_releasing() {
            return Ok(Reentry::Releasing(hold.node.clone()));
        }
        if hold.session == current {
            hold.count += 1;
            return Ok(Reentry::Held(hold.fencing_token));
        }
        let node = hold.node.clone();
        drop(holds);
        let reason = expired();
        self.end_hold(
            &node,
            LockEvent::Lost {
                reason: reason.clone(),
            },
            None,
        );
        Err(reason)
    }

    /// A write request by an owner that holds the read side would wait for
    /// itself forever: refused at once. Only the same owner counts. A caller
    /// without an identity (Rust's `acquire`, Node outside a scope, Kotlin) is
    /// a new owner on every acquire, so its write waits for the object's read
    /// holds like another thread's would (`ReentrantReadWriteLock`'s rule; a
    /// deadline ends it): it cannot be told from another task or async flow
    /// that will release, and refusing every write beside any read broke
    /// programs where two flows share one object (the demo's Node worker).
    /// A read hold whose release has begun does not count either: its node
    /// goes without us.
    pub(super) fn refuse_upgrade(&self, owner: Owner) -> Result<()> {
        let read_held = self.side == Side::Write
            && self.sibling().is_some_and(|read| {
                read.visible(|holds| holds.into_iter().any(|h| h.owner == owner))
            });
        if read_held {
            return Err(Error::new(
                ErrorCode::WouldDeadlock,
                "the read lock is held by this owner: upgrading to the write lock would wait forever",
            ));
        }
        Ok(())
    }

    /// A write holder asking for the read lock gets it at once, on the node of
    /// its write hold, without a node of its own: a read node would sort
    /// behind any writer queued meanwhile and wait for it while that writer
    /// waits for us (a deadlock), and once the write hold went, that writer
    /// would run beside our read. The shared node is deleted when the last of
    /// the two holds is released, so nobody writes while the downgraded owner
    /// reads.
    pub(super) fn downgrade(self: &Arc<Self>, owner: Owner) -> Option<i64> {
        if self.side != Side::Read {
            return None;
        }
        let (node, fencing_token, session) = self
            .sibling()?
            .hold_of(owner, |h| (h.node.clone(), h.fencing_token, h.session))?;
        let mut hold = Hold::new(
            self.client(),
            self.keeper(),
            owner,
            node,
            fencing_token,
            session,
            None,
        );
        hold.holding = self.holding(fencing_token, false);
        self.holds.lock().unwrap().push(hold);
        self.emit(LockEvent::Acquired { fencing_token });
        Some(fencing_token)
    }

    /// Whether the other side of a read/write lock still holds on `node` (a
    /// downgrade): then a release ends our hold but keeps the node.
    pub(super) fn node_shared(&self, node: &str) -> bool {
        self.sibling().is_some_and(|other| {
            let holds = other.holds.lock().unwrap();
            holds.iter().any(|h| h.node == node && !h.is_releasing())
        })
    }

    pub(in crate::lock) fn take_hold(
        self: &Arc<Self>,
        owner: Owner,
        created: Created,
        contended: bool,
    ) {
        let fencing_token = created.fencing_token;
        let mut hold = Hold::new(
            self.client(),
            self.keeper(),
            owner,
            created.node,
            fencing_token,
            created.session,
            created.watch,
        );
        hold.holding = self.holding(fencing_token, contended);
        self.holds.lock().unwrap().push(hold);
        self.emit(LockEvent::Acquired { fencing_token });
    }

    /// Ends the hold on `node` (if it is still there) with `event`. A hold
    /// that ended without its owner's release (`remember`) makes that owner's
    /// next release answer the reason instead of `NOT_OWNER`.
    pub(in crate::lock) fn end_hold(&self, node: &str, event: LockEvent, remember: Option<Error>) {
        let ended = {
            let mut holds = self.holds.lock().unwrap();
            let at = holds.iter().position(|h| h.node == node);
            at.map(|at| holds.remove(at))
        };
        if let Some(mut hold) = ended {
            if let (LockEvent::Lost { reason }, Some(holding)) = (&event, hold.holding.as_mut()) {
                holding.lose(reason);
            }
            if let Some(reason) = remember {
                self.ended.lock().unwrap().push((hold.owner, reason));
            }
            self.ended_count.send_modify(|n| *n += 1);
            self.emit(event);
        }
    }

    /// The reason `owner`'s hold ended without its release, if it did.
    pub(super) fn take_ended(&self, owner: Owner) -> Option<Error> {
        let mut ended = self.ended.lock().unwrap();
        let at = ended.iter().position(|(o, _)| *o == owner)?;
        Some(ended.remove(at).1)
    }
}
