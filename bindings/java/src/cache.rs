//! The caches for Java: `Cache` (Curator's `NodeCache`, `PathChildrenCache` and `TreeCache`
//! as one class with a scope). Nodes travel as bytes (`packing::packed_nodes`).

use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use zkrecipes::{Cache, CacheScope, Client};

use crate::callbacks::{self, Value};
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::packing::packed_nodes;
use crate::strings::{string, string_array};
use crate::{listener, tasks};

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
        let (cache, future) = tasks::target::<Cache>(env, handle, &future)?;
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
        string_array(env, &names)
    }
}

export! {
    fn Java_io_zkrecipes_Native_cacheSubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let events = unsafe { borrow::<Cache>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward_all(events, sink, callbacks::cache_event))
    }
}
