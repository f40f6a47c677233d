//! What a watcher (`elect --observe`, `status --watch`) says on standard
//! error while ZooKeeper is out of reach: the last thing it printed may be
//! stale until the connection is back, and an operator must be able to tell.
//! The session's expiry is said, and then why each new session fails while
//! it does (a server out of reach, or one that refuses it: a password rotated,
//! a certificate expired), so an operator can tell an outage that ends by
//! itself from one no retry will end.

use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;
use zkrecipes::{Client, ConnectionState};

/// Reports the start and end of each outage until dropped.
pub struct OutageNotes(JoinHandle<()>);

impl OutageNotes {
    pub fn start(client: &Client, path: &str) -> OutageNotes {
        let mut states = client.subscribe();
        let path = path.to_string();
        let client = client.clone();
        OutageNotes(tokio::spawn(async move {
            let mut out = false;
            let mut said_why = None;
            // Why a new session fails is kept by the client, not sent as a state: looked at while out.
            let mut look = tokio::time::interval(std::time::Duration::from_millis(500));
            loop {
                let state = tokio::select! {
                    state = states.recv() => state,
                    _ = look.tick(), if out => {
                        let why = client.session_error().map(|err| err.to_string());
                        if why.is_some() && why != said_why {
                            eprintln!(
                                "zkrecipes: no new session yet (retrying): {}",
                                why.as_deref().unwrap_or_default()
                            );
                            said_why = why;
                        }
                        continue;
                    }
                };
                match state {
                    Ok(ConnectionState::Suspended | ConnectionState::Lost) if !out => {
                        out = true;
                        eprintln!(
                            "zkrecipes: connection to ZooKeeper lost; what is shown for {path} may be stale until it is back"
                        );
                        if let Ok(ConnectionState::Lost) = state {
                            eprintln!("zkrecipes: the session expired; opening a new one");
                        }
                    }
                    Ok(ConnectionState::Lost) => {
                        eprintln!("zkrecipes: the session expired; opening a new one");
                    }
                    Ok(ConnectionState::Connected | ConnectionState::Reconnected) if out => {
                        out = false;
                        said_why = None;
                        eprintln!("zkrecipes: connected again; watching {path}");
                    }
                    Ok(ConnectionState::Closed) | Err(RecvError::Closed) => return,
                    _ => {}
                }
            }
        }))
    }
}

impl Drop for OutageNotes {
    fn drop(&mut self) {
        self.0.abort();
    }
}
