//! The participation of a started latch: in line, leading, lining up again after a loss.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::watch;

use super::{LatchCore, LatchEvent};
use crate::backoff::Backoff;
use crate::error::{Error, ErrorCode, Result};
use crate::lock::write_lock::LockEvent;
use crate::observe::{recipe_event, Candidacy, Recipe, LATCH_AWAIT_LEADERSHIP, LATCH_TERMS};

/// How a leadership ended.
enum Ended {
    Stopped,
    Lost(Error),
}

impl LatchCore {
    /// Runs until the latch is closed (or the client): `joined` answers once our node is in
    /// line, or with the error of a first join that failed (the latch is latent again then).
    pub(super) async fn participate(
        self: &Arc<Self>,
        mut stopped: watch::Receiver<bool>,
        joined: watch::Sender<Option<Result<()>>>,
    ) {
        let mut backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(5));
        // Subscribed before the first acquire: a loss right after it is never missed.
        let mut lock_events = self.lock.subscribe();
        let mut candidacy = Candidacy::new(
            &self.client,
            &LATCH_AWAIT_LEADERSHIP,
            &LATCH_TERMS,
            &self.path,
        );
        loop {
            if *stopped.borrow() {
                break;
            }
            candidacy.in_line();
            let stop = until_stopped(stopped.clone());
            let in_line = || answer(&joined, Ok(()));
            let acquired = self.lock.acquire_until(self.owner, stop, in_line).await;
            match acquired {
                Ok(None) => break,
                Ok(Some(token)) => {
                    in_line();
                    backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(5));
                    // Only a node of the session the client has now leads (CURATOR-696).
                    if self.lock.session_of(self.owner) != self.client.session_id().ok() {
                        let _ = self.lock.unlock_as(self.owner).await;
                        continue;
                    }
                    candidacy.elected(Some(token));
                    self.leadership.send_replace(Some(token));
                    self.events.emit(LatchEvent::IsLeader {
                        fencing_token: token,
                    });
                    let ended = self.lead(&mut lock_events, &mut stopped).await;
                    // The term ends before the leadership is cleared: after a stop, whoever sees
                    // `has_leadership` false finds the gauge at 0. The client's close is a stop.
                    candidacy.term_ended(match &ended {
                        Ended::Lost(reason) if reason.code() != ErrorCode::Closed => Some(reason),
                        Ended::Lost(_) | Ended::Stopped => None,
                    });
                    self.leadership.send_replace(None);
                    match ended {
                        Ended::Stopped => {
                            if let Err(err) = self.lock.unlock_as(self.owner).await {
                                let (path, reason) = (self.path.as_str(), err.to_string());
                                recipe_event!(
                                    Recipe::Latch,
                                    DEBUG,
                                    path,
                                    reason,
                                    "latch {path}: leaving: {reason}"
                                );
                            }
                            self.events.emit(LatchEvent::NotLeader { reason: None });
                            break;
                        }
                        Ended::Lost(reason) => {
                            self.events.emit(LatchEvent::NotLeader {
                                reason: Some(self.about(reason)),
                            });
                        }
                    }
                }
                Err(err) if err.code() == ErrorCode::Closed => break,
                Err(err) => {
                    if joined.borrow().is_none() {
                        // The first join failed: the callers of `start` hear it, and nothing
                        // keeps trying behind their backs.
                        candidacy.failed(&err);
                        self.unstart();
                        answer(&joined, Err(err));
                        return;
                    }
                    let (path, reason) = (self.path.as_str(), err.to_string());
                    recipe_event!(
                        Recipe::Latch,
                        WARN,
                        path,
                        reason,
                        "latch {path}: {reason}; trying again"
                    );
                    tokio::select! {
                        () = backoff.sleep() => {}
                        () = until_stopped(stopped.clone()) => break,
                    }
                }
            }
        }
        answer(
            &joined,
            Err(Error::new(
                ErrorCode::Closed,
                "the latch was closed before it was in line",
            )),
        );
        self.close_now();
    }

    /// Leads until stopped or the hold ends; tells the leader what happens to its connection.
    async fn lead(
        &self,
        lock_events: &mut broadcast::Receiver<LockEvent>,
        stopped: &mut watch::Receiver<bool>,
    ) -> Ended {
        loop {
            if !self.lock.holds(self.owner) {
                return Ended::Lost(Error::new(
                    ErrorCode::NoNode,
                    "the latch node is no longer held",
                ));
            }
            tokio::select! {
                () = until_stopped(stopped.clone()) => return Ended::Stopped,
                event = lock_events.recv() => match event {
                    Ok(LockEvent::Suspended) => self.events.emit(LatchEvent::Suspended),
                    Ok(LockEvent::Reconnected) => self.events.emit(LatchEvent::Reconnected),
                    Ok(LockEvent::Lost { reason }) => return Ended::Lost(reason),
                    // The client closed under us (our own release happens after this returns).
                    Ok(LockEvent::Released) => return Ended::Lost(Error::closed()),
                    Ok(LockEvent::Acquired { .. }) => {}
                    // Missed events: the hold is looked at again above.
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => return Ended::Lost(Error::closed()),
                }
            }
        }
    }
}

/// The first join's answer, unless one was given already.
fn answer(joined: &watch::Sender<Option<Result<()>>>, result: Result<()>) {
    joined.send_if_modified(|answer| {
        let first = answer.is_none();
        if first {
            *answer = Some(result);
        }
        first
    });
}

/// Completes once the latch is told to stop (or its handle is gone).
async fn until_stopped(mut stopped: watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}
