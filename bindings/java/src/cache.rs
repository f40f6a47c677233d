//! The caches for Java: `Cache` (Curator's `NodeCache`, `PathChildrenCache` and `TreeCache`
//! as one class with a scope).
//!
//! Nodes travel as bytes (`pack_node`): the path and the data, each a 4-byte big-endian length
//! then the bytes, then the stat's fields big-endian in the core's order (`ChildData.read` reads
//! them). A list of nodes is nodes one after the other.

use jni::jni_str;
use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use zkrecipes::{Cache, CacheEvent, CacheScope, CachedNode, Client};

use crate::callbacks::{self, Value};
use crate::client::string;
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::{listener, tasks};

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

export! {
    /// `scope`: 0 the node, 1 its children, 2 its subtree, `max_depth` deep if `limited`
    /// (checked by the core), else all of it.
    fn Java_io_zkrecipes_Native_cacheNew<'l>(env; client: i64, path: JString<'l>, scope: i32, limited: bool, max_depth: i32) -> i64 {
        let path = string(env, &path)?;
        let scope = match scope {
            0 => CacheScope::Node,
            1 => CacheScope::Children,
            _ => CacheScope::Tree {
                max_depth: zkrecipes::ffi::max_depth("maxDepth", limited.then_some(max_depth.into()))?,
            },
        };
        Ok(into_handle(Cache::new(unsafe { borrow::<Client>(client) }?, &path, scope)?))
    }
}

// Freeing the last clone stops the cache (the Cleaner's path).
export_free!(Java_io_zkrecipes_Native_cacheFree, Cache);

export! {
    /// Completes once the first load is in the copy; cancelling it (even at once) leaves the
    /// cache going.
    fn Java_io_zkrecipes_Native_cacheStart<'l>(env; handle: i64, future: JObject<'l>) -> i64 {
        let cache = unsafe { borrow::<Cache>(handle) }?.clone();
        let future = env.new_global_ref(&future)?;
        Ok(tasks::spawn(
            future,
            tasks::started(zkrecipes::ffi::begun(async move { cache.start().await })),
            |()| Value::Null,
        ))
    }
}

export! {
    fn Java_io_zkrecipes_Native_cacheClose<'l>(_env; handle: i64) -> () {
        unsafe { borrow::<Cache>(handle) }?.close();
        Ok(())
    }
}

export! {
    fn Java_io_zkrecipes_Native_cacheIsInitialized<'l>(_env; handle: i64) -> bool {
        Ok(unsafe { borrow::<Cache>(handle) }?.is_initialized())
    }
}

export! {
    fn Java_io_zkrecipes_Native_cacheSize<'l>(_env; handle: i64) -> i32 {
        Ok(i32::try_from(unsafe { borrow::<Cache>(handle) }?.len()).unwrap_or(i32::MAX))
    }
}

export! {
    /// The node at `path`, packed; `null` if not cached.
    fn Java_io_zkrecipes_Native_cacheGet<'l>(env; handle: i64, path: JString<'l>) -> JByteArray<'l> {
        let path = string(env, &path)?;
        match unsafe { borrow::<Cache>(handle) }?.get(&path) {
            Some(node) => Ok(env.byte_array_from_slice(&packed_nodes([&node]))?),
            None => Ok(JByteArray::null()),
        }
    }
}

export! {
    /// Every cached node, sorted by path, packed.
    fn Java_io_zkrecipes_Native_cacheSnapshot<'l>(env; handle: i64) -> JByteArray<'l> {
        let nodes = unsafe { borrow::<Cache>(handle) }?.snapshot();
        Ok(env.byte_array_from_slice(&packed_nodes(&nodes))?)
    }
}

export! {
    /// The names of the cached children of `path`, sorted.
    fn Java_io_zkrecipes_Native_cacheChildren<'l>(env; handle: i64, path: JString<'l>) -> JObjectArray<'l> {
        let path = string(env, &path)?;
        let names = unsafe { borrow::<Cache>(handle) }?.children_of(&path);
        let array = env.new_object_array(
            names.len() as i32,
            jni_str!("java/lang/String"),
            JString::null(),
        )?;
        for (i, name) in names.iter().enumerate() {
            let name = env.new_string(name)?;
            array.set_element(env, i, &name)?;
        }
        Ok(array)
    }
}

export! {
    fn Java_io_zkrecipes_Native_cacheSubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let events = unsafe { borrow::<Cache>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward_all(events, sink, callbacks::cache_event))
    }
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
