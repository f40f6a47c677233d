//! The barrier and the double barrier for Node.js: `NativeBarrier`, `NativeDoubleBarrier`
//! (`index.js` wraps them as `Barrier` and `DoubleBarrier`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::member_count;
use zkrecipes::{Barrier, DoubleBarrier};

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};

#[napi]
pub struct NativeBarrier {
    inner: Barrier,
}

#[napi]
impl NativeBarrier {
    #[napi(constructor)]
    pub fn new(env: &Env, client: &NativeClient, path: String) -> napi::Result<Self> {
        Ok(NativeBarrier {
            inner: Barrier::new(&client.inner, &path).into_js(env)?,
        })
    }

    #[napi]
    pub fn path(&self) -> String {
        self.inner.path().to_string()
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn set<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let barrier = self.inner.clone();
        promise(env, async move { barrier.set().await }, |()| ())
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn remove<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let barrier = self.inner.clone();
        promise(env, async move { barrier.remove().await }, |()| ())
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn is_set<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, bool>> {
        let barrier = self.inner.clone();
        promise(env, async move { barrier.is_set().await }, |set| set)
    }

    /// true once the barrier is down; false when `timeoutMs` passed first (0: a check).
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn wait<'env>(
        &self,
        env: &'env Env,
        timeout_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, bool>> {
        let limit = wait_ms(env, timeout_ms)?;
        let barrier = self.inner.clone();
        promise(env, async move { barrier.wait(limit).await }, |down| down)
    }
}

#[napi]
pub struct NativeDoubleBarrier {
    inner: DoubleBarrier,
}

#[napi]
impl NativeDoubleBarrier {
    #[napi(constructor)]
    pub fn new(env: &Env, client: &NativeClient, path: String, count: i64) -> napi::Result<Self> {
        let count = member_count("memberCount", count);
        let barrier = count.and_then(|count| DoubleBarrier::new(&client.inner, &path, count));
        Ok(NativeDoubleBarrier {
            inner: barrier.into_js(env)?,
        })
    }

    #[napi]
    pub fn path(&self) -> String {
        self.inner.path().to_string()
    }

    #[napi]
    pub fn member_count(&self) -> u32 {
        self.inner.member_count()
    }

    #[napi]
    pub fn node_path(&self) -> String {
        self.inner.node_path()
    }

    /// true once `memberCount` members are in; false when `timeoutMs` passed first (the member
    /// withdrawn).
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn enter<'env>(
        &self,
        env: &'env Env,
        timeout_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, bool>> {
        let limit = wait_ms(env, timeout_ms)?;
        let barrier = self.inner.clone();
        promise(env, async move { barrier.enter(limit).await }, |entered| {
            entered
        })
    }

    /// true once every member left; false when `timeoutMs` passed first (our node gone anyway).
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn leave<'env>(
        &self,
        env: &'env Env,
        timeout_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, bool>> {
        let limit = wait_ms(env, timeout_ms)?;
        let barrier = self.inner.clone();
        promise(env, async move { barrier.leave(limit).await }, |left| left)
    }

    #[napi(ts_return_type = "Promise<Array<string>>")]
    pub fn members<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, Vec<String>>> {
        let barrier = self.inner.clone();
        promise(env, async move { barrier.members().await }, |m| m)
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn is_ready<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, bool>> {
        let barrier = self.inner.clone();
        promise(env, async move { barrier.is_ready().await }, |ready| ready)
    }
}
