//! Every recipe call that waits, named once: the core's `tracing` span of the wait, its metrics'
//! `kind` attribute, and the OpenTelemetry spans the bindings make around the same call all read
//! it from here, so that a read lock's acquire is `kind=read` in every language and in the
//! metrics alike.

use super::waits::{
    WaitMetrics, BARRIER_WAITS, ELECTION_WAITS, LATCH_WAITS, LOCK_WAITS, QUEUE_TAKES,
    SEMAPHORE_WAITS, WORK_QUEUE_CONSUMES,
};

/// One recipe call that waits.
pub struct WaitCall {
    /// The call, as a binding looks it up: `"read_lock.acquire"`.
    pub call: &'static str,
    /// The name of the wait's span, as OpenTelemetry shows it: `"zkrecipes.lock.acquire"`.
    pub span: &'static str,
    /// The span's `outcome` when the wait got what it waited for (`"acquired"`, `"taken"`);
    /// otherwise `timeout`, `cancelled` or `error`, as in the metrics.
    pub success: &'static str,
    /// The span's `kind` attribute: the metrics' `kind` where the family has one (`read`,
    /// `multi`, `enter`), else what is waited for (`lease`, `item`, `leadership`).
    pub kind: &'static str,
    pub(crate) family: &'static WaitMetrics,
    /// The metrics' `kind` attribute; `None` for a family whose metrics have none.
    pub(crate) metric_kind: Option<&'static str>,
}

const fn wait_call(
    call: &'static str,
    family: &'static WaitMetrics,
    metric_kind: Option<&'static str>,
) -> WaitCall {
    let kind = match metric_kind {
        Some(kind) => kind,
        None => family.noun,
    };
    WaitCall {
        call,
        span: family.span,
        success: family.success,
        kind,
        family,
        metric_kind,
    }
}

pub(crate) const LOCK_ACQUIRE: WaitCall = wait_call("lock.acquire", &LOCK_WAITS, Some("lock"));
pub(crate) const READ_LOCK_ACQUIRE: WaitCall =
    wait_call("read_lock.acquire", &LOCK_WAITS, Some("read"));
pub(crate) const WRITE_LOCK_ACQUIRE: WaitCall =
    wait_call("write_lock.acquire", &LOCK_WAITS, Some("write"));
/// One wait for all of a multi-lock's locks (they count none of their own); its path is the
/// multi-lock's `observed_path`.
pub(crate) const MULTI_LOCK_ACQUIRE: WaitCall =
    wait_call("multi_lock.acquire", &LOCK_WAITS, Some("multi"));
pub(crate) const SEMAPHORE_ACQUIRE: WaitCall =
    wait_call("semaphore.acquire", &SEMAPHORE_WAITS, None);
pub(crate) const QUEUE_TAKE: WaitCall = wait_call("queue.take", &QUEUE_TAKES, None);
pub(crate) const WORK_QUEUE_CONSUME: WaitCall =
    wait_call("work_queue.consume", &WORK_QUEUE_CONSUMES, None);
pub(crate) const ELECTION_AWAIT_LEADERSHIP: WaitCall =
    wait_call("election.await_leadership", &ELECTION_WAITS, None);
pub(crate) const LATCH_AWAIT_LEADERSHIP: WaitCall =
    wait_call("latch.await_leadership", &LATCH_WAITS, None);
pub(crate) const BARRIER_WAIT: WaitCall = wait_call("barrier.wait", &BARRIER_WAITS, Some("single"));
pub(crate) const DOUBLE_BARRIER_ENTER: WaitCall =
    wait_call("double_barrier.enter", &BARRIER_WAITS, Some("enter"));
pub(crate) const DOUBLE_BARRIER_LEAVE: WaitCall =
    wait_call("double_barrier.leave", &BARRIER_WAITS, Some("leave"));

/// Every recipe call that waits, for the bindings' spans: each binding looks up the calls its
/// wrappers make, when a recipe module loads, so a call missing here fails at load, not in a
/// wait.
pub const WAIT_CALLS: &[WaitCall] = &[
    LOCK_ACQUIRE,
    READ_LOCK_ACQUIRE,
    WRITE_LOCK_ACQUIRE,
    MULTI_LOCK_ACQUIRE,
    SEMAPHORE_ACQUIRE,
    QUEUE_TAKE,
    WORK_QUEUE_CONSUME,
    ELECTION_AWAIT_LEADERSHIP,
    LATCH_AWAIT_LEADERSHIP,
    BARRIER_WAIT,
    DOUBLE_BARRIER_ENTER,
    DOUBLE_BARRIER_LEAVE,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_is_named_once() {
        let mut calls: Vec<_> = WAIT_CALLS.iter().map(|c| c.call).collect();
        calls.sort_unstable();
        calls.dedup();
        assert_eq!(calls.len(), WAIT_CALLS.len());
    }

    #[test]
    fn a_call_without_a_metric_kind_is_named_by_what_it_waits_for() {
        assert_eq!(SEMAPHORE_ACQUIRE.kind, "lease");
        assert_eq!(READ_LOCK_ACQUIRE.kind, "read");
        assert_eq!(BARRIER_WAIT.span, DOUBLE_BARRIER_LEAVE.span);
    }
}
