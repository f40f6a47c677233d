//! Core events to a Java recipe object, delivered on a library thread; the
//! Java side catches and logs whatever a listener throws.

use jni::objects::JObject;
use jni::refs::Global;
use tokio::sync::broadcast;
use tokio::task::AbortHandle;
use zkrecipes::Event;

use crate::callbacks;
use crate::export::export;
use crate::handles::{free, into_handle};

/// Returns the subscription's handle (`subscriptionCancel` ends it).
pub fn forward<E: Event>(
    mut events: broadcast::Receiver<E>,
    sink: Global<JObject<'static>>,
) -> i64 {
    let task = zkrecipes::runtime::runtime().spawn(async move {
        loop {
            let event = match events.recv().await {
                Ok(event) => event,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            };
            callbacks::event(&sink, event.details());
        }
    });
    into_handle(task.abort_handle())
}

export! {
    fn Java_io_zkrecipes_Native_subscriptionCancel<'l>(_env; handle: i64) -> () {
        if let Ok(task) = unsafe { crate::handles::borrow::<AbortHandle>(handle) } {
            task.abort();
        }
        // SAFETY: Java cancels a subscription once.
        unsafe { free::<AbortHandle>(handle) };
        Ok(())
    }
}
