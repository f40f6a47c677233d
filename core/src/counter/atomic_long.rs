//! A distributed atomic long on Curator's `DistributedAtomicLong` layout: one persistent node
//! holding the value as 8 bytes, big-endian.
//!
//! Contract, including failures:
//! - Every update is one versioned write (`setData` with the version read, or `create` when the
//!   node is missing), repeated on `BAD_VERSION` / `NODE_EXISTS` until it applies: N increments
//!   from any mix of clients, languages and Curator end at exactly N. A write whose connection
//!   dropped is sent again only if the node is still at the version read (looked at once the
//!   session is back, or on the next one after an expiry), and counted once; if the node
//!   changed, the call answers `CONNECTION_LOSS`: the outcome is unknown (our write or another
//!   client's identical one), never counted twice.
//! - Missing or empty data reads as 0 (as Curator's); any other length is `INVALID_ARGUMENT`
//!   naming the length, never a guess.
//! - Overflow wraps as Java's `long` does (Curator's `add` is `Long` arithmetic).

use zookeeper_client as zk;

use crate::client::Client;
use crate::error::{Error, ErrorCode, Result};
use crate::path;

#[derive(Clone)]
pub struct DistributedAtomicLong {
    client: Client,
    path: String,
}

/// What an update saw and wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Updated {
    pub pre_value: i64,
    pub post_value: i64,
}

impl DistributedAtomicLong {
    /// The counter at `path` (created on the first write). `INVALID_PATH` before anything is
    /// sent.
    pub fn new(client: &Client, path: &str) -> Result<DistributedAtomicLong> {
        path::validate(path)?;
        client.check_open()?;
        Ok(DistributedAtomicLong {
            client: client.clone(),
            path: path.to_string(),
        })
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// The value now (0 while the node does not exist).
    pub async fn get(&self) -> Result<i64> {
        let read = self.read().await.map_err(|err| self.about(err))?;
        Ok(read.map_or(0, |(value, _)| value))
    }

    pub async fn increment(&self) -> Result<Updated> {
        self.add(1).await
    }

    pub async fn decrement(&self) -> Result<Updated> {
        self.add(-1).await
    }

    /// Adds `delta` atomically (wrapping as Java's `long`).
    pub async fn add(&self, delta: i64) -> Result<Updated> {
        let updated = self.update(|value| Some(value.wrapping_add(delta))).await;
        updated
            .map(|u| u.expect("an add always writes"))
            .map_err(|err| self.about(err))
    }

    /// Sets `new` if the value is `expected` now: `false` (nothing written) otherwise.
    pub async fn compare_and_set(&self, expected: i64, new: i64) -> Result<bool> {
        let swapped = self.compare_and_swap(expected, new).await?;
        Ok(swapped.pre_value == expected)
    }

    /// `compare_and_set` that also tells the value it saw (Curator's `AtomicValue`): written
    /// when `pre_value == expected`, and then `post_value` is `new`; otherwise nothing was
    /// written and both are the value seen.
    pub async fn compare_and_swap(&self, expected: i64, new: i64) -> Result<Updated> {
        let seen = std::sync::atomic::AtomicI64::new(0);
        let updated = self
            .update(|value| {
                seen.store(value, std::sync::atomic::Ordering::Relaxed);
                (value == expected).then_some(new)
            })
            .await;
        let seen = seen.load(std::sync::atomic::Ordering::Relaxed);
        updated.map_err(|err| self.about(err)).map(|u| {
            u.unwrap_or(Updated {
                pre_value: seen,
                post_value: seen,
            })
        })
    }

    /// Sets `value` whatever the value was (Curator's `forceSet`).
    pub async fn force_set(&self, value: i64) -> Result<()> {
        let updated = self.update(|_| Some(value)).await;
        updated.map(|_| ()).map_err(|err| self.about(err))
    }

    /// Reads, computes and writes with the version read until a write applies; `None` when
    /// `next` declined to write.
    async fn update(&self, next: impl Fn(i64) -> Option<i64>) -> Result<Option<Updated>> {
        loop {
            let read = self.read().await?;
            let pre_value = read.map_or(0, |(value, _)| value);
            let Some(post_value) = next(pre_value) else {
                return Ok(None);
            };
            let data = post_value.to_be_bytes();
            let written = match read {
                Some((_, version)) => self.write_versioned(&data, version).await,
                None => self.create(&data).await,
            };
            if let Ok(applied) = written {
                super::count_update(&self.client, &self.path, "atomic_long", applied);
            }
            match written {
                Ok(true) => {
                    return Ok(Some(Updated {
                        pre_value,
                        post_value,
                    }))
                }
                // Somebody wrote first: read again.
                Ok(false) => {}
                Err(err) => return Err(err),
            }
        }
    }

    /// `(value, version)`, `None` when the node does not exist.
    async fn read(&self) -> Result<Option<(i64, i32)>> {
        match self.client.read_if_present(&self.path).await? {
            Some((data, stat)) => Ok(Some((decode(&data)?, stat.version))),
            None => Ok(None),
        }
    }

    /// `false` when another write came first.
    async fn write_versioned(&self, data: &[u8], version: i32) -> Result<bool> {
        let zk = self.client.zk()?;
        let session = zk.session_id().0;
        let written = zk.set_data(&self.path, data, Some(version)).await;
        drop(zk);
        match written.map_err(Error::from) {
            Ok(_) => Ok(true),
            Err(err) if matches!(err.code(), ErrorCode::BadVersion | ErrorCode::NoNode) => {
                Ok(false)
            }
            Err(err) if err.is_connection_loss() => self.after_loss(session, Some(version)).await,
            Err(err) => Err(err),
        }
    }

    /// `false` when another client created the node first.
    async fn create(&self, data: &[u8]) -> Result<bool> {
        let zk = self.client.zk()?;
        let session = zk.session_id().0;
        let options = zk::CreateMode::Persistent.with_acls(self.client.acls());
        let created = zk.create(&self.path, data, &options).await;
        drop(zk);
        match created.map_err(Error::from) {
            Ok(_) => Ok(true),
            Err(err) if err.code() == ErrorCode::NoNode => {
                let parent = &self.path[..self.path.rfind('/').unwrap_or(0).max(1)];
                self.client.ensure_container(parent, None).await?;
                Ok(false)
            }
            Err(err) if err.code() == ErrorCode::NodeExists => Ok(false),
            Err(err) if err.is_connection_loss() => self.after_loss(session, None).await,
            Err(err) => Err(err),
        }
    }

    /// A write whose reply was lost: if the node is still as we read it (`version`, or missing
    /// for a create), the write did not apply and the update reads again (`false`); otherwise
    /// `CONNECTION_LOSS` (`confirm_not_applied`), rather than a guess that would count an
    /// increment twice or not at all.
    async fn after_loss(&self, session: i64, version: Option<i32>) -> Result<bool> {
        super::confirm_not_applied(&self.client, &self.path, session, version, "update").await?;
        Ok(false)
    }

    fn about(&self, err: Error) -> Error {
        self.client.about(err, "atomic long", &self.path)
    }
}

/// Curator's encoding: 8 bytes big-endian; empty is 0.
fn decode(data: &[u8]) -> Result<i64> {
    match data.len() {
        0 => Ok(0),
        8 => Ok(i64::from_be_bytes(data.try_into().expect("8 bytes"))),
        n => Err(Error::invalid_argument(format!(
            "an atomic long's node holds 8 bytes (big-endian), this one {n}"
        ))),
    }
}
