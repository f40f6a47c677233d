//! Apache's `DistributedQueue`: an item taken is deleted. One taken for a
//! coroutine that was cancelled before it saw the item goes back.

use std::sync::{Arc, Mutex};

use zkrecipes::ffi::{HandedQueue, Handoff};
use zkrecipes::{DistributedQueue, Item};

use crate::client::NativeClient;
use crate::errors::Result;
use crate::tasks::{run, run_cancellable, NativeCancel};

#[derive(uniffi::Object)]
pub struct NativeQueue {
    queue: DistributedQueue,
}

#[uniffi::export]
impl NativeQueue {
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, dir: String) -> Result<Arc<Self>> {
        Ok(Arc::new(NativeQueue {
            queue: DistributedQueue::new(&client.inner, &dir)?,
        }))
    }

    pub fn max_payload(&self) -> u64 {
        self.queue.max_payload() as u64
    }

    /// The item's node path.
    pub async fn offer(&self, data: Vec<u8>) -> Result<String> {
        let queue = self.queue.clone();
        run(async move { queue.offer(&data).await }).await
    }

    pub async fn peek(&self) -> Result<Option<Vec<u8>>> {
        let queue = self.queue.clone();
        run(async move { queue.peek().await }).await
    }

    /// The head, taken; `None` when empty.
    pub async fn poll(&self, cancel: Arc<NativeCancel>) -> Result<Option<Arc<NativeTaken>>> {
        let queue = self.queue.clone();
        // Wrapped inside the task: an item the task finished with after its
        // caller left is dropped as a `NativeTaken`, which puts it back.
        let polling = async move {
            let item = queue.poll_handed().await?;
            Ok(item.map(NativeTaken::new))
        };
        run_cancellable(&cancel, polling).await
    }

    /// Waits for an item (`None` once `timeout_ms` passed; `None`: no limit).
    pub async fn take(
        &self,
        timeout_ms: f64,
        cancel: Arc<NativeCancel>,
    ) -> Result<Option<Arc<NativeTaken>>> {
        let timeout = crate::tasks::wait(timeout_ms)?;
        let queue = self.queue.clone();
        let taking = async move {
            let item = queue.take_handed(timeout).await?;
            Ok(item.map(NativeTaken::new))
        };
        run_cancellable(&cancel, taking).await
    }

    /// Up to `max` head items in one transaction (`max` as Kotlin gave it; the core checks the
    /// range); `None` when the queue is empty.
    pub async fn poll_many(
        &self,
        max: i64,
        cancel: Arc<NativeCancel>,
    ) -> Result<Option<Arc<NativeTakenMany>>> {
        let queue = self.queue.clone();
        let polling = async move { Ok(NativeTakenMany::new(queue.poll_many_handed(max).await?)) };
        run_cancellable(&cancel, polling).await
    }

    /// `poll_many` once an item is there (`None` once `timeout_ms` passed; `None`: no limit).
    pub async fn take_many(
        &self,
        max: i64,
        timeout_ms: f64,
        cancel: Arc<NativeCancel>,
    ) -> Result<Option<Arc<NativeTakenMany>>> {
        let timeout = crate::tasks::wait(timeout_ms)?;
        let queue = self.queue.clone();
        let taking = async move {
            Ok(NativeTakenMany::new(
                queue.take_many_handed(max, timeout).await?,
            ))
        };
        run_cancellable(&cancel, taking).await
    }

    pub async fn size(&self) -> Result<u64> {
        let queue = self.queue.clone();
        Ok(run(async move { queue.size().await }).await? as u64)
    }

    /// `close()` for a thread that may block.
    pub fn close_blocking(&self) {
        let queue = self.queue.clone();
        crate::tasks::block(async move {
            let _ = queue.close().await;
        });
    }

    pub async fn close_async(&self) -> Result<()> {
        let queue = self.queue.clone();
        run(async move { queue.close().await }).await
    }
}

/// An item taken from the queue, until Kotlin has its data: freed before
/// that (the coroutine was cancelled in between), it goes back.
#[derive(uniffi::Object)]
pub struct NativeTaken {
    taken: Mutex<Option<(Item, Handoff)>>,
}

impl NativeTaken {
    fn new(taken: (Item, Handoff)) -> Arc<Self> {
        Arc::new(NativeTaken {
            taken: Mutex::new(Some(taken)),
        })
    }
}

#[uniffi::export]
impl NativeTaken {
    /// The payload, handed over once (empty afterwards).
    pub fn data(&self) -> Vec<u8> {
        let taken = self.taken.lock().unwrap_or_else(|e| e.into_inner()).take();
        match taken {
            Some((item, handoff)) => {
                handoff.delivered();
                item.data
            }
            None => Vec::new(),
        }
    }
}

/// A batch taken from the queue, until Kotlin has its data: freed before that, every item goes
/// back.
#[derive(uniffi::Object)]
pub struct NativeTakenMany {
    taken: Mutex<Option<(Vec<Item>, Handoff)>>,
}

impl NativeTakenMany {
    /// `None` for an empty batch (nothing to give back).
    fn new((items, handoff): (Vec<Item>, Option<Handoff>)) -> Option<Arc<Self>> {
        handoff.map(|handoff| {
            Arc::new(NativeTakenMany {
                taken: Mutex::new(Some((items, handoff))),
            })
        })
    }
}

#[uniffi::export]
impl NativeTakenMany {
    /// The payloads in queue order, handed over once (empty afterwards).
    pub fn data(&self) -> Vec<Vec<u8>> {
        let taken = self.taken.lock().unwrap_or_else(|e| e.into_inner()).take();
        match taken {
            Some((items, handoff)) => {
                handoff.delivered();
                items.into_iter().map(|item| item.data).collect()
            }
            None => Vec::new(),
        }
    }
}
