//! The Kotlin binding: uniffi objects over the core, converted and nothing
//! more. Every recipe decision is the core's; the idiomatic Kotlin API
//! (suspend functions, Flows, `withLock`) lives in `kotlin/src/main/kotlin`.

uniffi::setup_scaffolding!();

mod barrier;
mod cache;
mod client;
mod closing;
mod counter;
mod discovery;
mod election;
mod errors;
mod events;
mod group;
mod latch;
mod lock;
mod logs;
mod metrics;
mod queue;
mod recordings;
mod semaphore;
mod tasks;
mod wait_spans;
mod work_queue;
