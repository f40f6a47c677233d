//! A lease as a binding holds it: released once, from any thread.

use std::sync::Mutex;

use super::Lease;
use crate::error::{Error, ErrorCode, Result};

/// A lease as a binding hands it to its language: any thread may release it, once; a second
/// release is `NOT_OWNER`. Dropped unreleased (garbage collected), it releases like the
/// `Lease` inside.
pub struct LeaseSlot {
    lease: Mutex<Option<Lease>>,
    node_path: String,
    fencing_token: i64,
}

impl LeaseSlot {
    pub fn new(lease: Lease) -> LeaseSlot {
        LeaseSlot {
            node_path: lease.node_path(),
            fencing_token: lease.fencing_token(),
            lease: Mutex::new(Some(lease)),
        }
    }

    /// The lease, to release; the slot is empty afterwards.
    pub fn take(&self) -> Result<Lease> {
        self.lease.lock().unwrap().take().ok_or_else(|| {
            Error::new(
                ErrorCode::NotOwner,
                format!("lease {} was already released", self.node_path),
            )
        })
    }

    pub fn node_path(&self) -> &str {
        &self.node_path
    }

    pub fn fencing_token(&self) -> i64 {
        self.fencing_token
    }

    /// Held: not released through this slot, not lost.
    pub fn is_held(&self) -> bool {
        self.lease
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(Lease::is_held)
    }
}
