//! A claimed item in its consumer's hands: read it, `ack` it, `nack` it or drop it (given
//! back), or hear that its claim was lost.

use std::sync::Arc;

use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use super::settlement::{Settled, Settlement};
use super::{priority_of, Inner, DEFAULT_PRIORITY};
use crate::client::ConnectionState;
use crate::error::{Error, ErrorCode, Result};

#[derive(Clone, Debug)]
pub(super) struct Claimed {
    pub(super) name: String,
    pub(super) data: Vec<u8>,
    /// The entry's version after our claim: its delivery count.
    pub(super) version: i32,
    pub(super) session: i64,
}

/// An item claimed for this consumer. `ack` when done; `nack` (or drop) to
/// give it back.
pub struct Delivery {
    pub(super) inner: Arc<Inner>,
    pub(super) claimed: Option<Claimed>,
    /// Its numbers and events, from the moment its consumer got it (`consume`).
    pub(super) settlement: Option<Settlement>,
}

impl Delivery {
    pub fn data(&self) -> &[u8] {
        &self.claimed().data
    }

    /// The entry's node name (`entry-<priority>-<seq>`).
    pub fn name(&self) -> &str {
        &self.claimed().name
    }

    pub fn priority(&self) -> u16 {
        priority_of(&self.claimed().name).unwrap_or(DEFAULT_PRIORITY)
    }

    /// How many times this item was delivered, this time included (by
    /// zkrecipes consumers; kazoo's do not count).
    pub fn delivery_count(&self) -> u32 {
        self.claimed().version.max(1) as u32
    }

    /// Completes when this delivery's claim may have passed to another
    /// consumer: its session ended, or the connection has been down past
    /// `Client::suspended_grace`, the margin locks and leaders use. Work on
    /// the job should stop then, before another consumer can start it
    /// (found by the CLI's adversarial test: two runs of one job overlapped
    /// for 10 s).
    pub async fn lost(&self) -> Error {
        let client = &self.inner.client;
        let mut states = client.subscribe();
        let mut down_since = (!client.state().is_usable()).then(Instant::now);
        loop {
            let deadline = down_since.map(|since| since + client.suspended_grace());
            tokio::select! {
                state = states.recv() => match state {
                    Ok(ConnectionState::Suspended) => {
                        down_since.get_or_insert_with(Instant::now);
                    }
                    Ok(ConnectionState::Connected | ConnectionState::Reconnected) => down_since = None,
                    Ok(ConnectionState::Lost) => return crate::client::expired(),
                    Ok(ConnectionState::Closed) | Err(RecvError::Closed) => {
                        return Error::new(ErrorCode::Closed, "the client was closed");
                    }
                    Err(RecvError::Lagged(_)) => {}
                },
                _ = tokio::time::sleep_until(deadline.unwrap_or_else(Instant::now)), if deadline.is_some() => {
                    return Error::new(
                        ErrorCode::SessionExpired,
                        "disconnected past the session's grace: the claim may have passed to another consumer",
                    );
                }
            }
        }
    }

    fn claimed(&self) -> &Claimed {
        self.claimed.as_ref().expect("a delivery is settled once")
    }

    /// Deletes the item: it is done. Fails with `SESSION_EXPIRED` when the
    /// claim went with an expired session (the item will be delivered
    /// again, possibly already was).
    pub async fn ack(mut self) -> Result<()> {
        let claimed = self.claimed.take().expect("a delivery is settled once");
        let settlement = self.settlement.take();
        let inner = self.inner.clone();
        let acked = inner.ack(claimed).await;
        if let Some(settlement) = settlement {
            settlement.settle(match &acked {
                Ok(()) => Settled::Ack,
                // Not acknowledged by us: the item is delivered again.
                Err(err) => Settled::Lost(err.clone()),
            });
        }
        acked.map_err(|err| inner.about(err))
    }

    /// Gives the item back at its place in line.
    pub async fn nack(mut self) -> Result<()> {
        let claimed = self.claimed.take().expect("a delivery is settled once");
        let settlement = self.settlement.take();
        let inner = self.inner.clone();
        // Taken out of the delivery, the claim is nobody's but this task's: it goes back even
        // if the caller stops waiting (else `taken/<entry>` stayed until the session ended).
        let settling = inner.client.settling();
        let nacked = crate::runtime::handle().spawn(async move {
            let _settling = settling;
            let settled = inner.given_back(&claimed);
            let released = inner.release(&claimed).await;
            inner.requeue(vec![claimed.name]).await;
            if let Some(settlement) = settlement {
                settlement.settle(match &released {
                    Ok(()) => settled,
                    Err(err) => Settled::Lost(err.clone()),
                });
            }
            released
        });
        let released = nacked
            .await
            .map_err(|_| Error::new(ErrorCode::Internal, "nack task ended"))?;
        released.map_err(|err| self.inner.about(err))
    }
}

impl Drop for Delivery {
    /// A delivery dropped unsettled (its worker gave up, a cancelled task)
    /// goes back to the queue.
    fn drop(&mut self) {
        if let Some(claimed) = self.claimed.take() {
            if let Some(settlement) = self.settlement.take() {
                settlement.settle(self.inner.given_back(&claimed));
            }
            self.inner.clone().give_back(vec![claimed]);
        }
    }
}

impl std::fmt::Debug for Delivery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Delivery");
        if let Some(c) = &self.claimed {
            d.field("name", &c.name)
                .field("bytes", &c.data.len())
                .field("delivery_count", &c.version);
        }
        d.finish()
    }
}

pub(super) fn claim_lost(claimed: &Claimed) -> Error {
    Error::new(
        ErrorCode::SessionExpired,
        format!(
            "the claim on {} ended with its session: the item was given back and will be delivered again",
            claimed.name
        ),
    )
}

/// An ack refused while our session lived: the entry changed under our claim, so another
/// consumer took the item over (and may have acknowledged it) after our claim was lost.
pub(super) fn claim_taken_over(claimed: &Claimed) -> Error {
    Error::new(
        ErrorCode::SessionExpired,
        format!(
            "the claim on {} was lost and another consumer took the item over: this ack did not take effect",
            claimed.name
        ),
    )
}
