//! The barriers for Java: `Barrier` (Curator's `DistributedBarrier`) and `DoubleBarrier`
//! (Curator's `DistributedDoubleBarrier`).

use jni::objects::{JObject, JString};
use zkrecipes::ffi::member_count;
use zkrecipes::{Barrier, Client, DoubleBarrier, Wait};

use crate::callbacks::Value;
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::strings::string;
use crate::tasks;

export! {
    fn Java_io_zkrecipes_Native_barrierNew<'l>(env; client: i64, path: JString<'l>) -> i64 {
        let path = string(env, &path)?;
        Ok(into_handle(Barrier::new(unsafe { borrow::<Client>(client) }?, &path)?))
    }
}

export_free!(Java_io_zkrecipes_Native_barrierFree, Barrier);

export! {
    /// `op`: 0 set, 1 remove, 2 whether it is set (`Boolean`).
    fn Java_io_zkrecipes_Native_barrierCall<'l>(env; handle: i64, op: i32, future: JObject<'l>) -> i64 {
        let (barrier, future) = tasks::target::<Barrier>(env, handle, &future)?;
        Ok(match op {
            0 => tasks::spawn(future, move || async move { barrier.set().await }, |()| Value::Null),
            1 => tasks::spawn(future, move || async move { barrier.remove().await }, |()| Value::Null),
            _ => tasks::spawn(future, move || async move { barrier.is_set().await }, Value::Bool),
        })
    }
}

export! {
    /// Completes with `Boolean`: true once the barrier is down, false when the wait ran out.
    fn Java_io_zkrecipes_Native_barrierWait<'l>(env; handle: i64, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let (barrier, future) = tasks::target::<Barrier>(env, handle, &future)?;
        let wait = Wait::java(forever, timeout_nanos);
        Ok(tasks::spawn(future, move || async move { barrier.wait(wait).await }, Value::Bool))
    }
}

export! {
    fn Java_io_zkrecipes_Native_doubleBarrierNew<'l>(env; client: i64, path: JString<'l>, members: i32) -> i64 {
        let path = string(env, &path)?;
        let count = member_count("memberCount", i64::from(members))?;
        Ok(into_handle(DoubleBarrier::new(unsafe { borrow::<Client>(client) }?, &path, count)?))
    }
}

export_free!(Java_io_zkrecipes_Native_doubleBarrierFree, DoubleBarrier);

export! {
    /// Enters (`leave` false) or leaves; completes with `Boolean` (false: the wait ran out and
    /// our node was withdrawn). Cancelling it withdraws our node too.
    fn Java_io_zkrecipes_Native_doubleBarrierPass<'l>(env; handle: i64, leave: bool, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let (barrier, future) = tasks::target::<DoubleBarrier>(env, handle, &future)?;
        let wait = Wait::java(forever, timeout_nanos);
        Ok(if leave {
            tasks::spawn(future, move || async move { barrier.leave(wait).await }, Value::Bool)
        } else {
            tasks::spawn(future, move || async move { barrier.enter(wait).await }, Value::Bool)
        })
    }
}

export! {
    /// `op`: 0 the member nodes (one name per line; a node name holds no newline), 1 whether
    /// `ready` exists (`Boolean`), 2 withdraw this member (an enter given up after it
    /// succeeded, a close: `DoubleBarrier::withdraw`).
    fn Java_io_zkrecipes_Native_doubleBarrierCall<'l>(env; handle: i64, op: i32, future: JObject<'l>) -> i64 {
        let (barrier, future) = tasks::target::<DoubleBarrier>(env, handle, &future)?;
        Ok(match op {
            0 => tasks::spawn(
                future,
                move || async move { barrier.members().await },
                |members| Value::Text(members.join("\n")),
            ),
            1 => tasks::spawn(future, move || async move { barrier.is_ready().await }, Value::Bool),
            _ => tasks::spawn(future, tasks::started(barrier.withdraw()), |()| Value::Null),
        })
    }
}

export! {
    fn Java_io_zkrecipes_Native_doubleBarrierNodePath<'l>(env; handle: i64) -> JString<'l> {
        Ok(env.new_string(unsafe { borrow::<DoubleBarrier>(handle) }?.node_path())?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_doubleBarrierMemberCount<'l>(_env; handle: i64) -> i32 {
        Ok(unsafe { borrow::<DoubleBarrier>(handle) }?.member_count() as i32)
    }
}
