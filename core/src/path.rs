//! Recipe paths are checked here, before anything is sent, so that a typo
//! becomes `INVALID_PATH` instead of a half-created tree.

use crate::error::{Error, ErrorCode, Result};

/// Accepts an absolute ZooKeeper path that a recipe may own.
///
/// Refused: empty, relative, trailing `/`, empty / `.` / `..` segments,
/// control characters and the server's own `/zookeeper` subtree.
pub fn validate(path: &str) -> Result<()> {
    let fail = |why: &str| {
        Err(Error::new(
            ErrorCode::InvalidPath,
            format!("invalid path {path:?}: {why}"),
        ))
    };
    if path.is_empty() {
        return fail("empty");
    }
    if !path.starts_with('/') {
        return fail("must be absolute (start with '/')");
    }
    if path == "/" {
        return fail("the root cannot hold a recipe");
    }
    if path.ends_with('/') {
        return fail("must not end with '/'");
    }
    if path.chars().any(|c| {
        c.is_control()
            || ('\u{e000}'..='\u{f8ff}').contains(&c)
            || ('\u{fff0}'..='\u{ffff}').contains(&c)
    }) {
        return fail("contains a control or reserved character");
    }
    for segment in path[1..].split('/') {
        match segment {
            "" => return fail("empty segment ('//')"),
            "." | ".." => return fail("'.' and '..' segments are not allowed"),
            _ => {}
        }
    }
    if path == "/zookeeper" || path.starts_with("/zookeeper/") {
        return fail("/zookeeper is reserved for the server");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn accepts_plain_absolute_paths() {
        for ok in ["/a", "/locks/job-1", "/x/y/z", "/zookeeperish"] {
            assert!(validate(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn refuses_malformed_paths() {
        for bad in [
            "",
            "a",
            "a/b",
            "/",
            "/a/",
            "//a",
            "/a//b",
            "/a/./b",
            "/a/..",
            "/a\u{0}b",
            "/a\nb",
            "/zookeeper",
            "/zookeeper/x",
        ] {
            let err = validate(bad).unwrap_err();
            assert_eq!(err.code(), crate::ErrorCode::InvalidPath, "{bad:?}");
        }
    }
}
