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

/// Per operation: the operation itself (what `cancel` aborts) and the task
/// that completes the Java future (what `cancel` waits for).
struct Running {
    operation: AbortHandle,
    completer: AbortHandle,
}

fn tasks() -> &'static Mutex<HashMap<i64, Running>> {
    static TASKS: OnceLock<Mutex<HashMap<i64, Running>>> = OnceLock::new();
    TASKS.get_or_init(Default::default)
}

/// For `spawn`: an operation already begun at the call (a release, a close, a
/// `begun` start), which a cancel that comes before its task runs must not stop.
pub fn started<F>(operation: F) -> impl FnOnce() -> F + Send + 'static
where
    F: Send + 'static,
{
    move || operation
}

/// Where every asynchronous call starts: its own clone of the recipe behind `handle` (the
/// operation outlives the Java frame that lent it) and a global reference to the future it
/// completes.
pub fn target<T: Clone + 'static>(
    env: &jni::Env<'_>,
    handle: i64,
    future: &JObject<'_>,
) -> crate::errors::Result<(T, Global<JObject<'static>>)> {
    // SAFETY: the Java side passes only handles it holds and has not freed.
    let recipe = unsafe { crate::handles::borrow::<T>(handle) }?.clone();
    Ok((recipe, env.new_global_ref(future)?))
}

static NEXT_ID: AtomicI64 = AtomicI64::new(1);

/// Runs `operation` on the core's runtime and completes `future` with its
/// result; returns the id `cancel` takes. A panic inside the operation
/// completes the future with `INTERNAL`: a Java caller never waits forever.
///
/// `make` builds the operation on a runtime thread: built here, a future
/// takes its whole size (a lock's acquire is about 6 KB, copied on the way)
/// of the calling Java thread's stack, which a thousand blocked threads pay
/// a thousand times. An operation that must begin at the call is built
/// here and passed through `started`.
pub fn spawn<T, F>(
    future: Global<JObject<'static>>,
    make: impl FnOnce() -> F + Send + 'static,
    convert: fn(T) -> Value,
) -> i64
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let runtime = zkrecipes::runtime::runtime();
    // Registered before the task can finish: it deregisters itself only after
    // completing the Java future, so `cancel` can wait for that.
    let mut registry = tasks().lock().unwrap();
    // The operation runs as a task of its own: its panic is caught by the
    // completer, and `cancel` aborts only the operation (dropping its future
    // withdraws what it created on the server). The completer always completes
    // the Java future, also with a result that was already there when the
    // cancel came: Java then undoes it (releases the lock, gives the item back).
    let operation = runtime.spawn(async move { Box::pin(make()).await });
    let operation_handle = operation.abort_handle();
    let completer = runtime.spawn(async move {
        let _abort = AbortOnDrop(operation.abort_handle());
        let value = match operation.await {
            Ok(Ok(result)) => convert(result),
            Ok(Err(err)) => Value::Error(err),
            Err(join) if join.is_panic() => Value::Error(zkrecipes::Error::new(
                zkrecipes::ErrorCode::Internal,
                format!("zkrecipes panicked: {}", panic_message(join.into_panic())),
            )),
            Err(_) => Value::Error(zkrecipes::Error::new(
                zkrecipes::ErrorCode::Interrupted,
                "the operation was cancelled",
            )),
        };
        complete(&future, value);
        tasks().lock().unwrap().remove(&id);
    });
    registry.insert(
        id,
        Running {
            operation: operation_handle,
            completer: completer.abort_handle(),
        },
    );
    id
}

struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Stops the operation (dropping it withdraws anything it created on the
/// server) and returns once it has finished one way or the other.
pub fn cancel(id: i64) {
    let Some((operation, completer)) = tasks()
        .lock()
        .unwrap()
        .get(&id)
        .map(|r| (r.operation.clone(), r.completer.clone()))
    else {
        return;
    };
    operation.abort();
    while !completer.is_finished() {
        std::thread::sleep(Duration::from_millis(1));
    }
}
