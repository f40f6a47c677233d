//! The self-healing node: `NativePersistentNode` (Curator's `PersistentNode`).
//!
//! The Python object holds the node's only handle (a call in flight holds a clone until it
//! ends), so a node that Python collects unclosed stops being re-created (an ephemeral one then
//! goes with its session).

use std::future::Future;

use pyo3::prelude::*;
use zkrecipes::PersistentNode;

use crate::blocking::detached;
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::payload::Payload;
use crate::twins::pymethods_with_twins;

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

pymethods_with_twins! {
    impl NativePersistentNode {
        twins {
            fn set_data | set_data_async(data: &[u8]) -> () {
                let data = data.to_vec();
            } |node| node.set_data(data);
            fn start | start_async() -> String {} |node| node.start();
        }
        begun {
            fn close | close_async() -> () {} |node| close(node);
        }
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

        fn actual_path(&self) -> Option<String> {
            self.inner.actual_path()
        }

        fn data(&self) -> Payload {
            Payload(self.inner.data())
        }

        /// Closes without waiting: for a start that was interrupted or cancelled, whose caller
        /// must not be left with a node it never heard of.
        fn close_soon(&self) {
            drop(close(self.inner.clone()));
        }
    }
}
