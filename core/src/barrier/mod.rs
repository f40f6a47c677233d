//! Barriers on Curator's layouts: `DistributedBarrier` (one node: up while it exists) and
//! `DistributedDoubleBarrier` (ephemeral member nodes and a `ready` node).

mod double;
mod look;
mod single;

pub use double::DoubleBarrier;
pub use single::Barrier;
