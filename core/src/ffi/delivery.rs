//! The one thread on which the bindings' hosts are called back with what the library tells
//! them besides answers: log records (`ffi::log`) and metric recordings (`ffi::metrics`).
//!
//! Why a thread of its own: a record is made on a runtime thread, inside a recipe's bookkeeping
//! or on a caller's thread; host code (a Python handler, a Java appender, a JavaScript
//! subscriber, an OpenTelemetry meter) that calls back into the library, blocks, or takes its
//! interpreter's lock there could stall the recipes or deadlock. Here the host is called in the
//! order things happened, one at a time; the queue is bounded, and what a stalled host could not
//! take is refused (the caller counts it).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Calls a stalled host may leave waiting before newer ones are refused.
const QUEUE_LIMIT: usize = 10_000;

/// The name of the thread that calls the hosts.
pub(crate) const DELIVERY_THREAD: &str = "zkrecipes-log";

type Call = Box<dyn FnOnce() + Send>;

struct Queue {
    calls: Mutex<VecDeque<Call>>,
    ready: Condvar,
    queued: AtomicU64,
    /// Calls taken from the queue and made, for `flush`.
    made: AtomicU64,
}

static QUEUE: OnceLock<Arc<Queue>> = OnceLock::new();

fn queue() -> &'static Arc<Queue> {
    QUEUE.get_or_init(|| {
        let queue = Arc::new(Queue {
            calls: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            queued: AtomicU64::new(0),
            made: AtomicU64::new(0),
        });
        let calling = queue.clone();
        std::thread::Builder::new()
            .name(DELIVERY_THREAD.into())
            .spawn(move || run(&calling))
            .expect("a thread for calling the bindings' hosts");
        queue
    })
}

/// Makes `call` on the delivery thread after every call queued before it; `false` (and
/// `call` dropped) when the queue is full.
pub(crate) fn later(call: impl FnOnce() + Send + 'static) -> bool {
    let queue = queue();
    let mut calls = queue.calls.lock().unwrap();
    if calls.len() >= QUEUE_LIMIT {
        return false;
    }
    calls.push_back(Box::new(call));
    queue.queued.fetch_add(1, Ordering::SeqCst);
    queue.ready.notify_one();
    true
}

/// Waits until every call queued before this one has been made, or `timeout` passed (`false`).
/// On the delivery thread itself (a host's handler that flushes) it answers `false` at once:
/// it would wait for itself.
pub(crate) fn flush(timeout: Duration) -> bool {
    let Some(queue) = QUEUE.get() else {
        return true;
    };
    if std::thread::current().name() == Some(DELIVERY_THREAD) {
        return false;
    }
    let target = queue.queued.load(Ordering::SeqCst);
    let until = Instant::now() + timeout;
    while queue.made.load(Ordering::SeqCst) < target {
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

fn run(queue: &Queue) {
    loop {
        let call = {
            let mut calls = queue.calls.lock().unwrap();
            loop {
                if let Some(call) = calls.pop_front() {
                    break call;
                }
                calls = queue.ready.wait(calls).unwrap();
            }
        };
        // A host callback that panics (a binding's bug) must not end delivery for good.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call));
        queue.made.fetch_add(1, Ordering::SeqCst);
    }
}
