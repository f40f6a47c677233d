//! The one tokio runtime of the process.
//!
//! Every binding (Python, Node, Java) drives the core on this runtime, so a
//! process that uses zkrecipes from several places still has one set of
//! threads and one timer wheel.

use std::sync::OnceLock;

use tokio::runtime::{Builder, Handle, Runtime};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The shared runtime, created on first use.
pub fn runtime() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("zkrecipes")
            .enable_all()
            .build()
            .expect("cannot start the zkrecipes runtime")
    })
}

/// Where the core spawns its background work (sessions, watchers, holders'
/// monitors): always the shared runtime, so that none of it dies with a
/// short-lived runtime of the caller (a `#[tokio::test]`, a binding's call).
pub(crate) fn handle() -> &'static Handle {
    runtime().handle()
}
