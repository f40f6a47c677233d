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

use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::listener::{relay, Subscription};
use crate::twins::pymethods_with_twins;

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

pymethods_with_twins! {
    impl NativeAtomicLong {
        twins {
            fn get | get_async() -> i64 {} |counter| counter.get();
            fn increment | increment_async() -> UpdatedRow {} |counter| increment(counter);
            fn decrement | decrement_async() -> UpdatedRow {} |counter| decrement(counter);
            fn add | add_async(delta: i128) -> UpdatedRow {
                let delta = int64("delta", delta).into_py_result()?;
            } |counter| add(counter, delta);
            fn compare_and_set | compare_and_set_async(expected: i128, new: i128) -> bool {
                let expected = int64("expected", expected).into_py_result()?;
                let new = int64("new", new).into_py_result()?;
            } |counter| counter.compare_and_set(expected, new);
            fn force_set | force_set_async(value: i128) -> () {
                let value = int64("value", value).into_py_result()?;
            } |counter| counter.force_set(value);
        }

        #[new]
        fn new(client: &NativeClient, path: &str) -> PyResult<NativeAtomicLong> {
            Ok(NativeAtomicLong {
                inner: DistributedAtomicLong::new(&client.inner, path).into_py_result()?,
            })
        }

        fn path(&self) -> String {
            self.inner.path().to_string()
        }
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

pymethods_with_twins! {
    impl NativeSharedCount {
        twins {
            fn start | start_async() -> () {} |count| count.start();
            fn read | read_async() -> i32 {} |count| count.read();
            fn add | add_async(delta: i128) -> CountRow {
                let delta = int32("delta", delta).into_py_result()?;
            } |count| add_count(count, delta);
            fn set | set_async(value: i128) -> () {
                let value = int32("value", value).into_py_result()?;
            } |count| count.set(value);
            /// `expected` as `versioned()` gave it: `(value, version)`.
            fn try_set | try_set_async(expected: (i128, i128), value: i128) -> bool {
                let value = int32("value", value).into_py_result()?;
                let expected = expected_count(expected)?;
            } |count| try_set(count, expected, value);
        }

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

        fn close(&self) {
            self.inner.close();
        }

        fn get(&self) -> PyResult<i32> {
            self.inner.get().into_py_result()
        }

        fn versioned(&self) -> PyResult<CountRow> {
            self.inner.versioned().map(count_row).into_py_result()
        }

        /// `callback(value, version)` for every value the count takes.
        fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
            relay(self.inner.subscribe(), callback, count_args)
        }
    }
}
