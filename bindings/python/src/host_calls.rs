//! Calls into Python from the core's delivery thread ("zkrecipes-log"), which hands the package
//! its log records (`log.rs`) and a client's metric recordings (`recordings.rs`), and their end
//! at interpreter exit.
//!
//! Attaching a thread to a finalizing interpreter crashes the process, so at exit the package's
//! `atexit` hook (`listener::_shutdown`) lets what is queued through for a moment, then stops
//! these calls and waits for the one in progress, for a moment too: a handler that blocks for
//! good must not keep the process from exiting.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use pyo3::prelude::*;
use zkrecipes::ffi::log;

/// Set at interpreter exit: no call attaches to Python after it.
static SHUTDOWN: AtomicBool = AtomicBool::new(false);
/// Held while a call runs, so that shutdown can wait for the one in progress.
static CALLING: Mutex<()> = Mutex::new(());

/// How long interpreter exit waits for what is still queued (a client's last words when closed
/// at the end of a script) to reach Python, before `logging.shutdown` flushes the handlers; and
/// then, again, for a call in progress to return.
pub const FLUSH_AT_EXIT: Duration = Duration::from_secs(1);

/// Waits until `busy` is free (the call it guards returned), up to `FLUSH_AT_EXIT`. Interpreter
/// exit goes on after that: a call still in progress is in a handler that blocks (a
/// `time.sleep(1000)`, a lock never released), which the process's end cuts short.
pub fn wait_for_call_at_exit(busy: &Mutex<()>) {
    let deadline = std::time::Instant::now() + FLUSH_AT_EXIT;
    while std::time::Instant::now() < deadline {
        match busy.try_lock() {
            Ok(_) | Err(std::sync::TryLockError::Poisoned(_)) => return,
            // std's Mutex has no timed lock; exit is the one place this polls.
            Err(std::sync::TryLockError::WouldBlock) => {
                std::thread::sleep(Duration::from_millis(5))
            }
        }
    }
}

thread_local! {
    /// True on the delivery thread while it runs a call: what waits for deliveries to finish
    /// must not wait there, for itself (a handler or a meter that closes a feed).
    static IN_CALL: Cell<bool> = const { Cell::new(false) };
}

/// Runs `call` attached to Python, unless the interpreter is exiting.
pub fn attached(call: impl FnOnce(Python<'_>)) {
    let _calling = CALLING.lock().unwrap_or_else(|e| e.into_inner());
    if SHUTDOWN.load(Ordering::SeqCst) {
        return;
    }
    IN_CALL.with(|flag| flag.set(true));
    Python::attach(call);
    IN_CALL.with(|flag| flag.set(false));
}

/// Whether this thread is in a call made by `attached` (that is, the delivery thread's).
pub fn in_call() -> bool {
    IN_CALL.with(Cell::get)
}

/// At interpreter exit: lets what is queued reach Python (for a moment), then stops the calls
/// and waits for the one in progress (for a moment). The log records and the recordings share
/// the one queue, so the logs' flush waits for both.
pub fn shutdown(py: Python<'_>) {
    py.detach(|| {
        log::flush(FLUSH_AT_EXIT);
        SHUTDOWN.store(true, Ordering::SeqCst);
        wait_for_call_at_exit(&CALLING);
    });
}
