//! The native half of the npm package `zkrecipes`: classes that convert
//! arguments, results, errors and events. `node/index.js` wraps them in the
//! public API (EventEmitter, `ZkError`, `Symbol.asyncDispose`).

pub mod client;
pub mod election;
pub mod errors;
pub mod listener;
pub mod lock;
pub mod queue;
pub mod rwlock;

/// napi's own runtime only awaits results of the core's shared runtime:
/// one small thread is enough.
#[napi_derive::module_init]
fn init() {
    if let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("zkrecipes-napi")
        .enable_all()
        .build()
    {
        napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
    }
}
