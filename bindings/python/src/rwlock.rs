use pyo3::prelude::*;
use zkrecipes::ReadWriteLock;

use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::lock::NativeLock;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeReadWriteLock {
    read: Py<NativeLock>,
    write: Py<NativeLock>,
}

#[pymethods]
impl NativeReadWriteLock {
    #[new]
    fn new(py: Python<'_>, client: &NativeClient, dir: &str) -> PyResult<NativeReadWriteLock> {
        let lock = ReadWriteLock::new(&client.inner, dir).into_py_result()?;
        Ok(NativeReadWriteLock {
            read: Py::new(
                py,
                NativeLock {
                    inner: lock.read_lock().clone(),
                },
            )?,
            write: Py::new(
                py,
                NativeLock {
                    inner: lock.write_lock().clone(),
                },
            )?,
        })
    }

    fn read_lock(&self, py: Python<'_>) -> Py<NativeLock> {
        self.read.clone_ref(py)
    }

    fn write_lock(&self, py: Python<'_>) -> Py<NativeLock> {
        self.write.clone_ref(py)
    }
}
