//! `libzkrecipes_java`: the native half of the `io.zkrecipes` JAR.
//!
//! Every export is a one-line shim `env.with_env(|env| ...).resolve::<ThrowZkException>()`
//! around a plain function. Operations that wait run on the core's runtime and
//! complete a `CompletableFuture` (Java builds the blocking, interruptible and
//! async forms from it); a Rust panic becomes `ZkException(INTERNAL)`.
//!
//! Every `unsafe { borrow(handle) }` relies on one guarantee of the Java side
//! (`NativeObject`): a handle is live for the whole call (see `handles`).

mod callbacks;
mod client;
mod election;
mod errors;
mod handles;
mod listener;
mod lock;
mod names;
mod queue;
mod tasks;
