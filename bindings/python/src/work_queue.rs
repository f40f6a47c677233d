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
use crate::twins::pymethods_with_twins;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeWorkQueue {
    inner: WorkQueue,
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeDelivery {
    slot: DeliverySlot,
}

impl NativeDelivery {
    fn new(delivery: Delivery) -> NativeDelivery {
        NativeDelivery {
            slot: DeliverySlot::new(delivery),
        }
    }
}

async fn consume(queue: WorkQueue, timeout: Wait) -> zkrecipes::Result<Option<NativeDelivery>> {
    Ok(queue.consume(timeout).await?.map(NativeDelivery::new))
}

pymethods_with_twins! {
    impl NativeWorkQueue {
        twins {
            fn offer | offer_async(data: &[u8], priority: i64) -> String {
                let data = data.to_vec();
            } |queue| queue.offer_with_priority(&data, zkrecipes::priority(priority)?);
            fn offer_all | offer_all_async(items: Vec<Vec<u8>>, priority: i64) -> Vec<String> {}
                |queue| queue.offer_all_with_priority(&items, zkrecipes::priority(priority)?);
            #[pyo3(signature = (timeout))]
            fn consume | consume_async(timeout: Option<f64>) -> Option<NativeDelivery> {
                let timeout = Wait::python(timeout, true).into_py_result()?;
            } |queue| consume(queue, timeout);
            fn size | size_async() -> usize {} |queue| queue.size();
            fn close | close_async() -> () {} |queue| queue.close();
        }

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
    }
}

#[pymethods]
impl NativeDelivery {
    fn data(&self) -> Payload {
        Payload(self.slot.data().to_vec())
    }

    fn name(&self) -> String {
        self.slot.name().to_string()
    }

    fn priority(&self) -> u16 {
        self.slot.priority()
    }

    fn delivery_count(&self) -> u32 {
        self.slot.delivery_count()
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
