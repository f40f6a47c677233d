//! Who holds a lock inside this process: reentrancy is counted per owner.

use std::sync::atomic::{AtomicU64, Ordering};

/// Who holds a lock inside this process; reentrancy is counted per owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Owner(pub u64);

impl Owner {
    /// An owner used by nobody else, for callers without an identity of their
    /// own (Rust's `acquire`, Kotlin, Node outside a scope): every acquire is then its own owner.
    /// The top bit keeps it apart from thread ids the bindings pass.
    pub fn unique() -> Owner {
        Owner(next() | UNIQUE)
    }

    /// An owner for one scope of a caller without an identity of its own (Node's `withLock`):
    /// a release that names no owner never ends its holds (`unlock_one`).
    pub fn scope() -> Owner {
        Owner(next() | UNIQUE | SCOPE)
    }

    /// Made by `scope`.
    pub fn is_scope(self) -> bool {
        self.0 & (UNIQUE | SCOPE) == UNIQUE | SCOPE
    }
}

const UNIQUE: u64 = 1 << 63;
const SCOPE: u64 = 1 << 62;

fn next() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed) & !(UNIQUE | SCOPE)
}
