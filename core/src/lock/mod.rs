//! Exclusive and read/write locks over sequential ephemeral nodes.

pub(crate) mod attempt;
pub(crate) mod contenders;
pub(crate) mod holder;
pub(crate) mod monitor;
pub mod read_write_lock;
pub mod write_lock;
