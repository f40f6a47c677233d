use napi::bindgen_prelude::PromiseRaw;
use napi::Env;
use napi_derive::napi;
use zkrecipes::{LeaderElectionSupport, Wait};

use crate::client::NativeClient;
use crate::errors::{run, wait_ms, IntoJs};
use crate::listener::{forward, EventCallback, NativeSubscription};

#[napi]
pub struct NativeElection {
    inner: LeaderElectionSupport,
}

#[napi]
impl NativeElection {
    #[napi(constructor)]
    pub fn new(client: &NativeClient, root: String, host_name: String) -> napi::Result<Self> {
        Ok(NativeElection {
            inner: LeaderElectionSupport::new(&client.inner, &root, &host_name).into_js()?,
        })
    }

    /// Takes effect when called (not when the Promise is first polled), so
    /// that `start()` then `stop()` without awaiting stop the member.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        env.spawn_future(run(self.inner.start()))
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn stop<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        env.spawn_future(run(self.inner.stop()))
    }

    #[napi]
    pub fn is_leader(&self) -> bool {
        self.inner.is_leader()
    }

    #[napi]
    pub async fn leader_host_name(&self) -> napi::Result<Option<String>> {
        let election = self.inner.clone();
        run(async move { election.leader_host_name().await }).await
    }

    #[napi]
    pub async fn await_leadership(&self, timeout_ms: Option<f64>) -> napi::Result<bool> {
        let limit = match wait_ms(timeout_ms)? {
            Wait::For(d) => Some(d),
            _ => None,
        };
        let election = self.inner.clone();
        run(async move { election.await_leadership(limit).await }).await
    }

    #[napi]
    pub fn subscribe(&self, callback: EventCallback) -> NativeSubscription {
        forward(self.inner.subscribe(), callback)
    }
}
