//! Who is alive: a node that stays while its owner does, and group membership built on it
//! and on the children cache.

mod member;
mod persistent_node;
mod turn;

pub use member::GroupMember;
pub(crate) use persistent_node::{NodeEvent, NodeListener};
pub use persistent_node::{NodeMode, PersistentNode};
