//! Claiming: the next item from the prefetch buffer or a new batch claimed in one transaction
//! (a `taken` node and a version-checked rewrite of the entry per item), waiting for a change
//! when nothing is free, and giving items back.

use std::collections::VecDeque;
use std::sync::Arc;

use zookeeper_client as zk;

use super::{Claimed, Inner, ENTRY_PREFIX, OP_OVERHEAD};
use crate::client::MAX_PACKET;
use crate::error::{Error, Result};

/// How a claim transaction ended.
pub(super) struct Claim {
    pub(super) claimed: Vec<Claimed>,
    /// Names read but not claimed (over the packet budget).
    pub(super) left: Vec<String>,
    /// Another consumer claimed (or changed) one of them first.
    pub(super) collided: bool,
    /// Most were gone already: list again.
    pub(super) stale: bool,
}

impl Claim {
    /// The transaction claimed every one of `read` (name, data, version before).
    fn won(read: Vec<(String, Vec<u8>, i32)>, session: i64, left: Vec<String>) -> Claim {
        let claimed = read
            .into_iter()
            .map(|(name, data, version)| Claimed {
                name,
                data,
                version: version + 1,
                session,
            })
            .collect();
        Claim {
            claimed,
            left,
            collided: false,
            stale: false,
        }
    }
}

impl Inner {
    /// Names given back by this object go back into its view of the line,
    /// at their place: the next `consume` sees them again.
    pub(super) async fn requeue(&self, names: Vec<String>) {
        let mut state = self.state.lock().await;
        for name in names {
            if let Err(at) = state.names.binary_search(&name) {
                state.names.insert(at, name);
            }
        }
    }

    /// One claimed item: from the prefetch buffer, else a new batch claimed.
    /// `None` when nothing is available.
    pub(super) async fn next_claimed(self: &Arc<Self>) -> Result<Option<Claimed>> {
        let mut state = self.state.lock().await;
        loop {
            // After `close()` drained the buffer, nothing may refill it.
            self.check_open()?;
            if let Some(claimed) = state.claimed.pop_front() {
                return Ok(Some(claimed));
            }
            if state.names.is_empty() {
                state.names = self.available().await?;
                if state.names.is_empty() {
                    return Ok(None);
                }
            }
            let len = state.names.len();
            let want = self.options.prefetch.min(len);
            // Under contention, consumers spread out over slots of `want`
            // names: claiming the same head in lockstep would let one of C
            // consumers win each round. The slots widen with each race lost
            // and narrow again with each claim won.
            let slots = (1 + 2 * state.collided as usize)
                .min(len / want.max(1))
                .max(1);
            let start = want * fastrand::usize(..slots);
            let picked: Vec<String> = state.names.drain(start..start + want).collect();
            let claim = self.claim(picked).await?;
            if claim.stale {
                state.names.clear();
            } else if claim.collided {
                state.collided = (state.collided + 1).min(8);
                // Our view of the line is stale: drop what others claimed
                // (a short listing; the entries may be 100,000).
                let taken: std::collections::HashSet<String> =
                    self.taken_names().await?.into_iter().collect();
                state.names.retain(|n| !taken.contains(n));
            } else {
                state.collided = state.collided.saturating_sub(1);
                for name in claim.left {
                    if let Err(at) = state.names.binary_search(&name) {
                        state.names.insert(at, name);
                    }
                }
            }
            state.claimed.extend(claim.claimed);
        }
    }

    pub(super) async fn taken_names(&self) -> Result<Vec<String>> {
        self.client.children_if_present(&self.taken).await
    }

    /// Entry names not claimed by anybody, head first.
    pub(super) async fn available(&self) -> Result<VecDeque<String>> {
        let (entries, taken) = (self.entries.as_str(), self.taken.as_str());
        let listed = self
            .client
            .retrying(None, |zk| async move {
                let (entries, taken) =
                    tokio::join!(zk.list_children(entries), zk.list_children(taken));
                let taken = match taken {
                    Ok(taken) => taken,
                    Err(zk::Error::NoNode) => Vec::new(),
                    Err(err) => return Err(err),
                };
                match entries {
                    Ok(entries) => Ok((entries, taken)),
                    Err(zk::Error::NoNode) => Ok((Vec::new(), taken)),
                    Err(err) => Err(err),
                }
            })
            .await?;
        let (mut entries, taken) = listed;
        let taken: std::collections::HashSet<String> = taken.into_iter().collect();
        entries.retain(|e| e.starts_with(ENTRY_PREFIX) && !taken.contains(e));
        entries.sort();
        Ok(entries.into())
    }

    /// Claims `names` in one transaction (those still there and free, as
    /// many as fit in one packet), moving aside the ones past
    /// `max_deliveries`; also returns the names left for a next claim.
    pub(super) async fn claim(&self, names: Vec<String>) -> Result<Claim> {
        let zk = self.client.zk()?;
        let reads: Vec<_> = names
            .iter()
            .map(|n| zk.get_data(&format!("{}/{n}", self.entries)))
            .collect();
        let mut read = Vec::new();
        let picked = names.len();
        for (name, result) in names
            .into_iter()
            .zip(futures_util::future::join_all(reads).await)
        {
            match result {
                Ok((data, stat)) => read.push((name, data, stat.version)),
                Err(zk::Error::NoNode) => {}
                Err(err) => return Err(err.into()),
            }
        }
        drop(zk);
        // Most of them gone: other consumers took them; our listing is stale.
        if read.len() * 2 < picked {
            return Ok(Claim {
                claimed: Vec::new(),
                left: read.into_iter().map(|(n, _, _)| n).collect(),
                collided: false,
                stale: true,
            });
        }
        if self.options.max_deliveries.is_some() {
            let (dead, live): (Vec<_>, Vec<_>) = read
                .into_iter()
                .partition(|(_, _, version)| self.past_max_deliveries(*version));
            for (name, data, version) in dead {
                self.bury(&name, &data, version).await?;
            }
            read = live;
        }
        // The claim rewrites each entry: as many as fit in one packet.
        let mut budget = MAX_PACKET - OP_OVERHEAD;
        let fits = read
            .iter()
            .take_while(|(_, data, _)| {
                let cost = data.len() + 2 * (self.taken.len() + 32) + 2 * OP_OVERHEAD;
                let fits = cost <= budget;
                budget = budget.saturating_sub(cost);
                fits
            })
            .count()
            .max(1);
        let left: Vec<String> = read
            .drain(fits.min(read.len())..)
            .map(|(n, _, _)| n)
            .collect();
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(self.client.acls());
        while !read.is_empty() {
            let zk = self.client.zk()?;
            let session = zk.session_id().0;
            let mut transaction = zk.new_multi_writer();
            for (name, data, version) in &read {
                transaction.add_create(
                    &format!("{}/{name}", self.taken),
                    &self.consumer,
                    &ephemeral,
                )?;
                transaction.add_set_data(
                    &format!("{}/{name}", self.entries),
                    data,
                    Some(*version),
                )?;
            }
            let committed = transaction.commit().await;
            drop(zk);
            match committed {
                Ok(_) => return Ok(Claim::won(read, session, left)),
                // The claims directory is missing (a queue offered by Apache-style code).
                Err(zk::MultiWriteError::OperationFailed {
                    index: 0,
                    source: zk::Error::NoNode,
                }) => self.client.ensure_path(&self.taken, None).await?,
                // Somebody else got one first, or it changed.
                Err(zk::MultiWriteError::OperationFailed { .. }) => {
                    return Ok(Claim {
                        claimed: Vec::new(),
                        left: Vec::new(),
                        collided: true,
                        stale: false,
                    })
                }
                Err(zk::MultiWriteError::RequestFailed { source })
                    if Error::from(source.clone()).is_connection_loss() =>
                {
                    self.client.await_usable(session, None).await?;
                    // All or nothing: our first claim node tells which.
                    let first = format!("{}/{}", self.taken, read[0].0);
                    let f = first.as_str();
                    let stat = self
                        .client
                        .retrying(None, |zk| async move { zk.check_stat(f).await })
                        .await?;
                    if stat.is_some_and(|s| s.ephemeral_owner == session) {
                        return Ok(Claim::won(read, session, left));
                    }
                }
                Err(err) => return Err(zk::Error::from(err).into()),
            }
        }
        Ok(Claim {
            claimed: Vec::new(),
            left,
            collided: false,
            stale: false,
        })
    }

    /// Waits until the entries or the claims change.
    pub(super) async fn wait_for_change(&self) -> Result<()> {
        let (entries, taken) = (self.entries.as_str(), self.taken.as_str());
        let watched = self
            .client
            .retrying(None, |zk| async move {
                let (e, t) = tokio::join!(
                    zk.list_and_watch_children(entries),
                    zk.list_and_watch_children(taken)
                );
                let e = match e {
                    Ok((names, watch)) => Some((names, watch)),
                    Err(zk::Error::NoNode) => None,
                    Err(err) => return Err(err),
                };
                let t = match t {
                    Ok((names, watch)) => Some((names, watch)),
                    Err(zk::Error::NoNode) => None,
                    Err(err) => return Err(err),
                };
                Ok((e, t))
            })
            .await?;
        let (entries, taken) = watched;
        let taken_names: std::collections::HashSet<&String> =
            taken.iter().flat_map(|(names, _)| names.iter()).collect();
        let any_free = entries.iter().any(|(names, _)| {
            names
                .iter()
                .any(|n| n.starts_with(ENTRY_PREFIX) && !taken_names.contains(n))
        });
        if any_free {
            return Ok(());
        }
        let entries_changed = async {
            match entries {
                Some((_, watch)) => {
                    watch.changed().await;
                }
                // No queue yet: it appears with the first offer.
                None => self
                    .client
                    .ensure_path(&self.entries, None)
                    .await
                    .map(|_| ())?,
            }
            Ok::<(), Error>(())
        };
        let taken_changed = async {
            match taken {
                Some((_, watch)) => {
                    watch.changed().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            changed = entries_changed => changed,
            () = taken_changed => Ok(()),
            () = self.client.closed() => Err(Error::closed()),
        }
    }

    /// Deletes our claim on `claimed`: the item is free again, at its place.
    pub(super) async fn release(&self, claimed: &Claimed) -> Result<()> {
        if self.client.session_id().ok() != Some(claimed.session) {
            // The claim went with its session: the item is free already.
            return Ok(());
        }
        let taken = format!("{}/{}", self.taken, claimed.name);
        let t = taken.as_str();
        self.client
            .retrying(None, |zk| async move {
                match zk.delete(t, None).await {
                    Err(zk::Error::NoNode) => Ok(()),
                    other => other,
                }
            })
            .await
    }
}
