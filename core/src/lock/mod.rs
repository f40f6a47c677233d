//! Exclusive and read/write locks over sequential ephemeral nodes.

mod attempt;
pub(crate) mod contenders;
mod holder;
pub mod read_write_lock;
pub mod write_lock;
