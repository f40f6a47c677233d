//! A result on its way to a caller who may be gone by the time it arrives.
//!
//! A binding hands a lock obtained or a queue item taken across threads and
//! event loops (a Python future resolved on its loop, a callback queued for a
//! listener thread). Any of those hops can be dropped: the task was cancelled,
//! the loop closed, the interpreter is exiting. A `Handoff` travels with the
//! result and undoes it (lock released, item put back) when it is dropped
//! without `delivered` having been called, so no path that forgets it can lose
//! an item. It also holds `Client::close` back until it is settled: a caller
//! who gave up and closed at once would otherwise end the session before the
//! item could go back (found as a lost item under load in CI).

use crate::client::Settling;

pub struct Handoff {
    undo: Option<Box<dyn FnOnce() + Send>>,
    _settling: Settling,
}

impl Handoff {
    pub(crate) fn new(settling: Settling, undo: impl FnOnce() + Send + 'static) -> Handoff {
        Handoff {
            undo: Some(Box::new(undo)),
            _settling: settling,
        }
    }

    /// The caller has the result: nothing is undone.
    pub fn delivered(mut self) {
        self.undo = None;
    }

    /// The caller is gone: the result is undone now (as on drop).
    pub fn undo(self) {}
}

impl Drop for Handoff {
    fn drop(&mut self) {
        // The undo starts its own background work, which takes its own
        // settling guard before this one is released.
        if let Some(undo) = self.undo.take() {
            undo();
        }
    }
}

impl std::fmt::Debug for Handoff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handoff")
            .field("pending", &self.undo.is_some())
            .finish()
    }
}
