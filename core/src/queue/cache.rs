//! A consumer's view of its queue: the item names as of its last listing,
//! and who else consumes (`stripes.rs`), which together choose the item it
//! claims next.

use std::collections::VecDeque;

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

pub(super) struct Cache {
    /// Item names not yet consumed as of our last listing, head first.
    pub(super) names: VecDeque<String>,
    /// Set after a lost race: the next claim may pick within the window.
    pub(super) collided: bool,
    /// Set after a claim past the head: the next claim takes the head.
    pub(super) skipped: bool,
    /// The data of the next item, read together with the previous delete.
    pub(super) prefetched: Option<(String, Vec<u8>)>,
    /// Our claim marker of the last item we took (deleted with the next claim).
    pub(super) last_marker: Option<String>,
    /// The consumers as of our last listing of the claim markers, and as of
    /// the one before (see `stripes.rs`).
    pub(super) peers: Peers,
    peers_before: Peers,
    /// Whether to list the claim markers with the next claim: always while
    /// others consume, and after a lost race (to somebody we did not know of).
    pub(super) watch_peers: bool,
    /// The cached head when we chose our last claim, and over how many of our
    /// claims it has been the head (see `Cache::overdue`).
    last_head: Option<String>,
    claims_outlived: usize,
}

impl Cache {
    pub(super) fn new(consumer: &str) -> Cache {
        Cache {
            names: VecDeque::new(),
            collided: false,
            skipped: false,
            prefetched: None,
            last_marker: None,
            peers: Peers::alone(consumer),
            peers_before: Peers::alone(consumer),
            watch_peers: true,
            last_head: None,
            claims_outlived: 0,
        }
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
        let pick = if self.overdue(&head) {
            0
        } else {
            // Ahead of the others (or not counted by them yet): any of the
            // first few, since the head is the likeliest to be taken already.
            self.first_own()
                .unwrap_or_else(|| fastrand::usize(..LEAD.min(self.names.len())))
        };
        self.last_head = Some(head);
        self.collided = false;
        self.skipped = false;
        self.names.remove(pick)
    }

    /// Whether `head` (the cached head) is to be claimed whoever's share it is
    /// in: it has been the head over `HEAD_PATIENCE` of our claims, or over one
    /// while its consumer claimed nothing (stopped, or done polling).
    fn overdue(&self, head: &str) -> bool {
        match self.claims_outlived {
            0 => false,
            outlived if outlived >= HEAD_PATIENCE => true,
            _ => item_sequence(head)
                .is_some_and(|s| self.peers.owner_stalled_since(&self.peers_before, s)),
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

    /// The item we will likely claim after the one being claimed, for its
    /// data to be read in the same round trip: the head when alone, else the
    /// oldest of our share. (Guessing when the head will be overdue missed
    /// more often than it hit: its consumer was usually about to claim it.)
    pub(super) fn predicted_next(&self) -> Option<String> {
        if self.peers.count() == 1 {
            return self.names.front().cloned();
        }
        self.names.get(self.first_own().unwrap_or(0)).cloned()
    }

    /// What the claim markers listed with a claim tell: who consumes, and
    /// which cached items of others' shares are gone.
    pub(super) fn learn_peers(&mut self, peers: Peers) {
        self.watch_peers = peers.count() > 1;
        if !peers.same_members(&self.peers) && self.peers.count() > 1 {
            // Items we dropped as taken by their consumer under the old split
            // may still be there under the new one: list afresh.
            self.names.clear();
            self.last_head = None;
        } else {
            // Only items up to the furthest claim can be gone: look at those
            // alone (the cache is sorted, and may hold the whole backlog).
            let furthest = peers.furthest_claim();
            let end = self
                .names
                .partition_point(|name| item_sequence(name).is_some_and(|s| s <= furthest));
            let kept: Vec<String> = self
                .names
                .drain(..end)
                .filter(|name| !item_sequence(name).is_some_and(|s| peers.taken_by_owner(s)))
                .collect();
            for name in kept.into_iter().rev() {
                self.names.push_front(name);
            }
        }
        self.peers_before = std::mem::replace(&mut self.peers, peers);
    }

    /// A claim found its item gone: somebody else consumes.
    pub(super) fn lost_race(&mut self) {
        self.collided = true;
        self.watch_peers = true;
    }
}
