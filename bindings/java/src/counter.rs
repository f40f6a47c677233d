//! The counters for Java: `SharedCount` (Curator's) and `DistributedAtomicLong` (Curator's).
//!
//! A shared count's value travels with its version as one `long` (`packed`): read together,
//! they stay together, which two calls could not promise. An atomic long's update travels as
//! 16 bytes, the value before then the value after, each 8 bytes big-endian.

use jni::objects::{JObject, JString};
use zkrecipes::{Client, DistributedAtomicLong, SharedCount, Updated, VersionedCount};

use crate::callbacks::{self, Value};
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::packing::packed;
use crate::strings::string;
use crate::{listener, tasks};

fn updated(updated: Updated) -> Value {
    let mut bytes = updated.pre_value.to_be_bytes().to_vec();
    bytes.extend_from_slice(&updated.post_value.to_be_bytes());
    Value::Bytes(bytes)
}

export! {
    fn Java_io_zkrecipes_Native_sharedCountNew<'l>(env; client: i64, path: JString<'l>, seed: i32) -> i64 {
        let path = string(env, &path)?;
        Ok(into_handle(SharedCount::new(unsafe { borrow::<Client>(client) }?, &path, seed)?))
    }
}

export_free!(Java_io_zkrecipes_Native_sharedCountFree, SharedCount);

export! {
    /// `op`: 0 start, 1 set `value` (completes with `null`), 2 add `value` (completes with the
    /// `packed` value written, as a `Long`).
    fn Java_io_zkrecipes_Native_sharedCountCall<'l>(env; handle: i64, op: i32, value: i32, future: JObject<'l>) -> i64 {
        let (count, future) = tasks::target::<SharedCount>(env, handle, &future)?;
        Ok(match op {
            0 => tasks::spawn(future, move || async move { count.start().await }, |()| Value::Null),
            1 => tasks::spawn(future, move || async move { count.set(value).await }, |()| Value::Null),
            _ => tasks::spawn(
                future,
                move || async move { count.add(value).await },
                |written| Value::Long(packed(written)),
            ),
        })
    }
}

export! {
    /// Completes with `Boolean`: false when the count was not at `expected`'s version any more.
    fn Java_io_zkrecipes_Native_sharedCountTrySet<'l>(env; handle: i64, expected: i64, value: i32, future: JObject<'l>) -> i64 {
        let expected = VersionedCount {
            value: expected as i32,
            version: (expected >> 32) as i32,
        };
        let (count, future) = tasks::target::<SharedCount>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move { count.try_set(expected, value).await },
            Value::Bool,
        ))
    }
}

export! {
    /// The cached value with its version, `packed`.
    fn Java_io_zkrecipes_Native_sharedCountVersioned<'l>(_env; handle: i64) -> i64 {
        Ok(packed(unsafe { borrow::<SharedCount>(handle) }?.versioned()?))
    }
}

export! {
    fn Java_io_zkrecipes_Native_sharedCountClose<'l>(_env; handle: i64) -> () {
        unsafe { borrow::<SharedCount>(handle) }?.close();
        Ok(())
    }
}

export! {
    fn Java_io_zkrecipes_Native_sharedCountSubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let values = unsafe { borrow::<SharedCount>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward_with(values, sink, callbacks::count))
    }
}

export! {
    fn Java_io_zkrecipes_Native_atomicLongNew<'l>(env; client: i64, path: JString<'l>) -> i64 {
        let path = string(env, &path)?;
        Ok(into_handle(DistributedAtomicLong::new(unsafe { borrow::<Client>(client) }?, &path)?))
    }
}

export_free!(
    Java_io_zkrecipes_Native_atomicLongFree,
    DistributedAtomicLong
);

export! {
    /// `op`: 0 get (`Long`), 1 increment, 2 decrement, 3 add `a` (each: the update's 16
    /// bytes), 4 compare `a` and set `b` (the swap's 16 bytes: the value seen, and `b` if written), 5 force set `a` (`null`).
    fn Java_io_zkrecipes_Native_atomicLongCall<'l>(env; handle: i64, op: i32, a: i64, b: i64, future: JObject<'l>) -> i64 {
        let (counter, future) = tasks::target::<DistributedAtomicLong>(env, handle, &future)?;
        Ok(match op {
            0 => tasks::spawn(future, move || async move { counter.get().await }, Value::Long),
            1 => tasks::spawn(future, move || async move { counter.increment().await }, updated),
            2 => tasks::spawn(future, move || async move { counter.decrement().await }, updated),
            3 => tasks::spawn(future, move || async move { counter.add(a).await }, updated),
            4 => tasks::spawn(future, move || async move { counter.compare_and_swap(a, b).await }, updated),
            _ => tasks::spawn(future, move || async move { counter.force_set(a).await }, |()| Value::Null),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_count_keeps_both_halves_whatever_their_sign() {
        for (value, version) in [(0, 0), (-1, 7), (i32::MIN, i32::MAX), (i32::MAX, -1)] {
            let p = packed(VersionedCount { value, version });
            assert_eq!(((p >> 32) as i32, p as i32), (version, value));
        }
    }
}
