//! The counting semaphore: `NativeSemaphore` and its leases.
//!
//! A `NativeLease` that Python drops unreleased (a cancelled task whose result nobody took,
//! a forgotten object) releases its lease: the core's `Lease` does so when dropped.

use pyo3::prelude::*;
use zkrecipes::ffi::{lease_count, LeaseSlot, OwnedSemaphore};
use zkrecipes::{Semaphore, Wait};

use crate::blocking::{awaitable, wait};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::listener::{forward, Subscription};
use crate::twins::pymethods_with_twins;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeSemaphore {
    inner: Semaphore,
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeLease {
    slot: LeaseSlot,
}

async fn acquire(
    semaphore: Semaphore,
    count: u32,
    how: Wait,
) -> zkrecipes::Result<Option<Vec<NativeLease>>> {
    let leases = semaphore.acquire_many(count, how).await?;
    Ok(leases.map(|leases| {
        leases
            .into_iter()
            .map(|lease| NativeLease {
                slot: LeaseSlot::new(lease),
            })
            .collect()
    }))
}

pymethods_with_twins! {
    impl NativeSemaphore {
        twins {
            #[pyo3(signature = (count, blocking, timeout))]
            fn acquire | acquire_async(count: i64, blocking: bool, timeout: Option<f64>)
                -> Option<Vec<NativeLease>> {
                let count = lease_count("count", count).into_py_result()?;
                let how = Wait::python(timeout, blocking).into_py_result()?;
            } |semaphore| acquire(semaphore, count, how);
            fn lease_nodes | lease_nodes_async() -> Vec<String> {} |semaphore| semaphore.lease_nodes();
            fn release_all | release_all_async() -> () {} |semaphore| async move {
                semaphore.release_all().await;
                Ok::<_, zkrecipes::Error>(())
            };
        }
        begun {
            fn release_one | release_one_async() -> () {} |semaphore| semaphore.release_one();
        }

        #[new]
        fn new(client: &NativeClient, path: &str, max_leases: i64) -> PyResult<NativeSemaphore> {
            let max = lease_count("max_leases", max_leases).into_py_result()?;
            Ok(NativeSemaphore {
                inner: Semaphore::new(&client.inner, path, max).into_py_result()?,
            })
        }

        fn path(&self) -> String {
            self.inner.path().to_string()
        }

        fn max_leases(&self) -> u32 {
            self.inner.max_leases()
        }

        fn held(&self) -> usize {
            self.inner.held()
        }

        fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
            forward(self.inner.subscribe(), callback)
        }
    }
}

#[pymethods]
impl NativeLease {
    fn fencing_token(&self) -> i64 {
        self.slot.fencing_token()
    }

    fn node_path(&self) -> String {
        self.slot.node_path().to_string()
    }

    fn is_held(&self) -> bool {
        self.slot.is_held()
    }

    fn release(&self, py: Python<'_>) -> PyResult<()> {
        let lease = self.slot.take().into_py_result()?;
        // Started here, at the call: a Ctrl-C or a cancel cannot stop it.
        let release = lease.release();
        wait(py, move || release)
    }

    fn release_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let lease = self.slot.take().into_py_result()?;
        awaitable(py, lease.release())
    }
}
