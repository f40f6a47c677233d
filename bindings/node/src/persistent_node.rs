//! The self-healing node for Node.js: `NativePersistentNode` (Curator's `PersistentNode`),
//! which `index.js` wraps as `PersistentNode`. A node the program drops unclosed stops being
//! re-created once the garbage collector finds it (an ephemeral one then goes with its
//! session).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::PersistentNode;

use crate::client::NativeClient;
use crate::errors::{promise, IntoJs};
use crate::latch::eager;

#[napi]
pub struct NativePersistentNode {
    inner: PersistentNode,
}

#[napi]
impl NativePersistentNode {
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        client: &NativeClient,
        path: String,
        mode: String,
        data: Buffer,
    ) -> napi::Result<Self> {
        let mode = zkrecipes::ffi::node_mode(&mode).into_js(env)?;
        Ok(NativePersistentNode {
            inner: PersistentNode::new(&client.inner, &path, mode, data.to_vec()).into_js(env)?,
        })
    }

    #[napi]
    pub fn path(&self) -> String {
        self.inner.path().to_string()
    }

    /// Resolves with the node's path once it exists; takes effect at the call.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn start<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, String>> {
        let node = self.inner.clone();
        promise(env, eager(async move { node.start().await }), |path| path)
    }

    #[napi]
    pub fn actual_path(&self) -> Option<String> {
        self.inner.actual_path()
    }

    #[napi]
    pub fn data(&self) -> Buffer {
        self.inner.data().into()
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn set_data<'env>(
        &self,
        env: &'env Env,
        data: Buffer,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        let (node, data) = (self.inner.clone(), data.to_vec());
        promise(env, async move { node.set_data(data).await }, |()| ())
    }

    /// Resolves once the node is deleted, confirmed; takes effect at the call.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let node = self.inner.clone();
        promise(env, eager(async move { node.close().await }), |()| ())
    }
}
