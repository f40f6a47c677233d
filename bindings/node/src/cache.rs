//! The caches for Node.js: `NativeCache`, one class for the core's one `Cache` (a node, its
//! children or a subtree, chosen by the factory); `index.js` wraps it as `NodeCache`,
//! `ChildrenCache` and `TreeCache` (EventEmitters). Data is a `Buffer`, zxids and the
//! ephemeral owner (a session id) `bigint`s as `sessionId` is. A cache the program drops stops
//! following once the garbage collector finds it; one with listeners is kept alive by them.

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use zkrecipes::{Cache, CacheEvent};

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};
use crate::latch::eager;
use crate::listener::{relay_all, NativeSubscription};
use crate::promised::promised;

/// The node's `Stat` as the server sent it.
#[napi(object, object_from_js = false)]
pub struct NodeStat {
    pub czxid: BigInt,
    pub mzxid: BigInt,
    pub pzxid: BigInt,
    /// Milliseconds since the epoch.
    pub ctime: i64,
    pub mtime: i64,
    pub version: i32,
    pub cversion: i32,
    pub aversion: i32,
    /// The owning session's id (0n: not ephemeral).
    pub ephemeral_owner: BigInt,
    pub data_length: i32,
    pub num_children: i32,
}

/// What a cache holds of one node.
#[napi(object, object_from_js = false)]
pub struct CachedNode {
    pub path: String,
    pub data: Buffer,
    pub stat: NodeStat,
}

pub fn cached(n: zkrecipes::CachedNode) -> CachedNode {
    let s = n.stat;
    CachedNode {
        path: n.path,
        data: n.data.into(),
        stat: NodeStat {
            czxid: BigInt::from(s.czxid),
            mzxid: BigInt::from(s.mzxid),
            pzxid: BigInt::from(s.pzxid),
            ctime: s.ctime,
            mtime: s.mtime,
            version: s.version,
            cversion: s.cversion,
            aversion: s.aversion,
            ephemeral_owner: BigInt::from(s.ephemeral_owner),
            data_length: s.data_length,
            num_children: s.num_children,
        },
    }
}

/// `(type, node, old)`: the node of `CREATED`, `CHANGED` (the new one) and `DELETED` (the one
/// gone), the old one of `CHANGED`; `null` otherwise.
pub type CacheEventArgs = FnArgs<(String, Option<CachedNode>, Option<CachedNode>)>;

pub type CacheCallback =
    ThreadsafeFunction<CacheEventArgs, (), CacheEventArgs, Status, false, true>;

pub fn event_args(event: CacheEvent) -> CacheEventArgs {
    let name = event.name().to_string();
    let (node, old) = match event {
        CacheEvent::Created(node) | CacheEvent::Deleted(node) => (Some(node), None),
        CacheEvent::Changed { old, new } => (Some(new), Some(old)),
        _ => (None, None),
    };
    (name, node.map(cached), old.map(cached)).into()
}

#[napi]
pub struct NativeCache {
    inner: Cache,
}

fn made(env: &Env, cache: zkrecipes::Result<Cache>) -> napi::Result<NativeCache> {
    Ok(NativeCache {
        inner: cache.into_js(env)?,
    })
}

#[napi]
impl NativeCache {
    #[napi(factory)]
    pub fn node(env: &Env, client: &NativeClient, path: String) -> napi::Result<Self> {
        made(env, Cache::node(&client.inner, &path))
    }

    #[napi(factory)]
    pub fn children(env: &Env, client: &NativeClient, path: String) -> napi::Result<Self> {
        made(env, Cache::children(&client.inner, &path))
    }

    /// `maxDepth` as the caller gave it (`index.js` checked that it is a whole number), or
    /// none: all.
    #[napi(factory)]
    pub fn tree(
        env: &Env,
        client: &NativeClient,
        path: String,
        max_depth: Option<f64>,
    ) -> napi::Result<Self> {
        let max_depth =
            zkrecipes::ffi::max_depth("maxDepth", max_depth.map(|d| d as i128)).into_js(env)?;
        made(env, Cache::tree(&client.inner, &path, max_depth))
    }

    #[napi]
    pub fn path(&self) -> String {
        self.inner.path().to_string()
    }

    /// Resolves once the first load is in the copy; takes effect at the call.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let cache = self.inner.clone();
        promise(env, eager(async move { cache.start().await }), |()| ())
    }

    #[napi]
    pub fn close(&self) {
        self.inner.close();
    }

    #[napi]
    pub fn is_initialized(&self) -> bool {
        self.inner.is_initialized()
    }

    #[napi]
    pub fn get(&self, path: String) -> Option<CachedNode> {
        self.inner.get(&path).map(cached)
    }

    #[napi]
    pub fn has(&self, path: String) -> bool {
        self.inner.get(&path).is_some()
    }

    #[napi]
    pub fn snapshot(&self) -> Vec<CachedNode> {
        self.inner.snapshot().into_iter().map(cached).collect()
    }

    #[napi]
    pub fn children_of(&self, path: String) -> Vec<String> {
        self.inner.children_of(&path)
    }

    #[napi]
    pub fn size(&self) -> u32 {
        self.inner.len() as u32
    }

    /// `callback(type, node, old)` for every event from now on, in order; the deliveries end
    /// when the cache is closed.
    #[napi(
        ts_args_type = "callback: (type: string, node: CachedNode | null, old: CachedNode | null) => void"
    )]
    pub fn subscribe(&self, callback: CacheCallback) -> NativeSubscription {
        relay_all(self.inner.subscribe(), callback, event_args)
    }
}

promised! {
    impl NativeCache {
        // Resolves once the first load is in; rejects with TIMEOUT after `timeoutMs`.
        fn await_initialized(env, timeout_ms: Option<f64>) -> "Promise<void>" () {
            let limit = wait_ms(env, timeout_ms)?.timeout();
        } |cache| cache.await_initialized(limit), |()| ();
    }
}
