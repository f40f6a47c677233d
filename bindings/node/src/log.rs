//! The library's events to JavaScript (`ffi::log`): `lib/logging.js` hands one function, called
//! on the JavaScript thread with each record as a message object `{ level, logger, message,
//! fields, dropped }` (made here, once), and says which loggers' levels to forward; it then
//! publishes each message on `diagnostics_channel` and to the configured logger.
//!
//! The records come from the core's delivery thread through a threadsafe function that is weak
//! (records on their way never keep the process alive) and called without blocking, so that a
//! busy event loop never holds up the delivery thread: past `QUEUE_LIMIT` records waiting for
//! the event loop, newer ones are dropped, counted, and told before the next one by a warning
//! on the root logger (`LogRecord::dropped_warning`), as the core tells its own drops.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use zkrecipes::ffi::log::{self, LogLevel, LogRecord};
use zkrecipes::ffi::{integer_field, timeout_setting};

use crate::errors::{promise, IntoJs};
use crate::ordered::Ordered;

/// Records the event loop may leave waiting before newer ones are dropped (the core's own
/// queue holds as many again).
const QUEUE_LIMIT: usize = 10_000;

/// What crosses to JavaScript: a record, or the marker of a `flushLogs` (its number), which
/// follows every record handed over before it.
pub enum Delivery {
    Record(LogRecord),
    Flushed(u32),
}

type Deliver = ThreadsafeFunction<Delivery, (), Delivery, Status, false, true, QUEUE_LIMIT>;

/// The threadsafe function of the latest `forwardLogs`, for the flush markers.
static DELIVER: Mutex<Option<Arc<Deliver>>> = Mutex::new(None);
/// Records the event loop could not take since the last one it took.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// JavaScript's integers are exact up to 2^53 - 1: a larger one stays text.
const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

impl ToNapiValue for Delivery {
    unsafe fn to_napi_value(env: sys::napi_env, delivery: Self) -> napi::Result<sys::napi_value> {
        let record = match delivery {
            Delivery::Flushed(marker) => return unsafe { u32::to_napi_value(env, marker) },
            Delivery::Record(record) => record,
        };
        let fields = record
            .fields
            .into_iter()
            .map(|(name, text)| match integer_field(name, &text) {
                Some(n) if n.abs() <= MAX_SAFE_INTEGER => (name, Either::A(n as f64)),
                _ => (name, Either::B(text)),
            })
            .collect();
        let mut message = Object::new(&Env::from_raw(env))?;
        message.set("level", record.level.as_str().to_ascii_lowercase())?;
        message.set("logger", record.logger)?;
        message.set("message", record.message)?;
        message.set("fields", Ordered::<Either<f64, String>>(fields))?;
        message.set("dropped", record.dropped as f64)?;
        unsafe { Object::to_napi_value(env, message) }
    }
}

/// Makes `deliver` the receiver of every record from now on (replacing an earlier one).
#[napi(
    ts_args_type = "deliver: (message: { level: string, logger: string, message: string, fields: Record<string, string | number>, dropped: number } | number) => void"
)]
pub fn forward_logs(deliver: Deliver) {
    let deliver = Arc::new(deliver);
    *DELIVER.lock().unwrap() = Some(deliver.clone());
    log::forward_to(Arc::new(move |mut record: LogRecord| {
        let call = |record| {
            deliver.call(
                Delivery::Record(record),
                ThreadsafeFunctionCallMode::NonBlocking,
            )
        };
        let carried = DROPPED.swap(0, Ordering::Relaxed);
        if carried > 0 {
            // Told as the core tells what it dropped: a warning of its own, then the record.
            if call(LogRecord::dropped_warning(carried)) != Status::Ok {
                DROPPED.fetch_add(carried + 1, Ordering::Relaxed);
                return;
            }
            record.dropped += carried;
        }
        if call(record) != Status::Ok {
            // Full (or the environment is closing): this record is lost, and counted.
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }));
}

/// A level's name as the core reads it (`ffi::log::LogLevel::parse`), in lower case.
#[napi]
pub fn log_level_name(env: &Env, level: String) -> napi::Result<String> {
    Ok(name_of(LogLevel::parse(&level).into_js(env)?))
}

/// Sets the level the core forwards for `logger` (or `"zkrecipes"`: every one); false for an
/// unknown logger.
#[napi]
pub fn set_log_level(env: &Env, logger: String, level: String) -> napi::Result<bool> {
    let level = LogLevel::parse(&level).into_js(env)?;
    Ok(log::set_level(&logger, level))
}

/// The level the core forwards for `logger` now; null for an unknown logger.
#[napi]
pub fn active_log_level(logger: String) -> Option<String> {
    log::level(&logger).map(name_of)
}

/// Resolves true once every record emitted before the call has been handed to the event loop
/// and the marker `marker` (if any) follows them (`lib/logging.js` then waits for it); false if
/// `timeoutMs` passed first.
#[napi(ts_return_type = "Promise<boolean>")]
pub fn flush_logs<'env>(
    env: &'env Env,
    marker: Option<u32>,
    timeout_ms: f64,
) -> napi::Result<PromiseRaw<'env, bool>> {
    let timeout = timeout_setting("timeoutMs", timeout_ms, "ms").into_js(env)?;
    let flushing = async move {
        let sent = tokio::task::spawn_blocking(move || {
            let deliver = DELIVER.lock().unwrap().clone();
            // Blocking: the marker must not be dropped, and the event loop is free (it awaits this).
            // Records this binding dropped with none after them to tell it are told first.
            let mark = |marker| {
                deliver.is_some_and(|deliver| {
                    let blocking = |delivery| {
                        deliver.call(delivery, ThreadsafeFunctionCallMode::Blocking) == Status::Ok
                    };
                    let carried = DROPPED.swap(0, Ordering::Relaxed);
                    (carried == 0
                        || blocking(Delivery::Record(LogRecord::dropped_warning(carried))))
                        && blocking(Delivery::Flushed(marker))
                })
            };
            log::flush(timeout) && marker.is_none_or(mark)
        })
        .await;
        Ok(sent.unwrap_or(false))
    };
    promise(env, flushing, |sent| sent)
}

fn name_of(level: LogLevel) -> String {
    level.as_str().to_ascii_lowercase()
}
