//! The leader latch for Java: `LeaderLatch`.
//!
//! Participants travel as bytes (per participant: the id and the node, each a 4-byte
//! big-endian length then UTF-8, then one byte, 1 for the leader): an id is the caller's
//! text and may hold any character, tabs and newlines included.

use jni::objects::{JObject, JString};
use zkrecipes::{Client, LatchParticipant, LeaderLatch};

use crate::callbacks::Value;
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::strings::{optional_string, string};
use crate::{listener, tasks};

fn packed(participants: Vec<LatchParticipant>) -> Value {
    let mut bytes = Vec::new();
    for p in participants {
        for text in [p.id.as_bytes(), p.node.as_bytes()] {
            bytes.extend_from_slice(&(text.len() as u32).to_be_bytes());
            bytes.extend_from_slice(text);
        }
        bytes.push(u8::from(p.is_leader));
    }
    Value::Bytes(bytes)
}

export! {
    /// `id` null: the client's identity (`ffi::latch_id`).
    fn Java_io_zkrecipes_Native_latchNew<'l>(env; client: i64, path: JString<'l>, id: JString<'l>) -> i64 {
        let path = string(env, &path)?;
        let id = optional_string(env, &id)?;
        let client = unsafe { borrow::<Client>(client) }?;
        let id = zkrecipes::ffi::latch_id(client, id.as_deref());
        Ok(into_handle(LeaderLatch::new(client, &path, &id)?))
    }
}

// Freeing the last clone of a started latch closes it (the Cleaner's path).
export_free!(Java_io_zkrecipes_Native_latchFree, LeaderLatch);

export! {
    /// `op`: 0 start, 1 close, 2 participants, 3 the leader (packed as `packed`).
    fn Java_io_zkrecipes_Native_latchCall<'l>(env; handle: i64, op: i32, future: JObject<'l>) -> i64 {
        let (latch, future) = tasks::target::<LeaderLatch>(env, handle, &future)?;
        Ok(match op {
            // Called here, on the caller's thread: a start then a close take effect in that
            // order (the core acts when called, not when the task first runs).
            0 => tasks::spawn(future, tasks::started(latch.start()), |()| Value::Null),
            1 => tasks::spawn(future, tasks::started(latch.close()), |()| Value::Null),
            2 => tasks::spawn(future, move || async move { latch.participants().await }, packed),
            _ => tasks::spawn(
                future,
                move || async move { latch.leader().await },
                |leader| packed(leader.into_iter().collect()),
            ),
        })
    }
}

export! {
    /// Completes with the fencing token (`Long`), or `null` when the wait ran out.
    fn Java_io_zkrecipes_Native_latchAwait<'l>(env; handle: i64, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let (latch, future) = tasks::target::<LeaderLatch>(env, handle, &future)?;
        let wait = zkrecipes::Wait::java(forever, timeout_nanos);
        Ok(tasks::spawn(
            future,
            move || async move { latch.await_leadership(wait).await },
            |token| token.map_or(Value::Null, Value::Long),
        ))
    }
}

export! {
    /// `what`: 0 has leadership, 1 started, 2 closed.
    fn Java_io_zkrecipes_Native_latchIs<'l>(_env; handle: i64, what: i32) -> bool {
        let latch = unsafe { borrow::<LeaderLatch>(handle) }?;
        Ok(match what {
            0 => latch.has_leadership(),
            1 => latch.is_started(),
            _ => latch.is_closed(),
        })
    }
}

export! {
    /// The fencing token while leading, -1 otherwise.
    fn Java_io_zkrecipes_Native_latchFencingToken<'l>(_env; handle: i64) -> i64 {
        Ok(unsafe { borrow::<LeaderLatch>(handle) }?.fencing_token().unwrap_or(-1))
    }
}

export! {
    /// `what`: 0 the id, 1 our node's path while leading (`null` otherwise).
    fn Java_io_zkrecipes_Native_latchText<'l>(env; handle: i64, what: i32) -> JString<'l> {
        let latch = unsafe { borrow::<LeaderLatch>(handle) }?;
        let text = if what == 0 { Some(latch.id().to_string()) } else { latch.node_path() };
        match text {
            Some(text) => Ok(env.new_string(text)?),
            None => Ok(JString::null()),
        }
    }
}

export! {
    fn Java_io_zkrecipes_Native_latchSubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let events = unsafe { borrow::<LeaderLatch>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward(events, sink))
    }
}
