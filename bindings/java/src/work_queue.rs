//! The at-least-once work queue for Java: `WorkQueue` and `Delivery`.
//!
//! A consume completes with the handle of a `DeliverySlot` (Java wraps it as a
//! `Delivery`); freeing an unsettled one gives its item back (the core's
//! `Delivery` does so when dropped), which is also what Java's undo does for
//! a job that arrived after its caller gave up.

use jni::objects::{JByteArray, JObject, JString};
use zkrecipes::ffi::{work_queue_options_java, DeliverySlot};
use zkrecipes::{Client, Delivery, WorkQueue};

use crate::callbacks::Value;
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::strings::string;
use crate::tasks;

fn delivered(found: Option<Delivery>) -> Value {
    found.map_or(Value::Null, |d| {
        Value::Long(into_handle(DeliverySlot::new(d)))
    })
}

/// `offerAll` items: each as a 4-byte big-endian length, then its bytes.
fn items_of(packed: &[u8]) -> zkrecipes::Result<Vec<Vec<u8>>> {
    let mut items = Vec::new();
    let mut rest = packed;
    while !rest.is_empty() {
        let bad = || zkrecipes::Error::new(zkrecipes::ErrorCode::Internal, "malformed item list");
        let (len, tail) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
        let len = u32::from_be_bytes(*len) as usize;
        if tail.len() < len {
            return Err(bad());
        }
        items.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    Ok(items)
}

export! {
    /// `max_deliveries` 0 = no limit.
    fn Java_io_zkrecipes_Native_workQueueNew<'l>(env; client: i64, path: JString<'l>, prefetch: i32, max_deliveries: i32) -> i64 {
        let path = string(env, &path)?;
        let options = work_queue_options_java(i64::from(prefetch), i64::from(max_deliveries))?;
        Ok(into_handle(WorkQueue::with_options(
            unsafe { borrow::<Client>(client) }?,
            &path,
            options,
        )?))
    }
}

export_free!(Java_io_zkrecipes_Native_workQueueFree, WorkQueue);
export_free!(Java_io_zkrecipes_Native_deliveryFree, DeliverySlot);

export! {
    fn Java_io_zkrecipes_Native_workQueueMaxPayload<'l>(_env; handle: i64) -> i32 {
        Ok(unsafe { borrow::<WorkQueue>(handle) }?.max_payload() as i32)
    }
}

export! {
    fn Java_io_zkrecipes_Native_workQueueDeadLetterPath<'l>(env; handle: i64) -> JString<'l> {
        Ok(env.new_string(unsafe { borrow::<WorkQueue>(handle) }?.dead_letter_path())?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_workQueueOffer<'l>(env; handle: i64, data: JByteArray<'l>, prio: i32, future: JObject<'l>) -> i64 {
        let data = env.convert_byte_array(&data)?;
        let prio = zkrecipes::priority(i64::from(prio))?;
        let (queue, future) = tasks::target::<WorkQueue>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move { queue.offer_with_priority(&data, prio).await },
            Value::Text,
        ))
    }
}

export! {
    /// Completes with the items' paths, one per line.
    fn Java_io_zkrecipes_Native_workQueueOfferAll<'l>(env; handle: i64, packed: JByteArray<'l>, prio: i32, future: JObject<'l>) -> i64 {
        let items = items_of(&env.convert_byte_array(&packed)?)?;
        let prio = zkrecipes::priority(i64::from(prio))?;
        let (queue, future) = tasks::target::<WorkQueue>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move { queue.offer_all_with_priority(&items, prio).await },
            |paths| Value::Text(paths.join("\n")),
        ))
    }
}

export! {
    /// Completes with a delivery handle or `null`.
    fn Java_io_zkrecipes_Native_workQueueConsume<'l>(env; handle: i64, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let (queue, future) = tasks::target::<WorkQueue>(env, handle, &future)?;
        let timeout = zkrecipes::Wait::java(forever, timeout_nanos);
        Ok(tasks::spawn(future, move || async move { queue.consume(timeout).await }, delivered))
    }
}

export! {
    /// `op`: 0 size, 1 close (gives back what prefetch claimed).
    fn Java_io_zkrecipes_Native_workQueueCall<'l>(env; handle: i64, op: i32, future: JObject<'l>) -> i64 {
        let (queue, future) = tasks::target::<WorkQueue>(env, handle, &future)?;
        Ok(match op {
            0 => tasks::spawn(future, move || async move { queue.size().await }, |n| Value::Long(n as i64)),
            _ => tasks::spawn(future, move || async move { queue.close().await }, |()| Value::Null),
        })
    }
}

export! {
    fn Java_io_zkrecipes_Native_deliveryData<'l>(env; handle: i64) -> JByteArray<'l> {
        let data = unsafe { borrow::<DeliverySlot>(handle) }?.data().to_vec();
        Ok(env.byte_array_from_slice(&data)?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_deliveryName<'l>(env; handle: i64) -> JString<'l> {
        let name = unsafe { borrow::<DeliverySlot>(handle) }?.name().to_string();
        Ok(env.new_string(name)?)
    }
}

export! {
    /// `what`: 0 priority, 1 delivery count.
    fn Java_io_zkrecipes_Native_deliveryNumber<'l>(_env; handle: i64, what: i32) -> i32 {
        let job = unsafe { borrow::<DeliverySlot>(handle) }?;
        Ok(if what == 0 { i32::from(job.priority()) } else { job.delivery_count() as i32 })
    }
}

export! {
    /// `ack`: true acknowledges, false gives back.
    fn Java_io_zkrecipes_Native_deliverySettle<'l>(env; handle: i64, ack: bool, future: JObject<'l>) -> i64 {
        let delivery = unsafe { borrow::<DeliverySlot>(handle) }?.take()?;
        let future = env.new_global_ref(&future)?;
        Ok(if ack {
            tasks::spawn(future, move || delivery.ack(), |()| Value::Null)
        } else {
            tasks::spawn(future, move || delivery.nack(), |()| Value::Null)
        })
    }
}
