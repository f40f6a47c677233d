//! How lock children are named, read and ordered — in one place.
//!
//! We write Curator's "protected" form `_c_<uuid>-lock-<seq>` (exclusive) and
//! `_c_<uuid>-__READ__<seq>` / `_c_<uuid>-__WRIT__<seq>` (shared). We read every
//! child that ends in a ZooKeeper sequence: Apache's `x-<session>-<seq>`,
//! kazoo's `<id>__lock__<seq>` / `__rlock__`, Curator's and ours. Anything else
//! under a lock directory is foreign and ignored, never fatal.

use crate::observe::{recipe_event, Recipe};

/// What a contender asks for. Exclusive locks treat everybody as a writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Read,
    Write,
}

/// Marker that follows `_c_<uuid>-` in the names we write.
pub(crate) const EXCLUSIVE_MARKER: &str = "lock-";
pub(crate) const READ_MARKER: &str = "__READ__";
pub(crate) const WRITE_MARKER: &str = "__WRIT__";
/// Curator's `LeaderLatch` names its nodes `_c_<uuid>-latch-<seq>`.
pub(crate) const LATCH_MARKER: &str = "latch-";

/// Readers of the libraries we interoperate with (Curator, kazoo).
const READER_MARKERS: [&str; 2] = ["__READ__", "__rlock__"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Contender {
    pub name: String,
    pub sequence: i64,
    pub kind: Kind,
}

impl Contender {
    pub(crate) fn parse(name: &str) -> Option<Contender> {
        let (prefix, sequence) = split_sequence(name)?;
        let kind = if READER_MARKERS.iter().any(|m| prefix.contains(m)) {
            Kind::Read
        } else {
            Kind::Write
        };
        Some(Contender {
            name: name.to_string(),
            sequence,
            kind,
        })
    }
}

/// Contenders among `children`, in lock order (the holder first).
pub(crate) fn sorted(children: &[String]) -> Vec<Contender> {
    let mut contenders: Vec<Contender> = children
        .iter()
        .filter_map(|child| {
            let parsed = Contender::parse(child);
            if parsed.is_none() {
                recipe_event!(
                    Recipe::Lock,
                    DEBUG,
                    node = child.as_str(),
                    "ignoring foreign child {child:?} of a lock directory"
                );
            }
            parsed
        })
        .collect();
    contenders.sort_by(|a, b| a.name.cmp(&b.name));
    sort_by_sequence(&mut contenders, |c| c.sequence);
    contenders
}

/// Sorts `items` (stably) in the order the server handed out their sequences.
///
/// The counter is a signed 32-bit value that wraps from 2^31−1 to −2^31, so
/// right after the wrap a plain integer order would put the newest node first
/// (two holders, two leaders). Sequences are compared as serial numbers: when
/// the set spans the wrap (its spread is more than half the ring), negative
/// values count as coming after the positive ones. That is a total order, so
/// the sort never sees an inconsistent comparator.
pub(crate) fn sort_by_sequence<T>(items: &mut [T], sequence: impl Fn(&T) -> i64) {
    let (min, max) = items
        .iter()
        .map(&sequence)
        .fold((i64::MAX, i64::MIN), |(lo, hi), s| (lo.min(s), hi.max(s)));
    let wrapped = max.saturating_sub(min) > i64::from(i32::MAX);
    let key = |s: i64| {
        if wrapped && s < 0 {
            s + (1i64 << 32)
        } else {
            s
        }
    };
    items.sort_by_key(|item| key(sequence(item)));
}

/// Whether sequence `a` was handed out before `b` (serial-number arithmetic
/// on the 32-bit counter).
#[cfg(test)]
fn precedes(a: i64, b: i64) -> bool {
    (b as i32).wrapping_sub(a as i32) > 0
}

/// Splits the `%010d` sequence the server appended to a name.
///
/// A non-negative sequence is the last ten digits. A negative one (after the
/// parent's cversion overflowed) is `-` plus nine or ten digits and follows
/// the name's own separator, e.g. `…-lock--2147483648` or `n_-000000005`.
pub(crate) fn split_sequence(name: &str) -> Option<(&str, i64)> {
    let bytes = name.as_bytes();
    let digits = bytes
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let end = name.len();
    let negative_at = |width: usize| -> Option<(&str, i64)> {
        let sign = end.checked_sub(width + 1)?;
        if bytes[sign] != b'-' {
            return None;
        }
        let value: i64 = name[sign..].parse().ok()?;
        (value >= i64::from(i32::MIN)).then_some((&name[..sign], value))
    };
    match digits {
        9 => negative_at(9),
        d if d >= 10 => {
            let start = end - 10;
            let separator_before_sign =
                start >= 2 && bytes[start - 1] == b'-' && matches!(bytes[start - 2], b'-' | b'_');
            if separator_before_sign && bytes[start] != b'0' {
                if let Some(negative) = negative_at(10) {
                    return Some(negative);
                }
            }
            Some((&name[..start], name[start..].parse().ok()?))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(name: &str) -> Option<i64> {
        split_sequence(name).map(|(_, s)| s)
    }

    #[test]
    fn reads_every_peer_naming() {
        assert_eq!(
            seq("_c_8f1b3a2e-0000-4000-8000-000000000000-lock-0000000007"),
            Some(7)
        );
        assert_eq!(seq("x-72057594037927936-0000000012"), Some(12));
        assert_eq!(seq("0a1b2c3d4e5f__lock__0000000003"), Some(3));
        assert_eq!(seq("0a1b__rlock__0000000004"), Some(4));
        assert_eq!(seq("_c_u-__READ__0000000005"), Some(5));
        assert_eq!(seq("qn-0000000001"), Some(1));
        assert_eq!(seq("n_1234567890"), Some(1234567890));
        assert_eq!(seq("x-1-2147483647"), Some(2147483647));
    }

    #[test]
    fn reads_negative_sequences_after_overflow() {
        assert_eq!(seq("_c_u-lock--2147483648"), Some(-2147483648));
        assert_eq!(seq("_c_u-lock--000000005"), Some(-5));
        assert_eq!(seq("n_-1000000000"), Some(-1000000000));
        assert_eq!(seq("_c_u-__READ__-000000001"), Some(-1));
        assert_eq!(seq("x-77--2147483647"), Some(-2147483647));
    }

    #[test]
    fn foreign_children_are_not_contenders() {
        for name in ["config", "lock", "_c_u-lock-12", "readme.txt", ""] {
            assert_eq!(Contender::parse(name), None, "{name}");
        }
    }

    #[test]
    fn orders_by_integer_not_string() {
        let children: Vec<String> = [
            "a-lock-0000000010",
            "b-lock--000000005",
            "c-lock-0000000002",
            "junk",
            "d__lock__0000000001",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        let names: Vec<_> = sorted(&children).into_iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "b-lock--000000005",
                "d__lock__0000000001",
                "c-lock-0000000002",
                "a-lock-0000000010"
            ]
        );
    }

    #[test]
    fn classifies_readers_of_every_library() {
        assert_eq!(
            Contender::parse("_c_u-__READ__0000000001").unwrap().kind,
            Kind::Read
        );
        assert_eq!(
            Contender::parse("k__rlock__0000000001").unwrap().kind,
            Kind::Read
        );
        assert_eq!(
            Contender::parse("_c_u-__WRIT__0000000001").unwrap().kind,
            Kind::Write
        );
        assert_eq!(
            Contender::parse("k__lock__0000000001").unwrap().kind,
            Kind::Write
        );
    }

    fn sequences_in_order(sequences: &[i64]) -> Vec<i64> {
        let children: Vec<String> = sequences
            .iter()
            .map(|s| format!("_c_u-lock-{s:010}"))
            .collect();
        sorted(&children).into_iter().map(|c| c.sequence).collect()
    }

    #[test]
    fn wrap_around_keeps_creation_order() {
        let max = i64::from(i32::MAX);
        let min = i64::from(i32::MIN);
        assert_eq!(
            sequences_in_order(&[min, max, max - 1, min + 1]),
            [max - 1, max, min, min + 1]
        );
        assert_eq!(sequences_in_order(&[3, 1, 2]), [1, 2, 3]);
        assert_eq!(sequences_in_order(&[-5, -7, -6]), [-7, -6, -5]);
    }

    /// Every run of consecutive sequences around the wrap (and around zero,
    /// where negatives meet positives without a wrap) sorts in creation order,
    /// whatever order the server listed them in.
    #[test]
    fn serial_order_exhaustively_around_the_boundary() {
        let max = i64::from(i32::MAX);
        let next = |s: i64| if s == max { i64::from(i32::MIN) } else { s + 1 };
        for start in (max - 40..=max).chain(-40..=0) {
            for len in 1..=12 {
                let mut created = vec![start];
                for _ in 1..len {
                    created.push(next(*created.last().unwrap()));
                }
                for (i, a) in created.iter().enumerate() {
                    for (j, b) in created.iter().enumerate() {
                        assert_eq!(precedes(*a, *b), i < j, "{a} before {b}");
                    }
                }
                let mut listed = created.clone();
                listed.reverse();
                listed.rotate_left(len / 2);
                assert_eq!(
                    sequences_in_order(&listed),
                    created,
                    "from {start}, {len} nodes"
                );
            }
        }
    }
}
