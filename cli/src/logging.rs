//! `-v`, `-vv` and `ZKRECIPES_LOG`: the library's events on standard error, one line each,
//! through the same forwarding the language bindings use (`zkrecipes::ffi::log`).
//!
//! Without a flag the library says nothing: the command's own one-line messages and exit
//! statuses already tell what a script needs (a lost lock is exit 79), and a failure stays one
//! line. `-v` shows warnings and info (acquired after waiting, leadership, session changes),
//! `-vv` debug (every request), `-vvv` trace.
//! `ZKRECIPES_LOG` is a comma list applied after `-v`: a bare level sets every logger
//! (`debug`), `logger=level` one (`zkrecipes.lock=debug`), and a named logger keeps its level
//! whatever the order.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use zkrecipes::ffi::log::{self, LogLevel, LogRecord};
use zkrecipes::ffi::log_line;

use crate::exit::Failure;

pub fn init(verbosity: u8, spec: Option<&str>) -> Result<(), Failure> {
    let base = match verbosity {
        0 => LogLevel::Off,
        1 => LogLevel::Info,
        2 => LogLevel::Debug,
        _ => LogLevel::Trace,
    };
    log::set_level("zkrecipes", base);
    // A bare level first, then each `logger=level`, whatever their order: a named logger keeps
    // its level (`zkrecipes.lock=debug,warn` is the lock at debug, the rest at warn).
    let mut directives = Vec::new();
    for directive in spec.unwrap_or("").split(',').map(str::trim) {
        if directive.is_empty() {
            continue;
        }
        let (logger, level) = directive
            .split_once('=')
            .unwrap_or(("zkrecipes", directive));
        let level = LogLevel::parse(level)
            .map_err(|err| Failure::usage(format!("ZKRECIPES_LOG: {}", err.message())))?;
        directives.push((logger.trim(), level));
    }
    directives.sort_by_key(|(logger, _)| *logger != "zkrecipes");
    for (logger, level) in directives {
        if !log::set_level(logger, level) {
            return Err(Failure::usage(format!(
                "ZKRECIPES_LOG: no logger {logger:?}; the loggers are {}",
                log::LOGGERS.join(", ")
            )));
        }
    }
    log::forward_to(Arc::new(|record: LogRecord| {
        eprintln!("{}", line(&record, SystemTime::now()))
    }));
    Ok(())
}

/// `2026-12-07T10:20:00.123Z INFO  zkrecipes.lock: message path=/locks/a fencing_token=7`: the
/// message and fields as the JVM bindings write them (`ffi::log_line`).
fn line(record: &LogRecord, at: SystemTime) -> String {
    format!(
        "{} {:<5} {}: {}",
        utc_timestamp(at),
        record.level.as_str(),
        record.logger,
        log_line(record)
    )
}

/// RFC 3339 in UTC with milliseconds, from the days since 1970 (Howard Hinnant's
/// civil-from-days): no time-zone database is needed for UTC.
fn utc_timestamp(at: SystemTime) -> String {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs() as i64;
    let (days, of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_rfc3339() {
        let at = UNIX_EPOCH + Duration::from_millis(1_796_637_600_123);
        assert_eq!(utc_timestamp(at), "2026-12-07T10:00:00.123Z");
        assert_eq!(
            utc_timestamp(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000Z"
        );
    }

    #[test]
    fn a_line_quotes_what_would_be_ambiguous() {
        let record = LogRecord {
            logger: "zkrecipes.lock",
            level: LogLevel::Info,
            message: "lock /a: acquired".into(),
            fields: vec![("path", "/a".into()), ("reason", "session expired".into())],
            dropped: 0,
        };
        let text = line(&record, UNIX_EPOCH);
        assert_eq!(
            text,
            "1970-01-01T00:00:00.000Z INFO  zkrecipes.lock: lock /a: acquired path=/a reason=\"session expired\""
        );
    }
}
