//! `zkrecipes`: the recipes from a shell. See `zkrecipes --help` and the
//! README's "Command line" section.

mod args;
mod barrier;
mod connect;
mod count;
mod discover;
mod duration;
mod elect;
mod exit;
mod group;
mod hold;
mod lines;
mod lock;
mod logging;
mod member;
mod metrics_server;
mod outage;
mod output;
mod queue;
mod register;
mod semaphore;
mod status;
// The Unix supervisor (process groups, signals, a guardian process) and Windows' (a job object,
// console events): one interface, `Cmd` and `Signals`.
#[cfg(unix)]
mod supervise;
#[cfg(windows)]
#[path = "supervise_windows.rs"]
mod supervise;
mod watch;
mod watchdog;
mod work;

use clap::Parser;

use crate::args::{Cli, Command};
use crate::exit::{Failure, Outcome};
use crate::output::Output;
use crate::supervise::Cmd;

fn main() {
    #[cfg(unix)]
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new(supervise::GUARD_ARG)) {
        supervise::guard();
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            if !err.use_stderr() {
                // --help, --version
                let _ = err.print();
                std::process::exit(0);
            }
            // One line, like every other failure.
            let text = err.to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("bad usage");
            let detail = text
                .lines()
                .skip_while(|l| *l != first)
                .skip(1)
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more"))
                .map(|l| format!(" {l}"))
                .unwrap_or_default();
            eprintln!(
                "zkrecipes: {}{detail} (see zkrecipes --help)",
                first.trim_start_matches("error: ")
            );
            std::process::exit(exit::USAGE);
        }
    };
    // One thread: CMD is started from it, and the kernel's parent-death
    // signal follows the thread that forked, which must live as long as we do.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let status = match runtime.block_on(run(cli)) {
        Ok(status) => status,
        Err(failure) => {
            eprintln!("zkrecipes: {}", failure.message.replace('\n', " "));
            failure.status
        }
    };
    std::process::exit(status);
}

async fn run(cli: Cli) -> Outcome {
    check_path(&cli.command)?;
    let log_spec = std::env::var("ZKRECIPES_LOG").ok();
    logging::init(cli.common.verbose, log_spec.as_deref())?;
    let metrics_listener = cli
        .common
        .metrics_addr
        .as_deref()
        .map(metrics_server::bind)
        .transpose()?;
    let output = Output::new(cli.common.json);
    let client = connect::connect(&cli.common).await?;
    if let Some(listener) = metrics_listener {
        metrics_server::serve(listener, client.clone())?;
    }
    let outcome = match cli.command {
        Command::Lock(args) => lock::run(&client, args).await,
        Command::Semaphore(args) => semaphore::run(&client, args).await,
        Command::Elect(args) => elect::run(&client, args, &output).await,
        Command::Barrier(command) => barrier::run(&client, command).await,
        Command::DoubleBarrier(args) => barrier::run_together(&client, args).await,
        Command::Queue(command) => queue::run(&client, command).await,
        Command::Work(command) => work::run(&client, command).await,
        Command::Count(args) => count::run(&client, args).await,
        Command::Watch(args) => watch::run(&client, args, cli.common.json).await,
        Command::Group(args) => group::run(&client, args, cli.common.json).await,
        Command::Register(args) => register::run(&client, args).await,
        Command::Discover(args) => discover::run(&client, args, cli.common.json).await,
        Command::Status(args) => status::run(&client, args, &output).await,
    };
    // Closing ends the session: whatever it still held is deleted now, not
    // one session timeout later.
    client.close().await;
    outcome
}

/// A bad path is a usage error before any connection is tried.
fn check_path(command: &Command) -> Result<(), Failure> {
    let path = match command {
        Command::Lock(a) => {
            for path in &a.paths {
                zkrecipes::path::validate(path).map_err(Failure::from)?;
            }
            return Ok(());
        }
        Command::Semaphore(a) => &a.path,
        Command::Elect(a) => &a.path,
        Command::Status(a) => &a.path,
        Command::Count(a) => &a.path,
        Command::Watch(a) => &a.path,
        Command::Group(a) => &a.path,
        Command::Register(a) => &a.base,
        Command::Discover(a) => &a.base,
        Command::DoubleBarrier(a) => &a.path,
        Command::Barrier(
            args::BarrierCommand::Set { path }
            | args::BarrierCommand::Remove { path }
            | args::BarrierCommand::Wait { path, .. },
        ) => path,
        Command::Queue(q) => match q {
            args::QueueCommand::Offer { path, .. }
            | args::QueueCommand::Take { path, .. }
            | args::QueueCommand::Peek { path }
            | args::QueueCommand::Size { path } => path,
        },
        Command::Work(w) => match w {
            args::WorkCommand::Offer { path, .. }
            | args::WorkCommand::Consume { path, .. }
            | args::WorkCommand::Size { path } => path,
        },
    };
    zkrecipes::path::validate(path).map_err(Failure::from)
}

/// The lock or leadership is gone: CMD must stop before another holder
/// starts. SIGTERM first, SIGKILL after `--kill-after`; one line says it all.
pub(crate) async fn stop_on_loss(cmd: &mut Cmd, why: &str) -> Failure {
    let started = tokio::time::Instant::now();
    let status = cmd.stop().await;
    Failure::new(
        exit::LOST,
        format!(
            "{why}; CMD stopped with status {status} after {:.1}s",
            started.elapsed().as_secs_f64()
        ),
    )
}
