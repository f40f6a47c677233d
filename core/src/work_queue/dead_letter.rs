//! Items past `max_deliveries` go to `<path>/dead`, unless somebody holds them.

use zookeeper_client as zk;

use super::Inner;
use crate::error::Result;
use crate::observe::catalog::WORK_QUEUE_DEAD_LETTERS;
use crate::observe::{recipe_event, Recipe};

impl Inner {
    /// Whether an entry at `version` (its delivery count) had every delivery it is allowed:
    /// the next claim of it moves it to the dead letters instead.
    pub(super) fn past_max_deliveries(&self, version: i32) -> bool {
        let max = self.options.max_deliveries;
        max.is_some_and(|max| i64::from(version) >= i64::from(max))
    }

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
                    self.client
                        .registry()
                        .count(&WORK_QUEUE_DEAD_LETTERS, &[&self.path]);
                    let (path, dead) = (self.path.as_str(), self.dead.as_str());
                    recipe_event!(
                        Recipe::WorkQueue,
                        WARN,
                        path,
                        job = name,
                        delivery_count = version,
                        "work queue {path}: {name} delivered {version} times: moved to {dead}"
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
