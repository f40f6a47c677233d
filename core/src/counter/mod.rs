//! Shared counters on Curator's layouts.

mod atomic_long;

pub use atomic_long::{DistributedAtomicLong, Updated};
