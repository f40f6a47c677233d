//! The producer side: items created in batches that fit one packet, each named by its
//! priority so that names sort by priority, then FIFO.

use zookeeper_client as zk;

use super::{priority, Inner, ENTRY_PREFIX, OP_OVERHEAD};
use crate::client::MAX_PACKET;
use crate::error::{Error, Result};
use crate::observe::catalog::WORK_QUEUE_OFFERS;
use crate::observe::{recipe_event, Recipe};

impl Inner {
    pub(super) async fn ensure_dirs(&self) -> Result<()> {
        self.client.ensure_path(&self.entries, None).await?;
        self.client.ensure_path(&self.taken, None).await
    }

    pub(super) async fn offer_all<D: AsRef<[u8]>>(
        &self,
        items: &[D],
        priority: u16,
    ) -> Result<Vec<String>> {
        let priority = self::priority(i64::from(priority))?;
        let prefix = format!("{}/{ENTRY_PREFIX}{priority:03}-", self.entries);
        let chroot = self.client.chroot_len();
        let limit = self.payload_limit(chroot);
        if let Some(big) = items.iter().find(|d| d.as_ref().len() > limit) {
            return Err(Error::invalid_argument(format!(
                "payload of {} bytes exceeds the queue limit of {limit} bytes",
                big.as_ref().len()
            )));
        }
        let mut names = Vec::with_capacity(items.len());
        let mut start = 0;
        while start < items.len() {
            // As many items as fit in one packet.
            let mut end = start;
            let mut bytes = OP_OVERHEAD;
            while end < items.len() {
                let cost = items[end].as_ref().len() + prefix.len() + chroot + OP_OVERHEAD;
                if end > start && bytes + cost > MAX_PACKET {
                    break;
                }
                bytes += cost;
                end += 1;
            }
            names.extend(self.create_batch(&prefix, &items[start..end]).await?);
            start = end;
        }
        Ok(names)
    }

    pub(super) async fn create_batch<D: AsRef<[u8]>>(
        &self,
        prefix: &str,
        items: &[D],
    ) -> Result<Vec<String>> {
        let options = zk::CreateMode::PersistentSequential.with_acls(self.client.acls());
        loop {
            let zk = self.client.zk()?;
            let mut transaction = zk.new_multi_writer();
            for item in items {
                transaction.add_create(prefix, item.as_ref(), &options)?;
            }
            // Not retried after a connection loss: it may have been applied.
            match transaction.commit().await {
                Ok(results) => {
                    let names: Vec<String> = results
                        .into_iter()
                        .filter_map(|r| match r {
                            zk::MultiWriteResult::Create { path, .. } => Some(path),
                            _ => None,
                        })
                        .collect();
                    self.offered(names.len());
                    return Ok(names);
                }
                Err(zk::MultiWriteError::OperationFailed {
                    source: zk::Error::NoNode,
                    ..
                }) => self.ensure_dirs().await?,
                Err(err) => return Err(zk::Error::from(err).into()),
            }
        }
    }

    /// Counts `jobs` offers that the server took (one batch: a batch cut off by a connection
    /// loss is not counted, as its outcome is unknown).
    fn offered(&self, jobs: usize) {
        let path = self.path.as_str();
        let registry = self.client.registry();
        registry.add(&registry.key(&WORK_QUEUE_OFFERS, &[path]), jobs as i64);
        recipe_event!(
            Recipe::WorkQueue,
            DEBUG,
            path,
            jobs,
            "work queue {path}: {jobs} offered"
        );
    }
}
