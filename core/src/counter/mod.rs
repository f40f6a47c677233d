//! Shared counters on Curator's layouts.

mod atomic_long;
mod shared_count;

pub use atomic_long::{DistributedAtomicLong, Updated};
pub use shared_count::{SharedCount, VersionedCount};
