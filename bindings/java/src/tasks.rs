//! Operations in flight, so that Java can cancel one (interrupt, timeout,
//! `CompletableFuture.cancel`) and know when it has really stopped.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use jni::objects::JObject;
use jni::refs::Global;
use tokio::task::AbortHandle;

use crate::callbacks::{complete, Value};

fn tasks() -> &'static Mutex<HashMap<i64, AbortHandle>> {
    static TASKS: OnceLock<Mutex<HashMap<i64, AbortHandle>>> = OnceLock::new();
    TASKS.get_or_init(Default::default)
}

static NEXT_ID: AtomicI64 = AtomicI64::new(1);

/// Runs `operation` on the core's runtime and completes `future` with its
/// result; returns the id `cancel` takes.
pub fn spawn<T, F>(future: Global<JObject<'static>>, operation: F, convert: fn(T) -> Value) -> i64
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    // Registered before the task can finish: it deregisters itself only after
    // completing the Java future, so `cancel` can wait for that.
    let mut registry = tasks().lock().unwrap();
    let task = zkrecipes::runtime::runtime().spawn(async move {
        let value = match operation.await {
            Ok(result) => convert(result),
            Err(err) => Value::Error(err.to_string()),
        };
        complete(&future, value);
        tasks().lock().unwrap().remove(&id);
    });
    registry.insert(id, task.abort_handle());
    id
}

/// Stops the operation (dropping it withdraws anything it created on the
/// server) and returns once it has finished one way or the other.
pub fn cancel(id: i64) {
    let Some(task) = tasks().lock().unwrap().get(&id).cloned() else {
        return;
    };
    task.abort();
    while !task.is_finished() {
        std::thread::sleep(Duration::from_millis(1));
    }
    tasks().lock().unwrap().remove(&id);
}
