//! `zkrecipes queue offer|take|peek|size`: the FIFO queue (`qn-` nodes).

use std::time::Duration;

use futures_util::stream::{FuturesOrdered, StreamExt};
use tokio::time::Instant;
use zkrecipes::{Client, DistributedQueue, MAX_BATCH};

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
                queue
                    .offer(data.as_bytes())
                    .await
                    .map_err(exit::offer_failure)?;
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
            let exit_code = i32::from(timeout_exit_code);
            take(&queue, &path, timeout, count, exit_code, null).await
        }
        QueueCommand::Peek { path } => {
            let queue = DistributedQueue::new(client, &path)?;
            match queue.peek().await? {
                Some(item) => {
                    Sink::new(false)?
                        .write(&item)
                        .map_err(lines::write_failure)?;
                    Ok(0)
                }
                None => Err(Failure::new(exit::TIMEOUT, format!("{path} is empty"))),
            }
        }
        QueueCommand::Size { path } => {
            let queue = DistributedQueue::new(client, &path)?;
            lines::print_line(&queue.size().await?.to_string())?;
            Ok(0)
        }
    }
}

async fn offer_lines(queue: &DistributedQueue, null: bool) -> Outcome {
    let mut input = lines::Reader::stdin(null);
    let mut offered = 0u64;
    let mut in_flight = FuturesOrdered::new();
    let report = |offered: u64, err: zkrecipes::Error| {
        let mut failure = exit::offer_failure(err);
        failure.message = format!(
            "{} ({offered} items before it were offered; later lines were not)",
            failure.message
        );
        failure
    };
    // The first offer alone creates the directory; later ones are pipelined.
    while let Some(item) = input.next().await.map_err(lines::read_failure)? {
        // An item too big fails before any line after it is sent: the
        // message's count must be where a re-run starts (lines already in
        // flight past a bad one were offered, after a gap).
        let too_big = item.len() > queue.max_payload();
        let queue = queue.clone();
        in_flight.push_back(async move { queue.offer(&item).await });
        if too_big {
            while let Some(result) = in_flight.next().await {
                result.map_err(|err| report(offered, err))?;
                offered += 1;
            }
        }
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
    path: &str,
    timeout: Option<Duration>,
    count: u64,
    timeout_exit_code: i32,
    null: bool,
) -> Outcome {
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut signals = Signals::install()?;
    let mut sink = Sink::new(null)?;
    let mut taken = 0;
    while taken < count {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        // Up to MAX_BATCH items in one claim (one write) once any is there. A take cut off by a
        // signal gives back what it had claimed, and closing waits for that.
        let want = (count - taken).min(MAX_BATCH as u64) as usize;
        let batch = tokio::select! {
            batch = queue.take_many(want, left) => batch?,
            signal = signals.recv() => return Ok(128 + signal),
        };
        if batch.is_empty() {
            if count == 1 {
                eprintln!("zkrecipes: {path} is empty; nothing taken within --timeout");
            } else {
                eprintln!("zkrecipes: {path}: {taken} of {count} items taken within --timeout");
            }
            return Ok(timeout_exit_code);
        }
        let mut items = batch.into_iter();
        while let Some(item) = items.next() {
            if let Err(err) = sink.write(&item.data) {
                // Nobody read them: they go back at their places, never lost.
                for unread in std::iter::once(item).chain(items) {
                    queue.give_back(&unread).await?;
                }
                return Err(lines::write_failure(err));
            }
            taken += 1;
        }
    }
    Ok(0)
}
