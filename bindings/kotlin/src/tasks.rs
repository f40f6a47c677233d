//! Core futures run on the core's runtime, not on the caller's poller: uniffi
//! polls from JVM threads with no tokio context, and the core's timers and
//! sockets need one.

use std::future::Future;
use std::sync::Arc;

use tokio::task::AbortHandle;

use crate::errors::{NativeError, Result};

/// Runs `operation` as a task of the core's runtime and waits for it. A
/// cancelled coroutine drops this future, which aborts the task: the core
/// then withdraws what it created, and a result that was already there
/// (a hold, a taken item) is dropped with the task, which undoes it.
pub async fn run<T, F>(operation: F) -> Result<T>
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let task = zkrecipes::runtime::runtime().spawn(operation);
    let _abort = AbortOnDrop(task.abort_handle());
    outcome(task.await)
}

/// A task's end as Kotlin sees it: a panic is `INTERNAL`, an abort `INTERRUPTED`.
fn outcome<T>(
    joined: std::result::Result<zkrecipes::Result<T>, tokio::task::JoinError>,
) -> Result<T> {
    match joined {
        Ok(result) => result.map_err(NativeError::from),
        Err(join) if join.is_panic() => Err(NativeError::Zk {
            code: "INTERNAL".into(),
            detail: "zkrecipes panicked".into(),
        }),
        Err(_) => Err(NativeError::Zk {
            code: "INTERRUPTED".into(),
            detail: "the operation was cancelled".into(),
        }),
    }
}

/// How Kotlin cancels a call that obtains something (a hold, an item, a
/// job). uniffi converts a result to its FFI form as soon as the future is
/// done, so a coroutine cancelled after that would drop the converted result
/// unseen and never undo it. Such calls therefore run where cancellation
/// cannot reach the uniffi future (`NonCancellable`), and cancel through this
/// instead: the call then ends, with what it obtained if anything, and the
/// Kotlin layer undoes that.
#[derive(uniffi::Object)]
pub struct NativeCancel {
    cancelled: tokio::sync::watch::Sender<bool>,
}

#[uniffi::export]
impl NativeCancel {
    #[uniffi::constructor]
    pub fn new() -> Arc<Self> {
        Arc::new(NativeCancel {
            cancelled: tokio::sync::watch::Sender::new(false),
        })
    }

    pub fn cancel(&self) {
        self.cancelled.send_replace(true);
    }
}

/// `run`, ended early by `cancel`: the task is aborted (the core withdraws
/// what it created), and a result it already had is returned all the same.
pub async fn run_cancellable<T, F>(cancel: &NativeCancel, operation: F) -> Result<T>
where
    T: Send + 'static,
    F: Future<Output = zkrecipes::Result<T>> + Send + 'static,
{
    let mut task = zkrecipes::runtime::runtime().spawn(operation);
    let _abort = AbortOnDrop(task.abort_handle());
    let mut cancelled = cancel.cancelled.subscribe();
    let joined = tokio::select! {
        joined = &mut task => joined,
        _ = async { cancelled.wait_for(|c| *c).await.is_ok() } => {
            task.abort();
            task.await
        }
    };
    outcome(joined)
}

struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A timeout in milliseconds as Kotlin passes it (`Wait::kotlin` has the rules).
pub fn wait(timeout_ms: f64) -> Result<zkrecipes::Wait> {
    Ok(zkrecipes::Wait::kotlin(timeout_ms)?)
}

/// Waits for `operation` on the calling thread, for `AutoCloseable.close()`
/// (Kotlin's `use {}`), which cannot suspend.
pub fn block<F>(operation: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let runtime = zkrecipes::runtime::runtime();
    if tokio::runtime::Handle::try_current().is_ok() {
        // One of the runtime's own threads (a coroutine resumed there, e.g.
        // on `Dispatchers.Unconfined`): give its other tasks to another
        // worker while this one waits.
        tokio::task::block_in_place(|| runtime.block_on(operation));
    } else {
        runtime.block_on(operation);
    }
}
