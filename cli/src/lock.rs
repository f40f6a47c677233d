//! `zkrecipes lock PATH -- CMD`: CMD runs only while we hold the lock.

use zkrecipes::{Client, Lock, ReadWriteLock, WriteLock};

use crate::args::LockArgs;
use crate::exit::Outcome;
use crate::hold::{run_while_held, Held};
use crate::supervise::Signals;

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
    let events = lock.subscribe();
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
    let held = Held {
        what: format!("lock {}", args.path),
        path: args.path.clone(),
        events,
        is_held: Box::new({
            let (lock, owner) = (lock.clone(), guard.owner());
            move || lock.is_held_by(owner)
        }),
        release: move || guard.release(),
    };
    run_while_held(client, held, &args.command, &env, &args.stop, &mut signals).await
}
