//! Where the recipes' `tracing` events go: one target per recipe (`zkrecipes::lock`, …), which
//! every binding maps to its language's logger names (`zkrecipes.lock`). A `tracing` target is
//! part of the event's static metadata, so an event whose recipe is a value picks its target
//! through `recipe_event!`.

/// The recipe an event or metric is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Recipe {
    Lock,
    Semaphore,
    Queue,
    WorkQueue,
    Election,
    Latch,
    Barrier,
    Cache,
    Counter,
    Group,
    Discovery,
}

/// Every target the library emits on, in the order the bindings list their loggers.
pub const TARGETS: &[&str] = &[
    "zkrecipes::session",
    "zkrecipes::request",
    "zkrecipes::lock",
    "zkrecipes::semaphore",
    "zkrecipes::queue",
    "zkrecipes::work_queue",
    "zkrecipes::election",
    "zkrecipes::latch",
    "zkrecipes::barrier",
    "zkrecipes::cache",
    "zkrecipes::counter",
    "zkrecipes::group",
    "zkrecipes::discovery",
    "zkrecipes::security",
];

/// `tracing::event!` at `$level` (an identifier: `INFO`) on the target of `$recipe`.
macro_rules! recipe_event {
    ($recipe:expr, $level:ident, $($arg:tt)+) => {{
        use $crate::observe::Recipe as R;
        use ::tracing::Level;
        match $recipe {
            R::Lock => ::tracing::event!(target: "zkrecipes::lock", Level::$level, $($arg)+),
            R::Semaphore => ::tracing::event!(target: "zkrecipes::semaphore", Level::$level, $($arg)+),
            R::Queue => ::tracing::event!(target: "zkrecipes::queue", Level::$level, $($arg)+),
            R::WorkQueue => ::tracing::event!(target: "zkrecipes::work_queue", Level::$level, $($arg)+),
            R::Election => ::tracing::event!(target: "zkrecipes::election", Level::$level, $($arg)+),
            R::Latch => ::tracing::event!(target: "zkrecipes::latch", Level::$level, $($arg)+),
            R::Barrier => ::tracing::event!(target: "zkrecipes::barrier", Level::$level, $($arg)+),
            R::Cache => ::tracing::event!(target: "zkrecipes::cache", Level::$level, $($arg)+),
            R::Counter => ::tracing::event!(target: "zkrecipes::counter", Level::$level, $($arg)+),
            R::Group => ::tracing::event!(target: "zkrecipes::group", Level::$level, $($arg)+),
            R::Discovery => ::tracing::event!(target: "zkrecipes::discovery", Level::$level, $($arg)+),
        }
    }};
}
pub(crate) use recipe_event;

/// A `tracing` span at info on the target of `$recipe` (as `recipe_event!` for events).
macro_rules! recipe_span {
    ($recipe:expr, $($arg:tt)+) => {{
        use $crate::observe::Recipe as R;
        match $recipe {
            R::Lock => ::tracing::info_span!(target: "zkrecipes::lock", $($arg)+),
            R::Semaphore => ::tracing::info_span!(target: "zkrecipes::semaphore", $($arg)+),
            R::Queue => ::tracing::info_span!(target: "zkrecipes::queue", $($arg)+),
            R::WorkQueue => ::tracing::info_span!(target: "zkrecipes::work_queue", $($arg)+),
            R::Election => ::tracing::info_span!(target: "zkrecipes::election", $($arg)+),
            R::Latch => ::tracing::info_span!(target: "zkrecipes::latch", $($arg)+),
            R::Barrier => ::tracing::info_span!(target: "zkrecipes::barrier", $($arg)+),
            R::Cache => ::tracing::info_span!(target: "zkrecipes::cache", $($arg)+),
            R::Counter => ::tracing::info_span!(target: "zkrecipes::counter", $($arg)+),
            R::Group => ::tracing::info_span!(target: "zkrecipes::group", $($arg)+),
            R::Discovery => ::tracing::info_span!(target: "zkrecipes::discovery", $($arg)+),
        }
    }};
}
pub(crate) use recipe_span;

/// Whole milliseconds, as the events' `waited_ms` and `held_ms` fields give a duration.
pub(crate) fn millis(duration: std::time::Duration) -> u64 {
    duration.as_millis().min(u64::MAX as u128) as u64
}

/// A session id as ZooKeeper's own logs write it: `0x` and lower-case hex.
pub(crate) fn session_hex(id: i64) -> String {
    format!("{id:#x}")
}
