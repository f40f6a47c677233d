//! `zkrecipes work offer|consume|size`: the acknowledged job queue. A job
//! is deleted only after CMD exited 0 for it (or, without CMD, after it was
//! written to standard output); anything else gives it back.

use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::time::Instant;
use zkrecipes::ffi::work_queue_options;
use zkrecipes::{priority, Client, Delivery, WorkQueue};

use crate::args::WorkCommand;
use crate::exit::{self, Failure, Outcome};
use crate::lines::{self, Sink};
use crate::supervise::{Cmd, Input, Signals};

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
                queue
                    .offer_with_priority(data.as_bytes(), priority)
                    .await
                    .map_err(exit::offer_failure)?;
                return Ok(0);
            }
            let mut input = lines::Reader::stdin(null);
            let mut offered = 0usize;
            loop {
                let mut batch = Vec::new();
                while batch.len() < BATCH {
                    match input.next().await.map_err(lines::read_failure)? {
                        Some(item) => batch.push(item),
                        None => break,
                    }
                }
                if batch.is_empty() {
                    return Ok(0);
                }
                let done = queue.offer_all_with_priority(&batch, priority).await;
                done.map_err(|err| {
                    let mut failure = exit::offer_failure(err);
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
            kill_after,
            null,
            command,
        } => {
            let options = work_queue_options(1, max_deliveries)?;
            let queue = WorkQueue::with_options(client, &path, options)?;
            let sink = if command.is_empty() {
                Some(Sink::new(null)?)
            } else {
                None
            };
            let mut consumer = Consumer {
                queue: &queue,
                path: &path,
                command,
                sink,
                signals: Signals::install()?,
                kill_after,
                max_deliveries,
                failed: None,
            };
            let outcome = consumer
                .run(count, timeout, i32::from(timeout_exit_code))
                .await;
            let _ = queue.close().await;
            outcome
        }
        WorkCommand::Size { path } => {
            lines::print_line(&WorkQueue::new(client, &path)?.size().await?.to_string())?;
            Ok(0)
        }
    }
}

struct Consumer<'a> {
    queue: &'a WorkQueue,
    path: &'a str,
    command: Vec<String>,
    /// Where jobs go without CMD.
    sink: Option<Sink>,
    signals: Signals,
    kill_after: Duration,
    max_deliveries: Option<i64>,
    /// The status of the last CMD that failed: the run's status, so that a
    /// script can tell (like `xargs`) that not every job was done.
    failed: Option<i32>,
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
                let Some(count) = count else {
                    return Ok(self.failed.unwrap_or(0));
                };
                eprintln!(
                    "zkrecipes: {}: {done} of {count} jobs came within --timeout",
                    self.path
                );
                return Ok(timeout_exit_code);
            };
            if let Some(stopped) = self.handle(delivery).await? {
                return Ok(stopped);
            }
            done += 1;
        }
        Ok(self.failed.unwrap_or(0))
    }

    /// Settles one job; `Some(status)` when a signal ends the run.
    async fn handle(&mut self, delivery: Delivery) -> Result<Option<i32>, Failure> {
        if let Some(sink) = self.sink.as_mut() {
            return match sink.write(delivery.data()) {
                Ok(()) => delivery.ack().await.map(|_| None).map_err(Failure::from),
                Err(err) => {
                    delivery.nack().await?;
                    Err(lines::write_failure(err))
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
        let mut cmd = match Cmd::spawn(&self.command, &env, Input::Piped, self.kill_after) {
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
        // A claim that may be another consumer's stops CMD, as a lost lock
        // does.
        let (ended, ()) = tokio::join!(
            async {
                loop {
                    tokio::select! {
                        status = cmd.wait() => break Ok(status),
                        signal = self.signals.recv() => {
                            cmd.pass_on(signal);
                            interrupted = Some(128 + signal);
                        }
                        err = delivery.lost() => break Err(err),
                    }
                }
            },
            feed
        );
        let status = match ended {
            Ok(status) => status,
            Err(why) => {
                let why = format!("claim on {} lost: {why}", delivery.name());
                // Dropped, the delivery gives the job back if it still can.
                drop(delivery);
                return Err(crate::stop_on_loss(&mut cmd, &why).await);
            }
        };
        if status == 0 {
            let name = delivery.name().to_string();
            delivery.ack().await.map_err(|err| {
                Failure::new(
                    exit::LOST,
                    format!("CMD succeeded for {name}, but the job could not be acknowledged ({err}): it will be delivered again"),
                )
            })?;
            return Ok(interrupted);
        }
        let last = self
            .max_deliveries
            .is_some_and(|max| i64::from(delivery.delivery_count()) >= max);
        eprintln!(
            "zkrecipes: CMD exited {status} after {:.1}s for {}; {}",
            started.elapsed().as_secs_f64(),
            delivery.name(),
            if last {
                format!(
                    "that was its last delivery: the next claim moves it to {}",
                    self.queue.dead_letter_path()
                )
            } else {
                "the job goes back".to_string()
            }
        );
        self.failed = Some(status);
        delivery.nack().await?;
        // Stopped by a signal we passed on, CMD's own status tells how it
        // ended, as `lock` reports it.
        Ok(interrupted.map(|_| status))
    }
}
