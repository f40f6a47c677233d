//! An event's fields typed for the bindings whose logs keep types (a JavaScript message object,
//! Python's `extra`): `LogRecord::fields` carries every value as text, and the integers among
//! them (a fencing token, a wait in milliseconds, a delivery count) are given back as integers.
//!
//! Decided by the field's name, never by how its value looks: a field then has one type in
//! every record, which a log pipeline's index needs (a latch id or an identity that happens to
//! be `"7"` stays text, and a node name `"0000000012"` keeps its zeros).

/// `text` as an integer when `name` is one of the library's integer fields (`fencing_token`,
/// `dropped`, every duration `…_ms` and count `…_count`) and `text` is one; `None` for text.
pub fn integer_field(name: &str, text: &str) -> Option<i64> {
    let integer = matches!(name, "fencing_token" | "dropped")
        || name.ends_with("_ms")
        || name.ends_with("_count");
    integer.then(|| text.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_by_name_text_otherwise() {
        assert_eq!(
            integer_field("fencing_token", "4294967301"),
            Some(4294967301)
        );
        assert_eq!(integer_field("waited_ms", "3012"), Some(3012));
        assert_eq!(integer_field("delivery_count", "2"), Some(2));
        assert_eq!(integer_field("dropped", "512"), Some(512));
        assert_eq!(integer_field("id", "7"), None);
        assert_eq!(integer_field("path", "/12"), None);
        assert_eq!(integer_field("held_ms", "soon"), None);
    }
}
