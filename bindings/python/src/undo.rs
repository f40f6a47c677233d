//! Results that must not be dropped when their caller is gone.
//!
//! A lock obtained, or a queue item taken, for a caller that was cancelled
//! (asyncio task cancel, Ctrl-C) after the operation had already succeeded is
//! handed back to the core, which releases the lock or puts the item back.

use std::sync::Mutex;

use pyo3::prelude::*;
use zkrecipes::{DistributedQueue, Item, Lock, Owner};

use crate::payload::Payload;

pub type UndoFn = Box<dyn FnOnce() + Send>;

/// A result split into what Python receives and what undoes it.
pub trait Undoable: Send + 'static {
    type Out: for<'a> IntoPyObject<'a> + Send + 'static;
    fn split(self) -> (Self::Out, Option<UndoFn>);
}

/// The outcome of an acquire: the fencing token, or `None` if not obtained.
pub struct Acquired {
    pub lock: Lock,
    pub owner: Owner,
    pub token: Option<i64>,
}

impl Undoable for Acquired {
    type Out = Option<i64>;

    fn split(self) -> (Option<i64>, Option<UndoFn>) {
        let (lock, owner) = (self.lock, self.owner);
        let undo = self
            .token
            .map(|_| Box::new(move || lock.abandon_acquired(owner)) as UndoFn);
        (self.token, undo)
    }
}

/// The outcome of a take or poll: the item, if any.
pub struct Taken {
    pub queue: DistributedQueue,
    pub item: Option<Item>,
}

impl Undoable for Taken {
    type Out = Option<Payload>;

    fn split(self) -> (Option<Payload>, Option<UndoFn>) {
        let payload = self.item.as_ref().map(|i| Payload(i.data.clone()));
        let queue = self.queue;
        let undo = self
            .item
            .map(|item| Box::new(move || queue.abandon_taken(item)) as UndoFn);
        (payload, undo)
    }
}

/// Handed to `_resolve`, which calls it when the awaiting future was cancelled.
#[pyclass(module = "zkrecipes._native")]
pub struct Undo {
    undo: Mutex<Option<UndoFn>>,
}

impl Undo {
    pub fn new(undo: UndoFn) -> Undo {
        Undo {
            undo: Mutex::new(Some(undo)),
        }
    }
}

#[pymethods]
impl Undo {
    fn __call__(&self) {
        if let Some(undo) = self.undo.lock().unwrap().take() {
            undo();
        }
    }
}
