//! The core's integration tests against real ZooKeeper servers, one module per recipe or
//! concern, in one test binary: a binary per file compiled and linked the shared code
//! two dozen times (two minutes of the suite's critical path). `observe` (a process-wide log
//! sink and metrics recorder) and `kerberos` (process-wide Kerberos variables) stay binaries of
//! their own. Run one: `cargo test -p zkrecipes --test recipes semaphore::`.

#[path = "../common/mod.rs"]
mod common;

mod barrier;
mod cache;
mod cache_reconnect;
mod client;
mod counter;
mod counter_faults;
mod discovery;
mod election;
mod ensemble;
mod group;
mod interop_apache;
mod interop_curator;
mod latch;
mod multi_lock;
mod queue;
mod queue_batch;
mod queue_consumers;
mod races;
mod read_write_lock;
mod security;
mod semaphore;
mod shared_count;
mod work_queue;
mod write_lock;
