//! Gives freed memory back to the operating system after many recipe objects
//! were dropped. glibc keeps what is freed in its arenas: a service that made
//! and dropped 100,000 lock objects kept their memory resident for good
//! (issue 17). Every 4,096 drops the allocator is asked to trim; elsewhere
//! (musl, which returns memory itself) this does nothing.

use std::sync::atomic::{AtomicUsize, Ordering};

static DROPPED: AtomicUsize = AtomicUsize::new(0);
const EVERY: usize = 4096;

/// Called when a recipe object's core is dropped.
pub(crate) fn object_dropped() {
    if DROPPED.fetch_add(1, Ordering::Relaxed) % EVERY == EVERY - 1 {
        trim();
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    extern "C" {
        fn malloc_trim(pad: usize) -> i32;
    }
    // SAFETY: glibc's malloc_trim takes no pointers and may be called at any time.
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
