//! `zkrecipes._native`: the private module under the hand-written Python
//! package. It only converts; every recipe decision is in the core crate.

mod barrier;
mod blocking;
mod cache;
mod catalog;
mod client;
mod counter;
mod discovery;
mod election;
mod errors;
mod group_member;
mod host_calls;
mod latch;
mod listener;
mod lock;
mod log;
mod metrics;
mod payload;
mod persistent_node;
mod queue;
mod recordings;
mod rwlock;
mod security;
mod semaphore;
mod twins;
mod undo;
mod work_queue;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The defaults of `Client(...)`, in seconds: the core's, not restated in Python.
    m.add(
        "DEFAULT_SESSION_TIMEOUT",
        zkrecipes::DEFAULT_SESSION_TIMEOUT.as_secs_f64(),
    )?;
    m.add(
        "DEFAULT_CONNECT_TIMEOUT",
        zkrecipes::DEFAULT_CONNECT_TIMEOUT.as_secs_f64(),
    )?;
    m.add_class::<client::NativeClient>()?;
    m.add_class::<lock::NativeLock>()?;
    m.add_class::<lock::NativeMultiLock>()?;
    m.add_class::<rwlock::NativeReadWriteLock>()?;
    m.add_class::<queue::NativeQueue>()?;
    m.add_class::<work_queue::NativeWorkQueue>()?;
    m.add_class::<work_queue::NativeDelivery>()?;
    m.add_class::<election::NativeElection>()?;
    m.add_class::<latch::NativeLeaderLatch>()?;
    m.add_class::<barrier::NativeBarrier>()?;
    m.add_class::<barrier::NativeDoubleBarrier>()?;
    m.add_class::<semaphore::NativeSemaphore>()?;
    m.add_class::<semaphore::NativeLease>()?;
    m.add_class::<counter::NativeAtomicLong>()?;
    m.add_class::<counter::NativeSharedCount>()?;
    m.add_class::<cache::NativeCache>()?;
    m.add_class::<persistent_node::NativePersistentNode>()?;
    m.add_class::<group_member::NativeGroupMember>()?;
    m.add_class::<discovery::NativeServiceDiscovery>()?;
    m.add_class::<discovery::NativeServiceCache>()?;
    m.add_class::<discovery::NativeServiceProvider>()?;
    m.add_function(wrap_pyfunction!(discovery::_instance_uri, m)?)?;
    m.add_function(wrap_pyfunction!(discovery::_instance_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(discovery::_instance_to_json, m)?)?;
    m.add_function(wrap_pyfunction!(discovery::_spring_payload, m)?)?;
    m.add("SPRING_PAYLOAD_CLASS", zkrecipes::SPRING_PAYLOAD_CLASS)?;
    m.add_class::<listener::Subscription>()?;
    m.add_class::<undo::Undo>()?;
    m.add_class::<metrics::MetricsSnapshot>()?;
    m.add_class::<metrics::MetricPoint>()?;
    m.add_class::<metrics::HistogramPoint>()?;
    m.add_class::<recordings::MetricsFeed>()?;
    m.add_function(wrap_pyfunction!(recordings::_flush_recordings, m)?)?;
    m.add_function(wrap_pyfunction!(recordings::_recordings_dropped, m)?)?;
    catalog::add_constants(m)?;
    m.add_function(wrap_pyfunction!(log::_forward_logs, m)?)?;
    m.add_function(wrap_pyfunction!(log::_refresh_log_levels, m)?)?;
    m.add_function(wrap_pyfunction!(log::_flush_logs, m)?)?;
    log::add_constants(m)?;
    m.add_function(wrap_pyfunction!(listener::_shutdown, m)?)?;
    m.add_function(wrap_pyfunction!(blocking::_resolve, m)?)?;
    m.add_function(wrap_pyfunction!(security::_pem_is_text, m)?)?;
    m.add(
        "ERROR_CODES",
        zkrecipes::ErrorCode::ALL
            .iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>(),
    )?;
    // The names the core gives events and states: the package's enums are
    // tested against these.
    use zkrecipes::ffi::Event;
    use zkrecipes::{CacheEvent, ConnectionState, ElectionEvent, LatchEvent, LockEvent};
    m.add("LOCK_EVENTS", LockEvent::names())?;
    m.add("ELECTION_EVENTS", ElectionEvent::names())?;
    m.add("LATCH_EVENTS", LatchEvent::names())?;
    m.add("CACHE_EVENTS", CacheEvent::names())?;
    m.add("CONNECTION_STATES", ConnectionState::names())?;
    Ok(())
}
