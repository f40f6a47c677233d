//! A held lock and its release; `monitor.rs` tells the holder what happens
//! to it while it holds.
//!
//! - A release reports success only when the server confirmed our delete; a
//!   release that finds the lock already lost says so (the error, and one
//!   `LOST` event), never "released".

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use super::monitor::{Following, Keeper, SetWatch};
use super::write_lock::{LockCore, Owner};
use crate::client::{expired, Client};
use crate::error::{Error, ErrorCode, Result};

#[derive(Debug)]
pub(super) struct Hold {
    pub owner: Owner,
    pub count: u32,
    pub node: String,
    pub fencing_token: i64,
    pub session: i64,
    _following: Following,
    /// Set before our own delete, so that the monitor does not call it a loss.
    releasing: Arc<AtomicBool>,
}

impl Hold {
    pub(super) fn new(
        core: &Arc<LockCore>,
        owner: Owner,
        node: String,
        fencing_token: i64,
        session: i64,
        first_watch: Option<SetWatch>,
    ) -> Hold {
        let releasing = Arc::new(AtomicBool::new(false));
        let weak: Weak<LockCore> = Arc::downgrade(core);
        let keeper: Weak<dyn Keeper> = weak;
        let following = super::monitor::Monitor::of(core.client()).follow(
            keeper,
            &node,
            session,
            first_watch,
            releasing.clone(),
        );
        Hold {
            owner,
            count: 1,
            node,
            fencing_token,
            session,
            _following: following,
            releasing,
        }
    }

    pub(super) fn start_release(&self) {
        self.releasing.store(true, Ordering::SeqCst);
    }

    pub(super) fn cancel_release(&self) {
        self.releasing.store(false, Ordering::SeqCst);
    }

    pub(super) fn is_releasing(&self) -> bool {
        self.releasing.load(Ordering::SeqCst)
    }
}

/// How a release ended on the server.
pub(crate) enum Released {
    Deleted,
    /// The node was already gone (session expired, deleted by somebody else).
    Lost(Error),
}

/// Deletes our node `path` of `session`, retrying across connection losses
/// in that session. A node that is gone before our first delete, or a session
/// that ended, is a lost lock, not a release.
/// `noun` names what the node is ("lock", "lease") in the loss's message.
pub(crate) async fn release_node(
    client: &Client,
    noun: &str,
    path: &str,
    session: i64,
) -> Result<Released> {
    let mut retried = false;
    loop {
        let zk = client.zk()?;
        if zk.session_id().0 != session {
            return Ok(Released::Lost(expired()));
        }
        match zk.delete(path, None).await.map_err(Error::from) {
            Ok(()) => return Ok(Released::Deleted),
            // After a lost reply, "no node" is our own earlier delete.
            Err(err) if err.code() == ErrorCode::NoNode && retried => return Ok(Released::Deleted),
            Err(err) if err.code() == ErrorCode::NoNode => {
                return Ok(Released::Lost(deleted(noun, path)))
            }
            Err(err) if err.code() == ErrorCode::SessionExpired => {
                return Ok(Released::Lost(expired()))
            }
            Err(err) if err.is_connection_loss() => {
                drop(zk);
                retried = true;
                match client.await_usable(session, None).await {
                    Ok(()) => {}
                    Err(err) if err.code() == ErrorCode::SessionExpired => {
                        return Ok(Released::Lost(expired()))
                    }
                    Err(err) => return Err(err),
                }
            }
            Err(err) => return Err(err),
        }
    }
}

pub(crate) fn deleted(noun: &str, path: &str) -> Error {
    Error::new(
        ErrorCode::NoNode,
        format!("{noun} node {path} was deleted by somebody else"),
    )
}
