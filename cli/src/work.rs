//! `zkrecipes work offer|consume|size`: the acknowledged job queue. A job
//! is deleted only after CMD exited 0 for it (or, without CMD, after it was
//! written to standard output); anything else gives it back.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::time::Instant;
use zkrecipes::{priority, Client, Delivery, WorkQueue, WorkQueueOptions};

use crate::args::WorkCommand;
use crate::exit::{Failure, Outcome};
use crate::lines::{self, Sink};
use crate::queue::{broken_pipe, read_failure};
use crate::supervise::{Cmd, Signals};

/// Lines per `offer_all` transaction.
const BATCH: usize = 1000;

pub async fn run(client: &Client, command: WorkCommand) -> Outcome {
    match command {
        WorkCommand::Offer {
            path,
            data,
            priority: given,
            null,
        } => {
            let queue = WorkQueue::new(client, &path)?;
            let priority = priority(given)?;
            if data != "-" {
                queue.offer_with_priority(data.as_bytes(), priority).await?;
                return Ok(0);
            }
            let mut input = lines::Reader::stdin(null);
            let mut offered = 0usize;
            loop {
                let mut batch = Vec::new();
                while batch.len() < BATCH {
                    match input.next().await.map_err(read_failure)? {
                        Some(item) => batch.push(item),
                        None => break,
                    }
                }
                if batch.is_empty() {
                    return Ok(0);
                }
                let done = queue.offer_all_with_priority(&batch, priority).await;
                done.map_err(|err| {
                    let mut failure = Failure::from(err);
                    failure.message = format!(
                        "{} ({offered} jobs before this batch were offered)",
                        failure.message
                    );
                    failure
                })?;
                offered += batch.len();
            }
        }
        WorkCommand::Consume {
            path,
            count,
            timeout,
            timeout_exit_code,
            max_deliveries,
            null,
            command,
        } => {
            let options = WorkQueueOptions::from_numbers(1, max_deliveries)?;
            let queue = WorkQueue::with_options(client, &path, options)?;
            let mut consumer = Consumer {
                queue: &queue,
                command,
                sink: Sink::new(null),
                signals: Signals::install()?,
            };
            let outcome = consumer.run(count, timeout, timeout_exit_code).await;
            let _ = queue.close().await;
            outcome
        }
        WorkCommand::Size { path } => {
            println!("{}", WorkQueue::new(client, &path)?.size().await?);
            Ok(0)
        }
    }
}

struct Consumer<'a> {
    queue: &'a WorkQueue,
    command: Vec<String>,
    sink: Sink,
    signals: Signals,
}

impl Consumer<'_> {
    async fn run(
        &mut self,
        count: Option<u64>,
        idle: Option<Duration>,
        timeout_exit_code: i32,
    ) -> Outcome {
        let mut done = 0u64;
        while count.is_none_or(|c| done < c) {
            let delivery = tokio::select! {
                got = self.queue.consume(idle) => got?,
                signal = self.signals.recv() => return Ok(128 + signal),
            };
            let Some(delivery) = delivery else {
                return Ok(if count.is_some() {
                    timeout_exit_code
                } else {
                    0
                });
            };
            if let Some(stopped) = self.handle(delivery).await? {
                return Ok(stopped);
            }
            done += 1;
        }
        Ok(0)
    }

    /// Settles one job; `Some(status)` when a signal ends the run.
    async fn handle(&mut self, delivery: Delivery) -> Result<Option<i32>, Failure> {
        if self.command.is_empty() {
            return match self.sink.write(delivery.data()) {
                Ok(()) => delivery.ack().await.map(|_| None).map_err(Failure::from),
                Err(err) => {
                    delivery.nack().await?;
                    Err(broken_pipe(err))
                }
            };
        }
        let env = [
            ("ZKRECIPES_JOB", delivery.name().to_string()),
            ("ZKRECIPES_JOB_PRIORITY", delivery.priority().to_string()),
            (
                "ZKRECIPES_DELIVERY_COUNT",
                delivery.delivery_count().to_string(),
            ),
        ];
        let mut cmd = match Cmd::spawn(&self.command, &env, Stdio::piped()) {
            Ok(cmd) => cmd,
            Err(failure) => {
                delivery.nack().await?;
                return Err(failure);
            }
        };
        let data = delivery.data().to_vec();
        let mut stdin = cmd.stdin();
        let feed = async move {
            if let Some(stdin) = stdin.as_mut() {
                // CMD may exit without reading its input; that is its choice.
                let _ = stdin.write_all(&data).await;
                let _ = stdin.shutdown().await;
            }
            drop(stdin);
        };
        let mut interrupted = None;
        let started = Instant::now();
        let (status, ()) = tokio::join!(
            async {
                loop {
                    tokio::select! {
                        status = cmd.wait() => break status,
                        signal = self.signals.recv() => {
                            cmd.signal(signal);
                            interrupted = Some(128 + signal);
                        }
                    }
                }
            },
            feed
        );
        if status == 0 {
            delivery.ack().await?;
        } else {
            eprintln!(
                "zkrecipes: CMD exited {status} after {:.1}s for {}; the job goes back",
                started.elapsed().as_secs_f64(),
                delivery.name()
            );
            delivery.nack().await?;
        }
        Ok(interrupted)
    }
}
