//! `zkrecipes elect PATH --id NAME [--latch] -- CMD`: CMD runs only while we lead (Apache's
//! election, or Curator's LeaderLatch); we stay in and start it again when re-elected.
//! `zkrecipes elect PATH --observe`: prints every change of leader.

use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use zkrecipes::{inspect, Client};

use crate::args::ElectArgs;
use crate::exit::Outcome;
use crate::member::{Happening, Member};
use crate::outage::OutageNotes;
use crate::output::Output;
use crate::supervise::{Cmd, Input, Signals};
use crate::watchdog::Watchdog;

/// How often `--observe` looks again even without a change (a leader's
/// session can die without any node changing until it expires).
const OBSERVE_REFRESH: Duration = Duration::from_secs(30);

pub async fn run(client: &Client, args: ElectArgs, output: &Output) -> Outcome {
    if args.observe {
        return observe(client, &args.path, output).await;
    }
    let id = args.id.clone().unwrap_or_default();
    let member = Member::new(client, &args.path, &id, args.latch)?;
    let mut signals = Signals::install()?;
    let mut events = member.subscribe();
    member.start().await?;
    loop {
        let led = tokio::select! {
            led = member.await_leadership() => led?,
            signal = signals.recv() => {
                member.stop().await;
                return Ok(128 + signal);
            }
        };
        let Some(fencing_token) = led else {
            continue;
        };
        let mut env = vec![
            ("ZKRECIPES_LEADER_ID", id.clone()),
            ("ZKRECIPES_ELECTION_PATH", args.path.clone()),
        ];
        if let Some(token) = fencing_token {
            env.push(("ZKRECIPES_FENCING_TOKEN", token.to_string()));
        }
        let mut cmd = match Cmd::spawn(&args.command, &env, Input::Inherit, args.stop.kill_after) {
            Ok(cmd) => cmd,
            Err(failure) => {
                member.stop().await;
                return Err(failure);
            }
        };
        eprintln!(
            "zkrecipes: elected leader of {} as {id}; CMD started",
            args.path
        );
        let mut watchdog = Watchdog::new(args.stop.suspended_grace);
        let mut cut_off = false;
        let why = loop {
            tokio::select! {
                status = cmd.wait() => {
                    // CMD finished by itself: we are done, and step down.
                    member.stop().await;
                    return Ok(status);
                }
                signal = signals.recv() => cmd.pass_on(signal),
                event = events.recv() => match event {
                    Ok(Happening::Lost(Some(err))) => break format!("leadership of {} lost: {err}", args.path),
                    Ok(Happening::Suspended) => watchdog.suspended(),
                    Ok(Happening::Reconnected) => watchdog.reconnected(),
                    Ok(Happening::Lost(None) | Happening::Other) | Err(RecvError::Lagged(_)) => {
                        if !member.is_leader() {
                            break format!("leadership of {} lost", args.path);
                        }
                    }
                    Err(RecvError::Closed) => break format!("election {} closed", args.path),
                },
                _ = watchdog.expired() => {
                    cut_off = true;
                    break format!("connection down for longer than --suspended-grace while leading {}", args.path);
                }
            }
        };
        let failure = crate::stop_on_loss(&mut cmd, &why).await;
        eprintln!("zkrecipes: {failure}; waiting to be elected again");
        // Cut off past the grace, our node may still lead: CMD may start again only once the
        // connection is back (or the node is gone and the library has lined up again).
        while cut_off {
            match events.recv().await {
                Ok(Happening::Reconnected | Happening::Lost(_)) | Err(RecvError::Closed) => {
                    cut_off = false
                }
                _ => {}
            }
        }
    }
}

async fn observe(client: &Client, path: &str, output: &Output) -> Outcome {
    let mut signals = Signals::install()?;
    let _notes = OutageNotes::start(client, path);
    let mut last: Option<Option<(String, i64)>> = None;
    loop {
        let look = inspect::through_outages(client, || async {
            let change = inspect::watch_change(client, path).await?;
            Ok((change, inspect::status(client, path).await?))
        });
        let (change, status) = tokio::select! {
            looked = look => looked?,
            _ = signals.recv() => return Ok(0),
        };
        let leader = status.leader();
        // The node's czxid, not its name: an election directory emptied and
        // made again during an outage numbers its nodes from 0 again, and a
        // new leader got the old one's name (found by the adversarial test).
        let key = leader.map(|l| (l.name.clone(), l.czxid));
        if last.as_ref() != Some(&key) {
            output.leader(path, leader)?;
            last = Some(key);
        }
        tokio::select! {
            () = change.changed(OBSERVE_REFRESH) => {}
            _ = signals.recv() => return Ok(0),
        }
    }
}
