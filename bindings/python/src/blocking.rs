//! Blocking and awaitable forms of a core future.
//!
//! Blocking calls release the GIL while they wait and look at Python's signal
//! handlers every 50 ms, so Ctrl-C interrupts a wait; the abandoned core future
//! is dropped, which withdraws whatever it had created on the server.

use std::future::Future;
use std::time::Duration;

use pyo3::prelude::*;

use crate::errors::{internal, to_py};

const SIGNAL_CHECK: Duration = Duration::from_millis(50);

pub fn wait<T, F>(py: Python<'_>, future: F) -> PyResult<T>
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let runtime = zkrecipes::runtime::runtime();
    let mut task = runtime.spawn(future);
    loop {
        let finished = py.detach(|| {
            runtime.block_on(async { tokio::time::timeout(SIGNAL_CHECK, &mut task).await })
        });
        match finished {
            Ok(Ok(result)) => return result.map_err(to_py),
            Ok(Err(join_error)) => {
                return Err(internal(format!("zkrecipes task failed: {join_error}")))
            }
            Err(_) => {
                if let Err(signal) = py.check_signals() {
                    task.abort();
                    return Err(signal);
                }
            }
        }
    }
}

pub fn awaitable<'py, T, F>(py: Python<'py>, future: F) -> PyResult<Bound<'py, PyAny>>
where
    T: for<'a> IntoPyObject<'a> + Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    pyo3_async_runtimes::tokio::future_into_py(py, async move { future.await.map_err(to_py) })
}
