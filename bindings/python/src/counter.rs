//! The counters: `NativeAtomicLong` (Curator's `DistributedAtomicLong`) and `NativeSharedCount`
//! (Curator's `SharedCount`, kazoo's `Counter(support_curator=True)`).
//!
//! An update that Ctrl-C or a cancelled await abandons may or may not have been applied: its
//! write may already be on its way, and no increment can be taken back. The Python object holds
//! the count's only handle (a call in flight holds a clone until it ends), so a count that
//! Python collects stops following its node.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use zkrecipes::ffi::{int32, int64};
use zkrecipes::{DistributedAtomicLong, SharedCount, Updated, VersionedCount};

use crate::blocking::{awaitable, wait};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::listener::{relay, Subscription};

/// `(pre_value, post_value)`, as `zkrecipes.Updated` takes them.
type UpdatedRow = (i64, i64);
/// `(value, version)`, as `zkrecipes.VersionedCount` takes them.
type CountRow = (i32, i32);

fn updated(u: Updated) -> UpdatedRow {
    (u.pre_value, u.post_value)
}

fn count_row(v: VersionedCount) -> CountRow {
    (v.value, v.version)
}

/// `expected` as `versioned()` gave it, `(value, version)`, each as the caller may have changed it.
fn expected_count((value, version): (i128, i128)) -> PyResult<VersionedCount> {
    Ok(VersionedCount {
        value: int32("expected.value", value).into_py_result()?,
        version: int32("expected.version", version).into_py_result()?,
    })
}

fn count_args(py: Python<'_>, v: VersionedCount) -> PyResult<Py<PyTuple>> {
    Ok(count_row(v).into_pyobject(py)?.unbind())
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeAtomicLong {
    inner: DistributedAtomicLong,
}

async fn add(counter: DistributedAtomicLong, delta: i64) -> zkrecipes::Result<UpdatedRow> {
    counter.add(delta).await.map(updated)
}

async fn increment(counter: DistributedAtomicLong) -> zkrecipes::Result<UpdatedRow> {
    counter.increment().await.map(updated)
}

async fn decrement(counter: DistributedAtomicLong) -> zkrecipes::Result<UpdatedRow> {
    counter.decrement().await.map(updated)
}

#[pymethods]
impl NativeAtomicLong {
    #[new]
    fn new(client: &NativeClient, path: &str) -> PyResult<NativeAtomicLong> {
        Ok(NativeAtomicLong {
            inner: DistributedAtomicLong::new(&client.inner, path).into_py_result()?,
        })
    }

    fn path(&self) -> String {
        self.inner.path().to_string()
    }

    fn get(&self, py: Python<'_>) -> PyResult<i64> {
        let counter = self.inner.clone();
        wait(py, move || async move { counter.get().await })
    }

    fn get_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let counter = self.inner.clone();
        awaitable(py, async move { counter.get().await })
    }

    fn increment(&self, py: Python<'_>) -> PyResult<UpdatedRow> {
        let counter = self.inner.clone();
        wait(py, move || increment(counter))
    }

    fn increment_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, increment(self.inner.clone()))
    }

    fn decrement(&self, py: Python<'_>) -> PyResult<UpdatedRow> {
        let counter = self.inner.clone();
        wait(py, move || decrement(counter))
    }

    fn decrement_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        awaitable(py, decrement(self.inner.clone()))
    }

    fn add(&self, py: Python<'_>, delta: i128) -> PyResult<UpdatedRow> {
        let delta = int64("delta", delta).into_py_result()?;
        let counter = self.inner.clone();
        wait(py, move || add(counter, delta))
    }

    fn add_async<'py>(&self, py: Python<'py>, delta: i128) -> PyResult<Bound<'py, PyAny>> {
        let delta = int64("delta", delta).into_py_result()?;
        awaitable(py, add(self.inner.clone(), delta))
    }

    fn compare_and_set(&self, py: Python<'_>, expected: i128, new: i128) -> PyResult<bool> {
        let expected = int64("expected", expected).into_py_result()?;
        let new = int64("new", new).into_py_result()?;
        let counter = self.inner.clone();
        wait(py, move || async move {
            counter.compare_and_set(expected, new).await
        })
    }

    fn compare_and_set_async<'py>(
        &self,
        py: Python<'py>,
        expected: i128,
        new: i128,
    ) -> PyResult<Bound<'py, PyAny>> {
        let expected = int64("expected", expected).into_py_result()?;
        let new = int64("new", new).into_py_result()?;
        let counter = self.inner.clone();
        awaitable(
            py,
            async move { counter.compare_and_set(expected, new).await },
        )
    }

    fn force_set(&self, py: Python<'_>, value: i128) -> PyResult<()> {
        let value = int64("value", value).into_py_result()?;
        let counter = self.inner.clone();
        wait(py, move || async move { counter.force_set(value).await })
    }

    fn force_set_async<'py>(&self, py: Python<'py>, value: i128) -> PyResult<Bound<'py, PyAny>> {
        let value = int64("value", value).into_py_result()?;
        let counter = self.inner.clone();
        awaitable(py, async move { counter.force_set(value).await })
    }
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeSharedCount {
    inner: SharedCount,
}

async fn add_count(count: SharedCount, delta: i32) -> zkrecipes::Result<CountRow> {
    count.add(delta).await.map(count_row)
}

async fn try_set(
    count: SharedCount,
    expected: VersionedCount,
    value: i32,
) -> zkrecipes::Result<bool> {
    count.try_set(expected, value).await
}

#[pymethods]
impl NativeSharedCount {
    #[new]
    fn new(client: &NativeClient, path: &str, seed: i128) -> PyResult<NativeSharedCount> {
        let seed = int32("seed", seed).into_py_result()?;
        Ok(NativeSharedCount {
            inner: SharedCount::new(&client.inner, path, seed).into_py_result()?,
        })
    }

    fn path(&self) -> String {
        self.inner.path().to_string()
    }

    fn start(&self, py: Python<'_>) -> PyResult<()> {
        let count = self.inner.clone();
        wait(py, move || async move { count.start().await })
    }

    fn start_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let count = self.inner.clone();
        awaitable(py, async move { count.start().await })
    }

    fn close(&self) {
        self.inner.close();
    }

    fn get(&self) -> PyResult<i32> {
        self.inner.get().into_py_result()
    }

    fn versioned(&self) -> PyResult<CountRow> {
        self.inner.versioned().map(count_row).into_py_result()
    }

    fn read(&self, py: Python<'_>) -> PyResult<i32> {
        let count = self.inner.clone();
        wait(py, move || async move { count.read().await })
    }

    fn read_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let count = self.inner.clone();
        awaitable(py, async move { count.read().await })
    }

    fn add(&self, py: Python<'_>, delta: i128) -> PyResult<CountRow> {
        let delta = int32("delta", delta).into_py_result()?;
        let count = self.inner.clone();
        wait(py, move || add_count(count, delta))
    }

    fn add_async<'py>(&self, py: Python<'py>, delta: i128) -> PyResult<Bound<'py, PyAny>> {
        let delta = int32("delta", delta).into_py_result()?;
        awaitable(py, add_count(self.inner.clone(), delta))
    }

    fn set(&self, py: Python<'_>, value: i128) -> PyResult<()> {
        let value = int32("value", value).into_py_result()?;
        let count = self.inner.clone();
        wait(py, move || async move { count.set(value).await })
    }

    fn set_async<'py>(&self, py: Python<'py>, value: i128) -> PyResult<Bound<'py, PyAny>> {
        let value = int32("value", value).into_py_result()?;
        let count = self.inner.clone();
        awaitable(py, async move { count.set(value).await })
    }

    /// `expected` as `versioned()` gave it: `(value, version)`.
    fn try_set(&self, py: Python<'_>, expected: (i128, i128), value: i128) -> PyResult<bool> {
        let value = int32("value", value).into_py_result()?;
        let expected = expected_count(expected)?;
        let count = self.inner.clone();
        wait(py, move || try_set(count, expected, value))
    }

    fn try_set_async<'py>(
        &self,
        py: Python<'py>,
        expected: (i128, i128),
        value: i128,
    ) -> PyResult<Bound<'py, PyAny>> {
        let value = int32("value", value).into_py_result()?;
        let expected = expected_count(expected)?;
        awaitable(py, try_set(self.inner.clone(), expected, value))
    }

    /// `callback(value, version)` for every value the count takes.
    fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
        relay(self.inner.subscribe(), callback, count_args)
    }
}
