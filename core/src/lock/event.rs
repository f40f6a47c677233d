//! What a lock tells its listeners.

use crate::error::Error;

/// What a lock tells its listeners.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockEvent {
    Acquired {
        fencing_token: i64,
    },
    Released,
    /// The connection dropped while held: the lock may be gone; stop writing
    /// to the protected resource until `Reconnected`.
    Suspended,
    /// The same session is back and our node is still first in line.
    Reconnected,
    /// The lock node is gone while held; the lock is no longer held.
    Lost {
        reason: Error,
    },
}

impl LockEvent {
    /// The event's name in every binding (`"ACQUIRED"`, …).
    pub fn name(&self) -> &'static str {
        match self {
            LockEvent::Acquired { .. } => "ACQUIRED",
            LockEvent::Released => "RELEASED",
            LockEvent::Suspended => "SUSPENDED",
            LockEvent::Reconnected => "RECONNECTED",
            LockEvent::Lost { .. } => "LOST",
        }
    }

    /// Why a `LOST` happened, as a message for the bindings.
    pub fn reason(&self) -> Option<String> {
        match self {
            LockEvent::Lost { reason } => Some(reason.to_string()),
            _ => None,
        }
    }
}
