//! Core errors become JavaScript `Error`s carrying the core's `code`, made
//! here on the JavaScript thread: thrown by synchronous functions, the
//! rejection of asynchronous ones. `index.js` wraps them in `ZkError`
//! (keeping this one as `cause`) without parsing anything.

use std::future::Future;

use napi::bindgen_prelude::{JsObjectValue, PromiseRaw, ToNapiValue};
use napi::{Env, JsValue};

/// The core's error as a JavaScript `Error` with `code`, for napi to throw
/// or reject with as it is.
pub fn to_js(env: &Env, err: &zkrecipes::Error) -> napi::Error {
    let made = (|| -> napi::Result<napi::Error> {
        let mut error = env.create_error(napi::Error::from_reason(err.message()))?;
        error.set_named_property("code", err.code().as_str())?;
        Ok(napi::Error::from(error.to_unknown()))
    })();
    made.unwrap_or_else(|failed| failed)
}

pub trait IntoJs<T> {
    fn into_js(self, env: &Env) -> napi::Result<T>;
}

impl<T> IntoJs<T> for zkrecipes::Result<T> {
    fn into_js(self, env: &Env) -> napi::Result<T> {
        self.map_err(|err| to_js(env, &err))
    }
}

/// Runs `future` on the core's runtime; the Promise resolves with
/// `convert(value)` (made on the JavaScript thread) or rejects with the
/// error as `to_js` makes it.
pub fn promise<'env, T, V, F>(
    env: &'env Env,
    future: F,
    convert: fn(T) -> V,
) -> napi::Result<PromiseRaw<'env, V>>
where
    T: Send + 'static,
    V: ToNapiValue + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let joined = async move {
        let joined = zkrecipes::runtime::runtime().spawn(future).await;
        Ok::<_, napi::Error>(joined.unwrap_or_else(|join_error| {
            Err(zkrecipes::Error::new(
                zkrecipes::ErrorCode::Internal,
                format!("zkrecipes task failed: {join_error}"),
            ))
        }))
    };
    env.spawn_future_with_callback(joined, move |env, result| {
        result.map(convert).map_err(|err| to_js(env, &err))
    })
}

/// Milliseconds from JavaScript as the core's `Wait` (`Wait::node` has the rules).
pub fn wait_ms(env: &Env, timeout_ms: Option<f64>) -> napi::Result<zkrecipes::Wait> {
    zkrecipes::Wait::node(timeout_ms).into_js(env)
}
