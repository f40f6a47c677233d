//! The connection states a client and its recipes' holders are told.

/// Curator's vocabulary. `Suspended`: disconnected, the session may live on.
/// `Lost`: the session expired, every ephemeral node of it is gone; the client
/// then opens a new session by itself and reports `Reconnected`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConnectionState {
    Connected,
    Suspended,
    Reconnected,
    Lost,
    Closed,
}

impl ConnectionState {
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionState::Connected => "CONNECTED",
            ConnectionState::Suspended => "SUSPENDED",
            ConnectionState::Reconnected => "RECONNECTED",
            ConnectionState::Lost => "LOST",
            ConnectionState::Closed => "CLOSED",
        }
    }

    pub(crate) fn is_usable(self) -> bool {
        matches!(
            self,
            ConnectionState::Connected | ConnectionState::Reconnected
        )
    }
}
