//! The barrier and the double barrier for Node.js: `NativeBarrier`, `NativeDoubleBarrier`
//! (`index.js` wraps them as `Barrier` and `DoubleBarrier`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::member_count;
use zkrecipes::{Barrier, DoubleBarrier};

use crate::client::NativeClient;
use crate::errors::{wait_ms, IntoJs};
use crate::promised::promised;

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
}

promised! {
    impl NativeBarrier {
        fn set(env) -> "Promise<void>" () {} |barrier| barrier.set(), |()| ();
        fn remove(env) -> "Promise<void>" () {} |barrier| barrier.remove(), |()| ();
        fn is_set(env) -> "Promise<boolean>" bool {} |barrier| barrier.is_set(), |set| set;
        // true once the barrier is down; false when `timeoutMs` passed first (0: a check).
        fn wait(env, timeout_ms: Option<f64>) -> "Promise<boolean>" bool {
            let limit = wait_ms(env, timeout_ms)?;
        } |barrier| barrier.wait(limit), |down| down;
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
}

promised! {
    impl NativeDoubleBarrier {
        // true once `memberCount` members are in; false when `timeoutMs` passed first (the member
        // withdrawn).
        fn enter(env, timeout_ms: Option<f64>) -> "Promise<boolean>" bool {
            let limit = wait_ms(env, timeout_ms)?;
        } |barrier| barrier.enter(limit), |entered| { entered };
        // true once every member left; false when `timeoutMs` passed first (our node gone anyway).
        fn leave(env, timeout_ms: Option<f64>) -> "Promise<boolean>" bool {
            let limit = wait_ms(env, timeout_ms)?;
        } |barrier| barrier.leave(limit), |left| left;
        fn members(env) -> "Promise<Array<string>>" Vec<String> {} |barrier| barrier.members(), |m| m;
        fn is_ready(env) -> "Promise<boolean>" bool {} |barrier| barrier.is_ready(), |ready| ready;
    }
}
