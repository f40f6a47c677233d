use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::{HandedQueue, Handoff};
use zkrecipes::{DistributedQueue, Item};

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};

#[napi]
pub struct NativeQueue {
    inner: DistributedQueue,
}

fn bytes(data: Vec<u8>) -> Buffer {
    data.into()
}

fn maybe_bytes(data: Option<Vec<u8>>) -> Option<Buffer> {
    data.map(Buffer::from)
}

/// A batch reaches JavaScript here, on its thread: from now on it is the caller's (until then,
/// the handoff gives it back).
fn batch((items, handoff): (Vec<Item>, Option<Handoff>)) -> Vec<Buffer> {
    if let Some(handoff) = handoff {
        handoff.delivered();
    }
    items.into_iter().map(|item| item.data.into()).collect()
}

#[napi]
impl NativeQueue {
    #[napi(constructor)]
    pub fn new(env: &Env, client: &NativeClient, dir: String) -> napi::Result<Self> {
        Ok(NativeQueue {
            inner: DistributedQueue::new(&client.inner, &dir).into_js(env)?,
        })
    }

    #[napi]
    pub fn max_payload(&self) -> u32 {
        self.inner.max_payload() as u32
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn offer<'env>(
        &self,
        env: &'env Env,
        data: Buffer,
    ) -> napi::Result<PromiseRaw<'env, String>> {
        let (queue, data) = (self.inner.clone(), data.to_vec());
        promise(env, async move { queue.offer(&data).await }, |path| path)
    }

    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn peek<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Option<Buffer>>> {
        let queue = self.inner.clone();
        promise(env, async move { queue.peek().await }, maybe_bytes)
    }

    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn poll<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Option<Buffer>>> {
        let queue = self.inner.clone();
        promise(env, async move { queue.poll().await }, maybe_bytes)
    }

    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn element<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Buffer>> {
        let queue = self.inner.clone();
        promise(env, async move { queue.element().await }, bytes)
    }

    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn remove<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Buffer>> {
        let queue = self.inner.clone();
        promise(env, async move { queue.remove().await }, bytes)
    }

    /// `null` when `timeoutMs` passed without an item.
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn take<'env>(
        &self,
        env: &'env Env,
        timeout_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, Option<Buffer>>> {
        let how = wait_ms(env, timeout_ms)?;
        let queue = self.inner.clone();
        let taking = async move { Ok(queue.take_item(how).await?.map(|item| item.data)) };
        promise(env, taking, maybe_bytes)
    }

    /// Up to `max` head items in one transaction; `max` as given (the core checks the range).
    #[napi(ts_return_type = "Promise<Buffer[]>")]
    pub fn poll_many<'env>(
        &self,
        env: &'env Env,
        max: i64,
    ) -> napi::Result<PromiseRaw<'env, Vec<Buffer>>> {
        let queue = self.inner.clone();
        promise(env, async move { queue.poll_many_handed(max).await }, batch)
    }

    /// `pollMany` once an item is there; empty when `timeoutMs` passed without one.
    #[napi(ts_return_type = "Promise<Buffer[]>")]
    pub fn take_many<'env>(
        &self,
        env: &'env Env,
        max: i64,
        timeout_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, Vec<Buffer>>> {
        let how = wait_ms(env, timeout_ms)?;
        let queue = self.inner.clone();
        let taking = async move { queue.take_many_handed(max, how).await };
        promise(env, taking, batch)
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let queue = self.inner.clone();
        promise(env, async move { queue.close().await }, |()| ())
    }

    #[napi(ts_return_type = "Promise<number>")]
    pub fn size<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, u32>> {
        let queue = self.inner.clone();
        promise(env, async move { queue.size().await }, |n| n as u32)
    }
}
