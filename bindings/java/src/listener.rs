//! Core events to a Java recipe object, delivered on a library thread; the
//! Java side catches and logs whatever a listener throws.

use std::sync::{mpsc, Mutex};
use std::time::Duration;

use jni::objects::JObject;
use jni::refs::Global;
use tokio::sync::{broadcast, oneshot};
use tokio::task::AbortHandle;
use zkrecipes::ffi::Event;

use crate::callbacks;
use crate::export::export;
use crate::handles::{free, into_handle};

/// A forwarding task: `finish` has it hand over what is already emitted,
/// then end (`ended` says so); `task` aborts it at once.
struct Subscription {
    task: AbortHandle,
    finish: Mutex<Option<oneshot::Sender<()>>>,
    ended: mpsc::Receiver<()>,
}

/// Returns the subscription's handle (`subscriptionCancel` ends it).
pub fn forward<E: Event>(events: broadcast::Receiver<E>, sink: Global<JObject<'static>>) -> i64 {
    forward_with(events, sink, |sink, event: E| {
        callbacks::event(sink, event.details())
    })
}

/// `forward` for values that are not named events (a shared count's values): `deliver` hands
/// each to Java.
pub fn forward_with<T: Clone + Send + 'static>(
    mut events: broadcast::Receiver<T>,
    sink: Global<JObject<'static>>,
    deliver: fn(&Global<JObject<'static>>, T),
) -> i64 {
    let (finish, mut finishing) = oneshot::channel::<()>();
    let (ended_tx, ended) = mpsc::channel();
    let task = zkrecipes::runtime::runtime().spawn(async move {
        loop {
            let received = tokio::select! {
                biased;
                received = events.recv() => received,
                _ = &mut finishing => break,
            };
            match received {
                Ok(event) => deliver(&sink, event),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
        // What was emitted before the finish still reaches the listeners.
        while let Ok(event) = events.try_recv() {
            deliver(&sink, event);
        }
        let _ = ended_tx.send(());
    });
    into_handle(Subscription {
        task: task.abort_handle(),
        finish: Mutex::new(Some(finish)),
        ended,
    })
}

export! {
    /// `drain`: deliver the events already emitted first (a `close`, whose
    /// `STOP_COMPLETE` or `CLOSED` must still be told); else stop at once.
    fn Java_io_zkrecipes_Native_subscriptionCancel<'l>(_env; handle: i64, drain: bool) -> () {
        // SAFETY: Java cancels a subscription once, and not concurrently.
        if let Ok(subscription) = unsafe { crate::handles::borrow::<Subscription>(handle) } {
            let finish = subscription.finish.lock().unwrap().take();
            let drained = drain && finish.is_some_and(|finish| finish.send(()).is_ok());
            if drained {
                let _ = subscription.ended.recv_timeout(Duration::from_secs(5));
            }
            subscription.task.abort();
        }
        // SAFETY: as above; the handle is not used again.
        unsafe { free::<Subscription>(handle) };
        Ok(())
    }
}
