//! How a barrier waiter reads and waits: a look bounded by the caller's deadline (but answered
//! while the connection is up, so that a timeout of zero is a real check), and a wait that
//! wakes on the watch, on any connection change (a removal during a disconnect is seen at the
//! reconnect, where kazoo waits for its timeout), on the client's close, or at the deadline.

use std::future::Future;

use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;
use zookeeper_client as zk;

use crate::client::{while_usable, Client};
use crate::error::{Error, Result};

/// `None` when the deadline passed first.
pub(super) async fn look<T>(
    client: &Client,
    deadline: Option<Instant>,
    request: impl Future<Output = Result<T>>,
) -> Result<Option<T>> {
    let Some(at) = deadline else {
        return request.await.map(Some);
    };
    tokio::pin!(request);
    match tokio::time::timeout_at(at, &mut request).await {
        Ok(answer) => answer.map(Some),
        // Past the deadline, a request on its way is waited for while it can be answered.
        Err(_) => match while_usable(client, request).await {
            Some(answer) => answer.map(Some),
            None => Ok(None),
        },
    }
}

/// Why a wait ended.
pub(super) enum Woke {
    /// The watch fired or the connection changed: look again.
    Again,
    Deadline,
}

pub(super) async fn wait(
    client: &Client,
    watch: zk::OneshotWatcher,
    deadline: Option<Instant>,
) -> Result<Woke> {
    let mut states = client.subscribe();
    let deadline_passed = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = watch.changed() => Ok(Woke::Again),
        state = states.recv() => match state {
            Err(RecvError::Closed) => Err(Error::closed()),
            _ => Ok(Woke::Again),
        },
        _ = client.closed() => Err(Error::closed()),
        () = deadline_passed => Ok(Woke::Deadline),
    }
}
