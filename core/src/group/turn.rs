//! One `PersistentNode` at a time keeps an ephemeral path among the objects of a client: a node
//! of the client's session at the path is an object's own only while it holds the path's turn
//! (two objects of one client would otherwise both take the one node for theirs).

use std::sync::Mutex;

use crate::client::Client;
use crate::observe::{recipe_event, Recipe};

/// The ephemeral paths kept by live `PersistentNode`s, by client: a node of this session at the
/// path is this object's own only while it holds the turn.
static TURNS: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());
static TURN_FREED: std::sync::LazyLock<tokio::sync::Notify> =
    std::sync::LazyLock::new(tokio::sync::Notify::new);

pub(super) struct Turn {
    client: u64,
    path: String,
}

impl Turn {
    /// Waits for the turn at `path` among the objects of `client`; `None` once it is closed.
    pub(super) async fn take(client: &Client, path: &str) -> Option<Turn> {
        loop {
            let freed = TURN_FREED.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut turns = TURNS.lock().unwrap();
                let key = (client.id(), path.to_string());
                if !turns.contains(&key) {
                    turns.push(key);
                    return Some(Turn {
                        client: client.id(),
                        path: path.to_string(),
                    });
                }
            }
            recipe_event!(
                Recipe::Group,
                INFO,
                path,
                "persistent node {path}: kept by another object of this client; waiting"
            );
            tokio::select! {
                () = freed => {}
                () = client.closed() => return None,
            }
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        TURNS
            .lock()
            .unwrap()
            .retain(|(client, path)| *client != self.client || *path != self.path);
        TURN_FREED.notify_waiters();
    }
}
