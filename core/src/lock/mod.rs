//! Exclusive and read/write locks over sequential ephemeral nodes.

pub(crate) mod attempt;
pub(crate) mod contenders;
pub(crate) mod event;
pub(crate) mod holder;
pub(crate) mod monitor;
pub mod multi_lock;
pub(crate) mod owner;
pub mod read_write_lock;
pub(crate) mod release_node;
pub mod write_lock;
