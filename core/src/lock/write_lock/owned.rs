//! A lock driven by owners (a thread, an asyncio task, a guard, a latch) that get a fencing token
//! where Rust's API gives a guard: what the guards and the latch use, and what `ffi::OwnedLock`
//! offers the bindings.

use std::future::Future;

use super::{not_owner, Lock, Owner};
use crate::error::Result;
use crate::handoff::Handoff;
use crate::observe::{recipe_event, Recipe, Waiting};
use crate::runtime;
use crate::wait::Wait;

impl Lock {
    /// Acquires for `owner`; returns the fencing token, `None` if not obtained
    /// (never `TIMEOUT`). The form the bindings use (they release with
    /// `unlock_as`). Dropping the future withdraws the attempt's node.
    pub(crate) async fn lock_as(&self, owner: Owner, wait: Wait) -> Result<Option<i64>> {
        let core = &self.core;
        let mut waiting = core
            .wait_call()
            .map(|call| Waiting::begin(&core.client, call, &core.dir));
        let locked = self
            .lock_as_unscoped(owner, wait, waiting.as_mut())
            .await
            .map_err(|err| core.about(err));
        if let Some(waiting) = waiting {
            waiting.end_with(&locked, |token| *token);
        }
        locked
    }

    /// `lock_as` without numbers or events: a multi-lock's own acquire records them once.
    pub(crate) async fn lock_as_quietly(&self, owner: Owner, wait: Wait) -> Result<Option<i64>> {
        let locked = self.lock_as_unscoped(owner, wait, None).await;
        locked.map_err(|err| self.core.about(err))
    }

    /// Drops one hold of `owner`; at zero deletes the node (confirmed).
    /// `NOT_OWNER` if `owner` does not hold the lock; the loss's error if its
    /// hold was lost; `CLOSED` after the client closed.
    ///
    /// The release starts when this is called, not when the future is first
    /// polled, and runs to its end even if the future is dropped.
    pub(crate) fn unlock_as(
        &self,
        owner: Owner,
    ) -> impl Future<Output = Result<()>> + Send + 'static {
        self.core.unlock_as(owner)
    }

    /// Releases the oldest hold taken without a scope, whoever its owner: for callers without
    /// an identity (Node), where every such hold of an exclusive lock is the only one and every
    /// such reader is alike. A scope's holds (`Owner::scope`) are its own to release: a plain
    /// release beside a scope ended the scope's older read hold and left its own node for good
    /// (found by an adversarial review).
    pub(crate) fn unlock_one(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let owner = self.oldest_unscoped_owner();
        let release = owner.map(|owner| self.core.unlock_as(owner));
        let core = self.core.clone();
        async move {
            match release {
                Some(release) => release.await,
                None => {
                    core.client.zk()?;
                    let ended = {
                        let mut ended = core.ended.lock().unwrap();
                        let at = ended.iter().rposition(|(owner, _)| !owner.is_scope());
                        at.map(|at| ended.remove(at))
                    };
                    let err = ended.map_or_else(not_owner, |(_, reason)| reason);
                    Err(core.about(err))
                }
            }
        }
    }

    /// The owner of the oldest hold taken without a scope, if any.
    pub(crate) fn oldest_unscoped_owner(&self) -> Option<Owner> {
        self.core.visible(|holds| {
            holds
                .into_iter()
                .find(|h| !h.owner.is_scope())
                .map(|h| h.owner)
        })
    }

    pub(crate) fn client(&self) -> &crate::client::Client {
        &self.core.client
    }

    /// For a binding whose caller gave up after `lock_as` succeeded (a
    /// cancelled future, an interrupt): the hold is released, never kept.
    /// The hold is gone from this object's answers before this returns (the
    /// caller never sees a hold it gave up); the node's delete goes on in the
    /// background.
    pub(crate) fn abandon_acquired(&self, owner: Owner) {
        let release = self.unlock_as(owner);
        let dir = self.dir().to_string();
        runtime::handle().spawn(async move {
            if let Err(err) = release.await {
                let reason = err.to_string();
                recipe_event!(
                    Recipe::Lock,
                    DEBUG,
                    path = dir.as_str(),
                    reason,
                    "lock {dir}: undoing an abandoned acquire: {reason}"
                );
            }
        });
    }

    /// For a binding that carries an acquired hold to its caller across
    /// threads: the hold is released unless the `Handoff` is marked delivered.
    pub(crate) fn handoff_acquired(&self, owner: Owner) -> Handoff {
        let lock = self.clone();
        Handoff::new(self.core.client.settling(), move || {
            lock.abandon_acquired(owner)
        })
    }
}
