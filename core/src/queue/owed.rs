//! A claimed item on its way to its caller, given back if the caller is gone.

use super::*;

/// A claimed item on its way to the caller; if it is dropped before
/// `deliver` (the caller's future was dropped), the item goes back.
pub(crate) struct Owed {
    pub(super) inner: Arc<Inner>,
    pub(super) item: Option<Item>,
    pub(super) marker: Option<String>,
    /// Taken when the claim was sent; `close` waits for it.
    pub(super) settling: Option<Settling>,
}

impl Owed {
    pub(super) fn deliver(mut self) -> Item {
        self.item.take().expect("an owed item is delivered once")
    }

    /// The item, and the guard that takes over giving it back (and the hold
    /// on `close`, with no moment without one).
    pub(crate) fn hand_off(mut self, queue: &DistributedQueue) -> (Item, Handoff) {
        let item = self.item.take().expect("an owed item is handed off once");
        let (queue, owed) = (queue.clone(), item.clone());
        let settling = self.settling.take().expect("an owed item holds close back");
        let handoff = Handoff::new(settling, move || queue.abandon_taken(owed));
        (item, handoff)
    }
}

impl Drop for Owed {
    fn drop(&mut self) {
        if let Some(item) = self.item.take() {
            let inner = self.inner.clone();
            let marker = self.marker.take();
            let settling = self.settling.take();
            runtime::handle().spawn(async move {
                let _settling = settling;
                if let Err(err) = inner.give_back(&item, marker).await {
                    cannot_put_back(&inner.dir, &item.name, &err);
                }
            });
        }
    }
}
