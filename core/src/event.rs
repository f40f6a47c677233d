//! What every binding delivers for an event, decided once here: the name
//! (`"ACQUIRED"`, `"FAILED"`, …) and the details that come with it. A
//! binding converts these values; it never names or interprets events itself.

use crate::client::ConnectionState;
use crate::election::ElectionEvent;
use crate::error::Error;
use crate::lock::write_lock::LockEvent;

/// An event as the bindings hand it to a listener.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventDetails {
    /// The name shared by every language (`"ACQUIRED"`, `"STOP_COMPLETE"`).
    pub name: &'static str,
    /// `ACQUIRED`: the hold's fencing token.
    pub fencing_token: Option<i64>,
    /// `LOST`, `FAILED`: why.
    pub reason: Option<Error>,
}

/// Implemented by every event type a recipe or client emits.
pub trait Event: Clone + Send + 'static {
    fn details(&self) -> EventDetails;

    /// Every name this type can have, in declaration order: bindings test
    /// that their own enums list exactly these.
    fn names() -> &'static [&'static str];
}

fn plain(name: &'static str) -> EventDetails {
    EventDetails {
        name,
        fencing_token: None,
        reason: None,
    }
}

impl Event for LockEvent {
    fn details(&self) -> EventDetails {
        let mut details = plain(self.name());
        match self {
            LockEvent::Acquired { fencing_token } => details.fencing_token = Some(*fencing_token),
            LockEvent::Lost { reason } => details.reason = Some(reason.clone()),
            _ => {}
        }
        details
    }

    fn names() -> &'static [&'static str] {
        &["ACQUIRED", "RELEASED", "SUSPENDED", "RECONNECTED", "LOST"]
    }
}

impl Event for ElectionEvent {
    fn details(&self) -> EventDetails {
        let mut details = plain(self.name());
        if let ElectionEvent::Failed(reason) = self {
            details.reason = Some(reason.clone());
        }
        details
    }

    fn names() -> &'static [&'static str] {
        &[
            "START",
            "OFFER_START",
            "OFFER_COMPLETE",
            "DETERMINE_START",
            "DETERMINE_COMPLETE",
            "ELECTED_START",
            "ELECTED_COMPLETE",
            "READY_START",
            "READY_COMPLETE",
            "FAILED",
            "STOP_START",
            "STOP_COMPLETE",
            "SUSPENDED",
            "RECONNECTED",
        ]
    }
}

impl Event for ConnectionState {
    fn details(&self) -> EventDetails {
        plain(self.as_str())
    }

    fn names() -> &'static [&'static str] {
        &["CONNECTED", "SUSPENDED", "RECONNECTED", "LOST", "CLOSED"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn every_event_is_named_in_its_list() {
        let reason = Error::new(ErrorCode::SessionExpired, "gone");
        let locks = [
            LockEvent::Acquired { fencing_token: 3 },
            LockEvent::Released,
            LockEvent::Suspended,
            LockEvent::Reconnected,
            LockEvent::Lost {
                reason: reason.clone(),
            },
        ];
        let names: Vec<_> = locks.iter().map(|e| e.details().name).collect();
        assert_eq!(names, LockEvent::names());
        assert_eq!(locks[0].details().fencing_token, Some(3));
        assert_eq!(locks[4].details().reason, Some(reason.clone()));

        use ElectionEvent::*;
        let elections = [
            Start,
            OfferStart,
            OfferComplete,
            DetermineStart,
            DetermineComplete,
            ElectedStart,
            ElectedComplete,
            ReadyStart,
            ReadyComplete,
            Failed(reason.clone()),
            StopStart,
            StopComplete,
            Suspended,
            Reconnected,
        ];
        let names: Vec<_> = elections.iter().map(|e| e.details().name).collect();
        assert_eq!(names, ElectionEvent::names());
        assert_eq!(elections[9].details().reason, Some(reason));

        use ConnectionState as S;
        let states = [
            S::Connected,
            S::Suspended,
            S::Reconnected,
            S::Lost,
            S::Closed,
        ];
        let names: Vec<_> = states.iter().map(|e| e.details().name).collect();
        assert_eq!(names, ConnectionState::names());
    }
}
