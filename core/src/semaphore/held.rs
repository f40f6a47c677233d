//! The leases a semaphore object holds, followed by the lock monitor, and their release.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::attempt::Granted;
use super::{weak_keeper, SemaphoreCore};
use crate::error::{Error, ErrorCode, Result};
use crate::lock::monitor::{set_watch, Following, Monitor};
use crate::lock::release_node::{release_node, Released};
use crate::lock::write_lock::LockEvent;
use crate::observe::{Holding, SEMAPHORE_HOLDS};
use crate::runtime;

pub(super) struct HeldLease {
    pub(super) node: String,
    pub(super) session: i64,
    _following: Following,
    /// Set before our own delete, so that the monitor does not call it a loss.
    releasing: Arc<AtomicBool>,
    /// Its numbers and events, recorded when the lease goes.
    pub(super) holding: Holding,
}

impl HeldLease {
    pub(super) fn is_releasing(&self) -> bool {
        self.releasing.load(Ordering::SeqCst)
    }

    /// Marks the lease as being released; false if it already was (another
    /// caller's release picked it first).
    pub(super) fn mark_releasing(&self) -> bool {
        self.releasing
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }
}

impl SemaphoreCore {
    /// Makes the granted nodes held leases, followed from now on. No await: a caller's
    /// deadline can never drop leases that were granted.
    /// `contended`: the acquire had to wait for a lease to be released.
    pub(super) fn take(self: &Arc<Self>, granted: Granted, contended: bool) -> Vec<(String, i64)> {
        let monitor = Monitor::of(&self.client);
        let mut watch = granted.children_watch.map(set_watch);
        let mut held = self.held.lock().unwrap();
        let mut leases = Vec::with_capacity(granted.nodes.len());
        for (node, fencing_token) in granted.nodes {
            let releasing = Arc::new(AtomicBool::new(false));
            let following = monitor.follow(
                weak_keeper(self),
                &node,
                granted.session,
                watch.take(),
                releasing.clone(),
            );
            held.push(HeldLease {
                node: node.clone(),
                session: granted.session,
                _following: following,
                releasing,
                holding: Holding::begin(
                    &self.client,
                    &SEMAPHORE_HOLDS,
                    &self.path,
                    None,
                    Some(fencing_token),
                    contended,
                ),
            });
            self.events.emit(LockEvent::Acquired { fencing_token });
            leases.push((node, fencing_token));
        }
        leases
    }

    /// Deletes the lease `node` and answers once the server confirmed it; a lease lost before
    /// its release answers with the loss's reason. Runs to its end even if the answer is
    /// not waited for.
    pub(super) fn release(
        self: &Arc<Self>,
        node: String,
    ) -> impl std::future::Future<Output = Result<()>> + Send + 'static {
        let core = self.clone();
        let task = runtime::handle().spawn(async move { core.release_now(&node).await });
        async move {
            task.await
                .unwrap_or_else(|_| Err(Error::new(ErrorCode::Internal, "release task ended")))
        }
    }

    async fn release_now(&self, node: &str) -> Result<()> {
        let session = {
            let held = self.held.lock().unwrap();
            let lease = held.iter().find(|h| h.node == node);
            lease.map(|h| {
                h.releasing.store(true, Ordering::SeqCst);
                h.session
            })
        };
        let Some(session) = session else {
            self.client.zk().map_err(|err| self.about(err))?;
            let mut ended = self.ended.lock().unwrap();
            return match ended.iter().position(|(n, _)| n == node) {
                Some(at) => Err(self.about(ended.remove(at).1)),
                None => Err(self.about(Error::new(
                    ErrorCode::NotOwner,
                    format!("lease {node} was already released"),
                ))),
            };
        };
        let path = format!("{}/{}", self.leases_dir, node);
        let released = release_node(&self.client, "lease", &path, session).await;
        let outcome = match released {
            Ok(Released::Deleted) => Ok(LockEvent::Released),
            Ok(Released::Lost(reason)) => Err(reason),
            Err(err) => {
                // Not deleted (closed, an error): the lease stays held and followed.
                let held = self.held.lock().unwrap();
                if let Some(h) = held.iter().find(|h| h.node == node) {
                    h.releasing.store(false, Ordering::SeqCst);
                }
                return Err(self.about(err));
            }
        };
        let removed = {
            let mut held = self.held.lock().unwrap();
            let at = held.iter().position(|h| h.node == node);
            at.map(|at| held.remove(at))
        };
        match outcome {
            Ok(event) => {
                if removed.is_some() {
                    self.events.emit(event);
                }
                Ok(())
            }
            Err(reason) => {
                if let Some(mut lease) = removed {
                    lease.holding.lose(&reason);
                    drop(lease);
                    self.events.emit(LockEvent::Lost {
                        reason: reason.clone(),
                    });
                } else {
                    // The monitor ended it meanwhile: this answer is its holder's.
                    self.ended.lock().unwrap().retain(|(n, _)| n != node);
                }
                Err(self.about(reason))
            }
        }
    }

    pub(super) fn is_held(&self, node: &str) -> bool {
        let held = self.held.lock().unwrap();
        held.iter().any(|h| h.node == node && !h.is_releasing())
    }
}
