//! `zkrecipes queue offer|take|peek|size`: the FIFO queue (`qn-` nodes).

use std::time::Duration;

use futures_util::stream::{FuturesOrdered, StreamExt};
use tokio::time::Instant;
use zkrecipes::{Client, DistributedQueue};

use crate::args::QueueCommand;
use crate::exit::{self, Failure, Outcome};
use crate::lines::{self, Sink};
use crate::supervise::Signals;

/// Offers in flight at once when reading standard input: one session's
/// requests are applied in the order sent, so order is kept.
const WINDOW: usize = 64;

pub async fn run(client: &Client, command: QueueCommand) -> Outcome {
    match command {
        QueueCommand::Offer { path, data, null } => {
            let queue = DistributedQueue::new(client, &path)?;
            if data != "-" {
                queue.offer(data.as_bytes()).await?;
                return Ok(0);
            }
            offer_lines(&queue, null).await
        }
        QueueCommand::Take {
            path,
            timeout,
            count,
            timeout_exit_code,
            null,
        } => {
            let queue = DistributedQueue::new(client, &path)?;
            take(&queue, timeout, count, timeout_exit_code, null).await
        }
        QueueCommand::Peek { path } => {
            let queue = DistributedQueue::new(client, &path)?;
            match queue.peek().await? {
                Some(item) => {
                    Sink::new(false).write(&item).map_err(broken_pipe)?;
                    Ok(0)
                }
                None => Err(Failure::new(exit::TIMEOUT, format!("{path} is empty"))),
            }
        }
        QueueCommand::Size { path } => {
            let queue = DistributedQueue::new(client, &path)?;
            println!("{}", queue.size().await?);
            Ok(0)
        }
    }
}

async fn offer_lines(queue: &DistributedQueue, null: bool) -> Outcome {
    let mut input = lines::Reader::stdin(null);
    let mut offered = 0u64;
    let mut in_flight = FuturesOrdered::new();
    let report = |offered: u64, err: zkrecipes::Error| {
        let mut failure = Failure::from(err);
        failure.message = format!(
            "{} ({offered} items before it were offered; later lines were not)",
            failure.message
        );
        failure
    };
    // The first offer alone creates the directory; later ones are pipelined.
    while let Some(item) = input.next().await.map_err(read_failure)? {
        let queue = queue.clone();
        in_flight.push_back(async move { queue.offer(&item).await });
        if in_flight.len() >= WINDOW || offered == 0 {
            if let Some(result) = in_flight.next().await {
                result.map_err(|err| report(offered, err))?;
                offered += 1;
            }
        }
    }
    while let Some(result) = in_flight.next().await {
        result.map_err(|err| report(offered, err))?;
        offered += 1;
    }
    Ok(0)
}

async fn take(
    queue: &DistributedQueue,
    timeout: Option<Duration>,
    count: u64,
    timeout_exit_code: i32,
    null: bool,
) -> Outcome {
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut signals = Signals::install()?;
    let mut sink = Sink::new(null);
    for _ in 0..count {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let item = tokio::select! {
            item = queue.take_item(left) => item?,
            signal = signals.recv() => return Ok(128 + signal),
        };
        let Some(item) = item else {
            return Ok(timeout_exit_code);
        };
        if let Err(err) = sink.write(&item.data) {
            // Nobody read it: it goes back at its place, never lost.
            queue.give_back(&item).await?;
            return Err(broken_pipe(err));
        }
    }
    Ok(0)
}

pub fn broken_pipe(err: std::io::Error) -> Failure {
    Failure::new(
        exit::DATA,
        format!("cannot write to standard output: {err}"),
    )
}

pub fn read_failure(err: std::io::Error) -> Failure {
    Failure::new(exit::DATA, format!("cannot read standard input: {err}"))
}
