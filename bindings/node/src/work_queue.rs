//! The at-least-once work queue for Node.js: `NativeWorkQueue` and the
//! deliveries it hands out (`index.js` wraps them as `WorkQueue` and `Job`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::{work_queue_options, DeliverySlot};
use zkrecipes::{Delivery, WorkQueue};

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};

#[napi]
pub struct NativeWorkQueue {
    inner: WorkQueue,
}

#[napi]
pub struct NativeDelivery {
    slot: DeliverySlot,
}

impl NativeDelivery {
    fn new(delivery: Delivery) -> NativeDelivery {
        NativeDelivery {
            slot: DeliverySlot::new(delivery),
        }
    }
}

fn priority_of(env: &Env, priority: Option<i64>) -> napi::Result<u16> {
    let priority = priority.unwrap_or(i64::from(zkrecipes::DEFAULT_PRIORITY));
    zkrecipes::priority(priority).into_js(env)
}

fn job(delivery: Option<Delivery>) -> Option<NativeDelivery> {
    delivery.map(NativeDelivery::new)
}

#[napi]
impl NativeWorkQueue {
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        client: &NativeClient,
        path: String,
        prefetch: Option<i64>,
        max_deliveries: Option<i64>,
    ) -> napi::Result<Self> {
        let options = work_queue_options(prefetch.unwrap_or(1), max_deliveries);
        let queue =
            options.and_then(|options| WorkQueue::with_options(&client.inner, &path, options));
        Ok(NativeWorkQueue {
            inner: queue.into_js(env)?,
        })
    }

    #[napi]
    pub fn max_payload(&self) -> u32 {
        self.inner.max_payload() as u32
    }

    #[napi]
    pub fn dead_letter_path(&self) -> String {
        self.inner.dead_letter_path().to_string()
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn offer<'env>(
        &self,
        env: &'env Env,
        data: Buffer,
        priority: Option<i64>,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let priority = priority_of(env, priority)?;
        let (queue, data) = (self.inner.clone(), data.to_vec());
        promise(
            env,
            async move { queue.offer_with_priority(&data, priority).await },
            |path| path,
        )
    }

    #[napi(ts_return_type = "Promise<string[]>")]
    pub fn offer_all<'env>(
        &self,
        env: &'env Env,
        items: Vec<Buffer>,
        priority: Option<i64>,
    ) -> napi::Result<PromiseRaw<'env, Vec<String>>> {
        let priority = priority_of(env, priority)?;
        let items: Vec<Vec<u8>> = items.iter().map(|b| b.to_vec()).collect();
        let queue = self.inner.clone();
        promise(
            env,
            async move { queue.offer_all_with_priority(&items, priority).await },
            |paths| paths,
        )
    }

    /// `null` when `timeoutMs` passed without a job.
    #[napi(ts_return_type = "Promise<NativeDelivery | null>")]
    pub fn consume<'env>(
        &self,
        env: &'env Env,
        timeout_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, Option<NativeDelivery>>> {
        let timeout = wait_ms(env, timeout_ms)?;
        let queue = self.inner.clone();
        promise(env, async move { queue.consume(timeout).await }, job)
    }

    #[napi(ts_return_type = "Promise<number>")]
    pub fn size<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, u32>> {
        let queue = self.inner.clone();
        promise(env, async move { queue.size().await }, |n| n as u32)
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let queue = self.inner.clone();
        promise(env, async move { queue.close().await }, |()| ())
    }
}

#[napi]
impl NativeDelivery {
    #[napi]
    pub fn data(&self) -> Buffer {
        self.slot.data().to_vec().into()
    }

    #[napi]
    pub fn name(&self) -> String {
        self.slot.name().to_string()
    }

    #[napi]
    pub fn priority(&self) -> u32 {
        u32::from(self.slot.priority())
    }

    #[napi]
    pub fn delivery_count(&self) -> u32 {
        self.slot.delivery_count()
    }

    #[napi]
    pub fn is_settled(&self) -> bool {
        self.slot.is_settled()
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn ack<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let delivery = self.slot.take().into_js(env)?;
        promise(env, delivery.ack(), |()| ())
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn nack<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let delivery = self.slot.take().into_js(env)?;
        promise(env, delivery.nack(), |()| ())
    }
}
