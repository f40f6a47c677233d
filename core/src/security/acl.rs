//! The ACL policy of every node a recipe creates, and its spellings.

use std::sync::Arc;

use zookeeper_client as zk;

use crate::error::{Error, Result};

/// `scheme:id:perms` entries separated by commas; a comma inside an id (an
/// x509 name, `x509:O=acme,CN=app:r`) does not start an entry: only one that
/// is followed by a scheme (lowercase letters and digits) and a colon does.
fn split_entries(spec: &str) -> Vec<&str> {
    let starts_entry = |rest: &str| {
        rest.trim_start()
            .split_once(':')
            .is_some_and(|(scheme, _)| {
                !scheme.is_empty()
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            })
    };
    let mut entries = Vec::new();
    let mut start = 0;
    for (at, _) in spec.match_indices(',') {
        if starts_entry(&spec[at + 1..]) {
            entries.push(&spec[start..at]);
            start = at + 1;
        }
    }
    entries.push(&spec[start..]);
    entries
}

/// ZooKeeper's permission bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Perms(pub u8);

impl Perms {
    pub const READ: Perms = Perms(1);
    pub const WRITE: Perms = Perms(2);
    pub const CREATE: Perms = Perms(4);
    pub const DELETE: Perms = Perms(8);
    pub const ADMIN: Perms = Perms(16);
    pub const ALL: Perms = Perms(31);

    /// `"rwcda"` letters (any order, any subset) or `"all"`, as ZooKeeper's CLI
    /// writes them, or the bitmask as a decimal integer (`"31"`), as the
    /// bindings' integer permissions arrive.
    pub fn parse(letters: &str) -> Result<Perms> {
        if letters.eq_ignore_ascii_case("all") {
            return Ok(Perms::ALL);
        }
        let number = letters.strip_prefix('-').unwrap_or(letters);
        if !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit()) {
            // Any integer, however large or negative, is a bitmask: its message is the range's.
            return match letters.parse::<u8>() {
                Ok(bits) if (1..=31).contains(&bits) => Ok(Perms(bits)),
                _ => Err(Error::invalid_argument(format!(
                    "ACL permissions {letters} are out of range: a bitmask from 1 (read) to 31 \
                     (all, rwcda)"
                ))),
            };
        }
        let mut bits = 0;
        for letter in letters.chars() {
            bits |= match letter.to_ascii_lowercase() {
                'r' => 1,
                'w' => 2,
                'c' => 4,
                'd' => 8,
                'a' => 16,
                other => {
                    return Err(Error::invalid_argument(format!(
                        "bad permission {other:?} in {letters:?}: letters of rwcda, or all"
                    )))
                }
            };
        }
        if bits == 0 {
            return Err(Error::invalid_argument("an ACL entry needs a permission"));
        }
        Ok(Perms(bits))
    }
}

/// One ACL entry: `Acl::new(Perms::ALL, "sasl", "alice")`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acl {
    pub perms: Perms,
    pub scheme: String,
    pub id: String,
}

impl Acl {
    pub fn new(perms: Perms, scheme: &str, id: &str) -> Acl {
        Acl {
            perms,
            scheme: scheme.to_string(),
            id: id.to_string(),
        }
    }
}

/// The ACL of every node a recipe creates (its directories too). A
/// directory that exists already keeps the ACL it has.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum AclPolicy {
    /// Everybody may do everything (`world:anyone`). The default without credentials.
    Open,
    /// Only the session's authenticated identities (digest, SASL, the client
    /// certificate's x509): ZooKeeper's `auth` scheme. The default with credentials.
    Creator,
    /// `Creator`, and everybody may read.
    CreatorWorldRead,
    /// Exactly these entries.
    List(Vec<Acl>),
    /// `Open` without credentials, `Creator` with any.
    #[default]
    Default,
}

impl AclPolicy {
    /// A binding's name: `open`, `creator`, `creator-world-read` (`_` too), `default`.
    pub fn from_name(name: &str) -> Result<AclPolicy> {
        match name.to_ascii_lowercase().replace('_', "-").as_str() {
            "open" | "world" => Ok(AclPolicy::Open),
            "creator" => Ok(AclPolicy::Creator),
            "creator-world-read" => Ok(AclPolicy::CreatorWorldRead),
            "default" | "" => Ok(AclPolicy::Default),
            other => Err(Error::invalid_argument(format!(
                "unknown ACL policy {other:?}: open, creator, creator-world-read or a list of \
                 (perms, scheme, id)"
            ))),
        }
    }

    /// The CLI's spelling: a policy name, or entries `scheme:id:perms` separated by commas.
    pub fn parse(spec: &str) -> Result<AclPolicy> {
        if !spec.contains(':') {
            return AclPolicy::from_name(spec);
        }
        let entries = split_entries(spec)
            .into_iter()
            .map(|entry| {
                let mut parts = entry.trim().rsplitn(2, ':');
                let perms = parts.next().unwrap_or_default();
                let Some((scheme, id)) = parts.next().and_then(|rest| rest.split_once(':')) else {
                    return Err(Error::invalid_argument(format!(
                        "bad ACL entry {entry:?}: scheme:id:perms, e.g. sasl:alice:rwcda"
                    )));
                };
                Ok(Acl::new(Perms::parse(perms)?, scheme, id))
            })
            .collect::<Result<Vec<_>>>()?;
        AclPolicy::List(entries).validated()
    }

    pub fn validated(self) -> Result<AclPolicy> {
        if let AclPolicy::List(entries) = &self {
            if entries.is_empty() {
                return Err(Error::invalid_argument(
                    "an ACL list needs at least one entry",
                ));
            }
            for entry in entries {
                if entry.scheme.is_empty() || entry.perms.0 == 0 || entry.perms.0 > 31 {
                    return Err(Error::invalid_argument(format!(
                        "bad ACL entry {entry:?}: a scheme and permissions in 1..=31"
                    )));
                }
            }
        }
        Ok(self)
    }

    /// An explicit list must let the session itself create and delete, or
    /// the first directory it makes locks it out (and stays behind, with the
    /// ACL, for good: an existing directory keeps its ACL). `identities` are
    /// the session's (`whoami`); an empty list (an old server) is not judged.
    pub(crate) fn check_grants(&self, credentials: bool, identities: &[String]) -> Result<()> {
        let AclPolicy::List(entries) = self else {
            return Ok(());
        };
        // With credentials but no `whoami` answer (a server before 3.7) there is nothing to judge by;
        // without credentials only world (and ip) entries can grant anything.
        if credentials && identities.is_empty() {
            return Ok(());
        }
        let needed = Perms::CREATE.0 | Perms::DELETE.0;
        let ours = |entry: &Acl| match entry.scheme.as_str() {
            "world" => entry.id == "anyone",
            "ip" => true,
            "auth" => credentials,
            // A digest id is `user:base64(sha1)`; whoami names the user.
            "digest" => identities.iter().any(|who| {
                who.strip_prefix("digest:")
                    .is_some_and(|user| entry.id.split(':').next() == Some(user))
            }),
            scheme => identities.contains(&format!("{scheme}:{}", entry.id)),
        };
        if entries
            .iter()
            .any(|e| ours(e) && e.perms.0 & needed == needed)
        {
            return Ok(());
        }
        let who = match identities.is_empty() {
            true => "no credentials".to_string(),
            false => identities.join(", "),
        };
        Err(Error::invalid_argument(format!(
            "the ACL list gives this session ({who}) no create and delete permission: the \
             directories it makes would lock it out"
        )))
    }

    /// The entries the server gets, given whether the session has credentials.
    pub(crate) fn entries(&self, authenticated: bool) -> Arc<[zk::Acl]> {
        let all = zk::Permission::ALL;
        let creator = zk::Acl::new(all, zk::AuthId::authed());
        let world_read = zk::Acl::new(zk::Permission::READ, zk::AuthId::anyone());
        let open = zk::Acl::new(all, zk::AuthId::anyone());
        match self {
            AclPolicy::Open => Arc::from([open]),
            AclPolicy::Creator => Arc::from([creator]),
            AclPolicy::CreatorWorldRead => Arc::from([creator, world_read]),
            AclPolicy::Default if authenticated => Arc::from([creator]),
            AclPolicy::Default => Arc::from([open]),
            AclPolicy::List(entries) => entries
                .iter()
                .map(|e| zk::Acl::new(permission(e.perms), zk::AuthId::new(&e.scheme, &e.id)))
                .collect(),
        }
    }
}

fn permission(perms: Perms) -> zk::Permission {
    [
        (Perms::READ, zk::Permission::READ),
        (Perms::WRITE, zk::Permission::WRITE),
        (Perms::CREATE, zk::Permission::CREATE),
        (Perms::DELETE, zk::Permission::DELETE),
        (Perms::ADMIN, zk::Permission::ADMIN),
    ]
    .into_iter()
    .filter(|(ours, _)| perms.0 & ours.0 != 0)
    .fold(zk::Permission::NONE, |all, (_, theirs)| all | theirs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_integer_out_of_range_gets_the_range() {
        for perms in ["0", "32", "999", "-1", "99999999999999999999"] {
            let err = Perms::parse(perms).unwrap_err();
            assert!(err.message().contains("1 (read) to 31"), "{perms}: {err}");
        }
        assert_eq!(Perms::parse("31").unwrap(), Perms::ALL);
        assert!(Perms::parse("rx").unwrap_err().message().contains("rwcda"));
    }

    #[test]
    fn the_cli_spelling_takes_a_bitmask_as_the_bindings_do() {
        // The CLI's `--acl` used to read "31" as letters ("bad permission '3'").
        let policy = AclPolicy::parse("world:anyone:31,sasl:alice:rwcda").unwrap();
        assert_eq!(
            policy,
            AclPolicy::List(vec![
                Acl::new(Perms::ALL, "world", "anyone"),
                Acl::new(Perms::ALL, "sasl", "alice"),
            ])
        );
        let err = AclPolicy::parse("world:anyone:999").unwrap_err();
        assert!(err.message().contains("1 (read) to 31"), "{err}");
    }
}
