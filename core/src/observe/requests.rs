//! The client-wide numbers and events: every request sent, by operation, and every change of
//! the connection state.

use std::sync::Arc;

use zookeeper_client as zk;

use super::catalog::{REQUESTS, SESSION_STATE_CHANGES};
use super::events::session_hex;
use super::registry::Registry;
use crate::client::ConnectionState;

/// What the session crate calls with each request it sends (`zk::RequestObserver`): a count by
/// operation, and a debug event naming the path.
pub(crate) fn request_observer(registry: &Arc<Registry>) -> zk::RequestObserver {
    let registry = registry.clone();
    Arc::new(move |op: &'static str, path: Option<&str>| {
        registry.count(&REQUESTS, &[op]);
        tracing::debug!(target: "zkrecipes::request", op, path, "{op} {}", path.unwrap_or(""));
    })
}

/// Counts and logs a change of the connection state. `session`: the session's id, when there is one.
pub(crate) fn state_changed(registry: &Registry, state: ConnectionState, session: Option<i64>) {
    let to = state.as_str().to_ascii_lowercase();
    registry.count(&SESSION_STATE_CHANGES, &[&to]);
    let Some(session) = session.map(session_hex) else {
        // Closed: the session is gone already.
        tracing::info!(target: "zkrecipes::session", state = state.as_str(), "client {}", state.as_str());
        return;
    };
    let session = session.as_str();
    match state {
        ConnectionState::Lost => tracing::warn!(
            target: "zkrecipes::session", state = state.as_str(), session,
            "session {session}: LOST (expired); holds and leaderships of this session are gone"
        ),
        _ => tracing::info!(
            target: "zkrecipes::session", state = state.as_str(), session,
            "session {session}: {}", state.as_str()
        ),
    }
}
