//! A consumer's view of its queue: the item names as of its last listing,
//! and who else consumes (`stripes.rs`), which together choose the item it
//! claims next.

use std::collections::{BTreeSet, HashSet, VecDeque};

use super::item_sequence;
use super::stripes::Peers;

/// How far back among the cached items the next one of our share may be:
/// further back, we are ahead of the others and claim one of these instead
/// (without it, a consumer that started first stayed hundreds of items ahead).
const LEAD: usize = 8;

/// Over how many of our claims an item may stay our oldest cached one before
/// we claim it, whoever's share it is in (over one if its consumer claimed
/// nothing meanwhile).
const HEAD_PATIENCE: usize = 3;

/// By how many later items the head may have been overtaken, as far as we
/// know, before we claim it, whoever's share it is in: one and a half per
/// consumer, half of README's bound in practice (`(CLAIM_WINDOW - 1) × C`),
/// the other half for what the others claim before our claim lands. The
/// patience above counts our own claims from the moment an item became our
/// head, so when a consumer fell behind with two items in a row, its second
/// one waited that long again after the first (overtaken by 15 with 4
/// consumers, in `make bench`). Over 20 drains of 10,000 by 4 consumers, the
/// worst was 9 with this rule, 10 without it.
fn overtaken_limit(consumers: usize) -> usize {
    consumers + consumers / 2
}

/// Reads in a row that found a cached item gone before a consumer that does
/// not know the others lists afresh (see `Cache::read`).
pub(super) const MISSES_BEFORE_LISTING: usize = LEAD;
pub(super) const MISSES_BEFORE_LISTING_BATCH: usize = 2;

/// After how many of our listings without a claim of its own a consumer is
/// taken to have stopped polling: its items are claimed as soon as they are
/// the head, and guessed as our next claim (its data read in advance).
const IDLE_LISTINGS: usize = 4;

pub(super) struct Cache {
    /// Item names not yet consumed as of our last listing, head first.
    pub(super) names: VecDeque<String>,
    /// The data of the next item, read together with the previous delete.
    pub(super) prefetched: Option<(String, Vec<u8>)>,
    /// Our claim marker of the last item we took (deleted with the next claim).
    pub(super) last_marker: Option<String>,
    /// The consumers as of our last listing of the claim markers (see
    /// `stripes.rs`).
    pub(super) peers: Peers,
    /// Whether to list the claim markers with the next claim: always while
    /// others consume, and after a lost race (to somebody we did not know of).
    pub(super) watch_peers: bool,
    /// The cached head when we chose our last claim, and over how many of our
    /// claims it has been the head (see `Cache::overdue`).
    last_head: Option<String>,
    claims_outlived: usize,
    /// Items we gave back and put in the cache again: their consumer's
    /// marker may say it got past them, but they are there.
    returned: HashSet<String>,
    /// The sequences of items that left the cache as consumed (by us, or by
    /// their consumer as its marker told) and are later than the head: by
    /// how many items the head is known to be overtaken.
    gone_after_head: BTreeSet<i64>,
    /// Reads in a row that found a cached item gone (see `read`).
    misses: usize,
}

impl Cache {
    pub(super) fn new(consumer: &str) -> Cache {
        Cache {
            names: VecDeque::new(),
            prefetched: None,
            last_marker: None,
            peers: Peers::alone(consumer),
            watch_peers: true,
            last_head: None,
            claims_outlived: 0,
            returned: HashSet::new(),
            gone_after_head: BTreeSet::new(),
            misses: 0,
        }
    }

    /// An item left the cache as consumed.
    fn gone(&mut self, name: &str) {
        if let Some(sequence) = item_sequence(name) {
            self.gone_after_head.insert(sequence);
        }
    }

    /// By how many later items the head is known to be overtaken (forgetting
    /// the items that are not later than it).
    fn head_overtaken(&mut self, head: i64) -> usize {
        self.gone_after_head = self.gone_after_head.split_off(&(head + 1));
        self.gone_after_head.len()
    }

    /// With other consumers: the oldest cached item of our share, or the head
    /// once it is overdue.
    pub(super) fn take_shared(&mut self) -> Option<String> {
        let head = self.names.front()?.clone();
        if self.last_head.as_ref() == Some(&head) {
            self.claims_outlived += 1;
        } else {
            self.claims_outlived = 0;
        }
        let overtaken = item_sequence(&head).map_or(0, |s| self.head_overtaken(s));
        let any_of_the_first_few = || fastrand::usize(..LEAD.min(self.names.len()));
        let pick = if !self.peers.counted() {
            // The others do not count us yet (no marker of ours: we won no
            // claim yet), so our share is in theirs and its oldest item is the
            // one its consumer goes for. A consumer that joined late lost every
            // race that way and never got counted (found by a test).
            any_of_the_first_few()
        } else {
            // `None`: we are ahead of the others; the head is the likeliest to
            // be taken already.
            self.choice(self.claims_outlived, overtaken, false)
                .unwrap_or_else(any_of_the_first_few)
        };
        self.last_head = Some(head);
        self.take_at(pick)
    }

    /// Takes the cached item at `at` out of the cache, to claim it.
    pub(super) fn take_at(&mut self, at: usize) -> Option<String> {
        let name = self.names.remove(at)?;
        self.returned.remove(&name);
        // Claimed by us next, or found gone (taken by somebody else); put
        // back if the claim is never sent. Alone, every claim is the head's.
        if self.peers.count() > 1 {
            self.gone(&name);
        }
        Some(name)
    }

    /// Where the item to claim is: the head if it is overdue, else the oldest
    /// of our share among the first `LEAD` (`None`: none there). The head is
    /// overdue once its consumer has claimed nothing for `IDLE_LISTINGS`
    /// listings, or once it has been the head over `HEAD_PATIENCE` of our
    /// claims (`outlived`), or over one while its consumer claimed nothing
    /// since our previous listing, or once it is known to be `overtaken` by
    /// `overtaken_limit` later items. `guessing` (for the read in advance)
    /// leaves out the rule of one claim: its consumer is then usually about
    /// to claim it.
    fn choice(&self, outlived: usize, overtaken: usize, guessing: bool) -> Option<usize> {
        let head = item_sequence(self.names.front()?)?;
        let quiet = self.peers.owner_quiet_for(head);
        let overdue = quiet >= IDLE_LISTINGS
            || outlived >= HEAD_PATIENCE
            || overtaken >= overtaken_limit(self.peers.count())
            || (!guessing && outlived >= 1 && quiet >= 1);
        if overdue {
            Some(0)
        } else {
            self.first_own()
        }
    }

    /// Where the oldest cached item of our share is, if among the first
    /// `LEAD`: further back, we are ahead of the others, and wait for them.
    fn first_own(&self) -> Option<usize> {
        let peers = &self.peers;
        self.names
            .iter()
            .take(LEAD)
            .position(|name| item_sequence(name).is_some_and(|s| peers.is_own(s)))
    }

    /// The item we will likely claim after the one being claimed (already
    /// taken out of the cache), for its data to be read in the same round
    /// trip: the head when alone, else `choice` as the next claim will see it
    /// if the next listing changes nothing.
    pub(super) fn predicted_next(&self) -> Option<String> {
        if self.peers.count() == 1 {
            return self.names.front().cloned();
        }
        let outlived = match self.names.front() {
            Some(head) if self.last_head.as_ref() == Some(head) => self.claims_outlived + 1,
            _ => 0,
        };
        let overtaken = match self.names.front().and_then(|head| item_sequence(head)) {
            Some(head) => self.gone_after_head.range(head + 1..).count(),
            None => 0,
        };
        self.names
            .get(self.choice(outlived, overtaken, true).unwrap_or(0))
            .cloned()
    }

    /// What the claim markers listed with a claim tell: who consumes, and
    /// which cached items of others' shares are gone.
    pub(super) fn learn_peers(&mut self, peers: Peers) {
        self.watch_peers = peers.count() > 1;
        if !peers.same_members(&self.peers) && self.peers.count() > 1 {
            // Items we dropped as taken by their consumer under the old split
            // may still be there under the new one: list afresh.
            self.names.clear();
            self.returned.clear();
            self.gone_after_head.clear();
            self.last_head = None;
        } else {
            // Only items up to the furthest claim can be gone: look at those
            // alone (the cache is sorted, and may hold the whole backlog).
            let furthest = peers.furthest_claim();
            let end = self
                .names
                .partition_point(|name| item_sequence(name).is_some_and(|s| s <= furthest));
            let (kept, gone): (Vec<String>, Vec<String>) =
                self.names.drain(..end).partition(|name| {
                    self.returned.contains(name)
                        || !item_sequence(name).is_some_and(|s| peers.taken_by_owner(s))
                });
            for name in gone {
                self.gone(&name);
            }
            for name in kept.into_iter().rev() {
                self.names.push_front(name);
            }
        }
        self.peers = peers.following(&self.peers);
    }

    /// An item we took went back into the queue under its own name: it is
    /// in line again at its place.
    pub(super) fn put_back(&mut self, name: &str) {
        let Some(sequence) = item_sequence(name) else {
            return;
        };
        let at = self
            .names
            .partition_point(|cached| item_sequence(cached).is_some_and(|s| s < sequence));
        if self.names.get(at).map(String::as_str) != Some(name) {
            self.names.insert(at, name.to_string());
        }
        self.gone_after_head.remove(&sequence);
        self.returned.insert(name.to_string());
    }

    /// A read or a claim found its item gone: somebody else consumes, maybe
    /// what we listed (see `read`).
    pub(super) fn lost_race(&mut self) {
        self.watch_peers = true;
        self.read(false, false);
    }

    /// What a read of cached items found: all there, or some gone (others
    /// consume what we listed). After a few such reads in a row (two for a
    /// batch, which takes the head; `LEAD` for a single take, which picks
    /// among the first `LEAD` before it is counted), list afresh: walking a
    /// stale listing costs a round trip per item (a batch of one behind
    /// three other consumers walked thousands, for seconds). Only while we
    /// do not know the others (alone as far as we know, or not counted by
    /// them yet): once we do, their markers prune the listing. Listing afresh
    /// after two misses of single takes also cost order (an item overtaken
    /// by 17 with four consumers, from the race for the head at their start).
    pub(super) fn read(&mut self, all_there: bool, batch: bool) {
        if all_there || (self.peers.count() > 1 && self.peers.counted()) {
            self.misses = 0;
            return;
        }
        self.misses += 1;
        let allowed = if batch {
            MISSES_BEFORE_LISTING_BATCH
        } else {
            MISSES_BEFORE_LISTING
        };
        if self.misses >= allowed {
            // What we know besides the listing stays true: the items known
            // consumed, how long the head waited, what we gave back.
            self.misses = 0;
            self.names.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(sequence: i64) -> String {
        format!("qn-{sequence:010}")
    }

    fn marker(consumer: &str, sequence: i64) -> String {
        format!("claim-1f-{consumer}-{}", item(sequence))
    }

    /// A cache of items 0..n, shared by "aaa" (us) and "bbb", which claimed
    /// `theirs` last.
    fn shared(n: i64, theirs: i64) -> Cache {
        let mut cache = Cache::new("aaa");
        cache.names = (0..n).map(item).collect();
        cache.learn_peers(listing(theirs));
        assert_eq!(cache.peers.count(), 2);
        cache
    }

    /// The markers as listed: bbb claimed `theirs` last; we claimed before.
    fn listing(theirs: i64) -> Peers {
        Peers::from_markers(&[marker("bbb", theirs), marker("aaa", -1)], "aaa")
    }

    /// `shared(n, -1)` less our items in front of bbb's first, which heads it.
    fn their_head_first(n: i64) -> (Cache, String) {
        let mut cache = shared(n, -1);
        while cache.peers.is_own(sequence(cache.names.front().unwrap())) {
            cache.names.pop_front();
        }
        let head = cache.names.front().unwrap().clone();
        (cache, head)
    }

    fn sequence(name: &str) -> i64 {
        item_sequence(name).unwrap()
    }

    /// Issue 47: a claim that failed (NO_AUTH, the session gone) took nothing; the item goes
    /// back at its place (`put_back`, through the queue's `Unclaimed` guard) and is not
    /// counted as gone ahead of the head.
    #[test]
    fn an_item_whose_claim_failed_is_in_line_again_and_not_counted_gone() {
        for consumers in [1, 2] {
            let mut cache = if consumers == 1 {
                let mut alone = Cache::new("aaa");
                alone.names = (0..10).map(item).collect();
                alone
            } else {
                shared(10, -1)
            };
            let before: Vec<String> = cache.names.iter().cloned().collect();
            let taken = cache.take_at(1).unwrap();
            cache.put_back(&taken);
            assert_eq!(cache.names.iter().cloned().collect::<Vec<_>>(), before);
            assert_eq!(cache.head_overtaken(0), 0, "{consumers} consumer(s)");
        }
    }

    #[test]
    fn a_given_back_item_is_in_line_again_and_stays_though_its_consumer_got_past_it() {
        let mut cache = shared(40, -1);
        let theirs = (0..40).find(|&s| !cache.peers.is_own(s)).unwrap();
        cache.names.retain(|n| sequence(n) != theirs);
        cache.put_back(&item(theirs));
        let at = cache.names.iter().position(|n| *n == item(theirs)).unwrap();
        assert!(
            cache.names.iter().take(at).all(|n| sequence(n) < theirs),
            "in order"
        );
        cache.learn_peers(listing(theirs + 5));
        assert!(
            cache.names.contains(&item(theirs)),
            "kept: it was given back"
        );
        assert_eq!(
            cache.names.iter().filter(|n| **n == item(theirs)).count(),
            1
        );
    }

    #[test]
    fn alone_the_head_is_next() {
        let mut cache = Cache::new("aaa");
        cache.names = (5..9).map(item).collect();
        assert_eq!(cache.predicted_next(), Some(item(5)));
    }

    #[test]
    fn with_another_consumer_we_claim_the_oldest_of_our_share() {
        let mut cache = shared(40, -1);
        let own: Vec<i64> = (0..40).filter(|&s| cache.peers.is_own(s)).collect();
        assert!(own.len() >= 10, "about half the items are ours: {own:?}");
        let predicted = cache.predicted_next().unwrap();
        let first = cache.take_shared().unwrap();
        assert_eq!(first, item(own[0]));
        assert_eq!(predicted, first, "the prefetch guesses the claim");
    }

    #[test]
    fn items_of_another_share_up_to_its_last_claim_leave_the_cache() {
        let cache = shared(40, 20);
        for name in &cache.names {
            let s = sequence(name);
            assert!(s > 20 || cache.peers.is_own(s), "{name} was taken by bbb");
        }
        let kept_own = cache.names.iter().filter(|n| sequence(n) <= 20).count();
        let own_up_to_20 = (0..=20).filter(|&s| cache.peers.is_own(s)).count();
        assert_eq!(kept_own, own_up_to_20, "ours all stay");
    }

    #[test]
    fn a_head_whose_consumer_claims_nothing_is_claimed_after_one_of_our_claims() {
        let (mut cache, head) = their_head_first(40);
        assert_ne!(cache.take_shared().as_ref(), Some(&head), "first: our own");
        // bbb claimed nothing since the listing before.
        cache.learn_peers(listing(-1));
        assert_eq!(cache.take_shared(), Some(head), "then the stalled head");
    }

    #[test]
    fn a_consumer_idle_for_several_listings_has_its_items_claimed_in_order_and_read_ahead() {
        let mut cache = shared(40, -1);
        for _ in 0..IDLE_LISTINGS {
            cache.learn_peers(listing(-1));
        }
        // Every item in order, whoever's share, each guessed one claim ahead.
        let mut guessed = cache.predicted_next();
        for expected in 0..40 {
            let claimed = cache.take_shared().unwrap();
            assert_eq!(claimed, item(expected));
            assert_eq!(
                guessed.as_ref(),
                Some(&claimed),
                "guessed before item {expected}"
            );
            guessed = cache.predicted_next();
            cache.learn_peers(listing(-1));
        }
    }

    #[test]
    fn a_head_whose_consumer_is_slow_is_claimed_after_three_of_our_claims() {
        let (mut cache, head) = their_head_first(60);
        let mut claims = 0;
        let mut progress = -1;
        loop {
            let claimed = cache.take_shared().unwrap();
            claims += 1;
            if claimed == head {
                break;
            }
            assert!(claims <= 4, "the head still waits after {claims} claims");
            // bbb claims something every time, but never gets to its head:
            // its listed progress moves without passing the head.
            progress -= 1;
            cache.learn_peers(listing(progress));
        }
        assert_eq!(
            claims, 4,
            "claimed at the fourth choice (the head outlived three)"
        );
    }

    #[test]
    fn a_slow_consumers_second_item_in_a_row_waits_no_second_patience() {
        let mut cache = shared(400, -1);
        let peers = cache.peers.clone();
        let theirs: Vec<i64> = (0..400).filter(|&s| !peers.is_own(s)).take(2).collect();
        let (first, second) = (theirs[0], theirs[1]);
        // bbb's two items in a row, then ours, all later than both.
        let ours = (second + 1..400).filter(|&s| peers.is_own(s)).take(40);
        cache.names = [first, second].into_iter().chain(ours).map(item).collect();
        let mut claimed = Vec::new();
        let mut progress = -1;
        while claimed.len() < 12 {
            claimed.push(sequence(&cache.take_shared().unwrap()));
            // bbb claims, but never gets to its items.
            progress -= 1;
            cache.learn_peers(listing(progress));
        }
        let at = |s: i64| claimed.iter().position(|&c| c == s);
        let first_at = at(first).expect("the first claimed");
        assert_eq!(first_at, HEAD_PATIENCE, "{claimed:?}");
        // Already overtaken by our claims when it becomes the head.
        assert_eq!(at(second), Some(first_at + 1), "{claimed:?}");
    }

    #[test]
    fn a_consumer_ahead_of_the_others_claims_among_the_first_few() {
        let mut cache = shared(200, -1);
        // Only bbb's items in front: we are ahead.
        let peers = cache.peers.clone();
        cache
            .names
            .retain(|n| !peers.is_own(sequence(n)) || sequence(n) > 150);
        assert!(cache
            .names
            .iter()
            .take(LEAD)
            .all(|n| !peers.is_own(sequence(n))));
        let first_few: Vec<String> = cache.names.iter().take(LEAD).cloned().collect();
        let claimed = cache.take_shared().unwrap();
        assert!(
            first_few.contains(&claimed),
            "{claimed} is not among {first_few:?}"
        );
    }

    #[test]
    fn a_consumer_the_others_do_not_count_yet_claims_any_of_the_first_few() {
        let mut cache = Cache::new("aaa");
        cache.names = (0..40).map(item).collect();
        cache.learn_peers(Peers::from_markers(&[marker("bbb", -1)], "aaa"));
        assert_eq!(cache.peers.count(), 2);
        let mut picks = std::collections::HashSet::new();
        for _ in 0..200 {
            let mut tried = Cache::new("aaa");
            tried.names = cache.names.clone();
            tried.peers = cache.peers.clone();
            picks.insert(sequence(&tried.take_shared().unwrap()));
        }
        assert!(picks.len() > 1, "not always the same item: {picks:?}");
        assert!(picks.iter().all(|&s| s < LEAD as i64), "{picks:?}");
    }

    #[test]
    fn a_consumer_joining_makes_the_cache_list_afresh() {
        let mut cache = shared(40, 10);
        assert!(!cache.names.is_empty());
        cache.learn_peers(Peers::from_markers(
            &[marker("bbb", 12), marker("ccc", 3), marker("aaa", -1)],
            "aaa",
        ));
        assert!(cache.names.is_empty(), "listed again under the new split");
        assert!(cache.watch_peers);
    }
}
