//! A lease as the Rust API hands it out: release it, or drop it to release in the background.

use super::Semaphore;
use crate::error::Result;

/// One held lease. `release()` returns once its node is gone; dropping it releases in the
/// background.
#[must_use = "dropping the lease releases it"]
pub struct Lease {
    semaphore: Semaphore,
    node: String,
    fencing_token: i64,
    released: bool,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("node", &self.node_path())
            .field("fencing_token", &self.fencing_token)
            .finish()
    }
}

impl Lease {
    pub(super) fn new(semaphore: Semaphore, node: String, fencing_token: i64) -> Lease {
        Lease {
            semaphore,
            node,
            fencing_token,
            released: false,
        }
    }

    /// The czxid of the lease's node: increasing across the ensemble, so a resource can
    /// refuse a writer whose token is older than one it has seen.
    pub fn fencing_token(&self) -> i64 {
        self.fencing_token
    }

    /// The lease node's name under `<path>/leases`.
    pub fn node(&self) -> &str {
        &self.node
    }

    pub fn node_path(&self) -> String {
        format!("{}/{}", self.semaphore.core().leases_dir(), self.node)
    }

    /// Whether the lease is still held (not lost, not released).
    /// Not once the server has been silent past the grace (a process paused past its session
    /// sees it the moment it resumes), as a lock's `is_held`.
    pub fn is_held(&self) -> bool {
        let core = self.semaphore.core();
        !core.client.silent_past_grace() && core.is_held(&self.node)
    }

    /// Deletes the lease node; an error if the lease was lost before (its reason).
    pub async fn release(mut self) -> Result<()> {
        self.released = true;
        self.semaphore.core().release(self.node.clone()).await
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        if !self.released {
            // The release starts now and runs to its end on the runtime.
            drop(
                self.semaphore
                    .core()
                    .release(std::mem::take(&mut self.node)),
            );
        }
    }
}
