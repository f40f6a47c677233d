//! Core events to a Java recipe object, delivered on a library thread; the
//! Java side catches and logs whatever a listener throws.

use std::sync::{mpsc, Mutex};
use std::time::Duration;

use jni::objects::JObject;
use jni::refs::Global;
use tokio::sync::{broadcast, mpsc as tokio_mpsc, oneshot};
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
    events: broadcast::Receiver<T>,
    sink: Global<JObject<'static>>,
    deliver: fn(&Global<JObject<'static>>, T),
) -> i64 {
    forward_from(events, sink, deliver)
}

/// `forward` for a source that never drops an event (a cache's, whose stream ends at its
/// close): `deliver` hands each to Java.
pub fn forward_all<T: Send + 'static>(
    events: impl Source<T>,
    sink: Global<JObject<'static>>,
    deliver: fn(&Global<JObject<'static>>, T),
) -> i64 {
    forward_from(events, sink, deliver)
}

/// Where a subscription's values come from.
pub trait Source<T>: Send + 'static {
    /// The next value; `None` once the source is gone.
    fn next(&mut self) -> impl std::future::Future<Output = Option<T>> + Send;
    /// A value already there, without waiting.
    fn ready(&mut self) -> Option<T>;
}

impl<T: Clone + Send + 'static> Source<T> for broadcast::Receiver<T> {
    async fn next(&mut self) -> Option<T> {
        loop {
            match self.recv().await {
                Ok(value) => return Some(value),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    fn ready(&mut self) -> Option<T> {
        loop {
            match self.try_recv() {
                Ok(value) => return Some(value),
                Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(_) => return None,
            }
        }
    }
}

impl<T: Send + 'static> Source<T> for tokio_mpsc::UnboundedReceiver<T> {
    async fn next(&mut self) -> Option<T> {
        self.recv().await
    }

    fn ready(&mut self) -> Option<T> {
        self.try_recv().ok()
    }
}

impl Source<zkrecipes::ServiceCacheEvent> for zkrecipes::ServiceCacheEvents {
    async fn next(&mut self) -> Option<zkrecipes::ServiceCacheEvent> {
        self.recv().await
    }

    fn ready(&mut self) -> Option<zkrecipes::ServiceCacheEvent> {
        self.try_recv()
    }
}

fn forward_from<T: Send + 'static>(
    mut events: impl Source<T>,
    sink: Global<JObject<'static>>,
    deliver: fn(&Global<JObject<'static>>, T),
) -> i64 {
    let (finish, mut finishing) = oneshot::channel::<()>();
    let (ended_tx, ended) = mpsc::channel();
    let task = zkrecipes::runtime::runtime().spawn(async move {
        loop {
            let received = tokio::select! {
                biased;
                received = events.next() => received,
                _ = &mut finishing => break,
            };
            match received {
                Some(event) => deliver(&sink, event),
                None => break,
            }
        }
        // What was emitted before the finish still reaches the listeners.
        while let Some(event) = events.ready() {
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
