//! What every binding delivers for an event, decided once here: the name
//! (`"ACQUIRED"`, `"FAILED"`, …) and the details that come with it. A
//! binding converts these values; it never names or interprets events itself.

use crate::client::ConnectionState;
use crate::election::ElectionEvent;
use crate::error::Error;
use crate::latch::LatchEvent;
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
pub trait Event: Clone + Send + Sized + 'static {
    fn details(&self) -> EventDetails;

    /// One event of each kind, in declaration order.
    fn every_kind() -> Vec<Self>;

    /// Every name this type can have, in declaration order: bindings test
    /// that their own enums list exactly these.
    fn names() -> Vec<&'static str> {
        Self::every_kind()
            .iter()
            .map(|e| e.details().name)
            .collect()
    }
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

    fn every_kind() -> Vec<Self> {
        use LockEvent::*;
        let reason = Error::closed();
        vec![
            Acquired { fencing_token: 0 },
            Released,
            Suspended,
            Reconnected,
            Lost { reason },
        ]
    }
}

impl Event for LatchEvent {
    fn details(&self) -> EventDetails {
        let mut details = plain(self.name());
        match self {
            LatchEvent::IsLeader { fencing_token } => details.fencing_token = Some(*fencing_token),
            LatchEvent::NotLeader { reason } => details.reason = reason.clone(),
            _ => {}
        }
        details
    }

    fn every_kind() -> Vec<Self> {
        use LatchEvent::*;
        vec![
            IsLeader { fencing_token: 0 },
            NotLeader { reason: None },
            Suspended,
            Reconnected,
        ]
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

    fn every_kind() -> Vec<Self> {
        use ElectionEvent::*;
        vec![
            Start,
            OfferStart,
            OfferComplete,
            DetermineStart,
            DetermineComplete,
            ElectedStart,
            ElectedComplete,
            ReadyStart,
            ReadyComplete,
            Failed(Error::closed()),
            StopStart,
            StopComplete,
            Suspended,
            Reconnected,
        ]
    }
}

impl Event for ConnectionState {
    fn details(&self) -> EventDetails {
        plain(self.as_str())
    }

    fn every_kind() -> Vec<Self> {
        use ConnectionState::*;
        vec![Connected, Suspended, Reconnected, Lost, Closed]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn distinct(names: Vec<&str>) -> bool {
        let set: std::collections::HashSet<_> = names.iter().collect();
        set.len() == names.len()
    }

    #[test]
    fn every_kind_has_its_own_name_and_its_details() {
        assert!(distinct(LockEvent::names()) && LockEvent::names().len() == 5);
        assert!(distinct(ElectionEvent::names()) && ElectionEvent::names().len() == 14);
        assert!(distinct(ConnectionState::names()) && ConnectionState::names().len() == 5);
        assert_eq!(LockEvent::names()[0], "ACQUIRED");
        assert_eq!(ElectionEvent::names()[9], "FAILED");

        let acquired = LockEvent::Acquired { fencing_token: 3 }.details();
        assert_eq!((acquired.fencing_token, acquired.reason), (Some(3), None));
        let reason = Error::new(ErrorCode::SessionExpired, "gone");
        let lost = LockEvent::Lost {
            reason: reason.clone(),
        }
        .details();
        assert_eq!(
            (lost.fencing_token, lost.reason),
            (None, Some(reason.clone()))
        );
        let failed = ElectionEvent::Failed(reason.clone()).details();
        assert_eq!(failed.reason, Some(reason));
        assert_eq!(ElectionEvent::Start.details(), plain("START"));
    }
}
