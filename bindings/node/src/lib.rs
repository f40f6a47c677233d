//! The native half of the npm package `zkrecipes`: classes that convert
//! arguments, results, errors and events. `node/index.js` wraps them in the
//! public API (EventEmitter, `ZkError`, `Symbol.asyncDispose`).

pub mod barrier;
pub mod cache;
pub mod client;
pub mod counter;
pub mod discovery;
pub mod election;
pub mod errors;
pub mod group_member;
pub mod latch;
pub mod listener;
pub mod lock;
pub mod log;
pub mod metrics;
pub mod ordered;
pub mod persistent_node;
mod promised;
pub mod queue;
pub mod recordings;
pub mod rwlock;
pub mod semaphore;
pub mod wait_spans;
pub mod work_queue;

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

/// The core's names, which `index.js` uses instead of lists of its own.
#[napi_derive::napi(object)]
pub struct Names {
    pub error_codes: Vec<String>,
    pub lock_events: Vec<String>,
    pub election_events: Vec<String>,
    pub latch_events: Vec<String>,
    pub cache_events: Vec<String>,
    pub service_cache_events: Vec<String>,
    pub discovery_events: Vec<String>,
    pub service_types: Vec<String>,
    pub provider_strategies: Vec<String>,
    pub connection_states: Vec<String>,
    /// The loggers of the library's events (`zkrecipes.lock`, …).
    pub loggers: Vec<String>,
    /// Their parent, the logger of the warning that events were dropped (`zkrecipes`).
    pub root_logger: String,
}

#[napi_derive::napi]
pub fn names() -> Names {
    use zkrecipes::ffi::Event;
    use zkrecipes::{CacheEvent, ConnectionState, ElectionEvent, ErrorCode, LatchEvent, LockEvent};
    Names {
        error_codes: ErrorCode::ALL.iter().map(|c| c.as_str().into()).collect(),
        lock_events: owned(&LockEvent::names()),
        election_events: owned(&ElectionEvent::names()),
        latch_events: owned(&LatchEvent::names()),
        cache_events: owned(&CacheEvent::names()),
        service_cache_events: owned(&zkrecipes::ServiceCacheEvent::names()),
        discovery_events: owned(&zkrecipes::DiscoveryEvent::names()),
        service_types: zkrecipes::ServiceType::ALL
            .iter()
            .map(|t| t.name().into())
            .collect(),
        provider_strategies: zkrecipes::ProviderStrategy::ALL
            .iter()
            .map(|s| s.name().into())
            .collect(),
        connection_states: owned(&ConnectionState::names()),
        loggers: owned(zkrecipes::ffi::log::LOGGERS),
        root_logger: zkrecipes::ffi::log::ROOT_LOGGER.into(),
    }
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}
