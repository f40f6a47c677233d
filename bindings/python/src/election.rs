use pyo3::prelude::*;
use zkrecipes::{LeaderElectionSupport, Wait};

use crate::blocking::{awaitable, wait};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::listener::{forward, Subscription};

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeElection {
    inner: LeaderElectionSupport,
}

#[pymethods]
impl NativeElection {
    #[new]
    fn new(client: &NativeClient, root: &str, host_name: &str) -> PyResult<NativeElection> {
        Ok(NativeElection {
            inner: LeaderElectionSupport::new(&client.inner, root, host_name).into_py_result()?,
        })
    }

    fn start(&self, py: Python<'_>) -> PyResult<()> {
        let election = self.inner.clone();
        wait(py, move || async move { election.start().await })
    }

    fn start_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, self.inner.start())
    }

    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let election = self.inner.clone();
        wait(py, move || async move { election.stop().await })
    }

    fn stop_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, self.inner.stop())
    }

    fn is_leader(&self) -> bool {
        self.inner.is_leader()
    }

    fn leader_host_name(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let election = self.inner.clone();
        wait(py, move || async move { election.leader_host_name().await })
    }

    fn leader_host_name_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let election = self.inner.clone();
        awaitable(py, async move { election.leader_host_name().await })
    }

    #[pyo3(signature = (seconds))]
    fn await_leadership(&self, py: Python<'_>, seconds: Option<f64>) -> PyResult<bool> {
        let limit = Wait::python(seconds, true).into_py_result()?;
        let election = self.inner.clone();
        wait(
            py,
            move || async move { election.await_leadership(limit).await },
        )
    }

    #[pyo3(signature = (seconds))]
    fn await_leadership_async<'py>(
        &self,
        py: Python<'py>,
        seconds: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limit = Wait::python(seconds, true).into_py_result()?;
        let election = self.inner.clone();
        awaitable(py, async move { election.await_leadership(limit).await })
    }

    fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
        forward(self.inner.subscribe(), callback)
    }
}
