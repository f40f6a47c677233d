//! Giving an item back to the queue (a caller's `give_back`, an item whose caller went away),
//! with a receipt that makes a retry after a connection loss safe.

use super::*;

impl Inner {
    /// Re-creates a claimed item under its own name and drops our claim
    /// marker, in one transaction with a receipt of its own: after a lost
    /// reply the receipt tells whether the item went back, so a retry never
    /// re-creates an item that went back and was consumed meanwhile (a
    /// duplicate delivery, found by the torture suite). The receipt is
    /// persistent because the answer must outlive a session that expires in
    /// that very moment (an item lost, found by the torture suite); it is
    /// deleted once read, and a receipt left by a process killed in between is
    /// swept by any consumer after `RECEIPT_TTL`.
    pub(super) async fn give_back(&self, item: &Item, mut marker: Option<String>) -> Result<()> {
        let _settling = self.client.settling();
        let path = format!("{}/{}", self.dir, item.name);
        let written = std::time::SystemTime::now();
        let receipt = format!(
            "{}/{RECEIPT_PREFIX}{}-{}-{}",
            self.bookkeeping,
            unix_millis(written),
            self.consumer,
            uuid::Uuid::new_v4().simple()
        );
        let persistent = zk::CreateMode::Persistent.with_acls(self.client.acls());
        let mut backoff = Backoff::new(Duration::from_millis(5), Duration::from_secs(1));
        loop {
            let zk = match self.client.zk() {
                Ok(zk) => zk,
                Err(err) => return Err(not_back(item, err)),
            };
            let mut transaction = zk.new_multi_writer();
            transaction.add_create(&path, &item.data, &persistent)?;
            transaction.add_create(&receipt, &[], &persistent)?;
            if let Some(marker) = marker.as_deref() {
                transaction.add_delete(marker, None)?;
            }
            let committed = transaction.commit().await;
            drop(zk);
            match committed {
                Ok(_) => break,
                Err(zk::MultiWriteError::OperationFailed {
                    index: 0,
                    source: zk::Error::NodeExists,
                }) => {
                    // Back already: our marker goes all the same, as it would have with it.
                    if let Some(marker) = marker.as_deref() {
                        let _ = crate::client::delete_confirmed(&self.client, marker).await;
                    }
                    return Ok(());
                }
                Err(zk::MultiWriteError::OperationFailed {
                    index: 1,
                    source: zk::Error::NoNode,
                }) => {
                    if let Err(err) = self.client.ensure_container(&self.bookkeeping, None).await {
                        return Err(not_back(item, err));
                    }
                }
                // The marker went with an expired session: give back without it.
                Err(zk::MultiWriteError::OperationFailed {
                    index: 2,
                    source: zk::Error::NoNode,
                }) => marker = None,
                Err(zk::MultiWriteError::RequestFailed { source })
                    if matches!(
                        Error::from(source.clone()).code(),
                        ErrorCode::ConnectionLoss | ErrorCode::SessionExpired
                    ) =>
                {
                    let r = receipt.as_str();
                    let applied = self
                        .client
                        .retrying_any_session(|zk| async move { zk.check_stat(r).await })
                        .await
                        .map_err(|err| not_back(item, err))?
                        .is_some();
                    if applied {
                        break;
                    }
                    if written.elapsed().unwrap_or_default() > RECEIPT_TTL / 2 {
                        // Another consumer may have swept our receipt: unknown.
                        return Err(not_back(
                            item,
                            Error::new(ErrorCode::ConnectionLoss, "cut off too long"),
                        ));
                    }
                    backoff.sleep().await;
                }
                Err(err) => return Err(zk::Error::from(err).into()),
            }
        }
        // Back in our cache too, at its place, before our next claim (it is
        // in the queue from here on): otherwise we would find it only once the
        // cache is used up (a given-back item overtaken by 722 of 800, with
        // one consumer, found by an adversarial review).
        self.to_put_back
            .lock()
            .expect("not poisoned")
            .push(item.name.clone());
        let r = receipt.as_str();
        self.client
            .retrying_any_session(|zk| async move {
                match zk.delete(r, None).await {
                    Err(zk::Error::NoNode) => Ok(()),
                    other => other,
                }
            })
            .await?;
        self.sweep_receipts().await;
        Ok(())
    }

    /// Deletes receipts that outlived `RECEIPT_TTL`: their give-back was
    /// settled long ago, and the process that wrote them is gone. Run after
    /// every give-back (the only writer of receipts), in the background.
    async fn sweep_receipts(&self) {
        let Ok(zk) = self.client.zk() else { return };
        let Ok(children) = zk.list_children(&self.bookkeeping).await else {
            return;
        };
        drop(zk);
        let now = unix_millis(std::time::SystemTime::now());
        let stale: Vec<String> = children
            .iter()
            .filter(|child| {
                receipt_written(child)
                    .is_some_and(|at| now.saturating_sub(at) > RECEIPT_TTL.as_millis() as u64)
            })
            .map(|child| format!("{}/{}", self.bookkeeping, child))
            .collect();
        if stale.is_empty() {
            return;
        }
        let client = self.client.clone();
        runtime::handle().spawn(async move {
            for path in stale {
                if let Ok(zk) = client.zk() {
                    let _ = zk.delete(&path, None).await;
                }
            }
        });
    }
}

pub(super) fn not_back(item: &Item, err: Error) -> Error {
    Error::new(
        err.code(),
        format!("item {} may not have gone back: {err}", item.name),
    )
}

fn unix_millis(at: std::time::SystemTime) -> u64 {
    at.duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

/// When a receipt `back-<unix ms>-<consumer>-<uuid>` was written.
fn receipt_written(name: &str) -> Option<u64> {
    name.strip_prefix(RECEIPT_PREFIX)?
        .split('-')
        .next()?
        .parse()
        .ok()
}
