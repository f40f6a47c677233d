//! `--suspended-grace`: a deadline that runs while the connection is down.

use std::time::Duration;

use tokio::time::Instant;

pub struct Watchdog {
    grace: Option<Duration>,
    deadline: Option<Instant>,
}

impl Watchdog {
    pub fn new(grace: Option<Duration>) -> Watchdog {
        Watchdog {
            grace,
            deadline: None,
        }
    }

    pub fn suspended(&mut self) {
        if self.deadline.is_none() {
            self.deadline = self.grace.map(|g| Instant::now() + g);
        }
    }

    pub fn reconnected(&mut self) {
        self.deadline = None;
    }

    /// Completes when the connection has been down past the grace; never
    /// while it is up or without a grace.
    pub async fn expired(&self) {
        match self.deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    }
}
