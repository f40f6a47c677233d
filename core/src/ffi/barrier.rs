//! A double barrier's count as a binding receives it.

use crate::error::Result;

/// A double barrier's `member_count` as a binding received it: 1 to 2^31-1, else
/// `INVALID_ARGUMENT` naming `name` and the number.
pub fn member_count(name: &str, value: i64) -> Result<u32> {
    crate::semaphore::lease_count(name, value)
}
