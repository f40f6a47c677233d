//! zkrecipes: where the client's background tasks (its session, the deletes it leaves behind)
//! are spawned.
//!
//! asyncs finds the runtime through spawns-compat, which registers tokio in a `linkme` list.
//! Nothing names a symbol of spawns-compat, and MinGW's linkers (GNU ld and lld alike) pull none
//! of its objects into a Windows DLL: the list was empty there, and every connect panicked with
//! "no spawner". With tokio the task goes straight to the runtime it is spawned from, which is
//! what spawns-compat's tokio entry does.

use std::future::Future;

#[cfg(feature = "tokio")]
pub(crate) fn spawn<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) {
    drop(tokio::runtime::Handle::current().spawn(future));
}

#[cfg(not(feature = "tokio"))]
pub(crate) fn spawn<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) {
    drop(asyncs::spawn(future));
}
