//! The self-healing node: `NativePersistentNode` (Curator's `PersistentNode`).
//!
//! The Python object holds the node's only handle (a call in flight holds a clone until it
//! ends), so a node that Python collects unclosed stops being re-created (an ephemeral one then
//! goes with its session).

use std::future::Future;

use pyo3::prelude::*;
use zkrecipes::PersistentNode;

use crate::blocking::{awaitable, detached, wait};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::payload::Payload;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativePersistentNode {
    inner: PersistentNode,
}

/// The close runs in a task of its own, started here: a Ctrl-C or a cancelled await stops the
/// waiting for it, never the delete.
fn close(node: PersistentNode) -> impl Future<Output = zkrecipes::Result<()>> {
    detached(
        "closing the persistent node",
        async move { node.close().await },
    )
}

#[pymethods]
impl NativePersistentNode {
    #[new]
    fn new(
        client: &NativeClient,
        path: &str,
        mode: &str,
        data: &[u8],
    ) -> PyResult<NativePersistentNode> {
        let mode = zkrecipes::ffi::node_mode(mode).into_py_result()?;
        Ok(NativePersistentNode {
            inner: PersistentNode::new(&client.inner, path, mode, data.to_vec())
                .into_py_result()?,
        })
    }

    fn path(&self) -> String {
        self.inner.path().to_string()
    }

    fn start(&self, py: Python<'_>) -> PyResult<String> {
        let node = self.inner.clone();
        wait(py, move || async move { node.start().await })
    }

    fn start_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let node = self.inner.clone();
        awaitable(py, async move { node.start().await })
    }

    fn actual_path(&self) -> Option<String> {
        self.inner.actual_path()
    }

    fn data(&self) -> Payload {
        Payload(self.inner.data())
    }

    fn set_data(&self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let (node, data) = (self.inner.clone(), data.to_vec());
        wait(py, move || async move { node.set_data(data).await })
    }

    fn set_data_async<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        let (node, data) = (self.inner.clone(), data.to_vec());
        awaitable(py, async move { node.set_data(data).await })
    }

    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let node = self.inner.clone();
        // Started here, at the call: a Ctrl-C cannot stop it.
        let closing = close(node);
        wait(py, move || closing)
    }

    fn close_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, close(self.inner.clone()))
    }

    /// Closes without waiting: for a start that was interrupted or cancelled, whose caller
    /// must not be left with a node it never heard of.
    fn close_soon(&self) {
        drop(close(self.inner.clone()));
    }
}
