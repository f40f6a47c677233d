//! What a leader latch tells its listeners.

use crate::error::Error;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LatchEvent {
    /// This participant leads from now on, with this fencing token.
    IsLeader { fencing_token: i64 },
    /// This participant no longer leads: `reason` when the leadership was lost (node gone,
    /// session expired, disconnected past the grace), `None` when the latch was closed.
    NotLeader { reason: Option<Error> },
    /// The leader's connection dropped: it may no longer lead; stop acting as the leader
    /// until `Reconnected`.
    Suspended,
    /// The same session is back and our node still leads.
    Reconnected,
}

impl LatchEvent {
    /// The event's name in every binding (`"IS_LEADER"`, …).
    pub fn name(&self) -> &'static str {
        match self {
            LatchEvent::IsLeader { .. } => "IS_LEADER",
            LatchEvent::NotLeader { .. } => "NOT_LEADER",
            LatchEvent::Suspended => "SUSPENDED",
            LatchEvent::Reconnected => "RECONNECTED",
        }
    }

    /// Why a `NOT_LEADER` happened, as a message for the bindings.
    pub fn reason(&self) -> Option<String> {
        match self {
            LatchEvent::NotLeader {
                reason: Some(reason),
            } => Some(reason.to_string()),
            _ => None,
        }
    }

    pub fn fencing_token(&self) -> Option<i64> {
        match self {
            LatchEvent::IsLeader { fencing_token } => Some(*fencing_token),
            _ => None,
        }
    }
}
