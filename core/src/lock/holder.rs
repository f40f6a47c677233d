//! A held lock and its release; `monitor.rs` tells the holder what happens
//! to it while it holds.
//!
//! - A release reports success only when the server confirmed our delete; a
//!   release that finds the lock already lost says so (the error, and one
//!   `LOST` event), never "released".

use crate::observe::Holding;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use super::monitor::{Following, Keeper, SetWatch};
use super::owner::Owner;
use crate::client::Client;

#[derive(Debug)]
pub(super) struct Hold {
    pub owner: Owner,
    pub count: u32,
    pub node: String,
    pub fencing_token: i64,
    pub session: i64,
    _following: Following,
    /// Its numbers and events (`None` for a latch's term, which the latch records).
    pub holding: Option<Holding>,
    /// Set before our own delete, so that the monitor does not call it a loss.
    releasing: Arc<AtomicBool>,
}

impl Hold {
    /// A hold of `node`, followed for `keeper` (the lock or semaphore that holds it).
    pub(super) fn new(
        client: &Client,
        keeper: Weak<dyn Keeper>,
        owner: Owner,
        node: String,
        fencing_token: i64,
        session: i64,
        first_watch: Option<SetWatch>,
    ) -> Hold {
        let releasing = Arc::new(AtomicBool::new(false));
        let following = super::monitor::Monitor::of(client).follow(
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
            holding: None,
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
