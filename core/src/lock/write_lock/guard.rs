//! A held lock as the Rust API hands it out: release it, or drop it to release in the background.

use super::{Lock, Owner};
use crate::error::Result;
use crate::runtime;

/// A held lock. `release()` returns once the node is gone; dropping the guard
/// releases in the background.
#[must_use = "dropping the guard releases the lock"]
pub struct LockGuard {
    lock: Lock,
    owner: Owner,
    fencing_token: i64,
    released: bool,
}

impl std::fmt::Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockGuard")
            .field("dir", &self.lock.dir())
            .field("fencing_token", &self.fencing_token)
            .finish()
    }
}

impl LockGuard {
    pub(super) fn new(lock: Lock, owner: Owner, fencing_token: i64) -> LockGuard {
        LockGuard {
            lock,
            owner,
            fencing_token,
            released: false,
        }
    }

    pub fn fencing_token(&self) -> i64 {
        self.fencing_token
    }

    pub fn lock(&self) -> &Lock {
        &self.lock
    }

    /// The owner this hold counts for (see `Lock::acquire_as`).
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// Whether this hold is still in place (not lost, not released).
    pub fn is_held(&self) -> bool {
        self.lock.is_held_by(self.owner)
    }

    pub async fn release(mut self) -> Result<()> {
        self.released = true;
        self.lock.unlock_as(self.owner).await
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if !self.released {
            let lock = self.lock.clone();
            let owner = self.owner;
            runtime::handle().spawn(async move { lock.unlock_as(owner).await });
        }
    }
}
