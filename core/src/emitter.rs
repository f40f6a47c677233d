//! Event channels made on first subscribe: an object nobody listens to
//! carries no event buffer (a 64-slot buffer per lock object was most of an
//! idle lock's memory, issue 17).

use std::sync::OnceLock;

use tokio::sync::broadcast;

pub(crate) struct Emitter<E> {
    sender: OnceLock<broadcast::Sender<E>>,
    capacity: usize,
}

impl<E: Clone> Emitter<E> {
    pub(crate) fn new(capacity: usize) -> Self {
        Emitter {
            sender: OnceLock::new(),
            capacity,
        }
    }

    /// Events from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<E> {
        self.sender
            .get_or_init(|| broadcast::channel(self.capacity).0)
            .subscribe()
    }

    /// Tells the subscribers, if there are any.
    pub(crate) fn emit(&self, event: E) {
        if let Some(sender) = self.sender.get() {
            let _ = sender.send(event);
        }
    }
}
