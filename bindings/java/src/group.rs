//! The self-healing node and group membership for Java: `PersistentNode` and `GroupMember`
//! (Curator's).
//!
//! Members travel as bytes (per member: the id then the payload, each a 4-byte big-endian
//! length then the bytes), in the core's order (by id).

use std::collections::BTreeMap;

use jni::objects::{JByteArray, JObject, JString};
use zkrecipes::{Client, GroupMember, PersistentNode};

use crate::callbacks::{self, Value};
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::strings::string;
use crate::{listener, tasks};

fn packed_members(members: BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    callbacks::packed(
        members
            .iter()
            .flat_map(|(id, payload)| [id.as_bytes(), payload.as_slice()]),
    )
}

export! {
    /// `mode`: `io.zkrecipes.NodeMode`'s name (ZooKeeper's `CreateMode` names).
    fn Java_io_zkrecipes_Native_persistentNodeNew<'l>(env; client: i64, path: JString<'l>, mode: JString<'l>, data: JByteArray<'l>) -> i64 {
        let path = string(env, &path)?;
        let data = env.convert_byte_array(&data)?;
        let mode = zkrecipes::ffi::node_mode(&string(env, &mode)?)?;
        let client = unsafe { borrow::<Client>(client) }?;
        Ok(into_handle(PersistentNode::new(client, &path, mode, data)?))
    }
}

// Freeing the last clone stops keeping the node (the Cleaner's path; an ephemeral node then
// goes with its session).
export_free!(Java_io_zkrecipes_Native_persistentNodeFree, PersistentNode);

export! {
    /// `op`: 0 start (completes with the actual path), 1 close.
    fn Java_io_zkrecipes_Native_persistentNodeCall<'l>(env; handle: i64, op: i32, future: JObject<'l>) -> i64 {
        let (node, future) = tasks::target::<PersistentNode>(env, handle, &future)?;
        Ok(match op {
            0 => tasks::spawn(
                future,
                tasks::started(zkrecipes::ffi::begun(async move { node.start().await })),
                Value::Text,
            ),
            _ => tasks::spawn(future, move || async move { node.close().await }, |()| Value::Null),
        })
    }
}

export! {
    fn Java_io_zkrecipes_Native_persistentNodeSetData<'l>(env; handle: i64, data: JByteArray<'l>, future: JObject<'l>) -> i64 {
        let data = env.convert_byte_array(&data)?;
        let (node, future) = tasks::target::<PersistentNode>(env, handle, &future)?;
        Ok(tasks::spawn(future, move || async move { node.set_data(data).await }, |()| Value::Null))
    }
}

export! {
    /// The node's full path once created, `null` before (and after close).
    fn Java_io_zkrecipes_Native_persistentNodeActualPath<'l>(env; handle: i64) -> JString<'l> {
        match unsafe { borrow::<PersistentNode>(handle) }?.actual_path() {
            Some(path) => Ok(env.new_string(path)?),
            None => Ok(JString::null()),
        }
    }
}

export! {
    fn Java_io_zkrecipes_Native_persistentNodeData<'l>(env; handle: i64) -> JByteArray<'l> {
        let data = unsafe { borrow::<PersistentNode>(handle) }?.data();
        Ok(env.byte_array_from_slice(&data)?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_groupMemberNew<'l>(env; client: i64, group: JString<'l>, id: JString<'l>, payload: JByteArray<'l>) -> i64 {
        let group = string(env, &group)?;
        let id = string(env, &id)?;
        let payload = env.convert_byte_array(&payload)?;
        let client = unsafe { borrow::<Client>(client) }?;
        Ok(into_handle(GroupMember::new(client, &group, &id, payload)?))
    }
}

export_free!(Java_io_zkrecipes_Native_groupMemberFree, GroupMember);

export! {
    /// `op`: 0 start (joins), 1 close (leaves).
    fn Java_io_zkrecipes_Native_groupMemberCall<'l>(env; handle: i64, op: i32, future: JObject<'l>) -> i64 {
        let (member, future) = tasks::target::<GroupMember>(env, handle, &future)?;
        Ok(match op {
            0 => tasks::spawn(
                future,
                tasks::started(zkrecipes::ffi::begun(async move { member.start().await })),
                |()| Value::Null,
            ),
            _ => tasks::spawn(future, move || async move { member.close().await }, |()| Value::Null),
        })
    }
}

export! {
    fn Java_io_zkrecipes_Native_groupMemberSetPayload<'l>(env; handle: i64, payload: JByteArray<'l>, future: JObject<'l>) -> i64 {
        let payload = env.convert_byte_array(&payload)?;
        let (member, future) = tasks::target::<GroupMember>(env, handle, &future)?;
        Ok(tasks::spawn(future, move || async move { member.set_payload(payload).await }, |()| Value::Null))
    }
}

export! {
    /// Every member with its payload, packed as `packed_members`.
    fn Java_io_zkrecipes_Native_groupMemberMembers<'l>(env; handle: i64) -> JByteArray<'l> {
        let members = unsafe { borrow::<GroupMember>(handle) }?.members();
        Ok(env.byte_array_from_slice(&packed_members(members))?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_groupMemberSubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let events = unsafe { borrow::<GroupMember>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward_all(events, sink, callbacks::cache_event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_members_are_id_then_payload_by_id() {
        let members = BTreeMap::from([("b".to_string(), vec![]), ("a".to_string(), vec![7])]);
        assert_eq!(
            packed_members(members),
            vec![0, 0, 0, 1, b'a', 0, 0, 0, 1, 7, 0, 0, 0, 1, b'b', 0, 0, 0, 0]
        );
    }
}
