//! How several consumers of one queue share its backlog instead of all
//! claiming its head (where all but one lose the race, and a lost race costs a
//! whole claim transaction).
//!
//! Every consumer object keeps one ephemeral claim marker in `<dir>.zkrecipes`,
//! named after itself and the item it took last. Listing those markers (a
//! small read, sent in the same round trip as a claim) tells each consumer who
//! is consuming, so all of them agree on the same sorted list of consumers and
//! split the items between them by a hash of the item's sequence: each one
//! claims the oldest item of its own share. A marker also says how far its
//! consumer got: an item of another's share that is older than that
//! consumer's last claim is gone, so it leaves the cache without a request.
//!
//! A share whose consumer falls behind (slow, paused, or done consuming but
//! still holding its marker) is not left waiting: an item that stayed the
//! oldest one cached over one claim of ours while its consumer claimed nothing,
//! or over three in any case, or that later items known consumed overtook by
//! one and a half per consumer, is claimed next, whoever's share it is in. And a
//! consumer that is ahead of the others (its next item is far back in its
//! cache) claims among the first cached items instead of running further
//! ahead. The choice itself is `Cache::take_shared` in `mod.rs`.

use std::collections::HashMap;

use super::item_sequence;

const MARKER_PREFIX: &str = "claim-";

/// The consumers of a queue as of the last listing of its claim markers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Peers {
    /// Every consumer with a marker, and this one; sorted, so that all
    /// consumers that listed the same markers split items the same way.
    members: Vec<String>,
    /// The sequence of the item each other consumer claimed last.
    last_claimed: HashMap<String, i64>,
    /// For each other consumer, over how many of our listings in a row its
    /// last claim stayed the same (see `Peers::following`).
    quiet: HashMap<String, usize>,
    own: String,
    /// Whether the others count us: our marker was among the listed ones.
    counted: bool,
}

impl Peers {
    /// Just this consumer: it claims every item, in order.
    pub(super) fn alone(own: &str) -> Peers {
        Peers {
            members: vec![own.to_string()],
            last_claimed: HashMap::new(),
            quiet: HashMap::new(),
            own: own.to_string(),
            counted: false,
        }
    }

    /// The consumers named by the children of `<dir>.zkrecipes`: claim
    /// markers `claim-<session>-<consumer>-<item>` (or `…-batch-<first item>`
    /// for a batch); receipts and anything else are skipped.
    pub(super) fn from_markers(children: &[String], own: &str) -> Peers {
        let mut last_claimed: HashMap<String, i64> = HashMap::new();
        for child in children {
            let Some((consumer, sequence)) = parse_marker(child) else {
                continue;
            };
            let last = last_claimed.entry(consumer.to_string()).or_insert(sequence);
            *last = (*last).max(sequence);
        }
        let mut members: Vec<String> = last_claimed.keys().cloned().collect();
        let counted = last_claimed.contains_key(own);
        if !counted {
            members.push(own.to_string());
        }
        members.sort();
        last_claimed.remove(own);
        Peers {
            members,
            last_claimed,
            quiet: HashMap::new(),
            own: own.to_string(),
            counted,
        }
    }

    /// Whether the other consumers count us in their split (we have a claim
    /// marker): until then our share is in theirs.
    pub(super) fn counted(&self) -> bool {
        self.counted
    }

    /// These peers, listed right after `earlier`: a consumer whose last claim
    /// is the same in both has been quiet for one listing more.
    pub(super) fn following(mut self, earlier: &Peers) -> Peers {
        for (consumer, last) in &self.last_claimed {
            if earlier.last_claimed.get(consumer) == Some(last) {
                let before = earlier.quiet.get(consumer).copied().unwrap_or(0);
                self.quiet.insert(consumer.clone(), before + 1);
            }
        }
        self
    }

    pub(super) fn count(&self) -> usize {
        self.members.len()
    }

    pub(super) fn same_members(&self, other: &Peers) -> bool {
        self.members == other.members
    }

    /// Whether the item with `sequence` is in this consumer's share.
    pub(super) fn is_own(&self, sequence: i64) -> bool {
        self.owner(sequence) == self.own
    }

    /// The sequence of the latest item another consumer claimed (-1: none).
    pub(super) fn furthest_claim(&self) -> i64 {
        self.last_claimed.values().copied().max().unwrap_or(-1)
    }

    /// Whether the item with `sequence` is certainly gone: it is in another
    /// consumer's share, and that consumer (which claims its share oldest
    /// first) has claimed a later one.
    pub(super) fn taken_by_owner(&self, sequence: i64) -> bool {
        let owner = self.owner(sequence);
        owner != self.own
            && self
                .last_claimed
                .get(owner)
                .is_some_and(|&last| last >= sequence)
    }

    /// Over how many of our listings in a row the consumer whose share
    /// `sequence` is in has claimed nothing (0 for our own share).
    pub(super) fn owner_quiet_for(&self, sequence: i64) -> usize {
        self.quiet.get(self.owner(sequence)).copied().unwrap_or(0)
    }

    fn owner(&self, sequence: i64) -> &str {
        &self.members[share(sequence, self.members.len())]
    }
}

/// The share (0..count) an item's sequence falls in. Fibonacci hashing:
/// consecutive sequences spread evenly over the shares, and so do sequences
/// with gaps (a sequence counts deletes in the directory too, so items
/// offered while others are taken do not come with consecutive numbers, and
/// a plain `sequence mod count` could put all of them in one share).
fn share(sequence: i64, count: usize) -> usize {
    let mixed = (sequence as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
    ((mixed * count as u64) >> 32) as usize
}

/// `claim-<session hex>-<consumer>-<item>` → (consumer, the item's sequence).
fn parse_marker(name: &str) -> Option<(&str, i64)> {
    let rest = name.strip_prefix(MARKER_PREFIX)?;
    let (_session, rest) = rest.split_once('-')?;
    let (consumer, item) = rest.split_once('-')?;
    let item = item.strip_prefix("batch-").unwrap_or(item);
    Some((consumer, item_sequence(item)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marker(consumer: &str, sequence: i64) -> String {
        format!("claim-1f-{consumer}-qn-{sequence:010}")
    }

    #[test]
    fn shares_of_consecutive_sequences_are_even() {
        for count in 2..=8 {
            let mut sizes = vec![0usize; count];
            for sequence in 0..10_000 {
                sizes[share(sequence, count)] += 1;
            }
            let (least, most) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
            assert!(most - least <= 8, "{count} shares: {sizes:?}");
        }
    }

    #[test]
    fn shares_of_every_other_sequence_are_even_too() {
        let mut sizes = [0usize; 2];
        for sequence in (0..10_000).step_by(2) {
            sizes[share(sequence, 2)] += 1;
        }
        assert!(sizes[0].abs_diff(sizes[1]) <= 8, "{sizes:?}");
    }

    #[test]
    fn markers_name_the_consumers_and_how_far_each_got() {
        let children = vec![
            marker("bbb", 7),
            marker("aaa", 12),
            "claim-2e-ccc-batch-qn-0000000020".to_string(),
            "back-1700000000000-ddd-0123".to_string(),
            "unrelated".to_string(),
        ];
        let peers = Peers::from_markers(&children, "bbb");
        assert_eq!(peers.members, ["aaa", "bbb", "ccc"]);
        assert_eq!(peers.last_claimed.get("aaa"), Some(&12));
        assert_eq!(peers.last_claimed.get("ccc"), Some(&20));
        assert_eq!(peers.last_claimed.get("bbb"), None, "not our own");
    }

    #[test]
    fn a_consumer_without_a_marker_yet_counts_itself() {
        let peers = Peers::from_markers(&[marker("aaa", 3)], "zzz");
        assert_eq!(peers.members, ["aaa", "zzz"]);
        assert_eq!(Peers::from_markers(&[], "zzz"), Peers::alone("zzz"));
    }

    #[test]
    fn only_another_consumers_item_older_than_its_last_claim_is_taken() {
        let peers = Peers::from_markers(&[marker("aaa", 100)], "bbb");
        let theirs = (0..100).find(|&s| !peers.is_own(s)).unwrap();
        let ours = (0..100).find(|&s| peers.is_own(s)).unwrap();
        assert!(peers.taken_by_owner(theirs));
        assert!(!peers.taken_by_owner(ours));
        let later = (101..300).find(|&s| !peers.is_own(s)).unwrap();
        assert!(!peers.taken_by_owner(later));
    }

    #[test]
    fn a_consumer_that_claims_nothing_grows_quiet_and_one_that_claims_does_not() {
        let first = Peers::from_markers(&[marker("aaa", 3), marker("ccc", 4)], "bbb");
        let second =
            Peers::from_markers(&[marker("aaa", 3), marker("ccc", 9)], "bbb").following(&first);
        let third =
            Peers::from_markers(&[marker("aaa", 3), marker("ccc", 9)], "bbb").following(&second);
        assert_eq!(third.quiet.get("aaa"), Some(&2));
        assert_eq!(third.quiet.get("ccc"), Some(&1));
        assert_eq!(second.quiet.get("ccc"), None);
        let theirs = (100..200).find(|&s| third.owner(s) == "aaa").unwrap();
        assert_eq!(third.owner_quiet_for(theirs), 2);
        let ours = (100..200).find(|&s| third.is_own(s)).unwrap();
        assert_eq!(third.owner_quiet_for(ours), 0);
    }

    #[test]
    fn alone_every_item_is_own() {
        let peers = Peers::alone("aaa");
        assert!((0..100).all(|s| peers.is_own(s) && !peers.taken_by_owner(s)));
    }
}
