//! `zkrecipes barrier set|remove|wait PATH` and `zkrecipes double-barrier PATH --members N --
//! CMD`: CMD starts once N members entered, and we leave once it ended (waiting for the others).

use zkrecipes::{Barrier, Client, DoubleBarrier, Wait};

use crate::args::{BarrierCommand, DoubleBarrierArgs};
use crate::exit::Outcome;
use crate::supervise::{Cmd, Input, Signals};

pub async fn run(client: &Client, command: BarrierCommand) -> Outcome {
    match command {
        BarrierCommand::Set { path } => Barrier::new(client, &path)?.set().await?,
        BarrierCommand::Remove { path } => Barrier::new(client, &path)?.remove().await?,
        BarrierCommand::Wait {
            path,
            timeout,
            timeout_exit_code,
        } => {
            let barrier = Barrier::new(client, &path)?;
            let mut signals = Signals::install()?;
            let down = tokio::select! {
                down = barrier.wait(Wait::at_most(timeout)) => down?,
                signal = signals.recv() => return Ok(128 + signal),
            };
            if !down {
                eprintln!("zkrecipes: barrier {path} still up after --timeout");
                return Ok(i32::from(timeout_exit_code));
            }
        }
    }
    Ok(0)
}

pub async fn run_together(client: &Client, args: DoubleBarrierArgs) -> Outcome {
    let barrier = DoubleBarrier::new(client, &args.path, args.members)?;
    let mut signals = Signals::install()?;
    let wait = Wait::at_most(args.timeout);
    // A signal drops the enter, which withdraws our member node.
    let entered = tokio::select! {
        entered = barrier.enter(wait) => entered?,
        signal = signals.recv() => return Ok(128 + signal),
    };
    if !entered {
        eprintln!(
            "zkrecipes: fewer than {} members entered {} within --timeout",
            args.members, args.path
        );
        return Ok(i32::from(args.timeout_exit_code));
    }
    let env = [
        ("ZKRECIPES_BARRIER_PATH", args.path.clone()),
        ("ZKRECIPES_BARRIER_MEMBERS", args.members.to_string()),
    ];
    let mut cmd = match Cmd::spawn(&args.command, &env, Input::Inherit, args.kill_after) {
        Ok(cmd) => cmd,
        Err(failure) => {
            let _ = barrier.leave(Wait::No).await;
            return Err(failure);
        }
    };
    let status = loop {
        tokio::select! {
            status = cmd.wait() => break status,
            signal = signals.recv() => cmd.pass_on(signal),
        }
    };
    let left = tokio::select! {
        left = barrier.leave(wait) => left?,
        signal = signals.recv() => return Ok(128 + signal),
    };
    if !left {
        eprintln!(
            "zkrecipes: CMD ended with status {status}, but not every member left {} within --timeout",
            args.path
        );
        return Ok(i32::from(args.timeout_exit_code));
    }
    Ok(status)
}
