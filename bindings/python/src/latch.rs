//! The leader latch: `NativeLeaderLatch`.
//!
//! The Python object holds the latch's only handle (a call in flight holds a clone until it
//! ends), so a latch that Python collects unclosed is closed by the core's drop.

use std::future::Future;

use pyo3::prelude::*;
use zkrecipes::ffi::latch_id;
use zkrecipes::{LatchParticipant, LeaderLatch, Wait};

use crate::blocking::{awaitable, wait};
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::listener::{forward, Subscription};
use crate::twins::pymethods_with_twins;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeLeaderLatch {
    inner: LeaderLatch,
}

/// `(id, node, is_leader)`, as `zkrecipes.LatchParticipant` takes them.
type ParticipantRow = (String, String, bool);

fn row(p: LatchParticipant) -> ParticipantRow {
    (p.id, p.node, p.is_leader)
}

async fn participants(latch: LeaderLatch) -> zkrecipes::Result<Vec<ParticipantRow>> {
    Ok(latch.participants().await?.into_iter().map(row).collect())
}

async fn leader(latch: LeaderLatch) -> zkrecipes::Result<Option<ParticipantRow>> {
    Ok(latch.leader().await?.map(row))
}

/// The close runs in a task of its own, started here: a Ctrl-C or a cancelled await stops the
/// waiting for it, never the close.
fn closing(latch: LeaderLatch) -> impl Future<Output = zkrecipes::Result<()>> {
    let closed = zkrecipes::runtime::runtime().spawn(async move { latch.close().await });
    async move {
        closed.await.unwrap_or_else(|failed| {
            let message = format!("closing the latch failed: {failed}");
            Err(zkrecipes::Error::new(
                zkrecipes::ErrorCode::Internal,
                message,
            ))
        })
    }
}

pymethods_with_twins! {
    impl NativeLeaderLatch {
        twins {
            #[pyo3(signature = (seconds))]
            fn await_leadership | await_leadership_async(seconds: Option<f64>) -> Option<i64> {
                let limit = Wait::python(seconds, true).into_py_result()?;
            } |latch| latch.await_leadership(limit);
            fn leader | leader_async() -> Option<ParticipantRow> {} |latch| leader(latch);
            fn participants | participants_async() -> Vec<ParticipantRow> {} |latch| participants(latch);
        }
        begun {
            fn close | close_async() -> () {} |latch| closing(latch);
        }

        #[new]
        #[pyo3(signature = (client, path, id))]
        fn new(client: &NativeClient, path: &str, id: Option<&str>) -> PyResult<NativeLeaderLatch> {
            let id = latch_id(&client.inner, id);
            Ok(NativeLeaderLatch {
                inner: LeaderLatch::new(&client.inner, path, &id).into_py_result()?,
            })
        }

        fn start(&self, py: Python<'_>) -> PyResult<()> {
            let latch = self.inner.clone();
            wait(py, move || async move { latch.start().await })
        }

        fn start_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            let latch = self.inner.clone();
            awaitable(py, async move { latch.start().await })
        }

        /// Closes without waiting: for a start that was interrupted or cancelled, whose caller
        /// must not be left with a node in line it never heard of.
        fn close_soon(&self) {
            drop(closing(self.inner.clone()));
        }

        fn has_leadership(&self) -> bool {
            self.inner.has_leadership()
        }

        fn fencing_token(&self) -> Option<i64> {
            self.inner.fencing_token()
        }

        fn is_started(&self) -> bool {
            self.inner.is_started()
        }

        fn is_closed(&self) -> bool {
            self.inner.is_closed()
        }

        fn path(&self) -> String {
            self.inner.path().to_string()
        }

        fn id(&self) -> String {
            self.inner.id().to_string()
        }

        fn node_path(&self) -> Option<String> {
            self.inner.node_path()
        }

        fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
            forward(self.inner.subscribe(), callback)
        }
    }
}
