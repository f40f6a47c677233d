//! What a waiting attempt reads: the contenders, the one it waits behind, and a watch on it.

use futures_util::FutureExt;
use zookeeper_client as zk;

use super::{LockCore, Side};
use crate::client::let_watch_fire;
use crate::error::{Error, ErrorCode, Result};
use crate::lock::contenders::{self, Contender, Kind};
use crate::lock::monitor::{set_watch, SetWatch};
use crate::runtime;

impl LockCore {
    /// The contender we must wait for, if any.
    pub(in crate::lock) fn blocker<'a>(
        &self,
        contenders: &'a [Contender],
        ours: usize,
    ) -> Option<&'a Contender> {
        match self.side {
            Side::Exclusive | Side::Write | Side::Latch => {
                ours.checked_sub(1).map(|i| &contenders[i])
            }
            Side::Read => contenders[..ours]
                .iter()
                .rev()
                .find(|c| c.kind == Kind::Write),
        }
    }

    /// Whether the blocker of `ours` is all that keeps it from the lock: the
    /// only contender below it that blocks it. Nodes below ours can only go,
    /// never come (a newer node's sequence sorts after ours), so once that
    /// blocker is deleted the lock is ours without another look.
    pub(in crate::lock) fn blocked_only_by_blocker(
        &self,
        contenders: &[Contender],
        ours: usize,
    ) -> bool {
        match self.side {
            Side::Exclusive | Side::Write | Side::Latch => ours == 1,
            Side::Read => {
                contenders[..ours]
                    .iter()
                    .filter(|c| c.kind == Kind::Write)
                    .count()
                    == 1
            }
        }
    }

    /// Whether a newcomer would have to wait, judged from a listing alone.
    pub(in crate::lock) fn visibly_blocked(&self, contenders: &[Contender]) -> bool {
        self.blocker(contenders, contenders.len()).is_some()
    }

    pub(in crate::lock) async fn list(&self) -> Result<Vec<Contender>> {
        let children = self.client.children_if_present(&self.dir).await?;
        Ok(contenders::sorted(&children))
    }

    /// The listing with a child watch, for a waiter that may be next: if it
    /// is, the watch follows its hold at no extra request (a hand-off costs
    /// the holder's delete and this listing).
    pub(in crate::lock) async fn list_watched(
        &self,
    ) -> Result<(Vec<Contender>, Option<zk::OneshotWatcher>)> {
        let dir = self.dir.as_str();
        match self
            .client
            .retrying(
                None,
                |zk| async move { zk.list_and_watch_children(dir).await },
            )
            .await
        {
            Ok((children, watch)) => Ok((contenders::sorted(&children), Some(watch))),
            Err(err) if err.code() == ErrorCode::NoNode => Ok((Vec::new(), None)),
            Err(err) => Err(err),
        }
    }

    /// Arms a data watch on `blocker` and waits for any event on it. A blocker
    /// that is already gone returns at once; the caller re-reads either way.
    pub(in crate::lock) async fn wait_for_change(&self, blocker: &str) -> Result<()> {
        let path = format!("{}/{}", self.dir, blocker);
        let path = path.as_str();
        // Boxed: a waiter spends its life in this function, and the request's
        // future is most of its size (issue 17: memory per waiter).
        let watched = Box::pin(self.client.retrying(None, |zk| async move {
            match zk.get_and_watch_data(path).await {
                Ok((_, _, watcher)) => Ok(Some(watcher)),
                Err(zk::Error::NoNode) => Ok(None),
                Err(err) => Err(err),
            }
        }))
        .await?;
        let Some(watcher) = watched else {
            return Ok(());
        };
        tokio::select! {
            _ = watcher.changed() => Ok(()),
            _ = self.client.closed() => Err(Error::closed()),
        }
    }

    /// For a waiter that is next in line (`blocked_only_by_blocker`): watches
    /// both `blocker` and our own node `own`, both requests in flight at once,
    /// and waits for the first event. The watch on our node, still set, when
    /// the blocker was deleted while our node stayed: the lock is ours, and
    /// that watch follows the hold. `None` for anything else (our node
    /// changed or went, a session event, a failed request): the caller reads
    /// the directory again, as after `wait_for_change`.
    ///
    /// Our node's deletion, if it came first, is known by then: a session's
    /// notifications arrive in the order of the server's transactions.
    pub(in crate::lock) async fn wait_as_next(
        &self,
        blocker: &str,
        own: &str,
    ) -> Result<Option<SetWatch>> {
        let blocker_path = format!("{}/{}", self.dir, blocker);
        let own_path = format!("{}/{}", self.dir, own);
        // Not connected now: the caller's listing waits for the connection.
        let Ok(zk) = self.client.zk() else {
            return Ok(None);
        };
        let (on_blocker, on_own) = tokio::join!(
            zk.get_and_watch_data(&blocker_path),
            zk.get_and_watch_data(&own_path)
        );
        drop(zk);
        let on_blocker = match on_blocker {
            Ok((_, _, watcher)) => Some(watcher),
            Err(zk::Error::NoNode) => None,
            Err(_) => {
                // Whatever was set fires in its own time: dropping a watch costs a request.
                if let Ok((_, _, watcher)) = on_own {
                    let_watch_fire(watcher);
                }
                return Ok(None);
            }
        };
        let own_watch = match on_own {
            Ok((_, _, watcher)) => set_watch(watcher),
            Err(_) => {
                if let Some(watcher) = on_blocker {
                    let_watch_fire(watcher);
                }
                return Ok(None);
            }
        };
        let Some(on_blocker) = on_blocker else {
            // Already gone: ours, unless our own node changed meanwhile.
            return Ok(still_set(own_watch));
        };
        let mut own_watch = own_watch;
        let mut blocker_event = Box::pin(on_blocker.changed());
        tokio::select! {
            event = &mut blocker_event => {
                if event.event_type == zk::EventType::NodeDeleted {
                    Ok(still_set(own_watch))
                } else {
                    drop(runtime::handle().spawn(own_watch));
                    Ok(None)
                }
            }
            _ = &mut own_watch => {
                drop(runtime::handle().spawn(blocker_event));
                Ok(None)
            }
            _ = self.client.closed() => Err(Error::closed()),
        }
    }
}

/// `watch`, unless it has fired already.
fn still_set(mut watch: SetWatch) -> Option<SetWatch> {
    match (&mut watch).now_or_never() {
        Some(_) => None,
        None => Some(watch),
    }
}
