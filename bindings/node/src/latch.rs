//! The leader latch for Node.js: `NativeLeaderLatch` (`index.js` wraps it as `LeaderLatch`,
//! an EventEmitter). A latch the program drops unclosed is closed once the garbage collector
//! finds it (the core closes a latch whose last handle is dropped); a latch with listeners is
//! kept alive by them.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::latch_id;
use zkrecipes::{LatchParticipant, LeaderLatch};

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};
use crate::listener::{forward, EventCallback, NativeSubscription};
use crate::promised::promised;

#[napi(object)]
pub struct LatchMember {
    /// The id the participant started with.
    pub id: String,
    pub node: String,
    pub is_leader: bool,
}

fn member(p: LatchParticipant) -> LatchMember {
    LatchMember {
        id: p.id,
        node: p.node,
        is_leader: p.is_leader,
    }
}

#[napi]
pub struct NativeLeaderLatch {
    inner: LeaderLatch,
}

/// Runs `future` as far as it goes at once, here, then hands the rest over: the core's
/// `start` and `close` take effect at their first poll, and a Promise's future is first polled
/// on another thread, so `latch.start(); latch.close()` unawaited could otherwise close first
/// (and the start answer CLOSED). The election's start and stop take effect at the call too.
pub(crate) fn eager<T, F>(future: F) -> impl Future<Output = T> + Send + 'static
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let mut future = Box::pin(future);
    let first = {
        // The core's futures use the core runtime's timers and tasks.
        let _runtime = zkrecipes::runtime::runtime().enter();
        let mut cx = Context::from_waker(Waker::noop());
        future.as_mut().poll(&mut cx)
    };
    async move {
        match first {
            Poll::Ready(value) => value,
            Poll::Pending => future.await,
        }
    }
}

#[napi]
impl NativeLeaderLatch {
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        client: &NativeClient,
        path: String,
        id: Option<String>,
    ) -> napi::Result<Self> {
        let id = latch_id(&client.inner, id.as_deref());
        Ok(NativeLeaderLatch {
            inner: LeaderLatch::new(&client.inner, &path, &id).into_js(env)?,
        })
    }

    /// Resolves once in line (leading or not); takes effect at the call.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let latch = self.inner.clone();
        promise(env, eager(async move { latch.start().await }), |()| ())
    }

    /// Resolves once the node is withdrawn; takes effect at the call.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let latch = self.inner.clone();
        promise(env, eager(async move { latch.close().await }), |()| ())
    }

    #[napi]
    pub fn has_leadership(&self) -> bool {
        self.inner.has_leadership()
    }

    #[napi]
    pub fn fencing_token(&self) -> Option<BigInt> {
        self.inner.fencing_token().map(BigInt::from)
    }

    #[napi]
    pub fn is_started(&self) -> bool {
        self.inner.is_started()
    }

    #[napi]
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    #[napi]
    pub fn path(&self) -> String {
        self.inner.path().to_string()
    }

    #[napi]
    pub fn id(&self) -> String {
        self.inner.id().to_string()
    }

    #[napi]
    pub fn node_path(&self) -> Option<String> {
        self.inner.node_path()
    }

    #[napi]
    pub fn subscribe(&self, callback: EventCallback) -> NativeSubscription {
        forward(self.inner.subscribe(), callback)
    }
}

promised! {
    impl NativeLeaderLatch {
        // The fencing token once leading; `null` when `timeoutMs` passed first (0: a check).
        fn await_leadership(env, timeout_ms: Option<f64>) -> "Promise<bigint | null>" Option<BigInt> {
            let limit = wait_ms(env, timeout_ms)?;
        } |latch| latch.await_leadership(limit), |token| token.map(BigInt::from);
        fn leader(env) -> "Promise<LatchMember | null>" Option<LatchMember> {} |latch| latch.leader(), |p| p.map(member);
        fn participants(env) -> "Promise<Array<LatchMember>>" Vec<LatchMember> {} |latch| latch.participants(), |list| { list.into_iter().map(member).collect() };
    }
}
