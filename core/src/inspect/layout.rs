//! Which recipe, and which library, wrote a child node: told by its name (and data).

use std::net::IpAddr;

use crate::lock::contenders;

/// Which recipe writes a child named `name` (with `data`), and which
/// libraries write that exact form; `None` when it is not a recipe node.
///
/// zkrecipes deliberately writes Curator's names, so only the data can tell
/// the two apart: Curator writes the client's IP address by default, we write
/// the identity (the host name by default).
pub fn layout(name: &str, data: &[u8]) -> Option<(&'static str, &'static [&'static str])> {
    const OURS_OR_APACHE: &[&str] = &["zkrecipes", "apache"];
    let (prefix, _) = contenders::split_sequence(name)?;
    if prefix == "n_" {
        return Some(("election", OURS_OR_APACHE));
    }
    if prefix == "qn-" {
        return Some(("queue", &["zkrecipes", "apache", "curator"]));
    }
    if is_kazoo_queue_entry(prefix) {
        return Some(("queue", &["kazoo"]));
    }
    if let Some(rest) = protected_rest(prefix) {
        let curator_data = std::str::from_utf8(data)
            .ok()
            .is_some_and(|d| d.trim().parse::<IpAddr>().is_ok());
        return Some(match rest {
            "latch-" if curator_data => ("latch", &["curator"]),
            "latch-" => ("latch", &["zkrecipes"]),
            "lease-" if curator_data => ("semaphore", &["curator"]),
            "lease-" => ("semaphore", &["zkrecipes"]),
            "lock-" | "__READ__" | "__WRIT__" if curator_data => ("lock", &["curator"]),
            "lock-" | "__READ__" | "__WRIT__" => ("lock", &["zkrecipes"]),
            _ => ("lock", &["curator"]),
        });
    }
    if let Some(session) = prefix.strip_prefix("x-").and_then(|r| r.strip_suffix('-')) {
        if session
            .trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            return Some(("lock", &["apache"]));
        }
    }
    for marker in ["__lock__", "__rlock__"] {
        if let Some(id) = prefix.strip_suffix(marker) {
            if id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Some(("lock", &["kazoo"]));
            }
        }
    }
    Some(("lock", &["unknown"]))
}

/// `_c_<36-char uuid>-<rest>` → `rest`.
pub(super) fn protected_rest(prefix: &str) -> Option<&str> {
    let after = prefix.strip_prefix("_c_")?;
    let (uuid, rest) = (after.get(..36)?, after.get(36..)?);
    let dashed = uuid.bytes().filter(|&b| b == b'-').count() == 4;
    (dashed && rest.starts_with('-')).then(|| &rest[1..])
}

/// A double barrier member: a uuid as Curator and we write it (36 characters, dashed), or as
/// kazoo does (32 hex digits).
pub(super) fn is_member_name(name: &str) -> bool {
    let hex = |s: &str| s.bytes().all(|b| b.is_ascii_hexdigit());
    match name.len() {
        32 => hex(name),
        36 => {
            let parts: Vec<&str> = name.split('-').collect();
            parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12]) && parts.iter().all(|p| hex(p))
        }
        _ => false,
    }
}

/// kazoo's `Queue` writes `entry-<priority:03>-<seq>` right under its path.
pub(super) fn is_kazoo_queue_entry(prefix: &str) -> bool {
    prefix
        .strip_prefix("entry-")
        .and_then(|r| r.strip_suffix('-'))
        .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: &str = "8f1b3a2e-0000-4000-8000-000000000000";

    #[test]
    fn tells_every_peer_layout_apart() {
        let lib = |name: &str, data: &str| layout(name, data.as_bytes()).map(|(r, l)| (r, l[0]));
        assert_eq!(
            lib(&format!("_c_{UUID}-lock-0000000001"), "web-1"),
            Some(("lock", "zkrecipes"))
        );
        assert_eq!(
            lib(&format!("_c_{UUID}-lock-0000000001"), "10.0.0.7"),
            Some(("lock", "curator"))
        );
        assert_eq!(
            lib(&format!("_c_{UUID}-__READ__0000000001"), "::1"),
            Some(("lock", "curator"))
        );
        assert_eq!(
            lib(&format!("_c_{UUID}-latch-0000000001"), "10.0.0.7"),
            Some(("latch", "curator"))
        );
        assert_eq!(
            lib(&format!("_c_{UUID}-latch-0000000001"), "web-1"),
            Some(("latch", "zkrecipes"))
        );
        assert_eq!(
            lib(&format!("_c_{UUID}-lease-0000000001"), "10.0.0.7"),
            Some(("semaphore", "curator"))
        );
        assert!(is_member_name(UUID));
        assert!(is_member_name("0123456789abcdef0123456789abcdef"));
        assert!(!is_member_name("ready") && !is_member_name("entries"));
        assert_eq!(
            lib("x-72057594037927936-0000000012", "\u{12}4"),
            Some(("lock", "apache"))
        );
        assert_eq!(
            lib("0123456789abcdef0123456789abcdef__lock__0000000003", ""),
            Some(("lock", "kazoo"))
        );
        assert_eq!(
            lib("0123456789abcdef0123456789abcdef__rlock__0000000003", ""),
            Some(("lock", "kazoo"))
        );
        assert_eq!(lib("n_0000000004", "host"), Some(("election", "zkrecipes")));
        assert_eq!(lib("qn-0000000004", "x"), Some(("queue", "zkrecipes")));
        assert_eq!(lib("entry-100-0000000004", "x"), Some(("queue", "kazoo")));
        assert_eq!(lib("something-0000000004", ""), Some(("lock", "unknown")));
        assert_eq!(lib("entries", ""), None);
        assert_eq!(lib("locks", ""), None);
    }
}
