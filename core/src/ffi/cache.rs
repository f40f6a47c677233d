//! A tree cache's depth as a binding receives it.

use crate::error::{Error, Result};

/// A tree cache's `max_depth` as the caller gave it: `None` for the whole subtree, else 0 (the
/// node alone) to 2^32-1, else `INVALID_ARGUMENT` naming `name` and the number.
pub fn max_depth(name: &str, value: Option<i128>) -> Result<Option<u32>> {
    value
        .map(|depth| {
            u32::try_from(depth).map_err(|_| {
                Error::invalid_argument(format!(
                    "{name} must be 0 to {} (or absent: the whole subtree), got {depth}",
                    u32::MAX
                ))
            })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_depth_is_whole_or_0_to_u32_max() {
        assert_eq!(max_depth("max_depth", None).unwrap(), None);
        assert_eq!(max_depth("max_depth", Some(0)).unwrap(), Some(0));
        for bad in [-1, 1 << 32, i128::MIN] {
            let err = max_depth("maxDepth", Some(bad)).unwrap_err();
            assert!(
                err.message()
                    .starts_with("maxDepth must be 0 to 4294967295"),
                "{err}"
            );
            assert!(err.message().ends_with(&format!("got {bad}")), "{err}");
        }
    }
}
