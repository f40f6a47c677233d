use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::{DistributedQueue, Wait};

use crate::client::NativeClient;
use crate::errors::{run, wait_ms, IntoJs};

#[napi]
pub struct NativeQueue {
    inner: DistributedQueue,
}

#[napi]
impl NativeQueue {
    #[napi(constructor)]
    pub fn new(client: &NativeClient, dir: String) -> napi::Result<Self> {
        Ok(NativeQueue {
            inner: DistributedQueue::new(&client.inner, &dir).into_js()?,
        })
    }

    #[napi]
    pub fn max_payload(&self) -> u32 {
        self.inner.max_payload() as u32
    }

    #[napi]
    pub async fn offer(&self, data: Buffer) -> napi::Result<String> {
        let (queue, data) = (self.inner.clone(), data.to_vec());
        run(async move { queue.offer(&data).await }).await
    }

    #[napi]
    pub async fn peek(&self) -> napi::Result<Option<Buffer>> {
        let queue = self.inner.clone();
        Ok(run(async move { queue.peek().await })
            .await?
            .map(Buffer::from))
    }

    #[napi]
    pub async fn poll(&self) -> napi::Result<Option<Buffer>> {
        let queue = self.inner.clone();
        Ok(run(async move { queue.poll().await })
            .await?
            .map(Buffer::from))
    }

    #[napi]
    pub async fn element(&self) -> napi::Result<Buffer> {
        let queue = self.inner.clone();
        Ok(run(async move { queue.element().await }).await?.into())
    }

    #[napi]
    pub async fn remove(&self) -> napi::Result<Buffer> {
        let queue = self.inner.clone();
        Ok(run(async move { queue.remove().await }).await?.into())
    }

    /// `null` when `timeoutMs` passed without an item.
    #[napi]
    pub async fn take(&self, timeout_ms: Option<f64>) -> napi::Result<Option<Buffer>> {
        let how = wait_ms(timeout_ms)?;
        let queue = self.inner.clone();
        let item = run(async move {
            match how {
                Wait::For(timeout) => queue.take_timeout(timeout).await,
                _ => queue.take().await.map(Some),
            }
        })
        .await?;
        Ok(item.map(Buffer::from))
    }

    #[napi]
    pub async fn close(&self) -> napi::Result<()> {
        let queue = self.inner.clone();
        run(async move { queue.close().await }).await
    }

    #[napi]
    pub async fn size(&self) -> napi::Result<u32> {
        let queue = self.inner.clone();
        Ok(run(async move { queue.size().await }).await? as u32)
    }
}
