//! The counting semaphore for Node.js: `NativeSemaphore` and the leases it hands out
//! (`index.js` wraps them as `Semaphore` and `Lease`). A lease the program drops unreleased
//! is released when the garbage collector finds it (the core's `Lease` releases on drop).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::{lease_count, LeaseSlot, OwnedSemaphore};
use zkrecipes::{Lease, Semaphore};

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};
use crate::listener::{forward, EventCallback, NativeSubscription};
use crate::promised::promised;

#[napi]
pub struct NativeSemaphore {
    inner: Semaphore,
}

#[napi]
pub struct NativeLease {
    slot: LeaseSlot,
}

fn leases(leases: Option<Vec<Lease>>) -> Option<Vec<NativeLease>> {
    leases.map(|leases| {
        leases
            .into_iter()
            .map(|lease| NativeLease {
                slot: LeaseSlot::new(lease),
            })
            .collect()
    })
}

#[napi]
impl NativeSemaphore {
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        client: &NativeClient,
        path: String,
        max_leases: i64,
    ) -> napi::Result<Self> {
        let max = lease_count("maxLeases", max_leases);
        let semaphore = max.and_then(|max| Semaphore::new(&client.inner, &path, max));
        Ok(NativeSemaphore {
            inner: semaphore.into_js(env)?,
        })
    }

    /// Releases the oldest lease this object holds (`NOT_OWNER` when none).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn release<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        promise(env, self.inner.release_one(), |()| ())
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn release_all<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let semaphore = self.inner.clone();
        let releasing = async move {
            semaphore.release_all().await;
            Ok(())
        };
        promise(env, releasing, |()| ())
    }

    #[napi]
    pub fn path(&self) -> String {
        self.inner.path().to_string()
    }

    #[napi]
    pub fn max_leases(&self) -> u32 {
        self.inner.max_leases()
    }

    #[napi]
    pub fn held(&self) -> u32 {
        self.inner.held() as u32
    }

    #[napi]
    pub fn subscribe(&self, callback: EventCallback) -> NativeSubscription {
        forward(self.inner.subscribe(), callback)
    }
}

promised! {
    impl NativeSemaphore {
        // `count` leases, all or none; `null` when `timeoutMs` passed first (0: a try).
        fn acquire(env, count: i64, timeout_ms: Option<f64>) -> "Promise<Array<NativeLease> | null>" Option<Vec<NativeLease>> {
            let count = lease_count("count", count).into_js(env)?;
            let how = wait_ms(env, timeout_ms)?;
        } |semaphore| semaphore.acquire_many(count, how), leases;
        fn lease_nodes(env) -> "Promise<Array<string>>" Vec<String> {} |semaphore| semaphore.lease_nodes(), |n| n;
    }
}

#[napi]
impl NativeLease {
    #[napi]
    pub fn fencing_token(&self) -> BigInt {
        BigInt::from(self.slot.fencing_token())
    }

    #[napi]
    pub fn node_path(&self) -> String {
        self.slot.node_path().to_string()
    }

    #[napi]
    pub fn is_held(&self) -> bool {
        self.slot.is_held()
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn release<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let lease = self.slot.take().into_js(env)?;
        promise(env, lease.release(), |()| ())
    }
}
