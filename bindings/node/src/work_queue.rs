//! The at-least-once work queue for Node.js: `NativeWorkQueue` and the
//! deliveries it hands out (`index.js` wraps them as `WorkQueue` and `Job`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::{work_queue_options, DeliverySlot};
use zkrecipes::{Delivery, WorkQueue};

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};
use crate::promised::promised;

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
}

promised! {
    impl NativeWorkQueue {
        fn offer_all(env, items: Vec<Buffer>, priority: Option<i64>) -> "Promise<string[]>" Vec<String> {
            let priority = priority_of(env, priority)?;
            let items = items.iter().map(|b| b.to_vec()).collect::<Vec<_>>();
        } |queue| queue.offer_all_with_priority(&items, priority), |paths| paths;
        // `null` when `timeoutMs` passed without a job.
        fn consume(env, timeout_ms: Option<f64>) -> "Promise<NativeDelivery | null>" Option<NativeDelivery> {
            let timeout = wait_ms(env, timeout_ms)?;
        } |queue| queue.consume(timeout), job;
        fn size(env) -> "Promise<number>" u32 {} |queue| queue.size(), |n| n as u32;
        fn close(env) -> "Promise<void>" () {} |queue| queue.close(), |()| ();
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
