//! Deleting a holder's node: a release, or the finding that the node was lost first.

use crate::client::{expired, Client};
use crate::error::{Error, ErrorCode, Result};

/// How a release ended on the server.
pub(crate) enum Released {
    Deleted,
    /// The node was already gone (session expired, deleted by somebody else).
    Lost(Error),
}

/// Deletes our node `path` of `session`, retrying across connection losses
/// in that session. A node that is gone before our first delete, or a session
/// that ended, is a lost lock, not a release.
/// `noun` names what the node is ("lock", "lease") in the loss's message.
pub(crate) async fn release_node(
    client: &Client,
    noun: &str,
    path: &str,
    session: i64,
) -> Result<Released> {
    let mut retried = false;
    loop {
        let zk = client.zk()?;
        if zk.session_id().0 != session {
            return Ok(Released::Lost(expired()));
        }
        match zk.delete(path, None).await.map_err(Error::from) {
            Ok(()) => return Ok(Released::Deleted),
            // After a lost reply, "no node" is our own earlier delete.
            Err(err) if err.code() == ErrorCode::NoNode && retried => return Ok(Released::Deleted),
            Err(err) if err.code() == ErrorCode::NoNode => {
                return Ok(Released::Lost(deleted(noun, path)))
            }
            Err(err) if err.code() == ErrorCode::SessionExpired => {
                return Ok(Released::Lost(expired()))
            }
            Err(err) if err.is_connection_loss() => {
                drop(zk);
                retried = true;
                match client.await_usable(session, None).await {
                    Ok(()) => {}
                    Err(err) if err.code() == ErrorCode::SessionExpired => {
                        return Ok(Released::Lost(expired()))
                    }
                    Err(err) => return Err(err),
                }
            }
            Err(err) => return Err(err),
        }
    }
}

pub(crate) fn deleted(noun: &str, path: &str) -> Error {
    Error::new(
        ErrorCode::NoNode,
        format!("{noun} node {path} was deleted by somebody else"),
    )
}
