//! `zkrecipes semaphore PATH --permits N -- CMD`: CMD runs only while we hold one of N leases.

use zkrecipes::{Client, Semaphore, Wait};

use crate::args::SemaphoreArgs;
use crate::exit::Outcome;
use crate::hold::{run_while_held, Held};
use crate::supervise::Signals;

pub async fn run(client: &Client, args: SemaphoreArgs) -> Outcome {
    let semaphore = Semaphore::new(client, &args.path, args.permits)?;
    let mut signals = Signals::install()?;
    let events = semaphore.subscribe();
    let wait = Wait::at_most(args.timeout);
    let lease = tokio::select! {
        lease = semaphore.try_acquire(wait) => lease?,
        signal = signals.recv() => return Ok(128 + signal),
    };
    let Some(lease) = lease else {
        eprintln!(
            "zkrecipes: no permit of {} (--permits {}) was free within --timeout",
            args.path, args.permits
        );
        return Ok(i32::from(args.timeout_exit_code));
    };
    let env = [
        ("ZKRECIPES_FENCING_TOKEN", lease.fencing_token().to_string()),
        ("ZKRECIPES_LEASE_NODE", lease.node_path()),
        ("ZKRECIPES_SEMAPHORE_PATH", args.path.clone()),
    ];
    let held = Held {
        what: format!("semaphore {}", args.path),
        path: args.path.clone(),
        events,
        is_held: Box::new({
            let semaphore = semaphore.clone();
            move || semaphore.held() > 0
        }),
        release: move || lease.release(),
    };
    run_while_held(client, held, &args.command, &env, &args.stop, &mut signals).await
}
