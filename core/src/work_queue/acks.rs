//! Acknowledgements: each deletes its entry and claim with the entry's version checked, and
//! the ones sent while a transaction is being committed go together in the next.

use std::sync::Arc;

use tokio::sync::oneshot;
use zookeeper_client as zk;

use super::{claim_lost, claim_taken_over, Claimed, Inner};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime;

#[derive(Default)]
pub(super) struct AckBatch {
    pub(super) pending: Vec<(Claimed, oneshot::Sender<Result<()>>)>,
    pub(super) committing: bool,
}

impl Inner {
    /// Acknowledges `claimed`, together with the acks sent meanwhile.
    pub(super) async fn ack(self: &Arc<Self>, claimed: Claimed) -> Result<()> {
        let (done, result) = oneshot::channel();
        let flush = {
            let mut acks = self.acks.lock().unwrap();
            acks.pending.push((claimed, done));
            !std::mem::replace(&mut acks.committing, true)
        };
        if flush {
            // Runs to its end whoever waits: the acks of other callers ride on it.
            let inner = self.clone();
            runtime::handle().spawn(async move { inner.flush_acks().await });
        }
        result
            .await
            .map_err(|_| Error::new(ErrorCode::Internal, "ack task ended"))?
    }

    pub(super) async fn flush_acks(self: Arc<Self>) {
        loop {
            let batch = {
                let mut acks = self.acks.lock().unwrap();
                if acks.pending.is_empty() {
                    acks.committing = false;
                    return;
                }
                std::mem::take(&mut acks.pending)
            };
            self.commit_acks(batch).await;
        }
    }

    pub(super) async fn commit_acks(&self, mut batch: Vec<(Claimed, oneshot::Sender<Result<()>>)>) {
        while !batch.is_empty() {
            let session = self.client.session_id().ok();
            // Claims of an ended session are not ours any more.
            let (gone, ours): (Vec<_>, Vec<_>) = batch
                .into_iter()
                .partition(|(c, _)| Some(c.session) != session);
            for (claimed, done) in gone {
                let _ = done.send(Err(claim_lost(&claimed)));
            }
            batch = ours;
            if batch.is_empty() {
                return;
            }
            let zk = match self.client.zk() {
                Ok(zk) => zk,
                Err(err) => {
                    for (_, done) in batch {
                        let _ = done.send(Err(err.clone()));
                    }
                    return;
                }
            };
            let mut transaction = zk.new_multi_writer();
            for (claimed, _) in &batch {
                let entry = format!("{}/{}", self.entries, claimed.name);
                let taken = format!("{}/{}", self.taken, claimed.name);
                if transaction
                    .add_delete(&entry, Some(claimed.version))
                    .is_err()
                    || transaction.add_delete(&taken, None).is_err()
                {
                    break;
                }
            }
            let committed = transaction.commit().await;
            drop(zk);
            match committed {
                Ok(_) => {
                    for (_, done) in batch {
                        let _ = done.send(Ok(()));
                    }
                    return;
                }
                Err(zk::MultiWriteError::OperationFailed { index, .. }) => {
                    // That one is not ours to delete: the rest go in the next
                    // round. An entry already gone was acknowledged by the
                    // consumer that claimed it after us (our own ack cut off by
                    // a connection loss is judged by the retry below, never
                    // here), so ours did not take effect.
                    let (claimed, done) = batch.remove(index / 2);
                    let _ = done.send(Err(claim_taken_over(&claimed)));
                }
                Err(zk::MultiWriteError::RequestFailed { source }) => {
                    let err = Error::from(source);
                    if !err.is_connection_loss() {
                        for (_, done) in batch {
                            let _ = done.send(Err(err.clone()));
                        }
                        return;
                    }
                    // Retried in the same session: an ack applied before the
                    // reply was lost finds its entry gone (counted as done).
                    let Some(session) = session else { return };
                    if let Err(err) = self.client.await_usable(session, None).await {
                        for (_, done) in batch {
                            let _ = done.send(Err(err.clone()));
                        }
                        return;
                    }
                    let mut still = Vec::new();
                    for (claimed, done) in batch {
                        let entry = format!("{}/{}", self.entries, claimed.name);
                        let e = entry.as_str();
                        match self
                            .client
                            .retrying(None, |zk| async move { zk.check_stat(e).await })
                            .await
                        {
                            Ok(None) => {
                                let _ = done.send(Ok(()));
                            }
                            Ok(Some(_)) => still.push((claimed, done)),
                            Err(err) => {
                                let _ = done.send(Err(err));
                            }
                        }
                    }
                    batch = still;
                }
            }
        }
    }
}
