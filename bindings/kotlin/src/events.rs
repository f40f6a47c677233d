//! Events as Kotlin collects them (a `Flow`): a subscription whose `next()`
//! suspends until the next event, `null` once the source is gone.

use tokio::sync::broadcast::{
    error::{RecvError, TryRecvError},
    Receiver,
};
use tokio::sync::watch;
use zkrecipes::ffi::Event;
use zkrecipes::{Client, ConnectionState, ElectionEvent, LatchEvent, LockEvent};

/// One event: the core's name and details, for every recipe alike.
#[derive(uniffi::Record)]
pub struct NativeEvent {
    pub name: String,
    pub fencing_token: Option<i64>,
    pub reason_code: Option<String>,
    pub reason: Option<String>,
}

enum Source {
    Lock(Receiver<LockEvent>),
    Election(Receiver<ElectionEvent>),
    /// A latch's events end with its close too (`true` on the watch).
    Latch(Receiver<LatchEvent>, watch::Receiver<bool>),
    Connection(Receiver<ConnectionState>),
}

/// A subscription; it ends with its client, so that a Flow collected after
/// `close()` completes instead of waiting forever.
#[derive(uniffi::Object)]
pub struct NativeEvents {
    source: tokio::sync::Mutex<Source>,
    client: Client,
}

impl NativeEvents {
    pub fn lock(client: &Client, rx: Receiver<LockEvent>) -> std::sync::Arc<Self> {
        Self::of(client, Source::Lock(rx))
    }

    pub fn election(client: &Client, rx: Receiver<ElectionEvent>) -> std::sync::Arc<Self> {
        Self::of(client, Source::Election(rx))
    }

    pub fn latch(
        client: &Client,
        rx: Receiver<LatchEvent>,
        closed: watch::Receiver<bool>,
    ) -> std::sync::Arc<Self> {
        Self::of(client, Source::Latch(rx, closed))
    }

    pub fn connection(client: &Client) -> std::sync::Arc<Self> {
        Self::of(client, Source::Connection(client.subscribe()))
    }

    fn of(client: &Client, source: Source) -> std::sync::Arc<Self> {
        std::sync::Arc::new(NativeEvents {
            source: tokio::sync::Mutex::new(source),
            client: client.clone(),
        })
    }
}

#[uniffi::export]
impl NativeEvents {
    /// The next event; `None` once its source is closed. A collector that
    /// fell behind by more than the channel holds skips what it missed.
    pub async fn next(&self) -> Option<NativeEvent> {
        let mut source = self.source.lock().await;
        match &mut *source {
            Source::Lock(rx) => recv(rx, self.client.closed(), convert).await,
            Source::Election(rx) => recv(rx, self.client.closed(), convert).await,
            Source::Latch(rx, closed) => {
                let ended = async {
                    tokio::select! {
                        () = self.client.closed() => {}
                        _ = closed.wait_for(|closed| *closed) => {}
                    }
                };
                recv(rx, ended, convert).await
            }
            Source::Connection(rx) => recv(rx, self.client.closed(), convert).await,
        }
    }
}

/// The next event, or what is still queued once the source `ended` (its client closed), as
/// `convert` makes it (also for values that are not named events: a shared count's).
pub async fn recv<E: Clone, R>(
    rx: &mut Receiver<E>,
    ended: impl std::future::Future<Output = ()>,
    convert: fn(E) -> R,
) -> Option<R> {
    tokio::select! {
        biased;
        event = next_of(rx, convert) => event,
        () = ended => loop {
            match rx.try_recv() {
                Ok(event) => return Some(convert(event)),
                Err(TryRecvError::Lagged(_)) => continue,
                Err(_) => return None,
            }
        },
    }
}

// Receiving from a broadcast channel needs no runtime context: it runs on
// uniffi's poller, and a cancelled collector just stops polling it.
async fn next_of<E: Clone, R>(rx: &mut Receiver<E>, convert: fn(E) -> R) -> Option<R> {
    loop {
        match rx.recv().await {
            Ok(event) => return Some(convert(event)),
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return None,
        }
    }
}

fn convert<E: Event>(event: E) -> NativeEvent {
    let details = event.details();
    NativeEvent {
        name: details.name.to_string(),
        fencing_token: details.fencing_token,
        reason_code: details
            .reason
            .as_ref()
            .map(|r| r.code().as_str().to_string()),
        reason: details.reason.map(|r| r.message().to_string()),
    }
}
