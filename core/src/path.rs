//! Recipe paths are checked here, before anything is sent, so that a typo
//! becomes `INVALID_PATH` instead of a half-created tree.

use crate::error::{Error, ErrorCode, Result};

/// The longest recipe path (and chroot) accepted. A request over the
/// server's packet limit makes it drop the connection instead of refusing
/// the request, and every retry drops it again (found by an adversarial
/// test: a 2 MB path jammed the whole client); 32 KiB leaves room for node
/// names and payloads.
pub const MAX_PATH: usize = 32 * 1024;

/// Names ending so are reserved: a queue keeps its claim markers in the
/// sibling `<dir>.zkrecipes`, which must never be another recipe's directory.
pub const RESERVED_SUFFIX: &str = ".zkrecipes";

/// Accepts an absolute ZooKeeper path that a recipe may own.
///
/// Refused: empty, relative, trailing `/`, empty / `.` / `..` segments,
/// control characters, the server's own `/zookeeper` subtree, names ending in
/// `.zkrecipes` and paths longer than `MAX_PATH` bytes.
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
    if path.len() > MAX_PATH {
        return Err(Error::new(
            ErrorCode::InvalidPath,
            format!(
                "invalid path of {} bytes: at most {MAX_PATH} are allowed",
                path.len()
            ),
        ));
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
        // ZooKeeper refuses these UTF-16 units, surrogates included: so every character beyond
        // U+FFFF (an emoji), which Java stores as a surrogate pair, is refused by the server.
        c.is_control()
            || ('\u{e000}'..='\u{f8ff}').contains(&c)
            || ('\u{fff0}'..='\u{ffff}').contains(&c)
            || c > '\u{ffff}'
    }) {
        return fail("contains a control or reserved character");
    }
    for segment in path[1..].split('/') {
        match segment {
            "" => return fail("empty segment ('//')"),
            "." | ".." => return fail("'.' and '..' segments are not allowed"),
            _ if segment.ends_with(RESERVED_SUFFIX) => {
                return fail("names ending in '.zkrecipes' are reserved for queue bookkeeping")
            }
            _ => {}
        }
    }
    if path == "/zookeeper" || path.starts_with("/zookeeper/") {
        return fail("/zookeeper is reserved for the server");
    }
    Ok(())
}

/// Accepts one node name (a group member's id, a service's name or an instance's id):
/// `INVALID_ARGUMENT` naming `what` for one that is empty, `.` or `..`, or holds `/` or NUL.
/// The path it makes is checked by `validate` as well.
pub(crate) fn check_node_name(what: &str, name: &str) -> Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(Error::invalid_argument(format!(
            "{what} is a node name: not empty, not . or .., without '/' (got {name:?})"
        )));
    }
    Ok(())
}

/// The path of `name` under `parent`.
pub(crate) fn join(parent: &str, name: &str) -> String {
    if parent == "/" {
        format!("/{name}")
    } else {
        format!("{parent}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn accepts_plain_absolute_paths() {
        let longest = format!("/{}", "x".repeat(super::MAX_PATH - 1));
        for ok in [
            "/a",
            "/locks/job-1",
            "/x/y/z",
            "/zookeeperish",
            "/x/zkrecipes",
            "/x/a.zkrecipesx",
            &longest,
        ] {
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
            "/x\u{1f600}",
            "/zookeeper",
            "/zookeeper/x",
            "/x/col.zkrecipes",
            "/a.zkrecipes/b",
            "/.zkrecipes",
            &format!("/{}", "x".repeat(super::MAX_PATH)),
        ] {
            let err = validate(bad).unwrap_err();
            assert_eq!(err.code(), crate::ErrorCode::InvalidPath, "{bad:?}");
        }
    }
}
