use pyo3::prelude::*;
use zkrecipes::{LeaderElectionSupport, Wait};

use crate::blocking::{awaitable, wait};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::listener::{forward, Subscription};
use crate::twins::pymethods_with_twins;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeElection {
    inner: LeaderElectionSupport,
}

pymethods_with_twins! {
    impl NativeElection {
        twins {
            fn leader_host_name | leader_host_name_async() -> Option<String> {}
                |election| election.leader_host_name();
            #[pyo3(signature = (seconds))]
            fn await_leadership | await_leadership_async(seconds: Option<f64>) -> bool {
                let limit = Wait::python(seconds, true).into_py_result()?;
            } |election| election.await_leadership(limit);
        }

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

        fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
            forward(self.inner.subscribe(), callback)
        }
    }
}
