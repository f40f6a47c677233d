//! The library's events as a binding hands them to its language's logging: one logger per
//! recipe (`zkrecipes.lock`, `zkrecipes.session`, …), the host's levels known here so that an
//! event nobody would see costs no crossing into the host language, and delivery on the thread
//! that calls the hosts (`ffi::delivery`, which says why). What a stalled host could not take
//! is counted: the next record handed over carries the count (`dropped`) and comes after a
//! warning of its own on the library's root logger (`ROOT_LOGGER`), the same in every language.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// The logger names, in the order `set_level` indexes them: `zkrecipes.<recipe>` for each
/// target of `metrics::TARGETS`, and `zkrecipes.zookeeper` for the session crate's own events.
pub const LOGGERS: &[&str] = &[
    "zkrecipes.session",
    "zkrecipes.request",
    "zkrecipes.lock",
    "zkrecipes.semaphore",
    "zkrecipes.queue",
    "zkrecipes.work_queue",
    "zkrecipes.election",
    "zkrecipes.latch",
    "zkrecipes.barrier",
    "zkrecipes.cache",
    "zkrecipes.counter",
    "zkrecipes.group",
    "zkrecipes.discovery",
    "zkrecipes.security",
    "zkrecipes.zookeeper",
];

/// A level as the bindings pass it: the most verbose level a logger shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum LogLevel {
    Off = 0,
    Error = 1,
    Warn = 2,
    Info = 3,
    Debug = 4,
    Trace = 5,
}

impl LogLevel {
    fn of(level: &Level) -> LogLevel {
        match *level {
            Level::ERROR => LogLevel::Error,
            Level::WARN => LogLevel::Warn,
            Level::INFO => LogLevel::Info,
            Level::DEBUG => LogLevel::Debug,
            Level::TRACE => LogLevel::Trace,
        }
    }

    /// `"ERROR"`, `"WARN"`, `"INFO"`, `"DEBUG"`, `"TRACE"` (`"OFF"`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Off => "OFF",
            LogLevel::Error => "ERROR",
            LogLevel::Warn => "WARN",
            LogLevel::Info => "INFO",
            LogLevel::Debug => "DEBUG",
            LogLevel::Trace => "TRACE",
        }
    }

    /// A level by name, as users write it in every language and in `ZKRECIPES_LOG`: `error`,
    /// `warn` (or `warning`), `info`, `debug`, `trace`, `off`, in any case; else
    /// `INVALID_ARGUMENT` naming the value and the choices.
    pub fn parse(name: &str) -> crate::Result<LogLevel> {
        match name.trim().to_ascii_lowercase().as_str() {
            "off" => Ok(LogLevel::Off),
            "error" => Ok(LogLevel::Error),
            "warn" | "warning" => Ok(LogLevel::Warn),
            "info" => Ok(LogLevel::Info),
            "debug" => Ok(LogLevel::Debug),
            "trace" => Ok(LogLevel::Trace),
            _ => Err(crate::Error::invalid_argument(format!(
                "log level must be one of off, error, warn, info, debug, trace; got {name:?}"
            ))),
        }
    }

    fn from_u8(value: u8) -> LogLevel {
        match value {
            0 => LogLevel::Off,
            1 => LogLevel::Error,
            2 => LogLevel::Warn,
            3 => LogLevel::Info,
            4 => LogLevel::Debug,
            _ => LogLevel::Trace,
        }
    }
}

/// The parent of every logger: the warning that events were dropped is told on it (so that a
/// handler on the root of the library's loggers, or on the host's root, sees it whichever
/// loggers' events were lost).
pub const ROOT_LOGGER: &str = "zkrecipes";

/// One event, as a binding's sink receives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// One of `LOGGERS`, or `ROOT_LOGGER` for the warning that events were dropped.
    pub logger: &'static str,
    pub level: LogLevel,
    pub message: String,
    /// The structured fields (`path`, `fencing_token`, `waited_ms`, `session`, `reason`, …),
    /// each as text.
    pub fields: Vec<(&'static str, String)>,
    /// Events dropped since the previous record because the host did not keep up.
    pub dropped: u64,
}

/// A logger as the bindings that number them say it: its place in `LOGGERS`, and
/// `LOGGERS.len()` for `ROOT_LOGGER` (a host keeps its loggers in that order, the root last).
pub fn logger_number(logger: &str) -> usize {
    LOGGERS
        .iter()
        .position(|l| *l == logger)
        .unwrap_or(LOGGERS.len())
}

impl LogRecord {
    /// The warning that `dropped` events were lost because the host did not keep up.
    pub fn dropped_warning(dropped: u64) -> LogRecord {
        LogRecord {
            logger: ROOT_LOGGER,
            level: LogLevel::Warn,
            message: format!(
                "{dropped} zkrecipes log events were dropped: the log handlers did not keep up"
            ),
            fields: vec![("dropped", dropped.to_string())],
            dropped: 0,
        }
    }
}

/// A binding's delivery of one record to its language's logging.
pub type LogSink = Arc<dyn Fn(LogRecord) + Send + Sync>;

static LEVELS: [AtomicU8; LOGGERS.len()] = [const { AtomicU8::new(0) }; LOGGERS.len()];
/// The most verbose level of any logger: the test every event passes first.
static MOST_VERBOSE: AtomicU8 = AtomicU8::new(0);

/// Sets the level of `logger` (one of `LOGGERS`, or `"zkrecipes"` for every one); `false` for
/// an unknown name. Called by a binding whenever it learns its host's level.
pub fn set_level(logger: &str, level: LogLevel) -> bool {
    let indices: Vec<usize> = match logger {
        "zkrecipes" => (0..LOGGERS.len()).collect(),
        _ => match LOGGERS.iter().position(|l| *l == logger) {
            Some(at) => vec![at],
            None => return false,
        },
    };
    for at in indices {
        LEVELS[at].store(level as u8, Ordering::Relaxed);
    }
    let most = LEVELS
        .iter()
        .map(|l| l.load(Ordering::Relaxed))
        .max()
        .unwrap_or(0);
    MOST_VERBOSE.store(most, Ordering::Relaxed);
    true
}

/// The level `logger` has now.
pub fn level(logger: &str) -> Option<LogLevel> {
    let at = LOGGERS.iter().position(|l| *l == logger)?;
    Some(LogLevel::from_u8(LEVELS[at].load(Ordering::Relaxed)))
}

/// The most verbose level a host's logger shows, asking `shows` from `Trace` up (`Off` if it
/// shows not even `Error`): what a binding passes to `set_level` after asking its language's
/// logging, whose own test (`isEnabledFor`, `isTraceEnabled`, …) then decides, not a copy of it.
pub fn most_verbose_shown(mut shows: impl FnMut(LogLevel) -> bool) -> LogLevel {
    use LogLevel::*;
    [Trace, Debug, Info, Warn, Error]
        .into_iter()
        .find(|level| shows(*level))
        .unwrap_or(Off)
}

/// The logger of a `tracing` target: `zkrecipes::lock` → `zkrecipes.lock`; the session crate's
/// targets → `zkrecipes.zookeeper`; `None` for anything else.
fn logger_of(target: &str) -> Option<usize> {
    if let Some(recipe) = target.strip_prefix("zkrecipes::") {
        // A module's own target (`zkrecipes::client::session`) counts as its recipe's.
        let recipe = match recipe.split("::").next().unwrap_or(recipe) {
            "client" | "connect_diagnosis" | "sasl_probe" => "session",
            "lock" if recipe.contains("multi_lock") => "lock",
            other => other,
        };
        return LOGGERS
            .iter()
            .position(|l| l.strip_prefix("zkrecipes.") == Some(recipe));
    }
    target
        .starts_with("zookeeper_client")
        .then_some(LOGGERS.len() - 1)
}

/// The level an event is shown at: the session crate's own debug events (every packet sent
/// and answered) are trace here, below the library's debug events of each request it sends.
fn shown_level(at: usize, level: &Level) -> LogLevel {
    match LogLevel::of(level) {
        LogLevel::Debug if LOGGERS[at] == "zkrecipes.zookeeper" => LogLevel::Trace,
        level => level,
    }
}

fn enabled(target: &str, level: &Level) -> bool {
    if LogLevel::of(level) as u8 > MOST_VERBOSE.load(Ordering::Relaxed) {
        return false;
    }
    logger_of(target)
        .is_some_and(|at| shown_level(at, level) as u8 <= LEVELS[at].load(Ordering::Relaxed))
}

/// Where records go: the binding's sink, replaced by a later `forward_to`.
static SINK: Mutex<Option<LogSink>> = Mutex::new(None);
/// Records refused since the last one accepted (the host did not keep up).
static DROPPED: AtomicU64 = AtomicU64::new(0);
static INSTALLED: OnceLock<bool> = OnceLock::new();

/// Forwards the library's events to `sink` from now on (replacing an earlier sink), on the
/// delivery thread (`ffi::delivery`). The first call makes this the process's `tracing`
/// dispatcher for the library's copy of `tracing`; `false` if something else already was (a
/// Rust program with its own subscriber, which then gets the events itself).
pub fn forward_to(sink: LogSink) -> bool {
    *SINK.lock().unwrap() = Some(sink);
    *INSTALLED.get_or_init(|| tracing::subscriber::set_global_default(Forwarder).is_ok())
}

/// Waits until every event emitted before this call has been handed to the sink (or the
/// deadline passes): what a test or a shutdown calls before reading the host's logs. Events
/// dropped with no later record to tell them are told now, by their warning. From the sink
/// itself it answers `false` at once (it would wait for itself).
pub fn flush(timeout: std::time::Duration) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    if !super::delivery::flush(timeout) {
        return false;
    }
    let dropped = DROPPED.swap(0, Ordering::Relaxed);
    let sink = SINK.lock().unwrap().clone();
    match sink {
        Some(sink) if dropped > 0 => {
            if !super::delivery::later(move || sink(LogRecord::dropped_warning(dropped))) {
                DROPPED.fetch_add(dropped, Ordering::Relaxed);
            }
            super::delivery::flush(deadline.saturating_duration_since(std::time::Instant::now()))
        }
        _ => true,
    }
}

fn enqueue(mut record: LogRecord) {
    let Some(sink) = SINK.lock().unwrap().clone() else {
        return;
    };
    // The count is taken as the record is handed over: drops while it waited in the queue
    // are told with it, without waiting for another event.
    let delivered = super::delivery::later(move || {
        record.dropped = DROPPED.swap(0, Ordering::Relaxed);
        if record.dropped > 0 {
            sink(LogRecord::dropped_warning(record.dropped));
        }
        sink(record)
    });
    if !delivered {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

/// The process's dispatcher once a binding forwards: every event passes the level table;
/// spans are not kept (the library's waits are reported as events when they end).
struct Forwarder;

impl Subscriber for Forwarder {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        match metadata.is_span() || logger_of(metadata.target()).is_none() {
            true => Interest::never(),
            // Asked at every event: the host's levels change while the process runs.
            false => Interest::sometimes(),
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event() && enabled(metadata.target(), metadata.level())
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        let Some(at) = logger_of(metadata.target()) else {
            return;
        };
        let mut fields = Fields::default();
        event.record(&mut fields);
        enqueue(LogRecord {
            logger: LOGGERS[at],
            level: shown_level(at, metadata.level()),
            message: fields.message,
            fields: fields.fields,
            dropped: 0,
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[derive(Default)]
struct Fields {
    message: String,
    fields: Vec<(&'static str, String)>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message.push_str(value),
            name => self.fields.push((name, value.to_string())),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "message" => {
                let _ = write!(self.message, "{value:?}");
            }
            name => self.fields.push((name, format!("{value:?}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_map_to_loggers_and_levels_gate_them() {
        assert_eq!(
            logger_of("zkrecipes::lock").map(|at| LOGGERS[at]),
            Some("zkrecipes.lock")
        );
        assert_eq!(
            logger_of("zkrecipes::work_queue").map(|at| LOGGERS[at]),
            Some("zkrecipes.work_queue")
        );
        assert_eq!(
            logger_of("zookeeper_client::session").map(|at| LOGGERS[at]),
            Some("zkrecipes.zookeeper")
        );
        assert_eq!(logger_of("hyper::proto"), None);
        assert_eq!(
            logger_of("zkrecipes::client::session").map(|at| LOGGERS[at]),
            Some("zkrecipes.session")
        );
        for target in crate::observe::TARGETS {
            assert!(logger_of(target).is_some(), "{target}");
        }
        assert!(set_level("zkrecipes", LogLevel::Warn));
        assert!(set_level("zkrecipes.lock", LogLevel::Debug));
        assert!(!set_level("zkrecipes.nothing", LogLevel::Debug));
        assert!(enabled("zkrecipes::lock", &Level::DEBUG));
        assert!(!enabled("zkrecipes::queue", &Level::INFO));
        assert!(enabled("zkrecipes::queue", &Level::WARN));
        assert!(set_level("zkrecipes.zookeeper", LogLevel::Debug));
        assert!(!enabled("zookeeper_client::session", &Level::DEBUG));
        assert!(set_level("zkrecipes.zookeeper", LogLevel::Trace));
        assert!(enabled("zookeeper_client::session", &Level::DEBUG));
        assert_eq!(level("zkrecipes.queue"), Some(LogLevel::Warn));
        set_level("zkrecipes", LogLevel::Off);
        assert!(!enabled("zkrecipes::lock", &Level::ERROR));
        assert_eq!(LogLevel::parse(" Warning").unwrap(), LogLevel::Warn);
        assert!(LogLevel::parse("verbose")
            .unwrap_err()
            .message()
            .contains("one of off, error"));
    }

    #[test]
    fn a_host_threshold_becomes_the_most_verbose_level_it_shows() {
        // A host that shows from warnings up (Python's WARNING, say).
        assert_eq!(most_verbose_shown(|l| l <= LogLevel::Warn), LogLevel::Warn);
        assert_eq!(most_verbose_shown(|_| true), LogLevel::Trace);
        assert_eq!(most_verbose_shown(|_| false), LogLevel::Off);
    }
}
