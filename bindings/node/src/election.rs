use napi::bindgen_prelude::PromiseRaw;
use napi::Env;
use napi_derive::napi;
use zkrecipes::LeaderElectionSupport;

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};
use crate::listener::{forward, EventCallback, NativeSubscription};
use crate::promised::promised;

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

    #[napi]
    pub fn subscribe(&self, callback: EventCallback) -> NativeSubscription {
        forward(self.inner.subscribe(), callback)
    }
}

promised! {
    impl NativeElection {
        fn leader_host_name(env) -> "Promise<string | null>" Option<String> {} |election| election.leader_host_name(), |name| name;
        fn await_leadership(env, timeout_ms: Option<f64>) -> "Promise<boolean>" bool {
            let limit = wait_ms(env, timeout_ms)?;
        } |election| election.await_leadership(limit), |led| led;
    }
}
