//! Results that must not be dropped when their caller is gone.
//!
//! A lock obtained, or a queue item taken, for a caller that was cancelled
//! (asyncio task cancel, Ctrl-C) after the operation had already succeeded is
//! handed back to the core, which releases the lock or puts the item back.

use std::sync::Mutex;

use pyo3::prelude::*;
use zkrecipes::ffi::{Handoff, OwnedLock};
use zkrecipes::{Item, Owner};

use crate::payload::Payload;

/// A result split into what Python receives and what undoes it.
pub trait Undoable: Send + 'static {
    type Out: for<'a> IntoPyObject<'a> + Send + 'static;
    fn split(self) -> (Self::Out, Option<Handoff>);
}

/// The outcome of an acquire of a lock or a multi-lock: its fencing token (one per path for a
/// multi-lock), or `None` if not obtained.
pub struct Acquired<L: OwnedLock> {
    pub lock: L,
    pub owner: Owner,
    pub token: Option<L::Token>,
}

impl<L: OwnedLock + Send + 'static> Undoable for Acquired<L>
where
    L::Token: for<'a> IntoPyObject<'a>,
{
    type Out = Option<L::Token>;

    fn split(self) -> (Option<L::Token>, Option<Handoff>) {
        let handoff = self
            .token
            .as_ref()
            .map(|_| self.lock.handoff_acquired(self.owner));
        (self.token, handoff)
    }
}

/// The outcome of a take or poll: the item, if any, with what gives it back.
pub struct Taken(pub Option<(Item, Handoff)>);

impl Undoable for Taken {
    type Out = Option<Payload>;

    fn split(self) -> (Option<Payload>, Option<Handoff>) {
        match self.0 {
            Some((item, handoff)) => (Some(Payload(item.data)), Some(handoff)),
            None => (None, None),
        }
    }
}

/// The outcome of a batched take: the items, in queue order, with what gives them all back.
pub struct TakenMany(pub (Vec<Item>, Option<Handoff>));

impl Undoable for TakenMany {
    type Out = Vec<Payload>;

    fn split(self) -> (Vec<Payload>, Option<Handoff>) {
        let (items, handoff) = self.0;
        (
            items.into_iter().map(|item| Payload(item.data)).collect(),
            handoff,
        )
    }
}

/// Travels with an awaitable's result: called (by `_resolve` or
/// `zkrecipes._undoable`) when the awaiting task is gone, `keep()` once the
/// caller has the result. Dropped with neither (a loop closed before it ran
/// the resolution, a future nobody awaited), it undoes.
#[pyclass(module = "zkrecipes._native")]
pub struct Undo {
    handoff: Mutex<Option<Handoff>>,
}

impl Undo {
    pub fn new(handoff: Handoff) -> Undo {
        Undo {
            handoff: Mutex::new(Some(handoff)),
        }
    }

    fn take(&self) -> Option<Handoff> {
        self.handoff
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

#[pymethods]
impl Undo {
    fn __call__(&self) {
        if let Some(handoff) = self.take() {
            handoff.undo();
        }
    }

    fn keep(&self) {
        if let Some(handoff) = self.take() {
            handoff.delivered();
        }
    }
}
