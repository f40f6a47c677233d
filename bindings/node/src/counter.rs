//! The counters for Node.js: `NativeAtomicLong` (Curator's `DistributedAtomicLong`, values as
//! `bigint`) and `NativeSharedCount` (Curator's `SharedCount`, values as 32-bit numbers);
//! `index.js` wraps them as `DistributedAtomicLong` and `SharedCount` (an EventEmitter of
//! 'change'). `index.js` checks the numbers' types and widths before they get here. A count the
//! program drops unclosed stops following its node once the garbage collector finds it.

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use zkrecipes::ffi::{int32, int64};
use zkrecipes::{DistributedAtomicLong, SharedCount, VersionedCount};

use crate::client::NativeClient;
use crate::errors::IntoJs;
use crate::listener::{relay, NativeSubscription};
use crate::promised::promised;

/// What an atomic long's update saw and wrote.
#[napi(object, object_from_js = false)]
pub struct Update {
    pub pre_value: BigInt,
    pub post_value: BigInt,
}

fn update(u: zkrecipes::Updated) -> Update {
    Update {
        pre_value: BigInt::from(u.pre_value),
        post_value: BigInt::from(u.post_value),
    }
}

/// A shared count's value with the node version it was read at.
#[napi(object)]
pub struct Versioned {
    pub value: i32,
    pub version: i32,
}

fn versioned(v: VersionedCount) -> Versioned {
    Versioned {
        value: v.value,
        version: v.version,
    }
}

/// `(value, version)` for every value a shared count takes.
type CountArgs = FnArgs<(i32, i32)>;

pub type CountCallback = ThreadsafeFunction<CountArgs, (), CountArgs, Status, false, true>;

/// A `bigint` as the caller gave it, checked by the core (`int64`): one beyond 128 bits is
/// refused as the nearest 128-bit number.
fn long(env: &Env, name: &str, value: BigInt) -> napi::Result<i64> {
    let (wide, lossless) = value.get_i128();
    let wide = match (lossless, value.sign_bit) {
        (true, _) => wide,
        (false, true) => i128::MIN,
        (false, false) => i128::MAX,
    };
    int64(name, wide).into_js(env)
}

/// A whole `number` as the caller gave it (`index.js` checked that it is one), checked by the
/// core (`int32`).
fn int(env: &Env, name: &str, value: f64) -> napi::Result<i32> {
    int32(name, value as i128).into_js(env)
}

#[napi]
pub struct NativeAtomicLong {
    inner: DistributedAtomicLong,
}

#[napi]
impl NativeAtomicLong {
    #[napi(constructor)]
    pub fn new(env: &Env, client: &NativeClient, path: String) -> napi::Result<Self> {
        Ok(NativeAtomicLong {
            inner: DistributedAtomicLong::new(&client.inner, &path).into_js(env)?,
        })
    }

    #[napi]
    pub fn path(&self) -> String {
        self.inner.path().to_string()
    }
}

promised! {
    impl NativeAtomicLong {
        // The value now (0 while the node does not exist).
        fn get(env) -> "Promise<bigint>" BigInt {} |counter| counter.get(), BigInt::from;
        fn increment(env) -> "Promise<Update>" Update {} |counter| counter.increment(), update;
        fn decrement(env) -> "Promise<Update>" Update {} |counter| counter.decrement(), update;
        fn add(env, delta: BigInt) -> "Promise<Update>" Update {
            let delta = long(env, "delta", delta)?;
        } |counter| counter.add(delta), update;
        fn compare_and_set(env, expected: BigInt, new_value: BigInt) -> "Promise<boolean>" bool {
            let (expected, new) = (
            long(env, "expected", expected)?,
            long(env, "newValue", new_value)?,
            );
        } |counter| counter.compare_and_set(expected, new), |set| set;
        fn force_set(env, value: BigInt) -> "Promise<void>" () {
            let value = long(env, "value", value)?;
        } |counter| counter.force_set(value), |()| ();
    }
}

#[napi]
pub struct NativeSharedCount {
    inner: SharedCount,
}

#[napi]
impl NativeSharedCount {
    #[napi(constructor)]
    pub fn new(env: &Env, client: &NativeClient, path: String, seed: f64) -> napi::Result<Self> {
        let seed = int(env, "seed", seed)?;
        Ok(NativeSharedCount {
            inner: SharedCount::new(&client.inner, &path, seed).into_js(env)?,
        })
    }

    #[napi]
    pub fn path(&self) -> String {
        self.inner.path().to_string()
    }

    /// Stops following, at once (the cache keeps its last value).
    #[napi]
    pub fn close(&self) {
        self.inner.close();
    }

    /// The cached value; `INVALID_ARGUMENT` before `start`.
    #[napi]
    pub fn get(&self, env: &Env) -> napi::Result<i32> {
        self.inner.get().into_js(env)
    }

    #[napi]
    pub fn versioned(&self, env: &Env) -> napi::Result<Versioned> {
        self.inner.versioned().map(versioned).into_js(env)
    }

    /// `callback(value, version)` for every value the count takes.
    #[napi(ts_args_type = "callback: (value: number, version: number) => void")]
    pub fn subscribe(&self, callback: CountCallback) -> NativeSubscription {
        relay(self.inner.subscribe(), callback, |v| {
            (v.value, v.version).into()
        })
    }
}

promised! {
    impl NativeSharedCount {
        // Creates the node with the seed if it is missing, reads it and follows it.
        fn start(env) -> "Promise<void>" () {} |count| count.start(), |()| ();
        // The value on the server now, without starting: the seed while missing or empty.
        fn read(env) -> "Promise<number>" i32 {} |count| count.read(), |value| value;
        fn add(env, delta: f64) -> "Promise<Versioned>" Versioned {
            let delta = int(env, "delta", delta)?;
        } |count| count.add(delta), versioned;
        fn set(env, value: f64) -> "Promise<void>" () {
            let value = int(env, "value", value)?;
        } |count| count.set(value), |()| ();
        // false when the node is no longer at `expected`'s version.
        fn try_set(env, expected_value: f64, expected_version: f64, value: f64) -> "Promise<boolean>" bool {
            let expected = VersionedCount {
            value: int(env, "expected.value", expected_value)?,
            version: int(env, "expected.version", expected_version)?,
            };
            let value = int(env, "value", value)?;
        } |count| count.try_set(expected, value), |set| set;
    }
}
