//! The barrier and the double barrier: `NativeBarrier`, `NativeDoubleBarrier`.
//!
//! A double barrier's `enter` or `leave` that is interrupted or cancelled withdraws the member
//! node (the core does so when its future is dropped).

use pyo3::prelude::*;
use zkrecipes::ffi::member_count;
use zkrecipes::{Barrier, DoubleBarrier, Wait};

use crate::blocking::{awaitable, wait};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeBarrier {
    inner: Barrier,
}

#[pymethods]
impl NativeBarrier {
    #[new]
    fn new(client: &NativeClient, path: &str) -> PyResult<NativeBarrier> {
        Ok(NativeBarrier {
            inner: Barrier::new(&client.inner, path).into_py_result()?,
        })
    }

    fn path(&self) -> String {
        self.inner.path().to_string()
    }

    fn set(&self, py: Python<'_>) -> PyResult<()> {
        let barrier = self.inner.clone();
        wait(py, move || async move { barrier.set().await })
    }

    fn set_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let barrier = self.inner.clone();
        awaitable(py, async move { barrier.set().await })
    }

    fn remove(&self, py: Python<'_>) -> PyResult<()> {
        let barrier = self.inner.clone();
        wait(py, move || async move { barrier.remove().await })
    }

    fn remove_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let barrier = self.inner.clone();
        awaitable(py, async move { barrier.remove().await })
    }

    fn is_set(&self, py: Python<'_>) -> PyResult<bool> {
        let barrier = self.inner.clone();
        wait(py, move || async move { barrier.is_set().await })
    }

    fn is_set_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let barrier = self.inner.clone();
        awaitable(py, async move { barrier.is_set().await })
    }

    #[pyo3(signature = (seconds))]
    fn wait(&self, py: Python<'_>, seconds: Option<f64>) -> PyResult<bool> {
        let limit = Wait::python(seconds, true).into_py_result()?;
        let barrier = self.inner.clone();
        wait(py, move || async move { barrier.wait(limit).await })
    }

    #[pyo3(signature = (seconds))]
    fn wait_async<'py>(
        &self,
        py: Python<'py>,
        seconds: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = Wait::python(seconds, true).into_py_result()?;
        let barrier = self.inner.clone();
        awaitable(py, async move { barrier.wait(limit).await })
    }
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeDoubleBarrier {
    inner: DoubleBarrier,
}

#[pymethods]
impl NativeDoubleBarrier {
    #[new]
    fn new(client: &NativeClient, path: &str, count: i64) -> PyResult<NativeDoubleBarrier> {
        let count = member_count("member_count", count).into_py_result()?;
        Ok(NativeDoubleBarrier {
            inner: DoubleBarrier::new(&client.inner, path, count).into_py_result()?,
        })
    }

    fn path(&self) -> String {
        self.inner.path().to_string()
    }

    fn member_count(&self) -> u32 {
        self.inner.member_count()
    }

    fn node_path(&self) -> String {
        self.inner.node_path()
    }

    #[pyo3(signature = (seconds))]
    fn enter(&self, py: Python<'_>, seconds: Option<f64>) -> PyResult<bool> {
        let limit = Wait::python(seconds, true).into_py_result()?;
        let barrier = self.inner.clone();
        wait(py, move || async move { barrier.enter(limit).await })
    }

    #[pyo3(signature = (seconds))]
    fn enter_async<'py>(
        &self,
        py: Python<'py>,
        seconds: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = Wait::python(seconds, true).into_py_result()?;
        let barrier = self.inner.clone();
        awaitable(py, async move { barrier.enter(limit).await })
    }

    /// Withdraws this member without waiting: for an `enter` whose caller was interrupted or
    /// cancelled just as it succeeded (the core withdraws one cancelled before), so that the
    /// others' `leave` does not wait for a member nobody will lead out. Only a member whose
    /// node is there leaves: a `leave` by a non-member could delete `ready` under the others.
    fn withdraw_soon(&self) {
        drop(self.inner.withdraw());
    }

    #[pyo3(signature = (seconds))]
    fn leave(&self, py: Python<'_>, seconds: Option<f64>) -> PyResult<bool> {
        let limit = Wait::python(seconds, true).into_py_result()?;
        let barrier = self.inner.clone();
        wait(py, move || async move { barrier.leave(limit).await })
    }

    #[pyo3(signature = (seconds))]
    fn leave_async<'py>(
        &self,
        py: Python<'py>,
        seconds: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = Wait::python(seconds, true).into_py_result()?;
        let barrier = self.inner.clone();
        awaitable(py, async move { barrier.leave(limit).await })
    }

    fn members(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let barrier = self.inner.clone();
        wait(py, move || async move { barrier.members().await })
    }

    fn members_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let barrier = self.inner.clone();
        awaitable(py, async move { barrier.members().await })
    }

    fn is_ready(&self, py: Python<'_>) -> PyResult<bool> {
        let barrier = self.inner.clone();
        wait(py, move || async move { barrier.is_ready().await })
    }

    fn is_ready_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let barrier = self.inner.clone();
        awaitable(py, async move { barrier.is_ready().await })
    }
}
