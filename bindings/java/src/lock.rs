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

export! {
    /// Completes `future` with the fencing token (`Long`) or `null` if not obtained.
    fn Java_io_zkrecipes_Native_lockAcquire<'l>(env; handle: i64, owner: i64, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let lock = unsafe { borrow::<Lock>(handle) }?.clone();
        let future = env.new_global_ref(&future)?;
        let how = Wait::java(forever, timeout_nanos);
        Ok(tasks::spawn(
            future,
            move || async move { lock.lock_as(Owner(owner as u64), how).await },
            |token| match token {
                Some(token) => Value::Long(token),
                None => Value::Null,
            },
        ))
    }
}

export! {
    fn Java_io_zkrecipes_Native_lockRelease<'l>(env; handle: i64, owner: i64, future: JObject<'l>) -> i64 {
        let lock = unsafe { borrow::<Lock>(handle) }?.clone();
        let future = env.new_global_ref(&future)?;
        Ok(tasks::spawn(
            future,
            // Started here, at the call: a cancelled future cannot stop it.
            tasks::started(lock.unlock_as(Owner(owner as u64))),
            |()| Value::Null,
        ))
    }
}

export! {
    fn Java_io_zkrecipes_Native_lockIsHeld<'l>(_env; handle: i64) -> bool { Ok(unsafe { borrow::<Lock>(handle) }?.is_held()) }
}

export! {
    fn Java_io_zkrecipes_Native_lockHoldCount<'l>(_env; handle: i64, owner: i64) -> i32 {
        Ok(unsafe { borrow::<Lock>(handle) }?.hold_count(Owner(owner as u64)) as i32)
    }
}

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
    /// The caller of an acquire gave up after it succeeded (cancel, timeout,
    /// interrupt): the core releases the hold, never keeps it.
    fn Java_io_zkrecipes_Native_lockAbandon<'l>(_env; handle: i64, owner: i64) -> () {
        unsafe { borrow::<Lock>(handle) }?.abandon_acquired(Owner(owner as u64));
        Ok(())
    }
}

export! {
    /// Releases every thread's holds (closing the lock object).
    fn Java_io_zkrecipes_Native_lockReleaseAll<'l>(env; handle: i64, future: JObject<'l>) -> i64 {
        let lock = unsafe { borrow::<Lock>(handle) }?.clone();
        let future = env.new_global_ref(&future)?;
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

export! {
    /// Completes `future` with `node \t identity \t R|W` lines, holder first.
    fn Java_io_zkrecipes_Native_lockParticipants<'l>(env; handle: i64, future: JObject<'l>) -> i64 {
        let lock = unsafe { borrow::<Lock>(handle) }?.clone();
        let future = env.new_global_ref(&future)?;
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
    /// Completes `future` with the fencing tokens (`long[]`, in the order given) or `null`.
    fn Java_io_zkrecipes_Native_multiLockAcquire<'l>(env; handle: i64, owner: i64, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let locks = unsafe { borrow::<MultiLock>(handle) }?.clone();
        let future = env.new_global_ref(&future)?;
        let how = Wait::java(forever, timeout_nanos);
        Ok(tasks::spawn(
            future,
            move || async move { locks.lock_as(Owner(owner as u64), how).await },
            |tokens| tokens.map_or(Value::Null, Value::Longs),
        ))
    }
}

export! {
    fn Java_io_zkrecipes_Native_multiLockRelease<'l>(env; handle: i64, owner: i64, future: JObject<'l>) -> i64 {
        let locks = unsafe { borrow::<MultiLock>(handle) }?.clone();
        let future = env.new_global_ref(&future)?;
        Ok(tasks::spawn(
            future,
            // Started here, at the call: a cancelled future cannot stop it.
            tasks::started(locks.unlock_as(Owner(owner as u64))),
            |()| Value::Null,
        ))
    }
}

export! {
    fn Java_io_zkrecipes_Native_multiLockAbandon<'l>(_env; handle: i64, owner: i64) -> () {
        unsafe { borrow::<MultiLock>(handle) }?.abandon_acquired(Owner(owner as u64));
        Ok(())
    }
}

export! {
    fn Java_io_zkrecipes_Native_multiLockHoldCount<'l>(_env; handle: i64, owner: i64) -> i32 {
        Ok(unsafe { borrow::<MultiLock>(handle) }?.hold_count(Owner(owner as u64)) as i32)
    }
}

export! {
    fn Java_io_zkrecipes_Native_multiLockIsHeld<'l>(_env; handle: i64) -> bool {
        Ok(unsafe { borrow::<MultiLock>(handle) }?.is_held())
    }
}

export! {
    fn Java_io_zkrecipes_Native_multiLockReleaseAll<'l>(env; handle: i64, future: JObject<'l>) -> i64 {
        let locks = unsafe { borrow::<MultiLock>(handle) }?.clone();
        let future = env.new_global_ref(&future)?;
        Ok(tasks::spawn(
            future,
            move || async move {
                locks.release_all().await;
                Ok(())
            },
            |()| Value::Null,
        ))
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
