use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::OwnedLock;
use zkrecipes::{Lock, MultiLock, Owner, Wait};

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};
use crate::listener::{forward, EventCallback, NativeSubscription};

// JavaScript has no caller identity (one thread, any number of async
// functions): outside a scope every acquire is its own owner, so concurrent
// acquirers of one object exclude each other (a write waits for the object's
// read holds), and a release ends the object's oldest hold. `withLock` names
// its async flow with an owner of `new_owner()` (an AsyncLocalStorage in
// index.js), which the flow's acquires and releases pass here: reentrancy,
// downgrade and the refused upgrade then hold per flow, as per thread in Java.

/// An owner for one async flow's scope.
#[napi(ts_return_type = "bigint")]
pub fn new_owner() -> BigInt {
    BigInt::from(Owner::scope().0)
}

fn owner_of(owner: Option<BigInt>) -> Owner {
    owner.map_or_else(Owner::unique, |owner| Owner(owner.get_u64().1))
}

#[napi(object)]
pub struct Participant {
    pub node: String,
    pub identity: String,
    pub is_reader: bool,
}

#[napi]
pub struct NativeLock {
    pub(crate) inner: Lock,
}

#[napi]
impl NativeLock {
    #[napi(constructor)]
    pub fn new(env: &Env, client: &NativeClient, dir: String) -> napi::Result<Self> {
        Ok(NativeLock {
            inner: Lock::new(&client.inner, &dir).into_js(env)?,
        })
    }

    #[napi]
    pub fn fencing_token(&self) -> Option<BigInt> {
        self.inner.fencing_token().map(BigInt::from)
    }

    #[napi]
    pub fn fencing_token_of(&self, owner: BigInt) -> Option<BigInt> {
        self.inner
            .fencing_token_of(owner_of(Some(owner)))
            .map(BigInt::from)
    }

    #[napi]
    pub fn dir(&self) -> String {
        self.inner.dir().to_string()
    }

    #[napi(ts_return_type = "Promise<Array<Participant>>")]
    pub fn participants<'env>(
        &self,
        env: &'env Env,
    ) -> napi::Result<PromiseRaw<'env, Vec<Participant>>> {
        let lock = self.inner.clone();
        let listing = async move { lock.participants().await };
        promise(env, listing, |list| {
            list.into_iter()
                .map(|p| Participant {
                    node: p.node,
                    identity: p.identity,
                    is_reader: p.is_reader,
                })
                .collect()
        })
    }

    #[napi]
    pub fn subscribe(&self, callback: EventCallback) -> NativeSubscription {
        forward(self.inner.subscribe(), callback)
    }
}

/// The calls a lock and a multi-lock share: `#[napi]` methods of `$native`, whose acquire
/// answers `$token` (`$ts` in TypeScript), made by `$to_js` from the core's fencing.
macro_rules! owned_lock_methods {
    ($native:ident, $token:ty, $ts:literal, $to_js:expr) => {
        #[napi]
        impl $native {
            /// The fencing, or `null` if not obtained.
            #[napi(ts_return_type = $ts)]
            pub fn lock<'env>(
                &self,
                env: &'env Env,
                blocking: bool,
                timeout_ms: Option<f64>,
                owner: Option<BigInt>,
            ) -> napi::Result<PromiseRaw<'env, Option<$token>>> {
                let how = if blocking {
                    wait_ms(env, timeout_ms)?
                } else {
                    Wait::No
                };
                let lock = self.inner.clone();
                let owner = owner_of(owner);
                let locking = async move { lock.lock_as(owner, how).await };
                promise(env, locking, |token| token.map($to_js))
            }

            /// Releases the oldest hold taken outside any scope.
            #[napi(ts_return_type = "Promise<void>")]
            pub fn unlock<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
                promise(env, self.inner.unlock_one(), |()| ())
            }

            /// Releases every hold of this object, scopes' included (`Symbol.asyncDispose`).
            #[napi(ts_return_type = "Promise<void>")]
            pub fn unlock_all<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
                let lock = self.inner.clone();
                let releasing = async move {
                    lock.release_all().await;
                    Ok(())
                };
                promise(env, releasing, |()| ())
            }

            /// Releases one hold of a scope's owner.
            #[napi(ts_return_type = "Promise<void>")]
            pub fn unlock_as<'env>(
                &self,
                env: &'env Env,
                owner: BigInt,
            ) -> napi::Result<PromiseRaw<'env, ()>> {
                promise(env, self.inner.unlock_as(owner_of(Some(owner))), |()| ())
            }

            #[napi]
            pub fn hold_count_of(&self, owner: BigInt) -> u32 {
                self.inner.hold_count(owner_of(Some(owner)))
            }

            /// The scope's holds as the recipe keeps them, for routing its releases.
            #[napi]
            pub fn releases_owed(&self, owner: BigInt) -> u32 {
                self.inner.releases_owed(owner_of(Some(owner)))
            }

            #[napi]
            pub fn is_held(&self) -> bool {
                self.inner.is_held()
            }

            #[napi]
            pub fn hold_count(&self) -> u32 {
                self.inner.holders() as u32
            }
        }
    };
}

owned_lock_methods!(NativeLock, BigInt, "Promise<bigint | null>", BigInt::from);
owned_lock_methods!(
    NativeMultiLock,
    Vec<BigInt>,
    "Promise<Array<bigint> | null>",
    big_ints
);

/// Exclusive locks on several paths, taken together (all or none) in path order; owners as
/// `NativeLock`'s.
#[napi]
pub struct NativeMultiLock {
    inner: MultiLock,
}

#[napi]
impl NativeMultiLock {
    #[napi(constructor)]
    pub fn new(env: &Env, client: &NativeClient, dirs: Vec<String>) -> napi::Result<Self> {
        Ok(NativeMultiLock {
            inner: MultiLock::new(&client.inner, &dirs).into_js(env)?,
        })
    }

    #[napi]
    pub fn fencing_tokens(&self) -> Option<Vec<BigInt>> {
        self.inner.fencing_tokens().map(big_ints)
    }

    #[napi]
    pub fn fencing_tokens_of(&self, owner: BigInt) -> Option<Vec<BigInt>> {
        self.inner
            .fencing_tokens_of(owner_of(Some(owner)))
            .map(big_ints)
    }

    #[napi]
    pub fn dirs(&self) -> Vec<String> {
        self.inner.dirs().into_iter().map(str::to_string).collect()
    }

    /// The path its metrics and spans carry.
    #[napi]
    pub fn observed_path(&self) -> String {
        self.inner.observed_path()
    }
}

fn big_ints(tokens: Vec<i64>) -> Vec<BigInt> {
    tokens.into_iter().map(BigInt::from).collect()
}
