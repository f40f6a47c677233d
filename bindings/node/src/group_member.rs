//! Group membership for Node.js: `NativeGroupMember` (Curator's `GroupMember`), which
//! `index.js` wraps as `GroupMember` (an EventEmitter of the group's cache events). A member the
//! program drops unclosed stops re-joining once the garbage collector finds it (its ephemeral
//! node then goes with its session); one with listeners is kept alive by them.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::GroupMember;

use crate::cache::{event_args, CacheCallback};
use crate::client::NativeClient;
use crate::errors::{promise, IntoJs};
use crate::latch::eager;
use crate::listener::{relay_all, NativeSubscription};

/// One member as `members()` lists them (sorted by id); `index.js` makes the Map.
#[napi(object, object_from_js = false)]
pub struct Member {
    pub id: String,
    pub payload: Buffer,
}

#[napi]
pub struct NativeGroupMember {
    inner: GroupMember,
}

#[napi]
impl NativeGroupMember {
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        client: &NativeClient,
        group: String,
        id: String,
        payload: Buffer,
    ) -> napi::Result<Self> {
        let member = GroupMember::new(&client.inner, &group, &id, payload.to_vec());
        Ok(NativeGroupMember {
            inner: member.into_js(env)?,
        })
    }

    #[napi]
    pub fn id(&self) -> String {
        self.inner.id().to_string()
    }

    #[napi]
    pub fn group(&self) -> String {
        self.inner.group().to_string()
    }

    /// Resolves once this member is in its own view; takes effect at the call.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let member = self.inner.clone();
        promise(env, eager(async move { member.start().await }), |()| ())
    }

    #[napi]
    pub fn members(&self) -> Vec<Member> {
        let members = self.inner.members().into_iter();
        members
            .map(|(id, payload)| Member {
                id,
                payload: payload.into(),
            })
            .collect()
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn set_payload<'env>(
        &self,
        env: &'env Env,
        payload: Buffer,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        let (member, payload) = (self.inner.clone(), payload.to_vec());
        promise(
            env,
            async move { member.set_payload(payload).await },
            |()| (),
        )
    }

    /// Resolves once the member's node is deleted, confirmed; takes effect at the call.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let member = self.inner.clone();
        promise(env, eager(async move { member.close().await }), |()| ())
    }

    /// `callback(type, node, old)` for every membership event from now on, as a cache's.
    #[napi(
        ts_args_type = "callback: (type: string, node: CachedNode | null, old: CachedNode | null) => void"
    )]
    pub fn subscribe(&self, callback: CacheCallback) -> NativeSubscription {
        relay_all(self.inner.subscribe(), callback, event_args)
    }
}
