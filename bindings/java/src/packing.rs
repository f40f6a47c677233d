//! How values travel to Java when a JNI call cannot give them as objects: as bytes and longs
//! that the Java classes read back.
//!
//! A node (`pack_node`): the path and the data, each a 4-byte big-endian length then the bytes,
//! then the stat's fields big-endian in the core's order (`ChildData.read` reads them). A list of
//! nodes is nodes one after the other. A shared count's value travels with its version as one
//! `long` (`packed`): read together, they stay together, which two calls could not promise.

use zkrecipes::{CacheEvent, CachedNode, VersionedCount};

pub fn pack_node(bytes: &mut Vec<u8>, node: &CachedNode) {
    for part in [node.path.as_bytes(), &node.data] {
        bytes.extend_from_slice(&(part.len() as u32).to_be_bytes());
        bytes.extend_from_slice(part);
    }
    let s = &node.stat;
    for long in [s.czxid, s.mzxid, s.pzxid, s.ctime, s.mtime] {
        bytes.extend_from_slice(&long.to_be_bytes());
    }
    for int in [s.version, s.cversion, s.aversion] {
        bytes.extend_from_slice(&int.to_be_bytes());
    }
    bytes.extend_from_slice(&s.ephemeral_owner.to_be_bytes());
    for int in [s.data_length, s.num_children] {
        bytes.extend_from_slice(&int.to_be_bytes());
    }
}

pub fn packed_nodes<'a>(nodes: impl IntoIterator<Item = &'a CachedNode>) -> Vec<u8> {
    let mut bytes = Vec::new();
    for node in nodes {
        pack_node(&mut bytes, node);
    }
    bytes
}

/// An event's nodes: `CREATED` the new one, `CHANGED` the old then the new, `DELETED` the one
/// deleted; the connection events none.
pub fn packed_event(event: &CacheEvent) -> Vec<u8> {
    match event {
        CacheEvent::Created(node) | CacheEvent::Deleted(node) => packed_nodes([node]),
        CacheEvent::Changed { old, new } => packed_nodes([old, new]),
        _ => Vec::new(),
    }
}

/// Longs big-endian, one after the other (`Native.longs` reads them).
pub fn packed_longs(longs: &[i64]) -> Vec<u8> {
    longs.iter().flat_map(|long| long.to_be_bytes()).collect()
}

/// The version in the high 32 bits, the value in the low 32 (`SharedCount.unpack` reads it).
pub fn packed(versioned: VersionedCount) -> i64 {
    (i64::from(versioned.version) << 32) | i64::from(versioned.value as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkrecipes::NodeStat;

    #[test]
    fn a_packed_node_is_its_path_data_and_stat_in_order() {
        let stat = NodeStat {
            czxid: 1,
            mzxid: 2,
            pzxid: 3,
            ctime: 4,
            mtime: 5,
            version: 6,
            cversion: 7,
            aversion: 8,
            ephemeral_owner: -9,
            data_length: 2,
            num_children: 11,
        };
        let node = CachedNode {
            path: "/é".into(),
            data: vec![0, 255],
            stat,
        };
        let bytes = packed_nodes([&node]);
        let mut expected = vec![0, 0, 0, 3, b'/', 0xc3, 0xa9, 0, 0, 0, 2, 0, 255];
        for long in [1i64, 2, 3, 4, 5] {
            expected.extend_from_slice(&long.to_be_bytes());
        }
        for int in [6i32, 7, 8] {
            expected.extend_from_slice(&int.to_be_bytes());
        }
        expected.extend_from_slice(&(-9i64).to_be_bytes());
        for int in [2i32, 11] {
            expected.extend_from_slice(&int.to_be_bytes());
        }
        assert_eq!(bytes, expected);
        let changed = CacheEvent::Changed {
            old: node.clone(),
            new: node.clone(),
        };
        assert_eq!(packed_event(&changed).len(), 2 * bytes.len());
        assert!(packed_event(&CacheEvent::Initialized).is_empty());
    }
}
