//! Releasing: a release takes effect when called, waits behind a release in progress, and
//! reports a hold lost before it as the error it was lost with.

use std::sync::Arc;

use tokio::task::JoinHandle;

use super::{not_owner, LockCore, LockEvent, Owner};
use crate::error::{Error, ErrorCode, Result};
use crate::lock::release_node::{release_node, Released};
use crate::runtime;

pub(super) enum Started {
    Done(Result<()>),
    Behind(String),
    Running(JoinHandle<Result<()>>, String),
}

impl LockCore {
    /// Starts the release at once, when called, not when first polled: a
    /// caller that is cancelled right away (an asyncio task, a Java future)
    /// has still released. The returned future only reports the outcome.
    pub(super) fn unlock_as(
        self: &Arc<Self>,
        owner: Owner,
    ) -> impl std::future::Future<Output = Result<()>> + Send + 'static {
        let started = self.start_release(owner);
        let core = self.clone();
        async move {
            let mut started = started;
            loop {
                match started {
                    Started::Done(result) => return result,
                    // Another release of this hold is on its way (an abandoned
                    // acquire being undone): its outcome decides, then look again.
                    Started::Behind(node) => {
                        core.hold_gone(&node).await;
                        started = core.start_release(owner);
                    }
                    Started::Running(task, node) => return core.outcome(owner, task, node).await,
                }
            }
        }
    }

    pub(super) fn start_release(self: &Arc<Self>, owner: Owner) -> Started {
        let (node, session) = {
            let mut holds = self.holds.lock().unwrap();
            match holds.iter_mut().find(|h| h.owner == owner) {
                Some(h) if h.is_releasing() => return Started::Behind(h.node.clone()),
                Some(h) if h.count > 1 => {
                    h.count -= 1;
                    return Started::Done(Ok(()));
                }
                Some(h) => {
                    h.start_release();
                    (h.node.clone(), h.session)
                }
                None => {
                    drop(holds);
                    let answer = match self.client.zk() {
                        Err(closed) => Err(closed),
                        Ok(_) => {
                            let err = self.take_ended(owner).unwrap_or_else(not_owner);
                            Err(self.about(err))
                        }
                    };
                    return Started::Done(answer);
                }
            }
        };
        // The release runs in a task of its own, to its end: a release whose
        // caller is gone (a dropped future, an interrupt) still deletes the node
        // and ends the hold, so the object never reports a hold it lost.
        let core = self.clone();
        let release = node.clone();
        let task = runtime::handle()
            .spawn(async move { core.finish_release(owner, &release, session).await });
        Started::Running(task, node)
    }

    pub(super) async fn outcome(
        &self,
        owner: Owner,
        mut task: JoinHandle<Result<()>>,
        node: String,
    ) -> Result<()> {
        let joined = |joined: std::result::Result<Result<()>, tokio::task::JoinError>| {
            joined.unwrap_or_else(|err| Err(Error::new(ErrorCode::Internal, err.to_string())))
        };
        tokio::select! {
            outcome = &mut task => joined(outcome),
            () = self.hold_gone(&node) => match self.take_ended(owner) {
                // The monitor gave the hold up as lost (disconnected too long):
                // answer now; the delete goes on in the background.
                Some(reason) => Err(reason),
                None => joined(task.await),
            },
        }
    }

    /// Resolves once the hold on `node` has ended (released or lost).
    pub(super) async fn hold_gone(&self, node: &str) {
        let mut ended = self.ended_count.subscribe();
        let still_held = || self.holds.lock().unwrap().iter().any(|h| h.node == node);
        let _ = ended.wait_for(|_| !still_held()).await;
    }

    /// Deletes the node of `owner`'s hold and ends the hold with what the
    /// server said: `RELEASED`, or `LOST` when it was gone already.
    pub(super) async fn finish_release(
        &self,
        owner: Owner,
        node: &str,
        session: i64,
    ) -> Result<()> {
        let path = format!("{}/{}", self.dir, node);
        let still_held = || self.holds.lock().unwrap().iter().any(|h| h.node == node);
        if self.node_shared(node) {
            self.end_hold(node, LockEvent::Released, None);
            return Ok(());
        }
        match release_node(&self.client, "lock", &path, session).await {
            Ok(Released::Deleted) => {
                if still_held() {
                    self.end_hold(node, LockEvent::Released, None);
                    return Ok(());
                }
                // The monitor ended the hold first (a loss): that is the answer.
                self.take_ended(owner).map_or(Ok(()), Err)
            }
            Ok(Released::Lost(reason)) => {
                if still_held() {
                    self.end_hold(
                        node,
                        LockEvent::Lost {
                            reason: reason.clone(),
                        },
                        None,
                    );
                    return Err(reason);
                }
                Err(self.take_ended(owner).unwrap_or(reason))
            }
            Err(err) if err.code() == ErrorCode::Closed => {
                self.end_hold(node, LockEvent::Released, None);
                self.take_ended(owner);
                Err(err)
            }
            Err(err) => {
                // Not deleted (e.g. NO_AUTH): still held, the caller may retry.
                if let Some(h) = self.holds.lock().unwrap().iter().find(|h| h.node == node) {
                    h.cancel_release();
                }
                self.ended_count.send_modify(|n| *n += 1);
                Err(err)
            }
        }
    }

    /// Releases every hold of this object, whoever its owner (closing it).
    pub(super) async fn release_all(self: &Arc<Self>) {
        let owners: Vec<Owner> = self.holds.lock().unwrap().iter().map(|h| h.owner).collect();
        for owner in owners {
            while self.hold_of(owner, |_| ()).is_some() {
                if self.unlock_as(owner).await.is_err() {
                    break;
                }
            }
        }
    }
}
