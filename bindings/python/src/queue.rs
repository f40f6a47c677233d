use pyo3::prelude::*;
use zkrecipes::ffi::HandedQueue;
use zkrecipes::{DistributedQueue, Wait};

use crate::blocking::{awaitable, wait};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::payload::Payload;
use crate::twins::pymethods_with_twins;
use crate::undo::{Taken, TakenMany};

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeQueue {
    inner: DistributedQueue,
}

/// `take` with `None` waits forever; the core validates the number. The item
/// goes back to the queue if its caller is gone when it arrives.
async fn take(queue: DistributedQueue, wait: Wait) -> zkrecipes::Result<Taken> {
    Ok(Taken(queue.take_handed(wait).await?))
}

async fn poll(queue: DistributedQueue) -> zkrecipes::Result<Taken> {
    Ok(Taken(queue.poll_handed().await?))
}

/// `max` as the caller gave it: the core refuses one outside 1..=MAX_BATCH.
async fn poll_many(queue: DistributedQueue, max: i64) -> zkrecipes::Result<TakenMany> {
    Ok(TakenMany(queue.poll_many_handed(max).await?))
}

async fn take_many(queue: DistributedQueue, max: i64, wait: Wait) -> zkrecipes::Result<TakenMany> {
    Ok(TakenMany(queue.take_many_handed(max, wait).await?))
}

async fn remove(queue: DistributedQueue) -> zkrecipes::Result<Taken> {
    Ok(Taken(Some(queue.remove_handed().await?)))
}

pymethods_with_twins! {
    impl NativeQueue {
        twins {
            fn offer | offer_async(data: &[u8]) -> String {
                let data = data.to_vec();
            } |queue| queue.offer(&data);
            fn size | size_async() -> usize {} |queue| queue.size();
            fn close | close_async() -> () {} |queue| queue.close();
        }

        undoable {
            fn poll | poll_async() -> Option<Payload> {} |queue| poll(queue);
            fn remove | remove_async() -> Option<Payload> {} |queue| remove(queue);
            #[pyo3(signature = (timeout))]
            fn take | take_async(timeout: Option<f64>) -> Option<Payload> {
                let how = Wait::python(timeout, true).into_py_result()?;
            } |queue| take(queue, how);
            fn poll_many | poll_many_async(max: i64) -> Vec<Payload> {} |queue| poll_many(queue, max);
            #[pyo3(signature = (max, timeout))]
            fn take_many | take_many_async(max: i64, timeout: Option<f64>) -> Vec<Payload> {
                let how = Wait::python(timeout, true).into_py_result()?;
            } |queue| take_many(queue, max, how);
        }

        #[new]
        fn new(client: &NativeClient, dir: &str) -> PyResult<NativeQueue> {
            Ok(NativeQueue {
                inner: DistributedQueue::new(&client.inner, dir).into_py_result()?,
            })
        }

        fn max_payload(&self) -> usize {
            self.inner.max_payload()
        }

        fn peek(&self, py: Python<'_>) -> PyResult<Option<Payload>> {
            let queue = self.inner.clone();
            wait(
                py,
                move || async move { Ok(queue.peek().await?.map(Payload)) },
            )
        }

        fn peek_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            let queue = self.inner.clone();
            awaitable(py, async move { Ok(queue.peek().await?.map(Payload)) })
        }

        fn element(&self, py: Python<'_>) -> PyResult<Payload> {
            let queue = self.inner.clone();
            wait(
                py,
                move || async move { Ok(Payload(queue.element().await?)) },
            )
        }

        fn element_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            let queue = self.inner.clone();
            awaitable(py, async move { Ok(Payload(queue.element().await?)) })
        }
    }
}
