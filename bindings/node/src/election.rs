use napi::bindgen_prelude::PromiseRaw;
use napi::Env;
use napi_derive::napi;
use zkrecipes::LeaderElectionSupport;

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};
use crate::listener::{forward, EventCallback, NativeSubscription};

#[napi]
pub struct NativeElection {
    inner: LeaderElectionSupport,
}

#[napi]
impl NativeElection {
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        client: &NativeClient,
        root: String,
        host_name: String,
    ) -> napi::Result<Self> {
        Ok(NativeElection {
            inner: LeaderElectionSupport::new(&client.inner, &root, &host_name).into_js(env)?,
        })
    }

    /// Takes effect when called (not when the Promise is first polled), so
    /// that `start()` then `stop()` without awaiting stop the member.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        promise(env, self.inner.start(), |()| ())
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn stop<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        promise(env, self.inner.stop(), |()| ())
    }

    #[napi]
    pub fn is_leader(&self) -> bool {
        self.inner.is_leader()
    }

    #[napi(ts_return_type = "Promise<string | null>")]
    pub fn leader_host_name<'env>(
        &self,
        env: &'env Env,
    ) -> napi::Result<PromiseRaw<'env, Option<String>>> {
        let election = self.inner.clone();
        promise(
            env,
            async move { election.leader_host_name().await },
            |name| name,
        )
    }

    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn await_leadership<'env>(
        &self,
        env: &'env Env,
        timeout_ms: Option<f64>,
    ) -> napi::Result<PromiseRaw<'env, bool>> {
        let limit = wait_ms(env, timeout_ms)?;
        let election = self.inner.clone();
        promise(
            env,
            async move { election.await_leadership(limit).await },
            |led| led,
        )
    }

    #[napi]
    pub fn subscribe(&self, callback: EventCallback) -> NativeSubscription {
        forward(self.inner.subscribe(), callback)
    }
}
