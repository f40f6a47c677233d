//! Shared counters on Curator's layouts.

mod atomic_long;
mod shared_count;

pub use atomic_long::{DistributedAtomicLong, Updated};
pub use shared_count::{SharedCount, VersionedCount};

use crate::client::Client;
use crate::error::{Error, ErrorCode, Result};
use crate::observe::catalog::COUNTER_UPDATES;
use crate::observe::{recipe_event, Recipe};

/// Counts one versioned write of a counter (`kind`: `atomic_long` or `shared_count`): applied,
/// or refused because another write came first (a conflict, after which it reads again).
pub(super) fn count_update(client: &Client, path: &str, kind: &'static str, applied: bool) {
    let outcome = if applied { "updated" } else { "conflict" };
    client
        .registry()
        .count(&COUNTER_UPDATES, &[path, kind, outcome]);
    if !applied {
        recipe_event!(
            Recipe::Counter,
            DEBUG,
            path,
            kind,
            outcome,
            "counter {path}: another write came first"
        );
    }
}

/// After a versioned write whose connection dropped (`version`: the version it was written
/// over, `None` for a create of a missing node): `Ok` once the node is known to be still as it
/// was, so the write did not apply and may be sent again. Otherwise `CONNECTION_LOSS` saying
/// the outcome is unknown: the change may be ours or another client's identical write, which
/// no read can tell apart.
pub(super) async fn confirm_not_applied(
    client: &Client,
    path: &str,
    mut session: i64,
    version: Option<i32>,
    what: &str,
) -> Result<()> {
    loop {
        match client.await_usable(session, None).await {
            Ok(()) => {}
            // The session expired with the write on its way. The server refuses every request
            // of an expired session, and orders one it took in before the expiry, hence before
            // the next session: a read on the next session decides as well. (Answering the
            // expiry instead, as before, said SESSION_EXPIRED for a write that may have
            // applied, and a caller retrying on it counted it twice.)
            Err(err) if err.code() == ErrorCode::SessionExpired => {
                let next = client.await_session_after_unless_refused(session).await;
                next.map_err(|err| unknown(what, &err))?;
                session = client.session_id().map_err(|err| unknown(what, &err))?;
            }
            Err(err) => return Err(unknown(what, &err)),
        }
        // On an ensemble the client may come back through another server, whose copy can lag
        // behind a write the old server had already passed to the leader: the sync makes it
        // catch up with all the leader took in first (a write still on its way from the old
        // server once the session moved is refused by the leader, SESSION_MOVED). Without it
        // the read could find the node unchanged, the write be sent again over a version its
        // first copy then took, and the update be counted twice.
        let read = client
            .retrying(None, |zk| async move {
                zk.sync(path).await?;
                zk.check_stat(path).await
            })
            .await;
        match read {
            Ok(now) if now.map(|stat| stat.version) == version => return Ok(()),
            Ok(_) => {
                return Err(Error::new(
                    ErrorCode::ConnectionLoss,
                    format!(
                        "the connection dropped while the {what} was on its way, and the value changed meanwhile: the {what} may or may not have been applied"
                    ),
                ))
            }
            // Expired again before the read answered: decide on the next one.
            Err(err) if err.code() == ErrorCode::SessionExpired => {}
            Err(err) => return Err(unknown(what, &err)),
        }
    }
}

/// A lost write's outcome that could not be learnt: `CONNECTION_LOSS`, whatever stopped the
/// look (a closed client), for the caller must not take it as "not applied".
fn unknown(what: &str, why: &Error) -> Error {
    Error::new(
        ErrorCode::ConnectionLoss,
        format!(
            "the connection dropped while the {what} was on its way, and its outcome cannot be learnt ({why}): the {what} may or may not have been applied"
        ),
    )
}
