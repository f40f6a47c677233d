use jni::objects::{JByteArray, JObject, JString};
use zkrecipes::ffi::HandedQueue;
use zkrecipes::{Client, DistributedQueue};

use crate::callbacks::Value;
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::strings::string;
use crate::tasks;

fn item(found: Option<Vec<u8>>) -> Value {
    found.map_or(Value::Null, Value::Bytes)
}

/// A taken item travels with its name, so that Java can give it back to a
/// queue whose caller gave up (cancel, timeout, interrupt).
fn taken(found: Option<zkrecipes::Item>) -> Value {
    found.map_or(Value::Null, |i| Value::Item(i.name, i.data))
}

export! {
    fn Java_io_zkrecipes_Native_queueNew<'l>(env; client: i64, dir: JString<'l>) -> i64 {
        let dir = string(env, &dir)?;
        Ok(into_handle(DistributedQueue::new(
            unsafe { borrow::<Client>(client) }?,
            &dir,
        )?))
    }
}

export_free!(Java_io_zkrecipes_Native_queueFree, DistributedQueue);

export! {
    fn Java_io_zkrecipes_Native_queueMaxPayload<'l>(_env; handle: i64) -> i32 {
        Ok(unsafe { borrow::<DistributedQueue>(handle) }?.max_payload() as i32)
    }
}

export! {
    fn Java_io_zkrecipes_Native_queueOffer<'l>(env; handle: i64, data: JByteArray<'l>, future: JObject<'l>) -> i64 {
        let data = env.convert_byte_array(&data)?;
        let (queue, future) = tasks::target::<DistributedQueue>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move { queue.offer(&data).await },
            Value::Text,
        ))
    }
}

export! {
    /// `op`: 0 peek, 1 poll, 2 element, 3 remove, 4 size.
    fn Java_io_zkrecipes_Native_queueHead<'l>(env; handle: i64, op: i32, future: JObject<'l>) -> i64 {
        let (queue, future) = tasks::target::<DistributedQueue>(env, handle, &future)?;
        Ok(match op {
            0 => tasks::spawn(future, move || async move { queue.peek().await }, item),
            1 => tasks::spawn(future, move || async move { queue.poll_item().await }, taken),
            2 => tasks::spawn(future, move || async move { queue.element().await }, Value::Bytes),
            3 => tasks::spawn(
                future,
                move || async move { queue.remove_item().await.map(Some) },
                taken,
            ),
            _ => tasks::spawn(future, move || async move { queue.size().await }, |n| {
                Value::Long(n as i64)
            }),
        })
    }
}

export! {
    /// Completes with the item or `null`.
    fn Java_io_zkrecipes_Native_queueTake<'l>(env; handle: i64, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let (queue, future) = tasks::target::<DistributedQueue>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move {
                queue
                    .take_item(zkrecipes::Wait::java(forever, timeout_nanos))
                    .await
            },
            taken,
        ))
    }
}

export! {
    /// A batched take: `pollMany` when `wait` is false, else `takeMany` (waiting as `forever`
    /// and `timeout_nanos` say). `max` as Java gave it; the core checks the range. Completes
    /// with the items (each with its name, so Java can give them back).
    fn Java_io_zkrecipes_Native_queueMany<'l>(env; handle: i64, max: i64, wait: bool, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let (queue, future) = tasks::target::<DistributedQueue>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move {
                let (items, handoff) = if wait {
                    let how = zkrecipes::Wait::java(forever, timeout_nanos);
                    queue.take_many_handed(max, how).await?
                } else {
                    queue.poll_many_handed(max).await?
                };
                // Java gives the items back by name itself if its caller is gone.
                if let Some(handoff) = handoff {
                    handoff.delivered();
                }
                Ok(items)
            },
            Value::Items,
        ))
    }
}

export! {
    /// Puts back an item whose Java caller gave up after it was taken.
    fn Java_io_zkrecipes_Native_queueGiveBack<'l>(env; handle: i64, name: JString<'l>, data: JByteArray<'l>, future: JObject<'l>) -> i64 {
        let item = zkrecipes::Item {
            name: string(env, &name)?,
            data: env.convert_byte_array(&data)?,
        };
        let (queue, future) = tasks::target::<DistributedQueue>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            move || async move { queue.give_back(&item).await },
            |()| Value::Null,
        ))
    }
}
