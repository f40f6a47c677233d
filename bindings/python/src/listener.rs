//! Core events to Python callables.
//!
//! Callbacks run on one library thread (not a runtime thread), in event
//! order, so a listener may itself call blocking zkrecipes methods. An
//! exception from a listener goes to `sys.unraisablehook`; the recipe goes on.

use std::sync::mpsc;
use std::sync::OnceLock;

use pyo3::prelude::*;
use tokio::sync::broadcast;
use tokio::task::AbortHandle;

type Delivery = Box<dyn FnOnce() + Send>;

fn dispatcher() -> &'static mpsc::Sender<Delivery> {
    static DISPATCHER: OnceLock<mpsc::Sender<Delivery>> = OnceLock::new();
    DISPATCHER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Delivery>();
        std::thread::Builder::new()
            .name("zkrecipes-listeners".into())
            .spawn(move || {
                for deliver in rx {
                    deliver();
                }
            })
            .expect("listener thread");
        tx
    })
}

/// A registered listener; `cancel()` stops deliveries.
#[pyclass(module = "zkrecipes._native")]
pub struct Subscription {
    task: AbortHandle,
}

#[pymethods]
impl Subscription {
    fn cancel(&self) {
        self.task.abort();
    }
}

/// Calls `callback(name, detail)` for every event of `events`.
pub fn forward<E>(
    mut events: broadcast::Receiver<E>,
    callback: Py<PyAny>,
    describe: fn(&E) -> (String, Option<String>),
) -> Subscription
where
    E: Clone + Send + 'static,
{
    let callback = std::sync::Arc::new(callback);
    let task = zkrecipes::runtime::runtime().spawn(async move {
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            let (name, detail) = describe(&event);
            let callback = callback.clone();
            let _ = dispatcher().send(Box::new(move || {
                Python::attach(|py| {
                    if let Err(err) = callback.call1(py, (name, detail)) {
                        err.write_unraisable(py, Some(callback.bind(py)));
                    }
                })
            }));
        }
    });
    Subscription {
        task: task.abort_handle(),
    }
}
