//! A client's settings as a binding receives them: timeouts, and PEM given as text or a path.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::security::Pem;

/// A timeout setting as a binding receives it, in `unit` (`"s"` or `"ms"`): a number in
/// (0, 1 day], else `INVALID_ARGUMENT` naming the setting and the number.
pub fn timeout_setting(name: &str, value: f64, unit: &str) -> Result<Duration> {
    let per_second = if unit == "ms" { 1000.0 } else { 1.0 };
    let seconds = value / per_second;
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 86_400.0 {
        return Err(Error::invalid_argument(format!(
            "{name} must be in (0, {}] {unit}, got {value}",
            86_400.0 * per_second
        )));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A binding's string for a PEM: the text itself (anything holding a PEM header or a line
/// break, or too long to be a path) or a path to it.
pub fn pem(value: &str) -> Pem {
    Pem::from_text_or_path(value)
}

/// Whether a binding's string for a PEM is the text itself, never to be shown or opened as a
/// path (Python keeps such a string as bytes, which its `repr` hides).
pub fn pem_is_text(value: &str) -> bool {
    matches!(pem(value), Pem::Bytes(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_checked_in_their_unit() {
        assert_eq!(
            timeout_setting("t", 1500.0, "ms").unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(
            timeout_setting("t", 2.5, "s").unwrap(),
            Duration::from_millis(2500)
        );
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 86_401.0] {
            let err = timeout_setting("session_timeout", bad, "s").unwrap_err();
            assert!(
                err.message()
                    .starts_with("session_timeout must be in (0, 86400] s"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_pem_string_is_text_or_a_path_by_one_rule() {
        assert!(pem_is_text("-----BEGIN CERTIFICATE-----\nMIIB"));
        assert!(pem_is_text("a\nb"));
        assert!(!pem_is_text("/etc/zookeeper/ca.pem"));
        assert!(!pem_is_text("relative/ca.pem"));
    }
}
