//! `zkrecipes lock PATH -- CMD`: CMD runs only while we hold the lock.

use tokio::sync::broadcast::error::RecvError;
use zkrecipes::{Client, Lock, LockEvent, ReadWriteLock, WriteLock};

use crate::args::LockArgs;
use crate::exit::Outcome;
use crate::supervise::{Cmd, Input, Signals};
use crate::watchdog::Watchdog;

pub async fn run(client: &Client, args: LockArgs) -> Outcome {
    let lock: Lock = if args.read || args.write {
        let both = ReadWriteLock::new(client, &args.path)?;
        if args.read {
            both.read_lock().clone()
        } else {
            both.write_lock().clone()
        }
    } else {
        WriteLock::new(client, &args.path)?
    };
    let mut signals = Signals::install()?;
    let mut events = lock.subscribe();
    let acquire = async {
        match args.timeout {
            Some(timeout) => lock.acquire_timeout(timeout).await,
            None => lock.acquire().await.map(Some),
        }
    };
    let guard = tokio::select! {
        guard = acquire => guard?,
        signal = signals.recv() => return Ok(128 + signal),
    };
    let Some(guard) = guard else {
        eprintln!(
            "zkrecipes: {} is held by another; not obtained within --timeout",
            args.path
        );
        return Ok(i32::from(args.timeout_exit_code));
    };
    let token = guard.fencing_token();
    let env = [
        ("ZKRECIPES_FENCING_TOKEN", token.to_string()),
        ("ZKRECIPES_LOCK_NODE", lock.node_path().unwrap_or_default()),
        ("ZKRECIPES_LOCK_PATH", args.path.clone()),
    ];
    let mut cmd = match Cmd::spawn(&args.command, &env, Input::Inherit, args.stop.kill_after) {
        Ok(cmd) => cmd,
        Err(failure) => {
            let _ = guard.release().await;
            return Err(failure);
        }
    };
    let mut watchdog = Watchdog::new(args.stop.suspended_grace);
    loop {
        tokio::select! {
            status = cmd.wait() => {
                // CMD's status is the answer. A release that cannot reach the
                // server is finished by closing the session right after.
                match tokio::time::timeout(client.session_timeout(), guard.release()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(err)) => eprintln!("zkrecipes: releasing {}: {err}; closing the session", args.path),
                    Err(_) => eprintln!("zkrecipes: releasing {} timed out; closing the session", args.path),
                }
                return Ok(status);
            }
            signal = signals.recv() => cmd.pass_on(signal),
            event = events.recv() => match event {
                Ok(LockEvent::Lost { reason }) => {
                    return lost(&mut cmd, format!("lock {} lost: {reason}", args.path)).await;
                }
                Ok(LockEvent::Suspended) => watchdog.suspended(),
                Ok(LockEvent::Reconnected) => watchdog.reconnected(),
                Ok(_) | Err(RecvError::Lagged(_)) => {
                    if !guard.is_held() {
                        return lost(&mut cmd, format!("lock {} lost", args.path)).await;
                    }
                }
                Err(RecvError::Closed) => {
                    return lost(&mut cmd, format!("lock {} closed", args.path)).await;
                }
            },
            _ = watchdog.expired() => {
                let message = format!(
                    "connection down for longer than --suspended-grace while holding {}",
                    args.path
                );
                return lost(&mut cmd, message).await;
            }
        }
    }
}

async fn lost(cmd: &mut Cmd, why: String) -> Outcome {
    Err(crate::stop_on_loss(cmd, &why).await)
}
