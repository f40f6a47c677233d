//! `zkrecipes lock PATH... -- CMD`: CMD runs only while we hold the lock, or every lock named.

use zkrecipes::{Client, Lock, MultiLock, Owner, ReadWriteLock, Wait, WriteLock};

use crate::args::LockArgs;
use crate::exit::{Failure, Outcome};
use crate::hold::{run_while_held, Held};
use crate::supervise::Signals;

pub async fn run(client: &Client, args: LockArgs) -> Outcome {
    if let [path] = args.paths.as_slice() {
        return run_one(client, path.clone(), args).await;
    }
    if args.read || args.write {
        return Err(Failure::usage(
            "--read and --write take one path: a read/write lock is not taken with others",
        ));
    }
    let locks = MultiLock::new(client, &args.paths)?;
    let mut signals = Signals::install()?;
    let events = locks.subscribe();
    let guard = tokio::select! {
        guard = locks.acquire_as(Owner::unique(), Wait::at_most(args.timeout)) => guard?,
        signal = signals.recv() => return Ok(128 + signal),
    };
    let what = args.paths.join(", ");
    let Some(guard) = guard else {
        return Ok(not_obtained(&format!("one of {what}"), &args));
    };
    let tokens: Vec<String> = guard.fencing_tokens().iter().map(i64::to_string).collect();
    let env = [
        ("ZKRECIPES_FENCING_TOKENS", tokens.join(" ")),
        // One per line: a path may hold spaces, never a line break.
        ("ZKRECIPES_LOCK_PATHS", args.paths.join("\n")),
    ];
    let held = Held {
        what: format!("one of the locks {what}"),
        path: what,
        events,
        is_held: Box::new({
            let (locks, owner) = (locks.clone(), guard.owner());
            move || locks.is_held_by(owner)
        }),
        release: move || guard.release(),
    };
    run_while_held(client, held, &args.command, &env, &args.stop, &mut signals).await
}

async fn run_one(client: &Client, path: String, args: LockArgs) -> Outcome {
    let lock: Lock = if args.read || args.write {
        let both = ReadWriteLock::new(client, &path)?;
        if args.read {
            both.read_lock().clone()
        } else {
            both.write_lock().clone()
        }
    } else {
        WriteLock::new(client, &path)?
    };
    let mut signals = Signals::install()?;
    let events = lock.subscribe();
    let guard = tokio::select! {
        guard = lock.acquire_as(Owner::unique(), Wait::at_most(args.timeout)) => guard?,
        signal = signals.recv() => return Ok(128 + signal),
    };
    let Some(guard) = guard else {
        return Ok(not_obtained(&path, &args));
    };
    let token = guard.fencing_token();
    let env = [
        ("ZKRECIPES_FENCING_TOKEN", token.to_string()),
        ("ZKRECIPES_LOCK_NODE", lock.node_path().unwrap_or_default()),
        ("ZKRECIPES_LOCK_PATH", path.clone()),
    ];
    let held = Held {
        what: format!("lock {path}"),
        path,
        events,
        is_held: Box::new({
            let (lock, owner) = (lock.clone(), guard.owner());
            move || lock.is_held_by(owner)
        }),
        release: move || guard.release(),
    };
    run_while_held(client, held, &args.command, &env, &args.stop, &mut signals).await
}

fn not_obtained(what: &str, args: &LockArgs) -> i32 {
    eprintln!("zkrecipes: {what} is held by another; not obtained within --timeout");
    i32::from(args.timeout_exit_code)
}
