//! The waits `lib/wait_spans.js` makes its OpenTelemetry spans around, as the core names them
//! (`zkrecipes::metrics::WAIT_CALLS`): the wrapper writes no span name of its own.

use napi_derive::napi;
use zkrecipes::metrics::WAIT_CALLS;

/// One wait: the recipe call that waits, its span's name, the outcome of a wait that got what it
/// waited for, and its span's `kind`.
#[napi(object, object_from_js = false)]
pub struct WaitSpan {
    /// `lock.acquire`, `read_lock.acquire`, `queue.take`, …
    pub call: String,
    /// `zkrecipes.lock.acquire`, …
    pub name: String,
    /// `acquired`, `taken`, `delivered`, `leader`, `passed`.
    pub success: String,
    /// `lock`, `read`, `multi`, `single`, `enter`, `lease`, `item`, …
    pub kind: String,
}

/// Every wait with a span, in the core's order.
#[napi]
pub fn wait_spans() -> Vec<WaitSpan> {
    WAIT_CALLS
        .iter()
        .map(|wait| WaitSpan {
            call: wait.call.to_string(),
            name: wait.span.to_string(),
            success: wait.success.to_string(),
            kind: wait.kind.to_string(),
        })
        .collect()
}
