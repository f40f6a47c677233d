//! The counting semaphore for Java: `Semaphore` and `Lease`.
//!
//! An acquire completes with the leases' handles packed as 8-byte big-endian numbers (Java
//! wraps each as a `Lease`); freeing a lease's handle unreleased releases it (the core's
//! `Lease` does so when dropped), which is also what Java's undo does for leases that arrived
//! after their caller gave up.

use jni::objects::{JObject, JString};
use zkrecipes::ffi::{lease_count, LeaseSlot, OwnedSemaphore};
use zkrecipes::{Client, Lease, Semaphore};

use crate::callbacks::Value;
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::listener;
use crate::strings::string;
use crate::tasks;

fn granted(leases: Option<Vec<Lease>>) -> Value {
    leases.map_or(Value::Null, |leases| {
        let packed = leases
            .into_iter()
            .flat_map(|lease| into_handle(LeaseSlot::new(lease)).to_be_bytes())
            .collect();
        Value::Bytes(packed)
    })
}

export! {
    fn Java_io_zkrecipes_Native_semaphoreNew<'l>(env; client: i64, path: JString<'l>, max_leases: i32) -> i64 {
        let path = string(env, &path)?;
        let max = lease_count("maxLeases", i64::from(max_leases))?;
        Ok(into_handle(Semaphore::new(unsafe { borrow::<Client>(client) }?, &path, max)?))
    }
}

export_free!(Java_io_zkrecipes_Native_semaphoreFree, Semaphore);
export_free!(Java_io_zkrecipes_Native_leaseFree, LeaseSlot);

export! {
    /// Completes with the packed lease handles, or `null` when not obtained in time.
    fn Java_io_zkrecipes_Native_semaphoreAcquire<'l>(env; handle: i64, permits: i32, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let count = lease_count("permits", i64::from(permits))?;
        let wait = zkrecipes::Wait::java(forever, timeout_nanos);
        let (semaphore, future) = tasks::target::<Semaphore>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move { semaphore.acquire_many(count, wait).await },
            granted,
        ))
    }
}

export! {
    /// `op`: 0 releases the oldest lease of this object, 1 every lease, 2 lists the lease
    /// nodes (one per line).
    fn Java_io_zkrecipes_Native_semaphoreCall<'l>(env; handle: i64, op: i32, future: JObject<'l>) -> i64 {
        let (semaphore, future) = tasks::target::<Semaphore>(env, handle, &future)?;
        Ok(match op {
            0 => tasks::spawn(future, tasks::started(semaphore.release_one()), |()| Value::Null),
            1 => tasks::spawn(
                future,
                move || async move {
                    semaphore.release_all().await;
                    Ok(())
                },
                |()| Value::Null,
            ),
            _ => tasks::spawn(
                future,
                move || async move { semaphore.lease_nodes().await },
                |nodes| Value::Text(nodes.join("\n")),
            ),
        })
    }
}

export! {
    /// `what`: 0 leases held by this object, 1 `maxLeases`.
    fn Java_io_zkrecipes_Native_semaphoreNumber<'l>(_env; handle: i64, what: i32) -> i32 {
        let semaphore = unsafe { borrow::<Semaphore>(handle) }?;
        Ok(if what == 0 { semaphore.held() as i32 } else { semaphore.max_leases() as i32 })
    }
}

export! {
    fn Java_io_zkrecipes_Native_semaphoreSubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let events = unsafe { borrow::<Semaphore>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward(events, sink))
    }
}

export! {
    fn Java_io_zkrecipes_Native_leaseFencingToken<'l>(_env; handle: i64) -> i64 {
        Ok(unsafe { borrow::<LeaseSlot>(handle) }?.fencing_token())
    }
}

export! {
    fn Java_io_zkrecipes_Native_leaseNodePath<'l>(env; handle: i64) -> JString<'l> {
        Ok(env.new_string(unsafe { borrow::<LeaseSlot>(handle) }?.node_path())?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_leaseIsHeld<'l>(_env; handle: i64) -> bool {
        Ok(unsafe { borrow::<LeaseSlot>(handle) }?.is_held())
    }
}

export! {
    fn Java_io_zkrecipes_Native_leaseRelease<'l>(env; handle: i64, future: JObject<'l>) -> i64 {
        let lease = unsafe { borrow::<LeaseSlot>(handle) }?.take()?;
        let future = env.new_global_ref(&future)?;
        Ok(tasks::spawn(future, tasks::started(lease.release()), |()| Value::Null))
    }
}
