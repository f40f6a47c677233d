//! Claiming an item: one transaction that deletes it and marks the claim as ours, so that after
//! a connection loss the marker tells whether our delete happened.

use super::*;

impl Inner {
    /// Takes `name` (whose data the caller holds) and, in the same round trip,
    /// reads the data of `next` and (if `list_peers`) lists the claim markers.
    /// Not claimed if another consumer got it first.
    ///
    /// The delete is one transaction with the creation of an ephemeral claim
    /// marker (and the removal of our previous one): after a connection loss the
    /// marker tells whether *our* delete happened, so an item is neither lost nor
    /// delivered twice. Still one write and one round trip per item.
    pub(super) async fn claim(
        &self,
        name: &str,
        next: Option<String>,
        mut previous: Option<String>,
        list_peers: bool,
    ) -> Result<Claim> {
        let path = format!("{}/{}", self.dir, name);
        let next_path = next.as_ref().map(|n| format!("{}/{}", self.dir, n));
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(self.client.acls());
        loop {
            let zk = self.client.zk()?;
            let session = zk.session_id().0;
            let marker = format!(
                "{}/claim-{:x}-{}-{}",
                self.bookkeeping, session as u64, self.consumer, name
            );
            let mut transaction = zk.new_multi_writer();
            transaction.add_delete(&path, None)?;
            transaction.add_create(&marker, &[], &ephemeral)?;
            if let Some(previous) = previous.as_deref() {
                transaction.add_delete(previous, None)?;
            }
            let committed = transaction.commit();
            // Sent after the claim, so answered after it: the listing shows
            // our new marker and every claim committed before ours.
            let reads = self.read_after_claim(&zk, next_path.as_deref(), list_peers)?;
            let (committed, (next_data, markers)) = tokio::join!(committed, reads);
            drop(zk);
            let prefetched = next.clone().zip(next_data);
            match committed {
                Ok(_) => {
                    return Ok(Claim {
                        claimed: true,
                        marker: Some(marker),
                        prefetched,
                        markers,
                    })
                }
                Err(zk::MultiWriteError::OperationFailed {
                    index: 0,
                    source: zk::Error::NoNode,
                }) => {
                    return Ok(Claim {
                        claimed: false,
                        marker: previous,
                        prefetched,
                        markers,
                    })
                }
                // No bookkeeping directory yet (or removed while empty).
                Err(zk::MultiWriteError::OperationFailed {
                    index: 1,
                    source: zk::Error::NoNode,
                }) => {
                    self.client
                        .ensure_container(&self.bookkeeping, None)
                        .await?
                }
                // Our previous marker is gone (a new session): claim without it.
                Err(zk::MultiWriteError::OperationFailed {
                    index: 2,
                    source: zk::Error::NoNode,
                }) => previous = None,
                Err(zk::MultiWriteError::RequestFailed { source })
                    if Error::from(source.clone()).is_connection_loss() =>
                {
                    if self.claim_applied(session, &marker).await? {
                        return Ok(Claim {
                            claimed: true,
                            marker: Some(marker),
                            prefetched: None,
                            markers: None,
                        });
                    }
                    // Not applied: the item is still there, or somebody else took it.
                }
                Err(err) => return Err(zk::Error::from(err).into()),
            }
        }
    }

    /// The reads sent with a claim, as one request: the data of the item
    /// `next` (if still there) and the claim markers (if `list_markers`).
    fn read_after_claim<'z>(
        &self,
        zk: &'z zk::Client,
        next: Option<&str>,
        list_markers: bool,
    ) -> Result<std::pin::Pin<Box<dyn Future<Output = ReadAfterClaim> + Send + 'z>>> {
        // Alone, the read of the next item's data is a plain `getData`, as
        // before the split: `multiRead` needs ZooKeeper 3.6 or later. On an
        // older server (it refused one to this client) the two reads go as
        // two requests, pipelined.
        if !list_markers || self.client.has_no_multi_read() {
            let read = next.map(|next| zk.get_data(next));
            let listing = list_markers.then(|| zk.list_children(&self.bookkeeping));
            return Ok(Box::pin(async move {
                let data = match read {
                    Some(read) => read.await.ok().map(|(data, _)| data),
                    None => None,
                };
                let markers = match listing {
                    Some(listing) => listing.await.ok(),
                    None => None,
                };
                (data, markers)
            }));
        }
        let mut reads = zk.new_multi_reader();
        if let Some(next) = next {
            reads.add_get_data(next)?;
        }
        reads.add_get_children(&self.bookkeeping)?;
        let sent = reads.commit();
        let client = self.client.clone();
        Ok(Box::pin(async move {
            let (mut data, mut markers) = (None, None);
            let results = sent.await;
            if let Err(zk::Error::Unimplemented) = results {
                // ZooKeeper before 3.6, which closed the connection too: not asked again.
                client.refuses_multi_read();
            }
            for result in results.into_iter().flatten() {
                match result {
                    zk::MultiReadResult::Data { data: read, .. } => data = Some(read),
                    zk::MultiReadResult::Children { children } => markers = Some(children),
                    // Gone (the next item), or not made yet (the markers'
                    // directory): nothing learned.
                    _ => {}
                }
            }
            (data, markers)
        }))
    }

    /// After a claim transaction's reply was lost: whether the server applied it (its new claim
    /// marker exists), asked once `session` is usable again.
    pub(super) async fn claim_applied(&self, session: i64, marker: &str) -> Result<bool> {
        self.client.await_usable(session, None).await?;
        let ours = self
            .client
            .retrying(None, |zk| async move { zk.check_stat(marker).await })
            .await?;
        Ok(ours.is_some())
    }
}

/// Names taken out of the cache to be claimed: if the poll ends before their
/// claim is sent (its caller gone, a failed read), they go back into the
/// cache before the next claim. Otherwise they were found only once the cache
/// was used up: the first item of a queue, its take interrupted in a read,
/// was delivered after all 499 others (found by an adversarial review).
pub(super) struct Unclaimed<'a> {
    to_put_back: &'a std::sync::Mutex<Vec<String>>,
    names: Vec<String>,
}

impl<'a> Unclaimed<'a> {
    pub(super) fn new(inner: &'a Inner, names: Vec<String>) -> Unclaimed<'a> {
        Unclaimed {
            to_put_back: &inner.to_put_back,
            names,
        }
    }

    /// Claimed, or found gone: no longer ours to put back. Until then (a read or a claim
    /// that failed, a caller that gave up), the names go back into the cache.
    pub(super) fn settled(mut self) {
        self.names.clear();
    }
}

impl Drop for Unclaimed<'_> {
    fn drop(&mut self) {
        if !self.names.is_empty() {
            let mut to_put_back = self.to_put_back.lock().expect("not poisoned");
            to_put_back.append(&mut self.names);
        }
    }
}
