//! What a waiting attempt reads: the contenders, the one it waits behind, and a watch on it.

use zookeeper_client as zk;

use super::{LockCore, Side};
use crate::error::{Error, ErrorCode, Result};
use crate::lock::contenders::{self, Contender, Kind};

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

    /// Whether a newcomer would have to wait, judged from a listing alone.
    pub(in crate::lock) fn visibly_blocked(&self, contenders: &[Contender]) -> bool {
        self.blocker(contenders, contenders.len()).is_some()
    }

    pub(in crate::lock) async fn list(&self) -> Result<Vec<Contender>> {
        let dir = self.dir.as_str();
        match self
            .client
            .retrying(None, |zk| async move { zk.list_children(dir).await })
            .await
        {
            Ok(children) => Ok(contenders::sorted(&children)),
            Err(err) if err.code() == ErrorCode::NoNode => Ok(Vec::new()),
            Err(err) => Err(err),
        }
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
}
