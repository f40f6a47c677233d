//! Curator's `SharedCount` and `DistributedAtomicLong`. The core's shared count's close only
//! stops following the node; this object's (`Closing`) also answers `CLOSED` to every later
//! call and ends its value flows. A write in flight still ends as it would have: dropping it
//! half-way would leave its outcome unknown.

use std::sync::Arc;

use tokio::sync::broadcast::Receiver;
use tokio::sync::watch;
use zkrecipes::{DistributedAtomicLong, SharedCount, Updated, VersionedCount};

use crate::client::NativeClient;
use crate::closing::Closing;
use crate::errors::Result;
use crate::events::recv;
use crate::tasks::run;

/// A value with the node version it was read at (what `try_set` writes over).
#[derive(uniffi::Record)]
pub struct NativeVersionedCount {
    pub value: i32,
    pub version: i32,
}

impl From<VersionedCount> for NativeVersionedCount {
    fn from(v: VersionedCount) -> Self {
        NativeVersionedCount {
            value: v.value,
            version: v.version,
        }
    }
}

#[derive(uniffi::Object)]
pub struct NativeSharedCount {
    count: SharedCount,
    client: zkrecipes::Client,
    closing: Closing,
}

#[uniffi::export]
impl NativeSharedCount {
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, path: String, seed: i32) -> Result<Arc<Self>> {
        Ok(Arc::new(NativeSharedCount {
            count: SharedCount::new(&client.inner, &path, seed)?,
            client: client.inner.clone(),
            closing: Closing::new(format!("shared count {path}")),
        }))
    }

    pub fn path(&self) -> String {
        self.count.path().to_string()
    }

    /// Creates the node with the seed if missing, reads it and follows it; twice: nothing more.
    pub async fn start(&self) -> Result<()> {
        self.closing.check()?;
        let count = self.count.clone();
        let closed = self.closing.subscribe();
        run(async move {
            count.start().await?;
            // A close while this start was on its way: the core's count would follow the node
            // from now on (its close stops only a follower already there) until this object is
            // collected.
            if *closed.borrow() {
                count.close();
            }
            Ok(())
        })
        .await
    }

    /// The cached value with its version (`INVALID_ARGUMENT` before `start`).
    pub fn versioned(&self) -> Result<NativeVersionedCount> {
        self.closing.check()?;
        Ok(self.count.versioned()?.into())
    }

    pub async fn set(&self, value: i32) -> Result<()> {
        self.closing.check()?;
        let count = self.count.clone();
        run(async move { count.set(value).await }).await
    }

    /// `false` when the count was not at `expected`'s version any more (the cache then holds
    /// the newer value).
    pub async fn try_set(&self, expected: NativeVersionedCount, value: i32) -> Result<bool> {
        self.closing.check()?;
        let count = self.count.clone();
        let expected = VersionedCount {
            value: expected.value,
            version: expected.version,
        };
        run(async move { count.try_set(expected, value).await }).await
    }

    /// The value written and its version.
    pub async fn add(&self, delta: i32) -> Result<NativeVersionedCount> {
        self.closing.check()?;
        let count = self.count.clone();
        Ok(run(async move { count.add(delta).await }).await?.into())
    }

    /// Every value the count takes from now on, until it or its client is closed.
    pub fn values(&self) -> Arc<NativeCountValues> {
        Arc::new(NativeCountValues {
            source: tokio::sync::Mutex::new((self.count.subscribe(), self.closing.subscribe())),
            client: self.client.clone(),
        })
    }

    /// Stops following the node and ends the value flows; every later call answers `CLOSED`.
    /// (Not `close`: uniffi's objects have one, which frees them.)
    pub fn end(&self) {
        self.count.close();
        self.closing.close();
    }
}

/// A shared count's values as Kotlin collects them: `next()` suspends until the next one.
#[derive(uniffi::Object)]
pub struct NativeCountValues {
    source: tokio::sync::Mutex<(Receiver<VersionedCount>, watch::Receiver<bool>)>,
    client: zkrecipes::Client,
}

#[uniffi::export]
impl NativeCountValues {
    /// The next value; `None` once the count or its client is closed (after what was taken
    /// before).
    pub async fn next(&self) -> Option<NativeVersionedCount> {
        let mut source = self.source.lock().await;
        let (rx, closed) = &mut *source;
        let ended = async {
            tokio::select! {
                () = self.client.closed() => {}
                _ = closed.wait_for(|closed| *closed) => {}
            }
        };
        recv(rx, ended, NativeVersionedCount::from).await
    }
}

/// What an atomic long's update saw and wrote.
#[derive(uniffi::Record)]
pub struct NativeUpdated {
    pub pre_value: i64,
    pub post_value: i64,
}

impl From<Updated> for NativeUpdated {
    fn from(u: Updated) -> Self {
        NativeUpdated {
            pre_value: u.pre_value,
            post_value: u.post_value,
        }
    }
}

#[derive(uniffi::Object)]
pub struct NativeAtomicLong {
    counter: DistributedAtomicLong,
}

#[uniffi::export]
impl NativeAtomicLong {
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, path: String) -> Result<Arc<Self>> {
        Ok(Arc::new(NativeAtomicLong {
            counter: DistributedAtomicLong::new(&client.inner, &path)?,
        }))
    }

    pub fn path(&self) -> String {
        self.counter.path().to_string()
    }

    pub async fn get(&self) -> Result<i64> {
        let counter = self.counter.clone();
        run(async move { counter.get().await }).await
    }

    pub async fn increment(&self) -> Result<NativeUpdated> {
        let counter = self.counter.clone();
        Ok(run(async move { counter.increment().await }).await?.into())
    }

    pub async fn decrement(&self) -> Result<NativeUpdated> {
        let counter = self.counter.clone();
        Ok(run(async move { counter.decrement().await }).await?.into())
    }

    pub async fn add(&self, delta: i64) -> Result<NativeUpdated> {
        let counter = self.counter.clone();
        Ok(run(async move { counter.add(delta).await }).await?.into())
    }

    /// `false` (nothing written) when the value is not `expected`.
    pub async fn compare_and_set(&self, expected: i64, new: i64) -> Result<bool> {
        let counter = self.counter.clone();
        run(async move { counter.compare_and_set(expected, new).await }).await
    }

    pub async fn force_set(&self, value: i64) -> Result<()> {
        let counter = self.counter.clone();
        run(async move { counter.force_set(value).await }).await
    }
}
