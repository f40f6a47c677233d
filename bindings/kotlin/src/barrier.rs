//! Curator's `DistributedBarrier` and `DistributedDoubleBarrier`. The core's barriers have no
//! close; these objects do (`Closing`), so that `use {}` ends what waits on them.

use std::sync::Arc;

use zkrecipes::ffi::member_count;
use zkrecipes::{Barrier, DoubleBarrier};

use crate::client::NativeClient;
use crate::closing::Closing;
use crate::errors::Result;
use crate::tasks::{run, run_cancellable, wait, NativeCancel};

#[derive(uniffi::Object)]
pub struct NativeBarrier {
    barrier: Barrier,
    closing: Closing,
}

#[uniffi::export]
impl NativeBarrier {
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, path: String) -> Result<Arc<Self>> {
        Ok(Arc::new(NativeBarrier {
            barrier: Barrier::new(&client.inner, &path)?,
            closing: Closing::new(format!("barrier {path}")),
        }))
    }

    pub fn path(&self) -> String {
        self.barrier.path().to_string()
    }

    pub async fn set(&self) -> Result<()> {
        self.closing.check()?;
        let barrier = self.barrier.clone();
        run(async move { barrier.set().await }).await
    }

    pub async fn remove(&self) -> Result<()> {
        self.closing.check()?;
        let barrier = self.barrier.clone();
        run(async move { barrier.remove().await }).await
    }

    pub async fn is_set(&self) -> Result<bool> {
        self.closing.check()?;
        let barrier = self.barrier.clone();
        run(async move { barrier.is_set().await }).await
    }

    /// `true` once the barrier is down; `false` if `timeout_ms` passed first; `CLOSED` when
    /// this object is closed meanwhile.
    pub async fn wait(&self, timeout_ms: f64) -> Result<bool> {
        let wait = wait(timeout_ms)?;
        let barrier = self.barrier.clone();
        run(self.closing.guard(async move { barrier.wait(wait).await })).await
    }

    /// Ends the waits on this object (`CLOSED`); every later call answers `CLOSED`. (Not
    /// `close`: uniffi's objects have one, which frees them.)
    pub fn end(&self) {
        self.closing.close();
    }
}

#[derive(uniffi::Object)]
pub struct NativeDoubleBarrier {
    barrier: DoubleBarrier,
    closing: Closing,
}

#[uniffi::export]
impl NativeDoubleBarrier {
    /// `members` (the member count) as Kotlin gave it; the core checks the range.
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, path: String, members: i64) -> Result<Arc<Self>> {
        let count = member_count("memberCount", members)?;
        Ok(Arc::new(NativeDoubleBarrier {
            barrier: DoubleBarrier::new(&client.inner, &path, count)?,
            closing: Closing::new(format!("double barrier {path}")),
        }))
    }

    pub fn path(&self) -> String {
        self.barrier.path().to_string()
    }

    pub fn node_path(&self) -> String {
        self.barrier.node_path()
    }

    pub fn member_count(&self) -> u32 {
        self.barrier.member_count()
    }

    /// `true` once `member_count` members are in; `false` (our node withdrawn) if `timeout_ms`
    /// passed first. Cancelled or closed meanwhile, it withdraws our node; an enter that
    /// succeeded all the same answers `true`, for Kotlin to withdraw.
    pub async fn enter(&self, timeout_ms: f64, cancel: Arc<NativeCancel>) -> Result<bool> {
        let wait = wait(timeout_ms)?;
        let barrier = self.barrier.clone();
        let entering = self.closing.guard(async move { barrier.enter(wait).await });
        run_cancellable(&cancel, entering).await
    }

    /// `true` once every member left; `false` if `timeout_ms` passed first (our node withdrawn
    /// in any case, also when cancelled or closed meanwhile).
    pub async fn leave(&self, timeout_ms: f64) -> Result<bool> {
        let wait = wait(timeout_ms)?;
        let barrier = self.barrier.clone();
        run(self.closing.guard(async move { barrier.leave(wait).await })).await
    }

    /// The member nodes' names (`ready` not among them), in Curator's order.
    pub async fn members(&self) -> Result<Vec<String>> {
        self.closing.check()?;
        let barrier = self.barrier.clone();
        run(async move { barrier.members().await }).await
    }

    pub async fn is_ready(&self) -> Result<bool> {
        self.closing.check()?;
        let barrier = self.barrier.clone();
        run(async move { barrier.is_ready().await }).await
    }

    /// Ends the enters and leaves in flight (`CLOSED`), then withdraws this member if it is in;
    /// every later call answers `CLOSED`. Closing twice is harmless.
    pub async fn close_async(&self) -> Result<()> {
        self.closing.close();
        run(withdraw(self.barrier.clone())).await
    }

    /// `close_async()` for a thread that may block.
    pub fn close_blocking(&self) {
        self.closing.close();
        let barrier = self.barrier.clone();
        crate::tasks::block(async move {
            let _ = withdraw(barrier).await;
        });
    }

    /// Withdraws in the background, for a caller that cannot wait (the undo of an enter that
    /// succeeded for a cancelled coroutine).
    pub fn withdraw_later(&self) {
        let barrier = self.barrier.clone();
        zkrecipes::runtime::runtime().spawn(async move {
            let _ = withdraw(barrier).await;
        });
    }
}

/// This member out without waiting for the others (`DoubleBarrier::withdraw`).
async fn withdraw(barrier: DoubleBarrier) -> zkrecipes::Result<()> {
    barrier.withdraw().await
}
