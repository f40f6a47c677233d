//! The core's table of waits (`zkrecipes::metrics::WAIT_CALLS`) for the Kotlin wrapper's
//! OpenTelemetry spans (`WaitSpans.kt`): their names come from here, not from a copy.

use zkrecipes::metrics::WAIT_CALLS;

/// One wait: the recipe call that waits (`lock.acquire`), its span's name
/// (`zkrecipes.lock.acquire`), the outcome of a wait that got what it waited for (`acquired`) and
/// the span's `kind` (`lock`).
#[derive(uniffi::Record)]
pub struct NativeWaitSpan {
    pub call: String,
    pub span: String,
    pub success: String,
    pub kind: String,
}

/// Every wait, in the core's order.
#[uniffi::export]
pub fn wait_spans() -> Vec<NativeWaitSpan> {
    WAIT_CALLS
        .iter()
        .map(|wait| NativeWaitSpan {
            call: wait.call.into(),
            span: wait.span.into(),
            success: wait.success.into(),
            kind: wait.kind.into(),
        })
        .collect()
}
