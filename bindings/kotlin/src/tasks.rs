//! Core futures run on the core's runtime, not on the caller's poller: uniffi
//! polls from JVM threads with no tokio context, and the core's timers and
//! sockets need one.

use std::future::Future;

use tokio::task::AbortHandle;

use crate::errors::{NativeError, Result};

/// Runs `operation` as a task of the core's runtime and waits for it. A
/// cancelled coroutine drops this future, which aborts the task: the core
/// then withdraws what it created, and a result that was already there
/// (a hold, a taken item) is dropped with the task, which undoes it.
pub async fn run<T, F>(operation: F) -> Result<T>
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let task = zkrecipes::runtime::runtime().spawn(operation);
    let _abort = AbortOnDrop(task.abort_handle());
    match task.await {
        Ok(result) => result.map_err(NativeError::from),
        Err(join) if join.is_panic() => Err(NativeError::Zk {
            code: "INTERNAL".into(),
            detail: "zkrecipes panicked".into(),
        }),
        Err(_) => Err(NativeError::Zk {
            code: "INTERRUPTED".into(),
            detail: "the operation was cancelled".into(),
        }),
    }
}

struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A timeout in milliseconds as Kotlin passes it (`null`: no limit).
pub fn wait(timeout_ms: Option<f64>) -> Result<zkrecipes::Wait> {
    Ok(zkrecipes::Wait::from_millis(timeout_ms)?)
}

/// The same as an optional duration, for the calls that take one.
pub fn timeout(timeout_ms: Option<f64>) -> Result<Option<std::time::Duration>> {
    Ok(match wait(timeout_ms)? {
        zkrecipes::Wait::Forever => None,
        zkrecipes::Wait::No => Some(std::time::Duration::ZERO),
        zkrecipes::Wait::For(d) => Some(d),
    })
}

/// Waits for `operation` on the calling thread, for `AutoCloseable.close()`
/// (Kotlin's `use {}`), which cannot suspend. JVM threads are never the
/// runtime's own; on one of those it would deadlock, so there it only starts
/// the operation.
pub fn block<F>(operation: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    if tokio::runtime::Handle::try_current().is_ok() {
        zkrecipes::runtime::runtime().spawn(operation);
    } else {
        zkrecipes::runtime::runtime().block_on(operation);
    }
}
