use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::{HandedQueue, Handoff};
use zkrecipes::{DistributedQueue, Item};

use crate::client::NativeClient;
use crate::errors::{wait_ms, IntoJs};
use crate::promised::promised;

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
}

promised! {
    impl NativeQueue {
        fn offer(env, data: Buffer) -> "Promise<string>" String {
            let data = data.to_vec();
        } |queue| queue.offer(&data), |path| path;
        fn peek(env) -> "Promise<Buffer | null>" Option<Buffer> {} |queue| queue.peek(), maybe_bytes;
        fn poll(env) -> "Promise<Buffer | null>" Option<Buffer> {} |queue| queue.poll(), maybe_bytes;
        fn element(env) -> "Promise<Buffer>" Buffer {} |queue| queue.element(), bytes;
        fn remove(env) -> "Promise<Buffer>" Buffer {} |queue| queue.remove(), bytes;
        // `null` when `timeoutMs` passed without an item.
        fn take(env, timeout_ms: Option<f64>) -> "Promise<Buffer | null>" Option<Buffer> {
            let how = wait_ms(env, timeout_ms)?;
        } |queue| async move { Ok(queue.take_item(how).await?.map(|item| item.data)) }, maybe_bytes;
        // Up to `max` head items in one transaction; `max` as given (the core checks the range).
        fn poll_many(env, max: i64) -> "Promise<Buffer[]>" Vec<Buffer> {} |queue| queue.poll_many_handed(max), batch;
        // `pollMany` once an item is there; empty when `timeoutMs` passed without one.
        fn take_many(env, max: i64, timeout_ms: Option<f64>) -> "Promise<Buffer[]>" Vec<Buffer> {
            let how = wait_ms(env, timeout_ms)?;
        } |queue| queue.take_many_handed(max, how), batch;
        fn close(env) -> "Promise<void>" () {} |queue| queue.close(), |()| ();
        fn size(env) -> "Promise<number>" u32 {} |queue| queue.size(), |n| n as u32;
    }
}
