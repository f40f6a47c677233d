//! Who is alive: a node that stays while its owner does, and group membership built on it
//! and on the children cache.

mod member;
mod persistent_node;

pub use member::GroupMember;
pub use persistent_node::{NodeMode, PersistentNode};
