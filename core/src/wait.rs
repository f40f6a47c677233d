//! How long a call may wait: one type for every call that can wait (lock
//! acquire, take, consume, await_leadership), and the one place where each
//! language's convention for a timeout becomes that type.
//!
//! Each binding passes its caller's raw numbers to the constructor of its
//! language and never interprets them itself, so "what does -1 mean" has one
//! answer per language, here, tested here (`tests` below) and in that
//! language, and written down in the README's timeouts table:
//!
//! | language | forever                 | no wait (a try)       | refused                          |
//! |----------|-------------------------|-----------------------|----------------------------------|
//! | Python   | `None`, `-1`            | `0`, `blocking=False` | other negatives, NaN, a timeout with `blocking=False` |
//! | Java     | the untimed method      | `<= 0` (`tryLock(0, …)`, `poll(0, …)`) | nothing          |
//! | Kotlin   | `Duration.INFINITE`     | `<= 0` (as `withTimeout`) | NaN                          |
//! | Node.js  | `undefined`/`null`      | `0`                   | negatives, NaN                   |
//! | Rust     | `Wait::Forever`         | `Wait::No`, a zero `Duration` | —                        |

use std::time::Duration;

use tokio::time::Instant;

use crate::error::{Error, Result};

/// How long a call may wait for what it asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Do not wait: a try, which still takes what is free now.
    No,
    /// As long as it takes.
    Forever,
    /// Up to this long (one deadline for the whole call).
    For(Duration),
}

/// Longer than any session lives: a timeout beyond it is `Forever`.
const FOREVER_AFTER: Duration = Duration::from_secs(1_000_000_000);

impl Wait {
    /// `Forever` for `None`, else up to the duration (zero: a try).
    pub fn at_most(timeout: Option<Duration>) -> Wait {
        match timeout {
            None => Wait::Forever,
            Some(timeout) => Wait::For(timeout).normalized(),
        }
    }

    /// The bound, `None` for `Forever` (zero for `No`): for the calls that
    /// take an optional timeout.
    pub fn timeout(self) -> Option<Duration> {
        match self.normalized() {
            Wait::No => Some(Duration::ZERO),
            Wait::Forever => None,
            Wait::For(d) => Some(d),
        }
    }

    /// When the wait ends, from now: `None` for `Forever`, now for `No`
    /// (the call looks once).
    pub fn deadline(self) -> Option<Instant> {
        match self.normalized() {
            Wait::No => Some(Instant::now()),
            Wait::Forever => None,
            Wait::For(d) => Some(Instant::now().checked_add(d).unwrap_or_else(far_future)),
        }
    }

    /// A zero timeout does not wait at all, as `tryLock(0, …)` and
    /// `acquire(timeout=0)` do: it is a try, which takes a free lock.
    pub(crate) fn normalized(self) -> Wait {
        match self {
            Wait::For(d) if d.is_zero() => Wait::No,
            Wait::For(d) if d >= FOREVER_AFTER => Wait::Forever,
            other => other,
        }
    }

    /// Python, as `threading.Lock.acquire(blocking, timeout)` and
    /// `queue.Queue.get`: seconds; `None` or `-1` wait forever, `0` or
    /// `blocking=False` is a try, a timeout with `blocking=False` and any
    /// other negative are refused.
    pub fn python(timeout: Option<f64>, blocking: bool) -> Result<Wait> {
        match (timeout, blocking) {
            (None, true) => Ok(Wait::Forever),
            (Some(-1.0), true) => Ok(Wait::Forever),
            (None, false) => Ok(Wait::No),
            (Some(-1.0), false) => Ok(Wait::No),
            (Some(_), false) => Err(Error::invalid_argument(
                "can't specify a timeout for a non-blocking call",
            )),
            (Some(t), true) => from_units(
                t,
                1.0,
                "s",
                "timeout must be >= 0 s (or -1 or None: forever)",
            ),
        }
    }

    /// Java, as `java.util.concurrent` (`tryLock(time, unit)`,
    /// `BlockingQueue.poll(timeout, unit)`): nanoseconds, zero or negative
    /// is a try; `forever` for the untimed methods (`lock()`, `take()`).
    pub fn java(forever: bool, nanos: i64) -> Wait {
        match (forever, u64::try_from(nanos)) {
            (true, _) => Wait::Forever,
            (false, Ok(n)) if n > 0 => Wait::For(Duration::from_nanos(n)).normalized(),
            (false, _) => Wait::No,
        }
    }

    /// Kotlin, as `withTimeout(duration)`: milliseconds, positive infinity
    /// for `Duration.INFINITE` (a plain number crosses the FFI as it is; an
    /// optional one would need a buffer each call); zero or negative is a
    /// try (a deadline computed as "what is left" may have passed).
    pub fn kotlin(millis: f64) -> Result<Wait> {
        match millis {
            ms if ms.is_nan() => Err(Error::invalid_argument(
                "timeout must be a number of ms, got NaN",
            )),
            ms if ms == f64::INFINITY => Ok(Wait::Forever),
            ms if ms <= 0.0 => Ok(Wait::No),
            ms => from_units(ms, 1000.0, "ms", "timeout must be >= 0 ms"),
        }
    }

    /// Node.js, as `timeoutMs` options: milliseconds, `undefined` or `null`
    /// waits forever, `0` is a try, a negative or NaN is refused.
    pub fn node(millis: Option<f64>) -> Result<Wait> {
        match millis {
            None => Ok(Wait::Forever),
            Some(ms) => from_units(
                ms,
                1000.0,
                "ms",
                "timeoutMs must be >= 0 (or undefined: forever)",
            ),
        }
    }
}

/// A non-negative number of `unit`s (`per_second` of them in a second).
fn from_units(value: f64, per_second: f64, unit: &str, rule: &str) -> Result<Wait> {
    if value.is_nan() || value < 0.0 {
        return Err(Error::invalid_argument(format!(
            "{rule}, got {value} {unit}"
        )));
    }
    let seconds = value / per_second;
    if seconds >= FOREVER_AFTER.as_secs_f64() {
        return Ok(Wait::Forever);
    }
    Ok(Wait::For(Duration::from_secs_f64(seconds)).normalized())
}

impl From<Duration> for Wait {
    fn from(timeout: Duration) -> Wait {
        Wait::For(timeout).normalized()
    }
}

impl From<Option<Duration>> for Wait {
    fn from(timeout: Option<Duration>) -> Wait {
        Wait::at_most(timeout)
    }
}

pub(crate) fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86400 * 365 * 30)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    const SECOND: Duration = Duration::from_secs(1);

    fn refused(wait: Result<Wait>) -> String {
        let err = wait.expect_err("refused");
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
        err.to_string()
    }

    #[test]
    fn python_is_threading_lock() {
        assert_eq!(Wait::python(None, true).unwrap(), Wait::Forever);
        assert_eq!(Wait::python(Some(-1.0), true).unwrap(), Wait::Forever);
        assert_eq!(Wait::python(Some(0.0), true).unwrap(), Wait::No);
        assert_eq!(
            Wait::python(Some(1.5), true).unwrap(),
            Wait::For(SECOND * 3 / 2)
        );
        assert_eq!(Wait::python(None, false).unwrap(), Wait::No);
        assert_eq!(Wait::python(Some(-1.0), false).unwrap(), Wait::No);
        assert!(refused(Wait::python(Some(1.0), false)).contains("non-blocking"));
        assert!(refused(Wait::python(Some(0.0), false)).contains("non-blocking"));
        assert!(refused(Wait::python(Some(-2.0), true)).contains("got -2 s"));
        assert!(refused(Wait::python(Some(f64::NAN), true)).contains("NaN"));
        assert_eq!(
            Wait::python(Some(f64::INFINITY), true).unwrap(),
            Wait::Forever
        );
        assert_eq!(Wait::python(Some(1e300), true).unwrap(), Wait::Forever);
    }

    #[test]
    fn java_is_java_util_concurrent() {
        assert_eq!(Wait::java(true, 0), Wait::Forever);
        assert_eq!(Wait::java(true, -5), Wait::Forever);
        assert_eq!(Wait::java(false, 0), Wait::No);
        assert_eq!(Wait::java(false, -1), Wait::No);
        assert_eq!(Wait::java(false, i64::MIN), Wait::No);
        assert_eq!(Wait::java(false, 1), Wait::For(Duration::from_nanos(1)));
        // `TimeUnit` saturates at Long.MAX_VALUE (292 years): forever.
        assert_eq!(Wait::java(false, i64::MAX), Wait::Forever);
    }

    #[test]
    fn kotlin_is_with_timeout() {
        assert_eq!(Wait::kotlin(f64::INFINITY).unwrap(), Wait::Forever);
        assert_eq!(Wait::kotlin(f64::NEG_INFINITY).unwrap(), Wait::No);
        assert_eq!(Wait::kotlin(-3.0).unwrap(), Wait::No);
        assert_eq!(Wait::kotlin(0.0).unwrap(), Wait::No);
        assert_eq!(Wait::kotlin(250.0).unwrap(), Wait::For(SECOND / 4));
        assert!(refused(Wait::kotlin(f64::NAN)).contains("NaN"));
    }

    #[test]
    fn node_refuses_negatives() {
        assert_eq!(Wait::node(None).unwrap(), Wait::Forever);
        assert_eq!(Wait::node(Some(0.0)).unwrap(), Wait::No);
        assert_eq!(Wait::node(Some(1000.0)).unwrap(), Wait::For(SECOND));
        assert!(refused(Wait::node(Some(-1.0))).contains("got -1 ms"));
        assert!(refused(Wait::node(Some(f64::NAN))).contains("NaN"));
        assert_eq!(Wait::node(Some(f64::INFINITY)).unwrap(), Wait::Forever);
    }

    #[test]
    fn rust_durations() {
        assert_eq!(Wait::from(Duration::ZERO), Wait::No);
        assert_eq!(Wait::from(SECOND), Wait::For(SECOND));
        assert_eq!(Wait::from(None), Wait::Forever);
        assert_eq!(Wait::No.timeout(), Some(Duration::ZERO));
        assert_eq!(Wait::Forever.timeout(), None);
        assert_eq!(Wait::Forever.deadline(), None);
        assert!(Wait::For(Duration::ZERO)
            .deadline()
            .is_some_and(|d| d <= Instant::now()));
        assert!(Wait::For(SECOND)
            .deadline()
            .is_some_and(|d| d > Instant::now()));
    }
}
