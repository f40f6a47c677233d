//! A lock or multi-lock guard as a binding holds it (Kotlin's `Hold`): released once, from any
//! thread.

use std::sync::Mutex;

use crate::error::{Error, ErrorCode, Result};
use crate::lock::multi_lock::MultiLockGuard;
use crate::lock::write_lock::LockGuard;

/// The guard of a lock or of a multi-lock.
pub enum HeldGuard {
    Lock(LockGuard),
    Multi(MultiLockGuard),
}

impl HeldGuard {
    /// Not released, not lost.
    pub fn is_held(&self) -> bool {
        match self {
            HeldGuard::Lock(guard) => guard.is_held(),
            HeldGuard::Multi(guard) => guard.is_held(),
        }
    }

    /// Returns once every node of the hold is gone.
    pub async fn release(self) -> Result<()> {
        match self {
            HeldGuard::Lock(guard) => guard.release().await,
            HeldGuard::Multi(guard) => guard.release().await,
        }
    }
}

impl From<LockGuard> for HeldGuard {
    fn from(guard: LockGuard) -> HeldGuard {
        HeldGuard::Lock(guard)
    }
}

impl From<MultiLockGuard> for HeldGuard {
    fn from(guard: MultiLockGuard) -> HeldGuard {
        HeldGuard::Multi(guard)
    }
}

/// Released once: a second `release` is `NOT_OWNER`; dropped unreleased, the guard inside
/// releases in the background.
pub struct GuardSlot {
    guard: Mutex<Option<HeldGuard>>,
}

impl GuardSlot {
    pub fn new(guard: impl Into<HeldGuard>) -> GuardSlot {
        GuardSlot {
            guard: Mutex::new(Some(guard.into())),
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
    pub fn put(&self, guard: impl Into<HeldGuard>) {
        *self.guard.lock().unwrap() = Some(guard.into());
    }

    /// Not released, not lost.
    pub fn is_held(&self) -> bool {
        self.guard
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(HeldGuard::is_held)
    }

    /// The guard to release; `NOT_OWNER` once it was taken.
    pub fn take(&self) -> Result<HeldGuard> {
        self.guard
            .lock()
            .unwrap()
            .take()
            .ok_or_else(|| Error::new(ErrorCode::NotOwner, "this hold was released already"))
    }
}
