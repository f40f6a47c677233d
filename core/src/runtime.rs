//! The one tokio runtime of the process.
//!
//! Every binding (Python, Node, Java) drives the core on this runtime, so a
//! process that uses zkrecipes from several places still has one set of
//! threads and one timer wheel.
//!
//! A forked child (Python's `multiprocessing` "fork" start method, a
//! pre-forking server) inherits the runtime and the ZooKeeper client's I/O
//! reactor without their threads, and shares the reactor's epoll instance with
//! its parent: no session can work there, and a new client in such a child
//! used to hang (found by an adversarial test). So a child gets a runtime of
//! its own (calls answer instead of hanging), and the client refuses at once
//! with an error that says why (`forked_after_start`).

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Mutex;

use tokio::runtime::{Builder, Handle, Runtime};

use crate::error::{Error, ErrorCode, Result};

static RUNTIME: AtomicPtr<Runtime> = AtomicPtr::new(std::ptr::null_mut());
/// The process `RUNTIME` belongs to.
static OWNER: AtomicU32 = AtomicU32::new(0);
/// The process zkrecipes first started in (where the I/O reactor lives).
static FIRST: AtomicU32 = AtomicU32::new(0);
static STARTING: Mutex<()> = Mutex::new(());

/// The shared runtime of this process, created on first use.
pub fn runtime() -> &'static Runtime {
    let pid = std::process::id();
    if let Some(runtime) = current(pid) {
        return runtime;
    }
    let _one = STARTING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(runtime) = current(pid) {
        return runtime;
    }
    // Leaked: a runtime lives as long as its process (and a parent's copy in
    // a child cannot be dropped: its threads do not exist there).
    let runtime: &'static Runtime = Box::leak(Box::new(
        Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("zkrecipes")
            .enable_all()
            .build()
            .expect("cannot start the zkrecipes runtime"),
    ));
    let _ = FIRST.compare_exchange(0, pid, Ordering::AcqRel, Ordering::Acquire);
    RUNTIME.store(runtime as *const Runtime as *mut Runtime, Ordering::Release);
    OWNER.store(pid, Ordering::Release);
    runtime
}

fn current(pid: u32) -> Option<&'static Runtime> {
    if OWNER.load(Ordering::Acquire) != pid {
        return None;
    }
    // SAFETY: set only from `Box::leak` above, never freed.
    unsafe { RUNTIME.load(Ordering::Acquire).as_ref() }
}

/// `CLOSED` in a process forked after zkrecipes started in its parent: no
/// ZooKeeper session can work here.
pub(crate) fn refuse_if_forked() -> Result<()> {
    let first = FIRST.load(Ordering::Acquire);
    if first == 0 || first == std::process::id() {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::Closed,
        format!(
            "zkrecipes was started in process {first} before it forked this one, and its \
             threads do not survive a fork: fork before the first Client, or start children \
             fresh (Python multiprocessing's \"spawn\" or \"forkserver\" method)"
        ),
    ))
}

/// Where the core spawns its background work (sessions, watchers, holders'
/// monitors): always the shared runtime, so that none of it dies with a
/// short-lived runtime of the caller (a `#[tokio::test]`, a binding's call).
pub(crate) fn handle() -> &'static Handle {
    runtime().handle()
}
