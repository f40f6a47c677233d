//! A lock's acquire and a hold's release without uniffi's future protocol,
//! for the uncontended lock cycle that Kotlin's overhead is measured on.
//!
//! Through uniffi, every async call cost about seven crossings of the FFI
//! from the caller's thread (two handle clones, the call, two polls, the
//! completion, the free) and two JNA callbacks (the wake-up from the
//! runtime's thread, and the ready signal from inside the second poll),
//! where Java's blocking call crosses once. Here the caller crosses once
//! with borrowed handles, the runtime's thread calls back once with the
//! outcome in the callback's byte (the same `(u64, i8)` signature as
//! uniffi's continuation callback, so Kotlin resumes the same way), and a
//! fencing token or a failure is fetched only when there is one.
//!
//! Every started operation calls back exactly once, also when it fails to
//! start, is cancelled or panics: Kotlin's continuation table would keep an
//! entry forever otherwise.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use zkrecipes::{Error, ErrorCode, Owner};

use crate::errors::{NativeError, Result};
use crate::lock::{NativeHold, NativeLock};

/// uniffi's `RustFutureContinuationCallback`: Kotlin passes its own.
type Callback = extern "C" fn(data: u64, outcome: i8);

/// The hold is filled; its fencing token is `zkrecipes_kotlin_hold_token`'s.
/// (For a release: the node is gone.)
const DONE: i8 = 0;
/// `native_failure(data)` throws why.
const FAILED: i8 = 1;
/// The acquire's timeout passed first.
const NOT_ACQUIRED: i8 = 2;
/// Cancelled before it ended: the node is withdrawn.
const CANCELLED: i8 = 3;

/// Failures waiting for their caller, by the `data` it passed (unique per
/// call: Kotlin's continuation handles).
fn failures() -> &'static Mutex<HashMap<u64, Error>> {
    static FAILURES: OnceLock<Mutex<HashMap<u64, Error>>> = OnceLock::new();
    FAILURES.get_or_init(Default::default)
}

/// Why the call started with `data` failed (an `Ok` if it did not).
#[uniffi::export]
pub fn native_failure(data: u64) -> Result<()> {
    match failures().lock().unwrap().remove(&data) {
        Some(err) => Err(NativeError::from(err)),
        None => Ok(()),
    }
}

/// Calls back once: with the outcome given, or, dropped unanswered (a
/// panic in the operation), with an `INTERNAL` failure.
struct Reply {
    callback: Callback,
    data: u64,
    sent: bool,
}

impl Reply {
    fn new(callback: Callback, data: u64) -> Reply {
        Reply {
            callback,
            data,
            sent: false,
        }
    }

    fn send(mut self, outcome: i8) {
        self.sent = true;
        (self.callback)(self.data, outcome);
    }

    fn fail(self, err: Error) {
        failures().lock().unwrap().insert(self.data, err);
        self.send(FAILED);
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if !self.sent {
            failures().lock().unwrap().insert(
                self.data,
                Error::new(ErrorCode::Internal, "zkrecipes panicked"),
            );
            (self.callback)(self.data, FAILED);
        }
    }
}

/// The object behind a handle that Kotlin lent for the call (it keeps the
/// object alive until the call returns): one reference of our own.
///
/// # Safety
/// `handle` is a live uniffi handle of a `T` (`Arc::into_raw`).
unsafe fn borrowed<T>(handle: u64) -> Arc<T> {
    let ptr = handle as *const T;
    Arc::increment_strong_count(ptr);
    Arc::from_raw(ptr)
}

/// `NativeLock.acquire` into `hold`, answered through `callback(data, …)`.
///
/// # Safety
/// `lock` and `hold` are live handles of a `NativeLock` and a `NativeHold`,
/// kept alive by the caller until this returns.
#[no_mangle]
pub unsafe extern "C" fn zkrecipes_kotlin_lock_acquire(
    lock: u64,
    timeout_ms: f64,
    hold: u64,
    callback: Callback,
    data: u64,
) {
    let reply = Reply::new(callback, data);
    let (lock, hold) = (
        borrowed::<NativeLock>(lock).lock.clone(),
        borrowed::<NativeHold>(hold),
    );
    let wait = match zkrecipes::Wait::kotlin(timeout_ms) {
        Ok(wait) => wait,
        Err(err) => return reply.fail(err),
    };
    zkrecipes::runtime::runtime().spawn(async move {
        let cancelled = hold.cancelled();
        let acquired = tokio::select! {
            biased;
            acquired = lock.acquire_as(Owner::unique(), wait) => acquired,
            () = cancelled => return reply.send(CANCELLED),
        };
        match acquired {
            Ok(Some(guard)) => {
                if hold.fill(guard) {
                    reply.send(DONE)
                } else {
                    reply.send(CANCELLED)
                }
            }
            Ok(None) => reply.send(NOT_ACQUIRED),
            Err(err) => reply.fail(err),
        }
    });
}

/// `NativeHold.release`, answered through `callback(data, …)`. A hold
/// released already fails with `NOT_OWNER`, at once.
///
/// # Safety
/// `hold` is a live handle of a `NativeHold`, kept alive by the caller until
/// this returns.
#[no_mangle]
pub unsafe extern "C" fn zkrecipes_kotlin_hold_release(hold: u64, callback: Callback, data: u64) {
    let reply = Reply::new(callback, data);
    let guard = match borrowed::<NativeHold>(hold).take() {
        Ok(guard) => guard,
        Err(err) => return reply.fail(err),
    };
    zkrecipes::runtime::runtime().spawn(async move {
        match guard.release().await {
            Ok(()) => reply.send(DONE),
            Err(err) => reply.fail(err),
        }
    });
}

/// Cancels the acquire filling `hold`: it ends with `CANCELLED`, its node
/// withdrawn, or, if it got the lock first, its hold is released.
///
/// # Safety
/// `hold` is a live handle of a `NativeHold`, kept alive by the caller until
/// this returns.
#[no_mangle]
pub unsafe extern "C" fn zkrecipes_kotlin_hold_cancel(hold: u64) {
    borrowed::<NativeHold>(hold).cancel();
}

/// The fencing token of the lock `hold` holds (-1: none).
///
/// # Safety
/// `hold` is a live handle of a `NativeHold`, kept alive by the caller until
/// this returns.
#[no_mangle]
pub unsafe extern "C" fn zkrecipes_kotlin_hold_token(hold: u64) -> i64 {
    let hold = &*(hold as *const NativeHold);
    hold.fencing_token()
}
