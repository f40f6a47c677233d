use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use zkrecipes::ffi::OwnedLock;
use zkrecipes::{Client, Error, ErrorCode, Lock, MultiLock, Owner, ReadWriteLock, Wait};

use crate::callbacks::Value;
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::packing::packed_longs;
use crate::strings::{string, strings};
use crate::{listener, tasks};

export! {
    fn Java_io_zkrecipes_Native_lockNew<'l>(env; client: i64, dir: JString<'l>) -> i64 {
        let dir = string(env, &dir)?;
        Ok(into_handle(Lock::new(
            unsafe { borrow::<Client>(client) }?,
            &dir,
        )?))
    }
}

export! {
    /// A read/write lock; its sides are taken with `rwLockSide`.
    fn Java_io_zkrecipes_Native_rwLockNew<'l>(env; client: i64, dir: JString<'l>) -> i64 {
        let dir = string(env, &dir)?;
        Ok(into_handle(ReadWriteLock::new(
            unsafe { borrow::<Client>(client) }?,
            &dir,
        )?))
    }
}

export! {
    fn Java_io_zkrecipes_Native_rwLockSide<'l>(_env; handle: i64, write: bool) -> i64 {
        let rw = unsafe { borrow::<ReadWriteLock>(handle) }?;
        Ok(into_handle(if write {
            rw.write_lock().clone()
        } else {
            rw.read_lock().clone()
        }))
    }
}

export_free!(Java_io_zkrecipes_Native_rwLockFree, ReadWriteLock);

export_free!(Java_io_zkrecipes_Native_lockFree, Lock);

/// The calls a lock and a multi-lock share (`ffi::OwnedLock`), exported under each one's
/// names: only how the fencing token goes to Java differs (a `Long`, or `long[]`).
macro_rules! owned_lock_exports {
    ($recipe:ty, token: $token:expr, $acquire:ident, $release:ident, $abandon:ident,
     $hold_count:ident, $is_held:ident, $release_all:ident) => {
        export! {
            /// Completes `future` with the fencing token, or `null` if not obtained.
            fn $acquire<'l>(env; handle: i64, owner: i64, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
                let (lock, future) = tasks::target::<$recipe>(env, handle, &future)?;
                let how = Wait::java(forever, timeout_nanos);
                Ok(tasks::spawn(
                    future,
                    move || async move { lock.lock_as(Owner(owner as u64), how).await },
                    |token| token.map_or(Value::Null, $token),
                ))
            }
        }

        export! {
            fn $release<'l>(env; handle: i64, owner: i64, future: JObject<'l>) -> i64 {
                let (lock, future) = tasks::target::<$recipe>(env, handle, &future)?;
                Ok(tasks::spawn(
                    future,
                    // Started here, at the call: a cancelled future cannot stop it.
                    tasks::started(lock.unlock_as(Owner(owner as u64))),
                    |()| Value::Null,
                ))
            }
        }

        export! {
            /// The caller of an acquire gave up after it succeeded (cancel, timeout,
            /// interrupt): the core releases the hold, never keeps it.
            fn $abandon<'l>(_env; handle: i64, owner: i64) -> () {
                unsafe { borrow::<$recipe>(handle) }?.abandon_acquired(Owner(owner as u64));
                Ok(())
            }
        }

        export! {
            fn $hold_count<'l>(_env; handle: i64, owner: i64) -> i32 {
                Ok(unsafe { borrow::<$recipe>(handle) }?.hold_count(Owner(owner as u64)) as i32)
            }
        }

        export! {
            fn $is_held<'l>(_env; handle: i64) -> bool {
                Ok(unsafe { borrow::<$recipe>(handle) }?.is_held())
            }
        }

        export! {
            /// Releases every thread's holds (closing the lock object).
            fn $release_all<'l>(env; handle: i64, future: JObject<'l>) -> i64 {
                let (lock, future) = tasks::target::<$recipe>(env, handle, &future)?;
                Ok(tasks::spawn(
                    future,
                    move || async move {
                        lock.release_all().await;
                        Ok(())
                    },
                    |()| Value::Null,
                ))
            }
        }
    };
}

owned_lock_exports!(
    Lock,
    token: Value::Long,
    Java_io_zkrecipes_Native_lockAcquire,
    Java_io_zkrecipes_Native_lockRelease,
    Java_io_zkrecipes_Native_lockAbandon,
    Java_io_zkrecipes_Native_lockHoldCount,
    Java_io_zkrecipes_Native_lockIsHeld,
    Java_io_zkrecipes_Native_lockReleaseAll
);

owned_lock_exports!(
    MultiLock,
    token: Value::Longs,
    Java_io_zkrecipes_Native_multiLockAcquire,
    Java_io_zkrecipes_Native_multiLockRelease,
    Java_io_zkrecipes_Native_multiLockAbandon,
    Java_io_zkrecipes_Native_multiLockHoldCount,
    Java_io_zkrecipes_Native_multiLockIsHeld,
    Java_io_zkrecipes_Native_multiLockReleaseAll
);

export! {
    /// The fencing token of `owner`'s hold, -1 if it holds none.
    fn Java_io_zkrecipes_Native_lockFencingToken<'l>(_env; handle: i64, owner: i64) -> i64 {
        Ok(unsafe { borrow::<Lock>(handle) }?
            .fencing_token_of(Owner(owner as u64))
            .unwrap_or(-1))
    }
}

export! {
    /// The path of `owner`'s lock node, `null` if it holds none.
    fn Java_io_zkrecipes_Native_lockNodePath<'l>(env; handle: i64, owner: i64) -> JString<'l> {
        match unsafe { borrow::<Lock>(handle) }?.node_path_of(Owner(owner as u64)) {
            Some(path) => Ok(env.new_string(path)?),
            None => Ok(JString::null()),
        }
    }
}

export! {
    /// Completes `future` with `node \t identity \t R|W` lines, holder first.
    fn Java_io_zkrecipes_Native_lockParticipants<'l>(env; handle: i64, future: JObject<'l>) -> i64 {
        let (lock, future) = tasks::target::<Lock>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move { lock.participants().await },
            |list| {
                let lines: Vec<String> = list
                    .into_iter()
                    .map(|p| {
                        format!(
                            "{}\t{}\t{}",
                            p.node,
                            p.identity.replace(['\t', '\n'], " "),
                            if p.is_reader { "R" } else { "W" }
                        )
                    })
                    .collect();
                Value::Text(lines.join("\n"))
            },
        ))
    }
}

export! {
    fn Java_io_zkrecipes_Native_lockSubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let events = unsafe { borrow::<Lock>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward(events, sink))
    }
}

export! {
    /// A multi-lock over `dirs` (a null path is `INVALID_ARGUMENT`).
    fn Java_io_zkrecipes_Native_multiLockNew<'l>(env; client: i64, dirs: JObjectArray<'l, JString<'l>>) -> i64 {
        let dirs: Option<Vec<String>> = strings(env, &dirs)?.into_iter().collect();
        let dirs = dirs.ok_or_else(|| Error::new(ErrorCode::InvalidArgument, "a null path"))?;
        Ok(into_handle(MultiLock::new(
            unsafe { borrow::<Client>(client) }?,
            &dirs,
        )?))
    }
}

export_free!(Java_io_zkrecipes_Native_multiLockFree, MultiLock);

export! {
    /// The path its metrics and spans carry.
    fn Java_io_zkrecipes_Native_multiLockObservedPath<'l>(env; handle: i64) -> JString<'l> {
        Ok(env.new_string(unsafe { borrow::<MultiLock>(handle) }?.observed_path())?)
    }
}

export! {
    /// `owner`'s fencing tokens packed as longs (`Native.longs`), `null` if it holds none.
    fn Java_io_zkrecipes_Native_multiLockFencingTokens<'l>(env; handle: i64, owner: i64) -> JByteArray<'l> {
        match unsafe { borrow::<MultiLock>(handle) }?.fencing_tokens_of(Owner(owner as u64)) {
            Some(tokens) => Ok(env.byte_array_from_slice(&packed_longs(&tokens))?),
            None => Ok(JByteArray::null()),
        }
    }
}
