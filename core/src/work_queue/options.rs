//! How a work queue object consumes (prefetch, dead letters), and priorities: every rule on
//! the numbers a caller gives, with the message naming what it gave.

use crate::error::{Error, Result};

pub const DEFAULT_PRIORITY: u16 = 100;
pub const MAX_PRIORITY: u16 = 999;

/// How a work queue object consumes.
#[derive(Clone, Debug)]
pub struct WorkQueueOptions {
    /// Items claimed by one transaction (and buffered until handed out).
    pub prefetch: usize,
    /// An item delivered this many times is moved to `<path>/dead` instead
    /// of being delivered again. `None`: no limit.
    pub max_deliveries: Option<u32>,
}

impl WorkQueueOptions {
    pub(super) fn check(&self) -> Result<()> {
        if !(1..=MAX_PREFETCH).contains(&self.prefetch) {
            return Err(bad_prefetch(self.prefetch));
        }
        if self.max_deliveries == Some(0) {
            return Err(bad_max_deliveries(0));
        }
        Ok(())
    }
}

pub(crate) const MAX_PREFETCH: usize = 1000;

pub(crate) fn bad_prefetch(prefetch: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!(
        "prefetch must be between 1 and {MAX_PREFETCH}, got {prefetch}"
    ))
}

pub(crate) fn bad_max_deliveries(max: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("max_deliveries must be at least 1, got {max}"))
}

impl Default for WorkQueueOptions {
    fn default() -> Self {
        WorkQueueOptions {
            prefetch: 1,
            max_deliveries: None,
        }
    }
}

/// A priority given as any integer: 0–999, else `INVALID_ARGUMENT` naming it.
/// Bindings pass what the caller gave, so that the rule and its message live here.
pub fn priority(value: i64) -> Result<u16> {
    u16::try_from(value)
        .ok()
        .filter(|p| *p <= MAX_PRIORITY)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "priority must be between 0 and {MAX_PRIORITY}, got {value}"
            ))
        })
}
