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
use zkrecipes::ffi::Event;

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
    mut events: broadcast::Receiver<E>,
    callback: EventCallback,
) -> NativeSubscription {
    let task = zkrecipes::runtime::runtime().spawn(async move {
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            // In order, one at a time; a throwing listener is the wrapper's business.
            let details = event.details();
            let (code, message) = match details.reason {
                Some(reason) => (
                    Some(reason.code().as_str().to_string()),
                    Some(reason.message().to_string()),
                ),
                None => (None, None),
            };
            let token = details.fencing_token.map(BigInt::from);
            let args = (details.name.to_string(), token, code, message);
            let _ = callback.call_async_catch(args.into()).await;
        }
    });
    NativeSubscription {
        task: task.abort_handle(),
    }
}
