//! What the library is: its version, and the core's lists of error codes,
//! event names and states (the JAR's tests check its enums against them), its
//! loggers' names and its waits' span names.

use jni::objects::{JObjectArray, JString};
use zkrecipes::ffi::Event;
use zkrecipes::metrics::WAIT_CALLS;
use zkrecipes::{
    CacheEvent, ConnectionState, DiscoveryEvent, ElectionEvent, ErrorCode, LatchEvent, LockEvent,
    ProviderStrategy, ServiceCacheEvent, ServiceType,
};

use crate::export::export;
use crate::strings::string_array;

fn list(which: i32) -> Vec<&'static str> {
    match which {
        0 => ErrorCode::ALL.iter().map(|c| c.as_str()).collect(),
        1 => LockEvent::names(),
        2 => ElectionEvent::names(),
        4 => LatchEvent::names(),
        5 => CacheEvent::names(),
        6 => zkrecipes::ffi::log::LOGGERS.to_vec(),
        // Each wait's call, span name, success outcome and kind, one after the other: the
        // OpenTelemetry spans of `WaitSpans.java` take their names from here, not from a copy.
        7 => WAIT_CALLS
            .iter()
            .flat_map(|wait| [wait.call, wait.span, wait.success, wait.kind])
            .collect(),
        8 => DiscoveryEvent::names(),
        9 => ServiceCacheEvent::names(),
        10 => ServiceType::ALL.iter().map(|t| t.name()).collect(),
        11 => ProviderStrategy::ALL.iter().map(|s| s.name()).collect(),
        _ => ConnectionState::names(),
    }
}

export! {
    fn Java_io_zkrecipes_Native_names<'l>(env; which: i32) -> JObjectArray<'l> {
        let names = list(which);
        string_array(env, &names)
    }
}

export! {
    /// The library's version, which `NativeLibrary` holds to the JAR's: a stale
    /// library found on `java.library.path` fails at load, naming its file.
    fn Java_io_zkrecipes_Native_version<'l>(env; ) -> JString<'l> { Ok(env.new_string(env!("CARGO_PKG_VERSION"))?) }
}
