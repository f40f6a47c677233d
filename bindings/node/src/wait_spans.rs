//! The waits `lib/wait_spans.js` makes its OpenTelemetry spans around, as the core names them
//! (`zkrecipes::metrics::WAIT_SPANS`): the wrapper writes no span name of its own.

use napi_derive::napi;
use zkrecipes::metrics::WAIT_SPANS;

/// One wait: the recipe call that waits, its span's name, and the outcome of a wait that got
/// what it waited for.
#[napi(object, object_from_js = false)]
pub struct WaitSpan {
    /// `lock.acquire`, `queue.take`, …
    pub call: String,
    /// `zkrecipes.lock.acquire`, …
    pub name: String,
    /// `acquired`, `taken`, `delivered`, `leader`, `passed`.
    pub success: String,
}

/// Every wait with a span, in the core's order.
#[napi]
pub fn wait_spans() -> Vec<WaitSpan> {
    WAIT_SPANS
        .iter()
        .map(|(call, name, success)| WaitSpan {
            call: call.to_string(),
            name: name.to_string(),
            success: success.to_string(),
        })
        .collect()
}
