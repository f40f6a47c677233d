use pyo3::prelude::*;
use zkrecipes::ffi::OwnedLock;
use zkrecipes::{Lock, MultiLock, Owner, Wait};

use crate::blocking::{awaitable, awaitable_undoable, wait, wait_undoable};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::listener::{forward, Subscription};
use crate::undo::Acquired;

/// One lock (exclusive, or one side of a read/write lock). `owner` is the
/// Python thread or asyncio task that reentrancy is counted for.
#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeLock {
    pub inner: Lock,
}

/// An acquire whose hold is released if its caller is gone when it succeeds.
async fn acquire<L: OwnedLock>(lock: L, owner: Owner, how: Wait) -> zkrecipes::Result<Acquired<L>> {
    let token = lock.lock_as(owner, how).await?;
    Ok(Acquired { lock, owner, token })
}

type ParticipantRow = (String, String, bool);

fn rows(participants: Vec<zkrecipes::Participant>) -> Vec<ParticipantRow> {
    participants
        .into_iter()
        .map(|p| (p.node, p.identity, p.is_reader))
        .collect()
}

/// The calls a lock and a multi-lock share, with `$token` their fencing: the `#[pymethods]` of
/// `$native`, with its own methods after them. `owner` is the Python thread or asyncio task
/// that reentrancy is counted for.
macro_rules! owned_lock_methods {
    ($native:ident, $token:ty, { $($own:tt)* }) => {
        #[pymethods]
        impl $native {
            #[pyo3(signature = (owner, blocking, timeout))]
            fn lock(
                &self,
                py: Python<'_>,
                owner: u64,
                blocking: bool,
                timeout: Option<f64>,
            ) -> PyResult<Option<$token>> {
                let how = Wait::python(timeout, blocking).into_py_result()?;
                let lock = self.inner.clone();
                wait_undoable(py, move || acquire(lock, Owner(owner), how))
            }

            #[pyo3(signature = (owner, blocking, timeout))]
            fn lock_async<'py>(
                &self,
                py: Python<'py>,
                owner: u64,
                blocking: bool,
                timeout: Option<f64>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let how = Wait::python(timeout, blocking).into_py_result()?;
                awaitable_undoable(py, acquire(self.inner.clone(), Owner(owner), how))
            }

            fn unlock(&self, py: Python<'_>, owner: u64) -> PyResult<()> {
                // Started here, at the call: a Ctrl-C or a cancel cannot stop it.
                let unlocking = self.inner.unlock_as(Owner(owner));
                wait(py, move || unlocking)
            }

            fn unlock_async<'py>(&self, py: Python<'py>, owner: u64) -> PyResult<Bound<'py, PyAny>> {
                awaitable(py, self.inner.unlock_as(Owner(owner)))
            }

            fn is_held(&self) -> bool {
                self.inner.is_held()
            }

            fn is_held_by(&self, owner: u64) -> bool {
                self.inner.is_held_by(Owner(owner))
            }

            fn hold_count(&self, owner: u64) -> u32 {
                self.inner.hold_count(Owner(owner))
            }

            $($own)*
        }
    };
}

owned_lock_methods!(NativeLock, i64, {
    #[new]
    fn new(client: &NativeClient, dir: &str) -> PyResult<NativeLock> {
        Ok(NativeLock {
            inner: Lock::new(&client.inner, dir).into_py_result()?,
        })
    }

    fn fencing_token(&self) -> Option<i64> {
        self.inner.fencing_token()
    }

    fn fencing_token_of(&self, owner: u64) -> Option<i64> {
        self.inner.fencing_token_of(Owner(owner))
    }

    fn dir(&self) -> String {
        self.inner.dir().to_string()
    }

    fn participants(&self, py: Python<'_>) -> PyResult<Vec<ParticipantRow>> {
        let lock = self.inner.clone();
        wait(
            py,
            move || async move { lock.participants().await.map(rows) },
        )
    }

    fn participants_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let lock = self.inner.clone();
        awaitable(py, async move { lock.participants().await.map(rows) })
    }

    fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
        forward(self.inner.subscribe(), callback)
    }
});

/// Exclusive locks on several paths, taken together (all or none) in path order.
#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeMultiLock {
    pub inner: MultiLock,
}

owned_lock_methods!(NativeMultiLock, Vec<i64>, {
    #[new]
    fn new(client: &NativeClient, dirs: Vec<String>) -> PyResult<NativeMultiLock> {
        Ok(NativeMultiLock {
            inner: MultiLock::new(&client.inner, &dirs).into_py_result()?,
        })
    }

    fn fencing_tokens(&self) -> Option<Vec<i64>> {
        self.inner.fencing_tokens()
    }

    fn fencing_tokens_of(&self, owner: u64) -> Option<Vec<i64>> {
        self.inner.fencing_tokens_of(Owner(owner))
    }

    fn dirs(&self) -> Vec<String> {
        self.inner.dirs().into_iter().map(str::to_string).collect()
    }

    /// The path its metrics and spans carry.
    fn observed_path(&self) -> String {
        self.inner.observed_path()
    }
});
