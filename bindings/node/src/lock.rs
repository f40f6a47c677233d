use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::{Lock, Owner, Wait};

use crate::client::NativeClient;
use crate::errors::{run, wait_ms, IntoJs};
use crate::listener::{forward, EventCallback, NativeSubscription};

// JavaScript has no caller identity (one thread, any number of async
// functions): every acquire is its own owner, so concurrent acquirers of one
// object exclude each other, and a release ends the object's oldest hold.

#[napi(object)]
pub struct Participant {
    pub node: String,
    pub identity: String,
    pub is_reader: bool,
}

#[napi]
pub struct NativeLock {
    pub(crate) inner: Lock,
}

#[napi]
impl NativeLock {
    #[napi(constructor)]
    pub fn new(client: &NativeClient, dir: String) -> napi::Result<Self> {
        Ok(NativeLock {
            inner: Lock::new(&client.inner, &dir).into_js()?,
        })
    }

    /// The fencing token, or `null` if not obtained.
    #[napi]
    pub async fn lock(
        &self,
        blocking: bool,
        timeout_ms: Option<f64>,
    ) -> napi::Result<Option<BigInt>> {
        let how = if blocking {
            wait_ms(timeout_ms)?
        } else {
            Wait::No
        };
        let lock = self.inner.clone();
        Ok(run(async move { lock.lock_as(Owner::unique(), how).await })
            .await?
            .map(BigInt::from))
    }

    #[napi]
    pub async fn unlock(&self) -> napi::Result<()> {
        let lock = self.inner.clone();
        run(lock.unlock_one()).await
    }

    #[napi]
    pub fn is_held(&self) -> bool {
        self.inner.is_held()
    }

    #[napi]
    pub fn hold_count(&self) -> u32 {
        self.inner.holders() as u32
    }

    #[napi]
    pub fn fencing_token(&self) -> Option<BigInt> {
        self.inner.fencing_token().map(BigInt::from)
    }

    #[napi]
    pub fn dir(&self) -> String {
        self.inner.dir().to_string()
    }

    #[napi]
    pub async fn participants(&self) -> napi::Result<Vec<Participant>> {
        let lock = self.inner.clone();
        let list = run(async move { lock.participants().await }).await?;
        Ok(list
            .into_iter()
            .map(|p| Participant {
                node: p.node,
                identity: p.identity,
                is_reader: p.is_reader,
            })
            .collect())
    }

    #[napi]
    pub fn subscribe(&self, callback: EventCallback) -> NativeSubscription {
        forward(self.inner.subscribe(), callback)
    }
}
