//! `zkrecipes status PATH [--watch]`.

use std::time::Duration;

use zkrecipes::{inspect, Client};

use crate::args::StatusArgs;
use crate::exit::Outcome;
use crate::lines;
use crate::outage::OutageNotes;
use crate::output::Output;
use crate::supervise::Signals;

/// `--watch` looks again at least this often: a holder's session can die
/// without any node changing until the session expires.
const WATCH_REFRESH: Duration = Duration::from_secs(2);

pub async fn run(client: &Client, args: StatusArgs, output: &Output) -> Outcome {
    if !args.watch {
        let status = inspect::status(client, &args.path).await?;
        lines::print_line(output.status(&status).trim_end_matches('\n'))?;
        if args.metrics {
            lines::print_line(output.metrics(&client.metrics()).trim_end_matches('\n'))?;
        }
        return Ok(0);
    }
    let mut signals = Signals::install()?;
    let _notes = OutageNotes::start(client, &args.path);
    let mut shown = String::new();
    loop {
        let look = inspect::through_outages(client, || async {
            let change = inspect::watch_change(client, &args.path).await?;
            Ok((change, inspect::status(client, &args.path).await?))
        });
        let (change, status) = tokio::select! {
            looked = look => looked?,
            _ = signals.recv() => return Ok(0),
        };
        // Ages change every second; a change is of who, what and whether
        // alive. Nodes are told apart by czxid: a directory made again
        // numbers them from 0 again.
        let key = format!(
            "{} {} {:?} {:?} {:?}",
            status.exists,
            status.queue_items,
            status.work_queue,
            status.sessions_note,
            status
                .nodes
                .iter()
                .map(|n| (&n.name, n.czxid, n.role, n.session_state))
                .collect::<Vec<_>>()
        );
        if key != shown {
            lines::print_line(output.status(&status).trim_end_matches('\n'))?;
            shown = key;
        }
        tokio::select! {
            () = change.changed(WATCH_REFRESH) => {}
            _ = signals.recv() => return Ok(0),
        }
    }
}
