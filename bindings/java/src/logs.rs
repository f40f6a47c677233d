//! The library's events in Java's `System.Logger` (`Logs.java`): Java sets the core's level of
//! each logger from its own loggers' `isLoggable`, so that an event nobody would see never
//! crosses into the JVM, and the core's delivery thread hands each event to `Native.log`
//! (`callbacks::log`).

use std::sync::Arc;

use jni::objects::JString;
use zkrecipes::ffi::log::{self, LogLevel};
use zkrecipes::ffi::timeout_setting;

use crate::callbacks;
use crate::export::export;
use crate::strings::string;

export! {
    /// `logger`: one of the core's (`Native.names(6)`) or `"zkrecipes"` for all; `level`: a
    /// level's name (`LogLevel::parse`), the most verbose one the host's logger takes.
    fn Java_io_zkrecipes_Native_logLevel<'l>(env; logger: JString<'l>, level: JString<'l>) -> () {
        let logger = string(env, &logger)?;
        let level = LogLevel::parse(&string(env, &level)?)?;
        if !log::set_level(&logger, level) {
            return Err(zkrecipes::Error::new(
                zkrecipes::ErrorCode::InvalidArgument,
                format!("no zkrecipes logger is named {logger:?}"),
            )
            .into());
        }
        Ok(())
    }
}

export! {
    /// Forwards the events from now on; `false` if the process had another `tracing`
    /// dispatcher for the library already (then nothing reaches Java).
    fn Java_io_zkrecipes_Native_logForward<'l>(_env; ) -> bool {
        Ok(log::forward_to(Arc::new(callbacks::log)))
    }
}

export! {
    /// Waits until the events emitted so far are logged, `seconds` at the most; `false` then.
    fn Java_io_zkrecipes_Native_logFlush<'l>(_env; seconds: f64) -> bool {
        Ok(log::flush(timeout_setting("timeout", seconds, "s")?))
    }
}
