//! One log record as one line of text, for the bindings whose logging takes a message and no
//! structured fields (the JVM's `System.Logger`): the message, then every field as
//! `key=value` (`path=/locks/a fencing_token=123 waited_ms=3012`), so that a reader, a grep
//! or a log pipeline's logfmt parser finds the numbers without parsing the sentence.

use std::fmt::Write as _;

use super::log::LogRecord;

/// The record's message and fields, logfmt-style: a value with a space, a quote, an `=` or a
/// control character (a reason's sentence) is quoted, with `\"`, `\\` and `\n` escaped; an
/// empty one is `""`. (Events a stalled host lost are told by a warning of their own,
/// `LogRecord::dropped_warning`, whose count is its `dropped` field.)
pub fn log_line(record: &LogRecord) -> String {
    let mut line = record.message.clone();
    for (key, value) in &record.fields {
        let _ = write!(line, " {key}=");
        push_value(&mut line, value);
    }
    line
}

fn push_value(line: &mut String, value: &str) {
    let bare = !value.is_empty()
        && !value
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '=');
    if bare {
        line.push_str(value);
        return;
    }
    line.push('"');
    for c in value.chars() {
        match c {
            '"' => line.push_str("\\\""),
            '\\' => line.push_str("\\\\"),
            '\n' => line.push_str("\\n"),
            '\r' => line.push_str("\\r"),
            '\t' => line.push_str("\\t"),
            c => line.push(c),
        }
    }
    line.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::log::LogLevel;

    #[test]
    fn fields_follow_the_message_and_sentences_are_quoted() {
        let record = LogRecord {
            logger: "zkrecipes.lock",
            level: LogLevel::Info,
            message: "lock /locks/a: acquired after waiting 3012 ms".into(),
            fields: vec![
                ("path", "/locks/a".into()),
                ("fencing_token", "123".into()),
                ("waited_ms", "3012".into()),
                ("reason", "CONNECTION_LOSS: \"gone\"\nfor good".into()),
                ("session", String::new()),
            ],
            dropped: 0,
        };
        assert_eq!(
            log_line(&record),
            "lock /locks/a: acquired after waiting 3012 ms path=/locks/a fencing_token=123 \
             waited_ms=3012 reason=\"CONNECTION_LOSS: \\\"gone\\\"\\nfor good\" session=\"\""
        );
        assert_eq!(
            log_line(&LogRecord::dropped_warning(7)),
            "7 zkrecipes log events were dropped: the log handlers did not keep up dropped=7"
        );
    }
}
