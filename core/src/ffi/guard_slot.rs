//! A lock guard as a binding holds it (Kotlin's `Hold`): released once, from any thread.

use std::sync::Mutex;

use crate::error::{Error, ErrorCode, Result};
use crate::lock::write_lock::LockGuard;

/// Released once: a second `release` is `NOT_OWNER`; dropped unreleased, the guard inside
/// releases in the background.
pub struct GuardSlot {
    guard: Mutex<Option<LockGuard>>,
}

impl GuardSlot {
    pub fn new(guard: LockGuard) -> GuardSlot {
        GuardSlot {
            guard: Mutex::new(Some(guard)),
        }
    }

    /// A slot for a guard still to come (an acquire in flight).
    pub fn empty() -> GuardSlot {
        GuardSlot {
            guard: Mutex::new(None),
        }
    }

    /// Puts the guard an acquire obtained into an `empty` slot. A guard
    /// already there is dropped, which releases it in the background.
    pub fn put(&self, guard: LockGuard) {
        *self.guard.lock().unwrap() = Some(guard);
    }

    /// Not released, not lost.
    pub fn is_held(&self) -> bool {
        self.guard
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(LockGuard::is_held)
    }

    /// The guard to release; `NOT_OWNER` once it was taken.
    pub fn take(&self) -> Result<LockGuard> {
        self.guard
            .lock()
            .unwrap()
            .take()
            .ok_or_else(|| Error::new(ErrorCode::NotOwner, "this hold was released already"))
    }
}
