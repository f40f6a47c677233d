use pyo3::prelude::*;
use zkrecipes::ffi::HandedQueue;
use zkrecipes::{DistributedQueue, Wait};

use crate::blocking::{awaitable, awaitable_undoable, wait, wait_undoable};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::payload::Payload;
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

#[pymethods]
impl NativeQueue {
    #[new]
    fn new(client: &NativeClient, dir: &str) -> PyResult<NativeQueue> {
        Ok(NativeQueue {
            inner: DistributedQueue::new(&client.inner, dir).into_py_result()?,
        })
    }

    fn max_payload(&self) -> usize {
        self.inner.max_payload()
    }

    fn offer(&self, py: Python<'_>, data: &[u8]) -> PyResult<String> {
        let (queue, data) = (self.inner.clone(), data.to_vec());
        wait(py, move || async move { queue.offer(&data).await })
    }

    fn offer_async<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        let (queue, data) = (self.inner.clone(), data.to_vec());
        awaitable(py, async move { queue.offer(&data).await })
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

    fn poll(&self, py: Python<'_>) -> PyResult<Option<Payload>> {
        let queue = self.inner.clone();
        wait_undoable(py, move || poll(queue))
    }

    fn poll_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let queue = self.inner.clone();
        awaitable_undoable(py, poll(queue))
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

    fn remove(&self, py: Python<'_>) -> PyResult<Option<Payload>> {
        let queue = self.inner.clone();
        wait_undoable(py, move || remove(queue))
    }

    fn remove_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let queue = self.inner.clone();
        awaitable_undoable(py, remove(queue))
    }

    #[pyo3(signature = (timeout))]
    fn take(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<Payload>> {
        let how = Wait::python(timeout, true).into_py_result()?;
        let queue = self.inner.clone();
        wait_undoable(py, move || take(queue, how))
    }

    #[pyo3(signature = (timeout))]
    fn take_async<'py>(
        &self,
        py: Python<'py>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let how = Wait::python(timeout, true).into_py_result()?;
        awaitable_undoable(py, take(self.inner.clone(), how))
    }

    fn poll_many(&self, py: Python<'_>, max: i64) -> PyResult<Vec<Payload>> {
        let queue = self.inner.clone();
        wait_undoable(py, move || poll_many(queue, max))
    }

    fn poll_many_async<'py>(&self, py: Python<'py>, max: i64) -> PyResult<Bound<'py, PyAny>> {
        awaitable_undoable(py, poll_many(self.inner.clone(), max))
    }

    #[pyo3(signature = (max, timeout))]
    fn take_many(&self, py: Python<'_>, max: i64, timeout: Option<f64>) -> PyResult<Vec<Payload>> {
        let how = Wait::python(timeout, true).into_py_result()?;
        let queue = self.inner.clone();
        wait_undoable(py, move || take_many(queue, max, how))
    }

    #[pyo3(signature = (max, timeout))]
    fn take_many_async<'py>(
        &self,
        py: Python<'py>,
        max: i64,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let how = Wait::python(timeout, true).into_py_result()?;
        awaitable_undoable(py, take_many(self.inner.clone(), max, how))
    }

    fn size(&self, py: Python<'_>) -> PyResult<usize> {
        let queue = self.inner.clone();
        wait(py, move || async move { queue.size().await })
    }

    fn size_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let queue = self.inner.clone();
        awaitable(py, async move { queue.size().await })
    }

    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let queue = self.inner.clone();
        wait(py, move || async move { queue.close().await })
    }

    fn close_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let queue = self.inner.clone();
        awaitable(py, async move { queue.close().await })
    }
}
