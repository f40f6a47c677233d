//! A binding object's own close, for recipes whose core object has none (the barriers) or one
//! that only stops following (the shared count): once closed, new calls answer `CLOSED`, and
//! the waits in flight end with `CLOSED` (their core futures dropped, which withdraws what they
//! created), so no coroutine waits forever on an object another one closed.

use std::future::Future;

use tokio::sync::watch;
use zkrecipes::{Error, ErrorCode};

pub struct Closing {
    closed: watch::Sender<bool>,
    /// `"barrier /path"`, for the messages.
    what: String,
}

impl Closing {
    pub fn new(what: String) -> Closing {
        Closing {
            closed: watch::Sender::new(false),
            what,
        }
    }

    fn error(&self) -> Error {
        Error::new(ErrorCode::Closed, format!("{} was closed", self.what))
    }

    pub fn check(&self) -> zkrecipes::Result<()> {
        if *self.closed.borrow() {
            return Err(self.error());
        }
        Ok(())
    }

    /// `operation`, ended with `CLOSED` by a close meanwhile (or before).
    pub fn guard<T>(
        &self,
        operation: impl Future<Output = zkrecipes::Result<T>> + Send + 'static,
    ) -> impl Future<Output = zkrecipes::Result<T>> + Send + 'static
    where
        T: Send + 'static,
    {
        let mut closed = self.closed.subscribe();
        let error = self.error();
        async move {
            tokio::select! {
                biased;
                _ = closed.wait_for(|closed| *closed) => Err(error),
                done = operation => done,
            }
        }
    }

    /// `true` once closed: what ends the object's event flows.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.closed.subscribe()
    }

    pub fn close(&self) {
        self.closed.send_replace(true);
    }
}
