//! `libzkrecipes_java`: the native half of the `io.zkrecipes` JAR.
//!
//! Every export is written with `export!` (one place for `with_env` and for
//! turning errors and panics into `ZkException`). Operations that wait run on the core's runtime and
//! complete a `CompletableFuture` (Java builds the blocking, interruptible and
//! async forms from it); a Rust panic becomes `ZkException(INTERNAL)`.
//!
//! Every `unsafe { borrow(handle) }` relies on one guarantee of the Java side
//! (`NativeObject`): a handle is live for the whole call (see `handles`).

mod barrier;
mod cache;
mod callbacks;
mod client;
mod counter;
mod discovery;
mod election;
mod errors;
mod export;
mod group;
mod handles;
mod latch;
mod listener;
mod lock;
mod logs;
mod metrics;
mod names;
mod packing;
mod queue;
mod recordings;
mod semaphore;
mod strings;
mod tasks;
mod work_queue;
