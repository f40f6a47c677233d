//! A persistent node's mode as a binding receives it.

use crate::error::{Error, Result};
use crate::group::NodeMode;

/// A mode by its ZooKeeper `CreateMode` name, in any case: `EPHEMERAL`,
/// `EPHEMERAL_SEQUENTIAL`, `PERSISTENT`, `PERSISTENT_SEQUENTIAL`.
pub fn node_mode(name: &str) -> Result<NodeMode> {
    match name.to_ascii_uppercase().as_str() {
        "EPHEMERAL" => Ok(NodeMode::Ephemeral),
        "EPHEMERAL_SEQUENTIAL" => Ok(NodeMode::EphemeralSequential),
        "PERSISTENT" => Ok(NodeMode::Persistent),
        "PERSISTENT_SEQUENTIAL" => Ok(NodeMode::PersistentSequential),
        _ => Err(Error::invalid_argument(format!(
            "a node mode is EPHEMERAL, EPHEMERAL_SEQUENTIAL, PERSISTENT or PERSISTENT_SEQUENTIAL, got {name:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_by_name_and_nothing_else() {
        assert_eq!(
            node_mode("ephemeral_sequential").unwrap(),
            NodeMode::EphemeralSequential
        );
        assert_eq!(node_mode("PERSISTENT").unwrap(), NodeMode::Persistent);
        let err = node_mode("container").unwrap_err();
        assert!(err.message().ends_with("got \"container\""), "{err}");
    }
}
