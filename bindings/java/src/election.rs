use jni::objects::{JObject, JString};
use zkrecipes::{Client, LeaderElectionSupport};

use crate::callbacks::Value;
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::strings::string;
use crate::{listener, tasks};

export! {
    fn Java_io_zkrecipes_Native_electionNew<'l>(env; client: i64, root: JString<'l>, host_name: JString<'l>) -> i64 {
        let root = string(env, &root)?;
        let host_name = string(env, &host_name)?;
        Ok(into_handle(LeaderElectionSupport::new(
            unsafe { borrow::<Client>(client) }?,
            &root,
            &host_name,
        )?))
    }
}

export_free!(Java_io_zkrecipes_Native_electionFree, LeaderElectionSupport);

export! {
    /// `op`: 0 start, 1 stop, 2 leader host name.
    fn Java_io_zkrecipes_Native_electionCall<'l>(env; handle: i64, op: i32, future: JObject<'l>) -> i64 {
        let (election, future) = tasks::target::<LeaderElectionSupport>(env, handle, &future)?;
        Ok(match op {
            // Called here, on the caller's thread: a start then a stop take
            // effect in that order.
            0 => tasks::spawn(future, tasks::started(election.start()), |()| Value::Null),
            1 => tasks::spawn(future, tasks::started(election.stop()), |()| Value::Null),
            _ => tasks::spawn(
                future,
                move || async move { election.leader_host_name().await },
                |name| name.map_or(Value::Null, Value::Text),
            ),
        })
    }
}

export! {
    fn Java_io_zkrecipes_Native_electionIsLeader<'l>(_env; handle: i64) -> bool {
        Ok(unsafe { borrow::<LeaderElectionSupport>(handle) }?.is_leader())
    }
}

export! {
    /// Completes with `Boolean`.
    fn Java_io_zkrecipes_Native_electionAwaitLeadership<'l>(env; handle: i64, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let (election, future) = tasks::target::<LeaderElectionSupport>(env, handle, &future)?;
        let limit = zkrecipes::Wait::java(forever, timeout_nanos);
        Ok(tasks::spawn(
            future,
            move || async move { election.await_leadership(limit).await },
            Value::Bool,
        ))
    }
}

export! {
    fn Java_io_zkrecipes_Native_electionSubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let events = unsafe { borrow::<LeaderElectionSupport>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward(events, sink))
    }
}
