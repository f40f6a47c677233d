//! Exclusive locks and read/write locks. Each acquire is an owner of its
//! own: coroutines exclude each other like processes do, and a hold is an
//! object that releases once.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use zkrecipes::ffi::GuardSlot;
use zkrecipes::{Lock, LockGuard, ReadWriteLock, WriteLock};

use crate::client::NativeClient;
use crate::errors::Result;
use crate::events::NativeEvents;
use crate::tasks::run;

#[derive(uniffi::Object)]
pub struct NativeLock {
    pub(crate) lock: Lock,
    client: zkrecipes::Client,
}

/// The fencing token of a hold not filled (a token is a czxid, never negative).
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
    /// The fencing token of the hold that filled the slot (-1: none yet).
    token: AtomicI64,
    /// Set once the caller gave up (a cancelled coroutine): a hold that
    /// comes after is released, not kept. Locked around filling the slot,
    /// so that a hold comes either before (and `abandon` finds it) or after.
    abandoned: Mutex<bool>,
    cancel: tokio::sync::Notify,
}

impl NativeHold {
    /// Keeps `guard` unless the caller gave up (then it is released in the
    /// background and this is `false`).
    pub(crate) fn fill(&self, guard: LockGuard) -> bool {
        let abandoned = self.abandoned.lock().unwrap();
        if *abandoned {
            drop(abandoned);
            drop(guard);
            return false;
        }
        self.token.store(guard.fencing_token(), Ordering::Release);
        self.slot.put(guard);
        true
    }

    /// The guard to release; `NOT_OWNER` once released.
    pub(crate) fn take(&self) -> zkrecipes::Result<LockGuard> {
        self.slot.take()
    }

    /// Ends an acquire filling this hold (see `fill`).
    pub(crate) fn cancel(&self) {
        *self.abandoned.lock().unwrap() = true;
        self.cancel.notify_one();
    }

    /// Once `cancel` was called (also before this is awaited).
    pub(crate) async fn cancelled(&self) {
        self.cancel.notified().await
    }

    pub(crate) fn fencing_token(&self) -> i64 {
        self.token.load(Ordering::Acquire)
    }
}

#[uniffi::export]
impl NativeHold {
    /// An empty hold, for one `acquire`.
    #[uniffi::constructor]
    pub fn new() -> Arc<Self> {
        Arc::new(NativeHold {
            slot: GuardSlot::empty(),
            token: AtomicI64::new(NOT_ACQUIRED),
            abandoned: Mutex::new(false),
            cancel: tokio::sync::Notify::new(),
        })
    }

    /// Gives the hold up, if the acquire filled it or does yet, for a
    /// caller that is gone: the lock is released in the background, without
    /// blocking.
    pub fn abandon(&self) {
        self.cancel();
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
}
