//! Exclusive and read/write locks over sequential ephemeral nodes.

pub(crate) mod contenders;
pub mod read_write_lock;
pub mod write_lock;
