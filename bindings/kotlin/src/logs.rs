//! The library's events in Kotlin: the JVM's `System.Logger`, as in Java. `Logs.kt` sets the
//! core's level of each logger from its System.Logger's `isLoggable`, so that an event nobody
//! would see never crosses into the JVM, and hands over a sink (`NativeLogSink`, a callback
//! interface) that the core's delivery thread calls with each event.
//!
//! Why uniffi's callback interface: it is how this crate already calls Kotlin (the futures'
//! continuations), so the events need no second way into the JVM (JNI, or a JNA library of our
//! own). JNA attaches the delivery thread to the JVM once, as the daemon "zkrecipes-log"
//! (`NativeLibrary.kt` sets that up).

use std::sync::Arc;

use zkrecipes::ffi::log::{self, LogLevel, LogRecord, LOGGERS};
use zkrecipes::ffi::{log_line, timeout_setting};

use crate::errors::{NativeError, Result};

/// Where the events go: `Logs.kt`'s sink, which logs each to its `System.Logger`.
#[uniffi::export(callback_interface)]
pub trait NativeLogSink: Send + Sync {
    /// `logger`: its position in `log_loggers()`; `level`: 1 ERROR, 2 WARN, 3 INFO, 4 DEBUG,
    /// 5 TRACE; `line`: the message, then the fields as `key=value` (`ffi::log_line`).
    fn log(&self, logger: i32, level: i32, line: String);
}

/// The core's logger names, in the order `NativeLogSink::log` numbers them.
#[uniffi::export]
pub fn log_loggers() -> Vec<String> {
    LOGGERS.iter().map(|l| l.to_string()).collect()
}

/// Sets the core's level of `logger` (or of every one, `"zkrecipes"`) by the level's name.
#[uniffi::export]
pub fn set_log_level(logger: String, level: String) -> Result<()> {
    let level = LogLevel::parse(&level)?;
    if !log::set_level(&logger, level) {
        return Err(NativeError::Zk {
            code: "INVALID_ARGUMENT".into(),
            detail: format!("no zkrecipes logger is named {logger:?}"),
        });
    }
    Ok(())
}

/// Forwards the events to `sink` from now on; `false` if the process had another `tracing`
/// dispatcher for the library already.
#[uniffi::export]
pub fn forward_logs(sink: Box<dyn NativeLogSink>) -> bool {
    let sink: Arc<dyn NativeLogSink> = Arc::from(sink);
    log::forward_to(Arc::new(move |record: LogRecord| {
        let logger = log::logger_number(record.logger);
        sink.log(logger as i32, record.level as i32, log_line(&record));
    }))
}

/// Waits until the events emitted so far are logged, `timeout_ms` at the most; `false` then.
#[uniffi::export]
pub fn flush_logs(timeout_ms: f64) -> Result<bool> {
    Ok(log::flush(timeout_setting("timeout", timeout_ms, "ms")?))
}
