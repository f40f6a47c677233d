//! The numbers a counter's node holds, as a binding receives them: Curator's `SharedCount` is
//! a Java `int`, its `DistributedAtomicLong` a `long`.

use crate::error::{Error, Result};

/// A shared count's value (or delta) as the caller gave it: a 32-bit integer, else
/// `INVALID_ARGUMENT` naming `name` and the number.
pub fn int32(name: &str, value: i128) -> Result<i32> {
    i32::try_from(value)
        .map_err(|_| out_of_range(name, value, 32, i32::MIN.into(), i32::MAX.into()))
}

/// An atomic long's value (or delta) as the caller gave it: a 64-bit integer, else
/// `INVALID_ARGUMENT` naming `name` and the number.
pub fn int64(name: &str, value: i128) -> Result<i64> {
    i64::try_from(value)
        .map_err(|_| out_of_range(name, value, 64, i64::MIN.into(), i64::MAX.into()))
}

fn out_of_range(name: &str, value: i128, bits: u32, low: i128, high: i128) -> Error {
    Error::invalid_argument(format!(
        "{name} must be a {bits}-bit integer ({low} to {high}), got {value}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_are_java_int_and_long() {
        assert_eq!(int32("seed", -(1 << 31)).unwrap(), i32::MIN);
        let err = int32("seed", 1 << 31).unwrap_err();
        assert_eq!(
            err.message(),
            "seed must be a 32-bit integer (-2147483648 to 2147483647), got 2147483648"
        );
        assert_eq!(int64("delta", i64::MAX.into()).unwrap(), i64::MAX);
        assert!(int64("delta", 1 << 63)
            .unwrap_err()
            .message()
            .contains("64-bit"));
    }
}
