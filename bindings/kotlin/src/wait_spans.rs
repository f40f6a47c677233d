//! The core's table of waits (`zkrecipes::metrics::WAIT_SPANS`) for the Kotlin wrapper's
//! OpenTelemetry spans (`WaitSpans.kt`): their names come from here, not from a copy.

use zkrecipes::metrics::WAIT_SPANS;

/// One wait: the recipe call that waits (`lock.acquire`), its span's name
/// (`zkrecipes.lock.acquire`) and the outcome of a wait that got what it waited for (`acquired`).
#[derive(uniffi::Record)]
pub struct NativeWaitSpan {
    pub call: String,
    pub span: String,
    pub success: String,
}

/// Every wait, in the core's order.
#[uniffi::export]
pub fn wait_spans() -> Vec<NativeWaitSpan> {
    WAIT_SPANS
        .iter()
        .map(|&(call, span, success)| NativeWaitSpan {
            call: call.into(),
            span: span.into(),
            success: success.into(),
        })
        .collect()
}
