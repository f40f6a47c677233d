//! Group membership: `NativeGroupMember` (Curator's `GroupMember`).
//!
//! The Python object holds the member's only handle (a call in flight holds a clone until it
//! ends), so a member that Python collects unclosed stops re-joining and following the group
//! (its ephemeral node then goes with its session).

use std::collections::BTreeMap;
use std::future::Future;

use pyo3::prelude::*;
use zkrecipes::GroupMember;

use crate::blocking::detached;
use crate::cache::event_args;
use crate::client::NativeClient;
use crate::errors::IntoPyResult;
use crate::listener::{relay_all, Subscription};
use crate::payload::Payload;
use crate::twins::pymethods_with_twins;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeGroupMember {
    inner: GroupMember,
}

/// The leave runs in a task of its own, started here: a Ctrl-C or a cancelled await stops the
/// waiting for it, never the delete.
fn close(member: GroupMember) -> impl Future<Output = zkrecipes::Result<()>> {
    detached("leaving the group", async move { member.close().await })
}

pymethods_with_twins! {
    impl NativeGroupMember {
        twins {
            fn start | start_async() -> () {} |member| member.start();
            fn set_payload | set_payload_async(payload: &[u8]) -> () {
                let payload = payload.to_vec();
            } |member| member.set_payload(payload);
        }
        begun {
            fn close | close_async() -> () {} |member| close(member);
        }

        #[new]
        fn new(
            client: &NativeClient,
            group: &str,
            id: &str,
            payload: &[u8],
        ) -> PyResult<NativeGroupMember> {
            Ok(NativeGroupMember {
                inner: GroupMember::new(&client.inner, group, id, payload.to_vec()).into_py_result()?,
            })
        }

        fn id(&self) -> String {
            self.inner.id().to_string()
        }

        fn group(&self) -> String {
            self.inner.group().to_string()
        }

        fn members(&self) -> BTreeMap<String, Payload> {
            let members = self.inner.members().into_iter();
            members.map(|(id, data)| (id, Payload(data))).collect()
        }

        /// Leaves without waiting: for a start that was interrupted or cancelled.
        fn close_soon(&self) {
            drop(close(self.inner.clone()));
        }

        /// `callback(name, node, old)` for every membership event from now on, as a cache's.
        fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
            relay_all(self.inner.subscribe(), callback, event_args)
        }
    }
}
