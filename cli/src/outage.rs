//! What a watcher (`elect --observe`, `status --watch`) says on standard
//! error while ZooKeeper is out of reach: the last thing it printed may be
//! stale until the connection is back, and an operator must be able to tell.

use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;
use zkrecipes::{Client, ConnectionState};

/// Reports the start and end of each outage until dropped.
pub struct OutageNotes(JoinHandle<()>);

impl OutageNotes {
    pub fn start(client: &Client, path: &str) -> OutageNotes {
        let mut states = client.subscribe();
        let path = path.to_string();
        OutageNotes(tokio::spawn(async move {
            let mut out = false;
            loop {
                match states.recv().await {
                    Ok(ConnectionState::Suspended | ConnectionState::Lost) if !out => {
                        out = true;
                        eprintln!(
                            "zkrecipes: connection to ZooKeeper lost; what is shown for {path} may be stale until it is back"
                        );
                    }
                    Ok(ConnectionState::Connected | ConnectionState::Reconnected) if out => {
                        out = false;
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
