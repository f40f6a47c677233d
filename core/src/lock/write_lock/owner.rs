//! Who holds a lock inside this process: reentrancy is counted per owner.

use std::sync::atomic::{AtomicU64, Ordering};

/// Who holds a lock inside this process; reentrancy is counted per owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Owner(pub u64);

impl Owner {
    /// An owner used by nobody else, for callers without an identity of their
    /// own (Rust's `acquire`, Kotlin, Node outside a scope): every acquire is then its own owner. The top bit keeps
    /// it apart from thread ids the bindings pass.
    pub fn unique() -> Owner {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Owner(NEXT.fetch_add(1, Ordering::Relaxed) | 1 << 63)
    }
}
