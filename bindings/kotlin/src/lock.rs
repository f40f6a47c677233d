//! Exclusive locks, multi-locks and read/write locks. Each acquire is an owner of its
//! own: coroutines exclude each other like processes do, and a hold is an
//! object that releases once.

use std::sync::Arc;

use zkrecipes::ffi::{GuardSlot, OwnedLock};
use zkrecipes::{Lock, MultiLock, Owner, ReadWriteLock, WriteLock};

use crate::client::NativeClient;
use crate::errors::Result;
use crate::events::NativeEvents;
use crate::tasks::{run, wait};

#[derive(uniffi::Object)]
pub struct NativeLock {
    lock: Lock,
    client: zkrecipes::Client,
}

/// What `acquire` returns when its timeout passed first: a fencing token is
/// a czxid, never negative.
const NOT_ACQUIRED: i64 = -1;

/// One participant of a lock, holder first.
#[derive(uniffi::Record)]
pub struct NativeParticipant {
    pub node: String,
    pub identity: String,
    pub is_reader: bool,
}

#[uniffi::export]
impl NativeLock {
    #[uniffi::constructor]
    pub fn write_lock(client: &NativeClient, dir: String) -> Result<Arc<Self>> {
        let lock: WriteLock = WriteLock::new(&client.inner, &dir)?;
        Ok(Arc::new(NativeLock {
            lock,
            client: client.inner.clone(),
        }))
    }

    /// Acquires into `hold` (made by the caller, empty) and returns the
    /// hold's fencing token, or `NOT_ACQUIRED` (-1) when `timeout_ms` passed
    /// first (infinity: no limit; 0: a try). A cancelled coroutine drops this
    /// future, which withdraws the node; a hold that came anyway is either in
    /// `hold` (the caller abandons it) or dropped with the task (released).
    ///
    /// Why this shape: an optional hold comes back in a buffer, and an
    /// optional timeout goes in one; each costs a JNA structure and two more
    /// crossings per call, on the caller's thread, which is what Kotlin's
    /// overhead on the lock cycle was made of. And a result that is a plain
    /// number cannot be lost to a cancellation after its conversion, so the
    /// call needs no separate cancel handle (see `NativeCancel`).
    pub async fn acquire(&self, timeout_ms: f64, hold: Arc<NativeHold>) -> Result<i64> {
        let wait = wait(timeout_ms)?;
        let lock = self.lock.clone();
        let acquiring = async move { lock.acquire_as(Owner::unique(), wait).await };
        Ok(match run(acquiring).await? {
            Some(guard) => {
                let token = guard.fencing_token();
                hold.slot.put(guard);
                token
            }
            None => NOT_ACQUIRED,
        })
    }

    pub fn is_held(&self) -> bool {
        self.lock.is_held()
    }

    pub fn dir(&self) -> String {
        self.lock.dir().to_string()
    }

    pub fn events(&self) -> Arc<NativeEvents> {
        NativeEvents::lock(&self.client, self.lock.subscribe())
    }

    pub async fn participants(&self) -> Result<Vec<NativeParticipant>> {
        let lock = self.lock.clone();
        let all = run(async move { lock.participants().await }).await?;
        Ok(all
            .into_iter()
            .map(|p| NativeParticipant {
                node: p.node,
                identity: p.identity,
                is_reader: p.is_reader,
            })
            .collect())
    }

    /// `release_all()` for a thread that may block.
    pub fn release_all_blocking(&self) {
        let lock = self.lock.clone();
        crate::tasks::block(async move { lock.release_all().await });
    }

    /// Releases every hold of this lock object.
    pub async fn release_all(&self) -> Result<()> {
        let lock = self.lock.clone();
        run(async move {
            lock.release_all().await;
            Ok(())
        })
        .await
    }
}

#[derive(uniffi::Object)]
pub struct NativeReadWriteLock {
    read: Arc<NativeLock>,
    write: Arc<NativeLock>,
}

#[uniffi::export]
impl NativeReadWriteLock {
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, dir: String) -> Result<Arc<Self>> {
        let rw = ReadWriteLock::new(&client.inner, &dir)?;
        Ok(Arc::new(NativeReadWriteLock {
            read: Arc::new(NativeLock {
                lock: rw.read_lock().clone(),
                client: client.inner.clone(),
            }),
            write: Arc::new(NativeLock {
                lock: rw.write_lock().clone(),
                client: client.inner.clone(),
            }),
        }))
    }

    pub fn read_lock(&self) -> Arc<NativeLock> {
        self.read.clone()
    }

    pub fn write_lock(&self) -> Arc<NativeLock> {
        self.write.clone()
    }
}

/// One acquire's hold: made empty by the caller, filled by the acquire.
/// Released once, by `release()` or, failing that, when the object is freed.
#[derive(uniffi::Object)]
pub struct NativeHold {
    slot: GuardSlot,
}

#[uniffi::export]
impl NativeHold {
    /// An empty hold, for one `acquire`.
    #[uniffi::constructor]
    pub fn new() -> Arc<Self> {
        Arc::new(NativeHold {
            slot: GuardSlot::empty(),
        })
    }

    /// Gives the hold up, if the acquire filled it, for a caller that is
    /// gone: the lock is released in the background, without blocking.
    pub fn abandon(&self) {
        drop(self.slot.take());
    }

    /// Not released, not lost.
    pub fn is_held(&self) -> bool {
        self.slot.is_held()
    }

    /// `release()` for a thread that may block; nothing if released already.
    pub fn release_blocking(&self) {
        if let Ok(guard) = self.slot.take() {
            crate::tasks::block(async move {
                let _ = guard.release().await;
            });
        }
    }

    /// Returns once the node is gone. A second release is `NOT_OWNER`.
    pub async fn release(&self) -> Result<()> {
        let guard = self.slot.take()?;
        run(async move { guard.release().await }).await
    }
}

/// Exclusive locks on several paths, taken together (all or none) in path order; each acquire
/// is an owner of its own, as `NativeLock`'s.
#[derive(uniffi::Object)]
pub struct NativeMultiLock {
    locks: MultiLock,
}

#[uniffi::export]
impl NativeMultiLock {
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, dirs: Vec<String>) -> Result<Arc<Self>> {
        let locks = MultiLock::new(&client.inner, &dirs)?;
        Ok(Arc::new(NativeMultiLock { locks }))
    }

    /// Acquires into `hold` as `NativeLock::acquire` does; the fencing tokens (one per path, in
    /// the order given), none when `timeout_ms` passed first.
    pub async fn acquire(&self, timeout_ms: f64, hold: Arc<NativeHold>) -> Result<Vec<i64>> {
        let wait = wait(timeout_ms)?;
        let locks = self.locks.clone();
        let acquiring = async move { locks.acquire_as(Owner::unique(), wait).await };
        Ok(match run(acquiring).await? {
            Some(guard) => {
                let tokens = guard.fencing_tokens().to_vec();
                hold.slot.put(guard);
                tokens
            }
            None => Vec::new(),
        })
    }

    pub fn is_held(&self) -> bool {
        self.locks.is_held()
    }

    pub fn dirs(&self) -> Vec<String> {
        self.locks.dirs().into_iter().map(str::to_string).collect()
    }

    /// The path its metrics and spans carry.
    pub fn observed_path(&self) -> String {
        self.locks.observed_path()
    }

    /// `release_all()` for a thread that may block.
    pub fn release_all_blocking(&self) {
        let locks = self.locks.clone();
        crate::tasks::block(async move { locks.release_all().await });
    }

    /// Releases every hold of this object.
    pub async fn release_all(&self) -> Result<()> {
        let locks = self.locks.clone();
        run(async move {
            locks.release_all().await;
            Ok(())
        })
        .await
    }
}
