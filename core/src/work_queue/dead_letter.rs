//! Items past `max_deliveries` go to `<path>/dead`, unless somebody holds them.

use zookeeper_client as zk;

use super::Inner;
use crate::error::Result;

impl Inner {
    /// Moves an item past `max_deliveries` to the dead-letter directory,
    /// unless somebody holds it: its version counts the claims, so an item
    /// read at its last version may be in its last delivery right now (found
    /// by the adversarial test: a job acknowledged on its last delivery was
    /// also buried by another consumer). Creating and deleting the claim node
    /// in the same transaction asserts that nobody holds it.
    pub(super) async fn bury(&self, name: &str, data: &[u8], version: i32) -> Result<()> {
        let persistent = zk::CreateMode::Persistent.with_acls(self.client.acls());
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(self.client.acls());
        let claim = format!("{}/{name}", self.taken);
        loop {
            let zk = self.client.zk()?;
            let mut transaction = zk.new_multi_writer();
            transaction.add_create(&claim, &self.consumer, &ephemeral)?;
            transaction.add_delete(&claim, None)?;
            transaction.add_create(&format!("{}/{name}", self.dead), data, &persistent)?;
            transaction.add_delete(&format!("{}/{name}", self.entries), Some(version))?;
            match transaction.commit().await {
                Err(zk::MultiWriteError::OperationFailed {
                    index: 0,
                    source: zk::Error::NoNode,
                }) => self.client.ensure_path(&self.taken, None).await?,
                Ok(_) => {
                    tracing::warn!(
                        "{}/{name} delivered {version} times: moved to {}",
                        self.entries,
                        self.dead
                    );
                    return Ok(());
                }
                Err(zk::MultiWriteError::OperationFailed {
                    index: 2,
                    source: zk::Error::NoNode,
                }) => self.client.ensure_path(&self.dead, None).await?,
                // Already buried, held, or changed: not ours to move.
                Err(zk::MultiWriteError::OperationFailed { .. }) => return Ok(()),
                Err(err) => return Err(zk::Error::from(err).into()),
            }
        }
    }
}
