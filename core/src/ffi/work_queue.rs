//! A work queue's options as a binding receives them.

use crate::error::Result;
use crate::work_queue::{bad_max_deliveries, bad_prefetch, WorkQueueOptions, MAX_PREFETCH};

/// Work queue options from numbers as a binding received them: `prefetch` 1–1000,
/// `max_deliveries` at least 1 or `None` for no limit.
pub fn work_queue_options(prefetch: i64, max_deliveries: Option<i64>) -> Result<WorkQueueOptions> {
    let options = WorkQueueOptions {
        prefetch: usize::try_from(prefetch)
            .ok()
            .filter(|p| (1..=MAX_PREFETCH).contains(p))
            .ok_or_else(|| bad_prefetch(prefetch))?,
        max_deliveries: match max_deliveries {
            None => None,
            Some(max) => Some(
                u32::try_from(max)
                    .ok()
                    .filter(|m| *m >= 1)
                    .ok_or_else(|| bad_max_deliveries(max))?,
            ),
        },
    };
    Ok(options)
}

/// Java's convention for `work_queue_options`: an `int` cannot be absent, so `maxDeliveries`
/// 0 means no limit (and a negative one is refused, naming it).
pub fn work_queue_options_java(prefetch: i64, max_deliveries: i64) -> Result<WorkQueueOptions> {
    work_queue_options(prefetch, (max_deliveries != 0).then_some(max_deliveries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_max_deliveries_zero_is_no_limit() {
        assert_eq!(work_queue_options_java(1, 0).unwrap().max_deliveries, None);
        assert_eq!(
            work_queue_options_java(1, 3).unwrap().max_deliveries,
            Some(3)
        );
        let err = work_queue_options_java(1, -1).unwrap_err();
        assert!(err.message().contains("got -1"), "{err}");
        let err = work_queue_options(0, None).unwrap_err();
        assert!(err.message().contains("between 1 and 1000, got 0"), "{err}");
    }
}
