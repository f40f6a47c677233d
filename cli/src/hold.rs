//! CMD runs while we hold something that can be lost (a lock, a semaphore lease): one
//! supervision for both, so `lock` and `semaphore` stop CMD and exit alike.

use std::future::Future;

use tokio::sync::broadcast::{self, error::RecvError};
use zkrecipes::{Client, LockEvent};

use crate::args::StopArgs;
use crate::exit::Outcome;
use crate::supervise::{Cmd, Input, Signals};
use crate::watchdog::Watchdog;

/// What is held: its events, whether it still is, and its release.
pub struct Held<R> {
    /// `lock /x` or `semaphore /x` in the messages of a loss.
    pub what: String,
    /// The recipe's path, in the other messages.
    pub path: String,
    pub events: broadcast::Receiver<LockEvent>,
    pub is_held: Box<dyn Fn() -> bool + Send>,
    pub release: R,
}

/// Runs CMD with `env` until it exits (then releases, and CMD's status is the answer) or the
/// hold is lost (then CMD is stopped and the exit is `LOST`).
pub async fn run_while_held<R, F>(
    client: &Client,
    mut held: Held<R>,
    command: &[String],
    env: &[(&str, String)],
    stop: &StopArgs,
    signals: &mut Signals,
) -> Outcome
where
    R: FnOnce() -> F,
    F: Future<Output = zkrecipes::Result<()>>,
{
    let (what, path) = (held.what.clone(), held.path.clone());
    let mut cmd = match Cmd::spawn(command, env, Input::Inherit, stop.kill_after) {
        Ok(cmd) => cmd,
        Err(failure) => {
            let _ = (held.release)().await;
            return Err(failure);
        }
    };
    let mut watchdog = Watchdog::new(stop.suspended_grace);
    loop {
        tokio::select! {
            status = cmd.wait() => {
                // CMD's status is the answer. A release that cannot reach the
                // server is finished by closing the session right after.
                match tokio::time::timeout(client.session_timeout(), (held.release)()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(err)) => eprintln!("zkrecipes: releasing {path}: {err}; closing the session"),
                    Err(_) => eprintln!("zkrecipes: releasing {path} timed out; closing the session"),
                }
                return Ok(status);
            }
            signal = signals.recv() => cmd.pass_on(signal),
            event = held.events.recv() => match event {
                Ok(LockEvent::Lost { reason }) => {
                    return lost(&mut cmd, format!("{what} lost: {reason}")).await;
                }
                Ok(LockEvent::Suspended) => watchdog.suspended(),
                Ok(LockEvent::Reconnected) => watchdog.reconnected(),
                Ok(_) | Err(RecvError::Lagged(_)) => {
                    if !(held.is_held)() {
                        return lost(&mut cmd, format!("{what} lost")).await;
                    }
                }
                Err(RecvError::Closed) => {
                    return lost(&mut cmd, format!("{what} closed")).await;
                }
            },
            _ = watchdog.expired() => {
                let message = format!("connection down for longer than --suspended-grace while holding {path}");
                return lost(&mut cmd, message).await;
            }
        }
    }
}

async fn lost(cmd: &mut Cmd, why: String) -> Outcome {
    Err(crate::stop_on_loss(cmd, &why).await)
}
