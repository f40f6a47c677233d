//! Core events to a JavaScript callback
//! `(name, fencingToken, reasonCode, reasonMessage)`.
//!
//! The threadsafe function is weak: events never keep the process alive (an
//! open client does, through `index.js`). A callback that throws is caught
//! here and reported by `index.js` as an `'error'` event, never a crash.

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use tokio::sync::broadcast;
use tokio::task::AbortHandle;
use zkrecipes::ffi::{Event, EventStream};

/// The core's event details, spread as four JavaScript arguments.
type EventArgs = FnArgs<(String, Option<BigInt>, Option<String>, Option<String>)>;

pub type EventCallback = ThreadsafeFunction<EventArgs, (), EventArgs, Status, false, true>;

#[napi]
pub struct NativeSubscription {
    task: AbortHandle,
}

#[napi]
impl NativeSubscription {
    #[napi]
    pub fn cancel(&self) {
        self.task.abort();
    }
}

pub fn forward<E: Event>(
    events: broadcast::Receiver<E>,
    callback: EventCallback,
) -> NativeSubscription {
    relay(events, callback, |event| {
        let details = event.details();
        let (code, message) = match details.reason {
            Some(reason) => (
                Some(reason.code().as_str().to_string()),
                Some(reason.message().to_string()),
            ),
            None => (None, None),
        };
        let token = details.fencing_token.map(BigInt::from);
        (details.name.to_string(), token, code, message).into()
    })
}

/// Calls `callback(...args(value))` for every value of `values`, in order, one at a time (a
/// lagging listener skips to the oldest value still kept, then goes on in order).
pub fn relay<T, A>(
    mut values: broadcast::Receiver<T>,
    callback: ThreadsafeFunction<A, (), A, Status, false, true>,
    args: fn(T) -> A,
) -> NativeSubscription
where
    T: Clone + Send + 'static,
    A: JsValuesTupleIntoVec + Send + 'static,
{
    let task = zkrecipes::runtime::runtime().spawn(async move {
        loop {
            let value = match values.recv().await {
                Ok(value) => value,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            // A throwing listener is the wrapper's business.
            let _ = callback.call_async_catch(args(value)).await;
        }
    });
    NativeSubscription {
        task: task.abort_handle(),
    }
}

/// `relay` for a stream that never drops a value (a cache's events): every value, in order,
/// one at a time, until the stream ends (the recipe closed or dropped).
pub fn relay_all<T, A>(
    mut values: impl EventStream<T>,
    callback: ThreadsafeFunction<A, (), A, Status, false, true>,
    args: fn(T) -> A,
) -> NativeSubscription
where
    T: Send + 'static,
    A: JsValuesTupleIntoVec + Send + 'static,
{
    let task = zkrecipes::runtime::runtime().spawn(async move {
        while let Some(value) = values.next_event().await {
            // A throwing listener is the wrapper's business.
            let _ = callback.call_async_catch(args(value)).await;
        }
    });
    NativeSubscription {
        task: task.abort_handle(),
    }
}
