//! How many read-and-claim rounds one poll may take.

use super::*;

/// The rounds of one poll (a read and a claim each): more after the deadline
/// of a take that has one only up to `MIN_ROUNDS`, enough to list afresh
/// after a stale listing (see `Cache::read`) and claim twice from it, so that
/// a take with no time to wait (a try) still finds an item that is there.
/// Under a drain by other consumers a round can find its item gone many
/// times over; a take given 100 ms ran for 3.7 s so (found by an adversarial
/// review).
pub(super) struct Rounds {
    deadline: Option<Instant>,
    started: usize,
}

const MIN_ROUNDS: usize = cache::MISSES_BEFORE_LISTING + 2;

impl Rounds {
    pub(super) fn new(deadline: Option<Instant>) -> Rounds {
        Rounds {
            deadline,
            started: 0,
        }
    }

    /// Whether to start another round.
    pub(super) fn another(&mut self) -> bool {
        self.started += 1;
        self.started <= MIN_ROUNDS || self.deadline.is_none_or(|d| d > Instant::now())
    }
}
