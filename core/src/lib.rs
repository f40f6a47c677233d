//! zkrecipes: the ZooKeeper coordination recipes — locks, multi-locks and read/write locks, the queue and
//! the at-least-once work queue, election and the leader latch, the semaphore, barriers, the
//! counters, the caches, group membership and persistent nodes, service discovery on Curator's registry — implemented once in Rust for
//! Rust, Python, Node.js, Java, Kotlin and the `zkrecipes` command,
//! interoperable with Apache ZooKeeper's recipes, Curator and kazoo, and correct where they are
//! not (orphan nodes, lost wake-ups, silent lock loss), over TLS and SASL.
//!
//! Every acquired lock carries a fencing token (the czxid of its node).

mod backoff;
mod barrier;
mod cache;
mod client;
mod connect_diagnosis;
mod counter;
mod discovery;
mod election;
mod emitter;
mod error;
mod event;
#[doc(hidden)]
pub mod ffi;
mod group;
mod handoff;
pub mod inspect;
mod latch;
mod lock;
mod memory;
mod observe;
pub mod path;
mod queue;
pub mod runtime;
mod sasl_probe;
mod security;
mod semaphore;
mod wait;
mod work_queue;

pub use barrier::{Barrier, DoubleBarrier};
pub use cache::{Cache, CacheEvent, CacheScope, CachedNode, NodeStat};
pub use client::{
    Auth, Client, ClientOptions, ConnectionState, DEFAULT_CONNECT_TIMEOUT, DEFAULT_SESSION_TIMEOUT,
    MAX_NODE_DATA, MAX_PACKET,
};
pub use counter::{DistributedAtomicLong, SharedCount, Updated, VersionedCount};
pub use discovery::{
    DiscoveryEvent, DownInstancePolicy, ProviderStrategy, ServiceCache, ServiceCacheEvent,
    ServiceCacheEvents, ServiceDiscovery, ServiceInstance, ServiceProvider, ServiceType,
    SpringPayload, UriPart, UriSpec, SPRING_PAYLOAD_CLASS,
};
pub use election::{ElectionEvent, LeaderElectionSupport};
pub use error::{Error, ErrorCode, Result};
pub use group::{GroupMember, NodeMode, PersistentNode};
pub use latch::{LatchEvent, LatchParticipant, LeaderLatch};
pub use lock::multi_lock::{MultiLock, MultiLockGuard};
pub use lock::read_write_lock::ReadWriteLock;
pub use lock::write_lock::{Lock, LockEvent, LockGuard, Owner, Participant, WriteLock};
pub use queue::{DistributedQueue, Item, CLAIM_WINDOW, MAX_BATCH};
pub use security::{Acl, AclPolicy, Pem, Perms, Sasl, Secret, Tls};
pub use semaphore::{Lease, Semaphore};
pub use wait::Wait;
pub use work_queue::{
    priority, Delivery, WorkQueue, WorkQueueOptions, DEFAULT_PRIORITY, MAX_PRIORITY,
};

/// What the library tells about itself besides its answers: each client's metrics
/// (`Client::metrics`, every metric in `CATALOG`) and the `tracing` targets of its events
/// (`TARGETS`: `zkrecipes::lock`, `zkrecipes::session`, …).
pub mod metrics {
    #[cfg(feature = "metrics-rs")]
    pub use crate::observe::export_to_metrics_crate;
    pub use crate::observe::{
        catalog, prometheus_name, HistogramPoint, Instrument, Metric, MetricPoint, MetricValue,
        MetricsSnapshot, MetricsSubscription, Recorded, Recording, RecordingObserver, WaitCall,
        BUCKETS, CATALOG, MAX_PATHS, OTHER_PATH, TARGETS, WAIT_CALLS,
    };
}

/// The crate README's example compiles (`cargo test --doc`).
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
