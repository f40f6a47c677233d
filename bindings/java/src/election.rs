use std::time::Duration;

use jni::objects::{JClass, JObject, JString};
use jni::EnvUnowned;
use zkrecipes::{Client, LeaderElectionSupport};

use crate::callbacks::Value;
use crate::client::string;
use crate::errors::{Result, ThrowZkException};
use crate::handles::{borrow, export_free, into_handle};
use crate::{listener, tasks};

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_zkrecipes_Native_electionNew<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    client: i64,
    root: JString<'l>,
    host_name: JString<'l>,
) -> i64 {
    env.with_env(|env| -> Result<i64> {
        let root = string(env, &root)?;
        let host_name = string(env, &host_name)?;
        Ok(into_handle(LeaderElectionSupport::new(
            unsafe { borrow::<Client>(client) }?,
            &root,
            &host_name,
        )?))
    })
    .resolve::<ThrowZkException>()
}

export_free!(Java_io_zkrecipes_Native_electionFree, LeaderElectionSupport);

/// `op`: 0 start, 1 stop, 2 leader host name.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_zkrecipes_Native_electionCall<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: i64,
    op: i32,
    future: JObject<'l>,
) -> i64 {
    env.with_env(|env| -> Result<i64> {
        let election = unsafe { borrow::<LeaderElectionSupport>(handle) }?.clone();
        let future = env.new_global_ref(&future)?;
        Ok(match op {
            // Called here, on the caller's thread: a start then a stop take
            // effect in that order.
            0 => tasks::spawn(future, election.start(), |()| Value::Null),
            1 => tasks::spawn(future, election.stop(), |()| Value::Null),
            _ => tasks::spawn(
                future,
                async move { election.leader_host_name().await },
                |name| name.map_or(Value::Null, Value::Text),
            ),
        })
    })
    .resolve::<ThrowZkException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_zkrecipes_Native_electionIsLeader<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: i64,
) -> bool {
    env.with_env(|_env| -> Result<bool> {
        Ok(unsafe { borrow::<LeaderElectionSupport>(handle) }?.is_leader())
    })
    .resolve::<ThrowZkException>()
}

/// `timeout_nanos` negative = forever. Completes with `Boolean`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_io_zkrecipes_Native_electionAwaitLeadership<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: i64,
    timeout_nanos: i64,
    future: JObject<'l>,
) -> i64 {
    env.with_env(|env| -> Result<i64> {
        let election = unsafe { borrow::<LeaderElectionSupport>(handle) }?.clone();
        let future = env.new_global_ref(&future)?;
        let limit = (timeout_nanos >= 0).then(|| Duration::from_nanos(timeout_nanos as u64));
        Ok(tasks::spawn(
            future,
            async move { election.await_leadership(limit).await },
            Value::Bool,
        ))
    })
    .resolve::<ThrowZkException>()
}

#[unsafe(no_mangle)]
pub extern "system" fn Java_io_zkrecipes_Native_electionSubscribe<'l>(
    mut env: EnvUnowned<'l>,
    _class: JClass<'l>,
    handle: i64,
    sink: JObject<'l>,
) -> i64 {
    env.with_env(|env| -> Result<i64> {
        let events = unsafe { borrow::<LeaderElectionSupport>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward(events, sink))
    })
    .resolve::<ThrowZkException>()
}
