//! The counting semaphore and the leases it hands out. Each lease is an object that releases
//! once; one freed unreleased (collected, or an acquire's result its caller gave up on)
//! releases in the background, as the core's `Lease` does when dropped.

use std::sync::Arc;

use zkrecipes::ffi::{lease_count, LeaseSlot, OwnedSemaphore};
use zkrecipes::{Lease, Semaphore};

use crate::client::NativeClient;
use crate::errors::Result;
use crate::events::NativeEvents;
use crate::tasks::{run, run_cancellable, wait, NativeCancel};

#[derive(uniffi::Object)]
pub struct NativeSemaphore {
    semaphore: Semaphore,
    client: zkrecipes::Client,
}

/// A lease with what Kotlin reads of it at once: one call across the FFI instead of three.
#[derive(uniffi::Record)]
pub struct NativeGranted {
    pub lease: Arc<NativeLease>,
    pub fencing_token: i64,
    pub node_path: String,
}

#[uniffi::export]
impl NativeSemaphore {
    /// `max_leases` as Kotlin gave it; the core checks the range.
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, path: String, max_leases: i64) -> Result<Arc<Self>> {
        let max = lease_count("maxLeases", max_leases)?;
        Ok(Arc::new(NativeSemaphore {
            semaphore: Semaphore::new(&client.inner, &path, max)?,
            client: client.inner.clone(),
        }))
    }

    /// `count` leases, all or none, or `None` when `timeout_ms` passed first (`None`: no
    /// limit; 0 or less: a try). Cancelled, it withdraws its nodes; leases that came anyway
    /// are returned all the same, for Kotlin to release.
    pub async fn acquire(
        &self,
        count: i64,
        timeout_ms: f64,
        cancel: Arc<NativeCancel>,
    ) -> Result<Option<Vec<NativeGranted>>> {
        let count = lease_count("count", count)?;
        let wait = wait(timeout_ms)?;
        let semaphore = self.semaphore.clone();
        // Leases granted to a task whose caller left are dropped with its output: released.
        let acquiring = async move {
            let leases = semaphore.acquire_many(count, wait).await?;
            Ok(leases.map(|leases| leases.into_iter().map(NativeGranted::new).collect()))
        };
        run_cancellable(&cancel, acquiring).await
    }

    pub fn path(&self) -> String {
        self.semaphore.path().to_string()
    }

    pub fn max_leases(&self) -> u32 {
        self.semaphore.max_leases()
    }

    /// Leases this object holds now (not released, not lost).
    pub fn held(&self) -> u64 {
        self.semaphore.held() as u64
    }

    /// Every process's lease nodes on the server now (a waiter's included).
    pub async fn lease_nodes(&self) -> Result<Vec<String>> {
        let semaphore = self.semaphore.clone();
        run(async move { semaphore.lease_nodes().await }).await
    }

    pub fn events(&self) -> Arc<NativeEvents> {
        NativeEvents::lock(&self.client, self.semaphore.subscribe())
    }

    /// Releases every lease this object holds.
    pub async fn release_all(&self) -> Result<()> {
        let semaphore = self.semaphore.clone();
        run(async move {
            semaphore.release_all().await;
            Ok(())
        })
        .await
    }

    /// `release_all()` for a thread that may block.
    pub fn release_all_blocking(&self) {
        let semaphore = self.semaphore.clone();
        crate::tasks::block(async move { semaphore.release_all().await });
    }
}

impl NativeGranted {
    fn new(lease: Lease) -> NativeGranted {
        let slot = LeaseSlot::new(lease);
        NativeGranted {
            fencing_token: slot.fencing_token(),
            node_path: slot.node_path().to_string(),
            lease: Arc::new(NativeLease { slot }),
        }
    }
}

/// One held lease: released once, by `release()` or, failing that, when freed.
#[derive(uniffi::Object)]
pub struct NativeLease {
    slot: LeaseSlot,
}

#[uniffi::export]
impl NativeLease {
    /// Not released, not lost.
    pub fn is_held(&self) -> bool {
        self.slot.is_held()
    }

    /// Returns once the node is gone. A second release is `NOT_OWNER`; a lost lease's release
    /// answers the loss.
    pub async fn release(&self) -> Result<()> {
        let lease = self.slot.take()?;
        run(async move { lease.release().await }).await
    }

    /// `release()` for a thread that may block; nothing if released already.
    pub fn release_blocking(&self) {
        if let Ok(lease) = self.slot.take() {
            crate::tasks::block(async move {
                let _ = lease.release().await;
            });
        }
    }

    /// Releases in the background unless released already: for a lease whose caller is gone.
    pub fn abandon(&self) {
        drop(self.slot.take());
    }
}
