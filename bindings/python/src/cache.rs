//! The caches: `NativeCache`, one class for the core's one `Cache` (a node, its children or a
//! subtree, chosen by the constructor).
//!
//! The Python object holds the cache's only handle (a call in flight holds a clone until it
//! ends), so a cache that Python collects stops following and frees its copy: a listener's
//! stream then ends with it. A start that Ctrl-C or a cancelled await abandons leaves the cache
//! loading, as the core does (it creates nothing on the server): the start runs in a task of its
//! own, so that a cancel that comes before the runtime first polls it still starts the cache
//! (that task holds the cache until its first load is in).

use std::future::Future;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use zkrecipes::{Cache, CacheEvent, CachedNode, NodeStat, Wait};

use crate::blocking::detached;
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::listener::{relay_all, Subscription};
use crate::payload::Payload;
use crate::twins::pymethods_with_twins;

/// `NodeStat`'s fields in declaration order, as `zkrecipes.NodeStat` takes them.
pub type StatRow = (i64, i64, i64, i64, i64, i32, i32, i32, i64, i32, i32);
/// `(path, data, stat)`, as `zkrecipes.CachedNode` takes them.
pub type NodeRow = (String, Payload, StatRow);

fn stat_row(s: NodeStat) -> StatRow {
    (
        s.czxid,
        s.mzxid,
        s.pzxid,
        s.ctime,
        s.mtime,
        s.version,
        s.cversion,
        s.aversion,
        s.ephemeral_owner,
        s.data_length,
        s.num_children,
    )
}

pub fn node_row(n: CachedNode) -> NodeRow {
    (n.path, Payload(n.data), stat_row(n.stat))
}

/// `(name, node, old)`: the node of `CREATED`, `CHANGED` (the new one) and `DELETED` (the one
/// gone), the old one of `CHANGED`; `None` otherwise.
pub fn event_args(py: Python<'_>, event: CacheEvent) -> PyResult<Py<PyTuple>> {
    let name = event.name();
    let (node, old) = match event {
        CacheEvent::Created(node) | CacheEvent::Deleted(node) => (Some(node), None),
        CacheEvent::Changed { old, new } => (Some(new), Some(old)),
        _ => (None, None),
    };
    let args = (name, node.map(node_row), old.map(node_row));
    Ok(args.into_pyobject(py)?.unbind())
}

fn start(cache: Cache) -> impl Future<Output = zkrecipes::Result<()>> {
    detached("starting the cache", async move { cache.start().await })
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeCache {
    inner: Cache,
}

fn made(cache: zkrecipes::Result<Cache>) -> PyResult<NativeCache> {
    Ok(NativeCache {
        inner: cache.into_py_result()?,
    })
}

pymethods_with_twins! {
    impl NativeCache {
        twins {
            #[pyo3(signature = (seconds))]
            fn await_initialized | await_initialized_async(seconds: Option<f64>) -> () {
                let limit = Wait::python(seconds, true).into_py_result()?.timeout();
            } |cache| cache.await_initialized(limit);
        }
        begun {
            fn start | start_async() -> () {} |cache| start(cache);
        }

        #[staticmethod]
        fn node(client: &NativeClient, path: &str) -> PyResult<NativeCache> {
            made(Cache::node(&client.inner, path))
        }

        #[staticmethod]
        fn children(client: &NativeClient, path: &str) -> PyResult<NativeCache> {
            made(Cache::children(&client.inner, path))
        }

        #[staticmethod]
        #[pyo3(signature = (client, path, max_depth))]
        fn tree(client: &NativeClient, path: &str, max_depth: Option<i128>) -> PyResult<NativeCache> {
            let max_depth = zkrecipes::ffi::max_depth("max_depth", max_depth).into_py_result()?;
            made(Cache::tree(&client.inner, path, max_depth))
        }

        fn path(&self) -> String {
            self.inner.path().to_string()
        }

        fn close(&self) {
            self.inner.close();
        }

        fn is_initialized(&self) -> bool {
            self.inner.is_initialized()
        }

        fn get(&self, path: &str) -> Option<NodeRow> {
            self.inner.get(path).map(node_row)
        }

        fn contains(&self, path: &str) -> bool {
            self.inner.get(path).is_some()
        }

        fn snapshot(&self) -> Vec<NodeRow> {
            self.inner.snapshot().into_iter().map(node_row).collect()
        }

        fn children_of(&self, path: &str) -> Vec<String> {
            self.inner.children_of(path)
        }

        fn len(&self) -> usize {
            self.inner.len()
        }

        /// `callback(name, node, old)` for every event from now on, in order; the deliveries end
        /// when the cache is closed.
        fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
            relay_all(self.inner.subscribe(), callback, event_args)
        }
    }
}
