//! Core errors cross as `Error("<CODE>: <message>")`; `index.js` turns them
//! into `ZkError` with `.code`. One place for the mapping on each side.

use std::future::Future;

use napi::{Error, Status};

pub fn to_js(err: zkrecipes::Error) -> Error {
    Error::new(Status::GenericFailure, err.to_string())
}

pub fn invalid_argument(message: impl Into<String>) -> Error {
    to_js(zkrecipes::Error::new(
        zkrecipes::ErrorCode::InvalidArgument,
        message,
    ))
}

/// Runs `future` on the core's runtime and brings its result back.
pub async fn run<T, F>(future: F) -> napi::Result<T>
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    match zkrecipes::runtime::runtime().spawn(future).await {
        Ok(result) => result.map_err(to_js),
        Err(join_error) => Err(to_js(zkrecipes::Error::new(
            zkrecipes::ErrorCode::Internal,
            format!("zkrecipes task failed: {join_error}"),
        ))),
    }
}

pub trait IntoJs<T> {
    fn into_js(self) -> napi::Result<T>;
}

impl<T> IntoJs<T> for zkrecipes::Result<T> {
    fn into_js(self) -> napi::Result<T> {
        self.map_err(to_js)
    }
}

/// Milliseconds from JavaScript (`undefined` = forever) as the core's `Wait`.
pub fn wait_ms(timeout_ms: Option<f64>) -> napi::Result<zkrecipes::Wait> {
    zkrecipes::Wait::from_millis(timeout_ms).into_js()
}
