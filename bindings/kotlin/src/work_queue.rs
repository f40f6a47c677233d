//! The at-least-once work queue and the deliveries it hands out.

use std::sync::Arc;

use zkrecipes::ffi::{work_queue_options, DeliverySlot};
use zkrecipes::{Delivery, WorkQueue};

use crate::client::NativeClient;
use crate::errors::Result;
use crate::tasks::{run, run_cancellable, NativeCancel};

#[derive(uniffi::Object)]
pub struct NativeWorkQueue {
    queue: WorkQueue,
}

#[uniffi::export]
impl NativeWorkQueue {
    /// `max_deliveries`: `None` for no limit; the core checks both numbers.
    #[uniffi::constructor]
    pub fn new(
        client: &NativeClient,
        path: String,
        prefetch: i64,
        max_deliveries: Option<i64>,
    ) -> Result<Arc<Self>> {
        let options = work_queue_options(prefetch, max_deliveries)?;
        Ok(Arc::new(NativeWorkQueue {
            queue: WorkQueue::with_options(&client.inner, &path, options)?,
        }))
    }

    pub fn max_payload(&self) -> u64 {
        self.queue.max_payload() as u64
    }

    pub fn dead_letter_path(&self) -> String {
        self.queue.dead_letter_path().to_string()
    }

    /// The job's node path; `priority` 0-999, lower first.
    pub async fn offer(&self, data: Vec<u8>, priority: i64) -> Result<String> {
        let priority = zkrecipes::priority(priority)?;
        let queue = self.queue.clone();
        run(async move { queue.offer_with_priority(&data, priority).await }).await
    }

    /// One transaction per batch under the server's packet limit.
    pub async fn offer_all(&self, items: Vec<Vec<u8>>, priority: i64) -> Result<Vec<String>> {
        let priority = zkrecipes::priority(priority)?;
        let queue = self.queue.clone();
        run(async move { queue.offer_all_with_priority(&items, priority).await }).await
    }

    /// The next job claimed for this worker; `None` once `timeout_ms` passed.
    pub async fn consume(
        &self,
        timeout_ms: f64,
        cancel: Arc<NativeCancel>,
    ) -> Result<Option<Arc<NativeDelivery>>> {
        let timeout = crate::tasks::wait(timeout_ms)?;
        let queue = self.queue.clone();
        // A job claimed for a caller that left is dropped inside the task's
        // output, and a delivery's drop gives it back.
        let consuming = async move { Ok(queue.consume(timeout).await?.map(NativeDelivery::new)) };
        run_cancellable(&cancel, consuming).await
    }

    pub async fn size(&self) -> Result<u64> {
        let queue = self.queue.clone();
        Ok(run(async move { queue.size().await }).await? as u64)
    }

    /// Gives back prefetched jobs; every later call answers `CLOSED`.
    pub async fn close_async(&self) -> Result<()> {
        let queue = self.queue.clone();
        run(async move { queue.close().await }).await
    }

    /// `close_async()` for a thread that may block.
    pub fn close_blocking(&self) {
        let queue = self.queue.clone();
        crate::tasks::block(async move {
            let _ = queue.close().await;
        });
    }
}

/// A job claimed for this worker: acknowledged or given back once.
#[derive(uniffi::Object)]
pub struct NativeDelivery {
    slot: DeliverySlot,
}

impl NativeDelivery {
    fn new(delivery: Delivery) -> Arc<Self> {
        Arc::new(NativeDelivery {
            slot: DeliverySlot::new(delivery),
        })
    }
}

#[uniffi::export]
impl NativeDelivery {
    pub fn data(&self) -> Vec<u8> {
        self.slot.data().to_vec()
    }

    pub fn name(&self) -> String {
        self.slot.name().to_string()
    }

    pub fn priority(&self) -> u16 {
        self.slot.priority()
    }

    pub fn delivery_count(&self) -> u32 {
        self.slot.delivery_count()
    }

    pub fn is_settled(&self) -> bool {
        self.slot.is_settled()
    }

    /// Deletes the job. `SESSION_EXPIRED` if the claim went with its session.
    pub async fn ack(&self) -> Result<()> {
        let delivery = self.slot.take()?;
        run(delivery.ack()).await
    }

    /// Gives the job back at its place in line.
    pub async fn nack(&self) -> Result<()> {
        let delivery = self.slot.take()?;
        run(delivery.nack()).await
    }

    /// Gives the job back in the background unless settled (for `close()`).
    pub fn abandon(&self) {
        let _ = self.slot.take();
    }
}
