//! The shared lock of the ZooKeeper recipes page, with Curator's node names.
//!
//! Readers (`__READ__`) share the lock and wait only for the nearest writer
//! below them; a writer (`__WRIT__`) waits for its immediate predecessor. FIFO
//! between the two kinds, so a stream of readers cannot starve a writer.
//! The write holder may also take the read lock (downgrade); a read holder
//! asking for the write lock as the same owner gets `WOULD_DEADLOCK` at once
//! instead of waiting for itself forever. A write request of another owner,
//! or of a caller without an identity, waits for the read holds.

use super::write_lock::{Lock, Side};
use crate::client::Client;
use crate::error::Result;

/// A read/write lock on directory `dir`; each side knows the other, for the
/// downgrade and upgrade rules.
#[derive(Clone)]
pub struct ReadWriteLock {
    read: Lock,
    write: Lock,
}

impl ReadWriteLock {
    pub fn new(client: &Client, dir: &str) -> Result<ReadWriteLock> {
        let read = Lock::with_side(client, dir, Side::Read)?;
        let write = Lock::with_side(client, dir, Side::Write)?;
        read.pair(&write);
        Ok(ReadWriteLock { read, write })
    }

    pub fn read_lock(&self) -> &Lock {
        &self.read
    }

    pub fn write_lock(&self) -> &Lock {
        &self.write
    }
}
