//! The at-least-once work queue: `NativeWorkQueue` and its deliveries.
//!
//! A `NativeDelivery` that Python drops unsettled (a cancelled task, Ctrl-C,
//! a forgotten object) gives its item back: the core's `Delivery` does so
//! when dropped.

use pyo3::prelude::*;
use zkrecipes::ffi::{work_queue_options, DeliverySlot};
use zkrecipes::{Delivery, Wait, WorkQueue};

use crate::blocking::{awaitable, wait};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::payload::Payload;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeWorkQueue {
    inner: WorkQueue,
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeDelivery {
    slot: DeliverySlot,
    data: Vec<u8>,
    name: String,
    priority: u16,
    delivery_count: u32,
}

impl NativeDelivery {
    fn new(delivery: Delivery) -> NativeDelivery {
        NativeDelivery {
            data: delivery.data().to_vec(),
            name: delivery.name().to_string(),
            priority: delivery.priority(),
            delivery_count: delivery.delivery_count(),
            slot: DeliverySlot::new(delivery),
        }
    }
}

async fn consume(queue: WorkQueue, timeout: Wait) -> zkrecipes::Result<Option<NativeDelivery>> {
    Ok(queue.consume(timeout).await?.map(NativeDelivery::new))
}

#[pymethods]
impl NativeWorkQueue {
    #[new]
    #[pyo3(signature = (client, path, prefetch, max_deliveries))]
    fn new(
        client: &NativeClient,
        path: &str,
        prefetch: i64,
        max_deliveries: Option<i64>,
    ) -> PyResult<NativeWorkQueue> {
        let options = work_queue_options(prefetch, max_deliveries);
        let queue =
            options.and_then(|options| WorkQueue::with_options(&client.inner, path, options));
        Ok(NativeWorkQueue {
            inner: queue.into_py_result()?,
        })
    }

    fn max_payload(&self) -> usize {
        self.inner.max_payload()
    }

    fn dead_letter_path(&self) -> String {
        self.inner.dead_letter_path().to_string()
    }

    fn offer(&self, py: Python<'_>, data: &[u8], priority: i64) -> PyResult<String> {
        let (queue, data) = (self.inner.clone(), data.to_vec());
        wait(py, move || async move {
            queue
                .offer_with_priority(&data, zkrecipes::priority(priority)?)
                .await
        })
    }

    fn offer_async<'py>(
        &self,
        py: Python<'py>,
        data: &[u8],
        priority: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (queue, data) = (self.inner.clone(), data.to_vec());
        awaitable(py, async move {
            queue
                .offer_with_priority(&data, zkrecipes::priority(priority)?)
                .await
        })
    }

    fn offer_all(
        &self,
        py: Python<'_>,
        items: Vec<Vec<u8>>,
        priority: i64,
    ) -> PyResult<Vec<String>> {
        let queue = self.inner.clone();
        wait(py, move || async move {
            queue
                .offer_all_with_priority(&items, zkrecipes::priority(priority)?)
                .await
        })
    }

    fn offer_all_async<'py>(
        &self,
        py: Python<'py>,
        items: Vec<Vec<u8>>,
        priority: i64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let queue = self.inner.clone();
        awaitable(py, async move {
            queue
                .offer_all_with_priority(&items, zkrecipes::priority(priority)?)
                .await
        })
    }

    #[pyo3(signature = (timeout))]
    fn consume(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<NativeDelivery>> {
        let timeout = Wait::python(timeout, true).into_py_result()?;
        let queue = self.inner.clone();
        wait(py, move || consume(queue, timeout))
    }

    #[pyo3(signature = (timeout))]
    fn consume_async<'py>(
        &self,
        py: Python<'py>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let timeout = Wait::python(timeout, true).into_py_result()?;
        awaitable(py, consume(self.inner.clone(), timeout))
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

#[pymethods]
impl NativeDelivery {
    fn data(&self) -> Payload {
        Payload(self.data.clone())
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn priority(&self) -> u16 {
        self.priority
    }

    fn delivery_count(&self) -> u32 {
        self.delivery_count
    }

    fn is_settled(&self) -> bool {
        self.slot.is_settled()
    }

    fn ack(&self, py: Python<'_>) -> PyResult<()> {
        let delivery = self.slot.take().into_py_result()?;
        wait(py, move || delivery.ack())
    }

    fn ack_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let delivery = self.slot.take().into_py_result()?;
        awaitable(py, delivery.ack())
    }

    fn nack(&self, py: Python<'_>) -> PyResult<()> {
        let delivery = self.slot.take().into_py_result()?;
        wait(py, move || delivery.nack())
    }

    fn nack_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let delivery = self.slot.take().into_py_result()?;
        awaitable(py, delivery.nack())
    }
}
