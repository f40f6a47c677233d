//! What `elect` supervises CMD by: a member of Apache's election or of Curator's latch, behind
//! one interface, so that both get the same supervision.

use tokio::sync::broadcast::{self, error::RecvError};
use zkrecipes::{Client, ElectionEvent, LatchEvent, LeaderElectionSupport, LeaderLatch, Result};

pub enum Member {
    Election(LeaderElectionSupport),
    Latch(LeaderLatch),
}

/// What happened to a leader, as `elect` acts on it.
pub enum Happening {
    Lost(Option<String>),
    Suspended,
    Reconnected,
    /// Anything else: look at `is_leader` again.
    Other,
}

pub enum Events {
    Election(broadcast::Receiver<ElectionEvent>),
    Latch(broadcast::Receiver<LatchEvent>),
}

impl Member {
    pub fn new(client: &Client, path: &str, id: &str, latch: bool) -> Result<Member> {
        Ok(if latch {
            Member::Latch(LeaderLatch::new(client, path, id)?)
        } else {
            Member::Election(LeaderElectionSupport::new(client, path, id)?)
        })
    }

    pub fn subscribe(&self) -> Events {
        match self {
            Member::Election(e) => Events::Election(e.subscribe()),
            Member::Latch(l) => Events::Latch(l.subscribe()),
        }
    }

    pub async fn start(&self) -> Result<()> {
        match self {
            Member::Election(e) => e.start().await,
            Member::Latch(l) => l.start().await,
        }
    }

    /// Steps down and leaves; errors are of no use to a member on its way out.
    pub async fn stop(&self) {
        let _ = match self {
            Member::Election(e) => e.stop().await,
            Member::Latch(l) => l.close().await,
        };
    }

    /// Waits until we lead: the latch's fencing token, if any.
    pub async fn await_leadership(&self) -> Result<Option<Option<i64>>> {
        match self {
            Member::Election(e) => Ok(e.await_leadership(None).await?.then_some(None)),
            Member::Latch(l) => Ok(l
                .await_leadership(zkrecipes::Wait::Forever)
                .await?
                .map(Some)),
        }
    }

    pub fn is_leader(&self) -> bool {
        match self {
            Member::Election(e) => e.is_leader(),
            Member::Latch(l) => l.has_leadership(),
        }
    }
}

impl Events {
    pub async fn recv(&mut self) -> std::result::Result<Happening, RecvError> {
        Ok(match self {
            Events::Election(events) => match events.recv().await? {
                ElectionEvent::Failed(err) => Happening::Lost(Some(err.to_string())),
                ElectionEvent::Suspended => Happening::Suspended,
                ElectionEvent::Reconnected => Happening::Reconnected,
                _ => Happening::Other,
            },
            Events::Latch(events) => match events.recv().await? {
                LatchEvent::NotLeader { reason } => Happening::Lost(reason.map(|r| r.to_string())),
                LatchEvent::Suspended => Happening::Suspended,
                LatchEvent::Reconnected => Happening::Reconnected,
                LatchEvent::IsLeader { .. } => Happening::Other,
            },
        })
    }
}
