//! A client's metric recordings, each handed to a Python callable as it happens, for the
//! adapters to other metrics APIs (`zkrecipes.opentelemetry`): a duration histogram can only be
//! fed value by value. The core queues them (`ffi::recordings`) and calls back on its delivery
//! thread, in order; this file attaches that thread to Python and ends the feed.
//!
//! A feed ends with its `close()` (what was recorded before it still arrives, nothing after), or
//! with its client: once the client is closed nothing new can start, but the feed goes on until
//! the client object is gone (`Feeds` holds it as long), because a close has consequences recorded after it returns (a lock's
//! monitor task ends the hold the close ended, a moment later): cut there, a dashboard would show
//! that lock held forever. At interpreter exit the delivery thread stops (`host_calls`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use zkrecipes::ffi::recordings::{flush_recordings, forward_recordings, recordings_dropped};
use zkrecipes::ffi::timeout_setting;
use zkrecipes::metrics::{
    MetricsSnapshot as CoreSnapshot, MetricsSubscription, Recorded, Recording,
};
use zkrecipes::Client;

use crate::errors::IntoPyResult;
use crate::host_calls;
use crate::metrics::MetricsSnapshot;

/// What lets a recording through to Python, shared with the sink the core calls.
struct Gate {
    /// Cleared by `close()`: recordings still queued for the delivery thread are not delivered.
    open: AtomicBool,
    /// Held while a recording is delivered, so that `close()` can wait for the one in progress
    /// and nothing reaches Python after it returns.
    delivering: Mutex<()>,
}

/// One client's recordings going to one callable.
pub struct Feed {
    /// Dropped to stop queueing (the core's observer is removed with it).
    subscription: Mutex<Option<MetricsSubscription>>,
    gate: Arc<Gate>,
    /// Set when the client has closed: nothing new is recorded but the close's own consequences.
    client_closed: AtomicBool,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Feed {
    /// Stops queueing this client's recordings; those already queued are still delivered.
    fn stop(&self) {
        drop(locked(&self.subscription).take());
    }

    fn is_stopped(&self) -> bool {
        locked(&self.subscription).is_none()
    }

    fn is_live(&self) -> bool {
        !self.client_closed.load(Ordering::SeqCst) && !self.is_stopped()
    }
}

/// The feeds of one client: held as long as the client is (an adapter whose handle nobody kept
/// still feeds), told when it closes.
#[derive(Default)]
pub struct Feeds(Mutex<Vec<Arc<Feed>>>);

impl Feeds {
    /// Called once the client's close has finished.
    pub fn client_closed(&self) {
        for feed in locked(&self.0).iter() {
            feed.client_closed.store(true, Ordering::SeqCst);
        }
    }

    /// Starts `deliver(name, attributes, value)` for every recording of `client` from now on:
    /// `value` an `int` added to a counter or an up/down counter, or a `float` of seconds for a
    /// histogram. The feed's `initial` is what the client had recorded before.
    pub fn forward(&self, client: &Client, deliver: Py<PyAny>) -> MetricsFeed {
        let gate = Arc::new(Gate {
            open: AtomicBool::new(true),
            delivering: Mutex::new(()),
        });
        let deliver = Arc::new(deliver);
        let sink_gate = gate.clone();
        let subscription = forward_recordings(
            client,
            Arc::new(move |recording: Recording| {
                let _delivering = locked(&sink_gate.delivering);
                if !sink_gate.open.load(Ordering::SeqCst) {
                    return;
                }
                host_calls::attached(|py| {
                    let delivered =
                        arguments(py, &recording).and_then(|args| deliver.call1(py, args));
                    // A raising meter loses this recording only; the feed goes on.
                    if let Err(err) = delivered {
                        err.write_unraisable(py, Some(deliver.bind(py)));
                    }
                });
            }),
        );
        let initial = subscription.initial().clone();
        let feed = Arc::new(Feed {
            subscription: Mutex::new(Some(subscription)),
            gate,
            client_closed: AtomicBool::new(false),
        });
        {
            let mut feeds = locked(&self.0);
            feeds.retain(|feed| !feed.is_stopped());
            feeds.push(feed.clone());
        }
        // A client closed before (or while) the feed was added: its close did not tell it.
        if client.is_closed() {
            feed.client_closed.store(true, Ordering::SeqCst);
        }
        MetricsFeed { feed, initial }
    }
}

/// `(name, attributes, value)` of a recording, as `deliver` takes them.
fn arguments<'py>(
    py: Python<'py>,
    recording: &Recording,
) -> PyResult<(&'static str, Bound<'py, PyDict>, Bound<'py, PyAny>)> {
    let attributes = PyDict::new(py);
    for (name, value) in &recording.attributes {
        attributes.set_item(*name, value)?;
    }
    let value = match recording.value {
        Recorded::Add(n) => n.into_pyobject(py)?.into_any(),
        Recorded::Seconds(seconds) => seconds.into_pyobject(py)?.into_any(),
    };
    Ok((recording.metric.name, attributes, value))
}

/// A client's recordings going to a callable (`NativeClient.forward_recordings`).
#[pyclass(module = "zkrecipes._native", frozen)]
pub struct MetricsFeed {
    feed: Arc<Feed>,
    initial: CoreSnapshot,
}

#[pymethods]
impl MetricsFeed {
    /// What the client had recorded when the feed started, taken at the same moment: the
    /// counters and up/down counters to start from (a histogram's past values are gone).
    #[getter]
    fn initial(&self) -> MetricsSnapshot {
        self.initial.clone().into()
    }

    /// False after `close()`, and once the client has closed (its close's last consequences may
    /// still arrive: see the module's docs).
    #[getter]
    fn is_live(&self) -> bool {
        self.feed.is_live()
    }

    /// Ends the feed: what the client recorded before reaches the callable, waiting up to
    /// `timeout` seconds for the delivery thread (with the GIL released: delivery needs it);
    /// what it could not deliver by then is dropped, and nothing reaches the callable after
    /// this returns. `False` if something was dropped that way. Called from the callable itself
    /// (on the delivery thread), it does not wait: the rest of the queue waits for it.
    fn close(&self, py: Python<'_>, timeout: f64) -> PyResult<bool> {
        let timeout = timeout_setting("timeout", timeout, "s").into_py_result()?;
        self.feed.stop();
        if host_calls::in_call() {
            self.feed.gate.open.store(false, Ordering::SeqCst);
            return Ok(false);
        }
        let delivered = py.detach(|| flush_recordings(timeout));
        self.feed.gate.open.store(false, Ordering::SeqCst);
        py.detach(|| drop(locked(&self.feed.gate.delivering)));
        Ok(delivered)
    }
}

/// Waits up to `timeout` seconds (with the GIL released) until every recording made before the
/// call has reached its feed's callable; `False` if the deadline came first.
#[pyfunction]
pub fn _flush_recordings(py: Python<'_>, timeout: f64) -> PyResult<bool> {
    let timeout = timeout_setting("timeout", timeout, "s").into_py_result()?;
    Ok(py.detach(|| flush_recordings(timeout)))
}

/// Recordings refused since the process started because the callables did not keep up (the
/// delivery queue was full): every feed's numbers are short by these.
#[pyfunction]
pub fn _recordings_dropped() -> u64 {
    recordings_dropped()
}
