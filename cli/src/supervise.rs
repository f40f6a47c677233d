//! CMD as a child process: started with our environment plus the recipe's,
//! given the signals we receive, and stopped with SIGTERM then SIGKILL.

use std::io::ErrorKind;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::signal::unix::{signal, Signal, SignalKind};

use crate::exit::{self, Failure};

pub struct Cmd {
    child: Child,
    pid: i32,
}

impl Cmd {
    /// Starts `argv` with `env` added. If we die without stopping it (SIGKILL,
    /// OOM), the kernel kills it too: our session and lock go with us, so
    /// CMD must not outlive us and overlap the next holder.
    pub fn spawn(argv: &[String], env: &[(&str, String)], stdin: Stdio) -> Result<Cmd, Failure> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| Failure::usage("no command given after `--`"))?;
        let mut command = Command::new(program);
        command.args(args).stdin(stdin);
        for (key, value) in env {
            command.env(key, value);
        }
        // SAFETY: only async-signal-safe calls (prctl, getppid, _exit)
        // between fork and exec.
        let parent = unsafe { libc::getpid() };
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // We may have died before prctl took effect.
                if libc::getppid() != parent {
                    libc::_exit(exit::LOST);
                }
                Ok(())
            });
        }
        let child = command.spawn().map_err(|err| match err.kind() {
            ErrorKind::NotFound => {
                Failure::new(exit::NOT_FOUND, format!("{program}: command not found"))
            }
            ErrorKind::PermissionDenied => Failure::new(
                exit::CANNOT_EXECUTE,
                format!("{program}: permission denied"),
            ),
            _ => Failure::new(exit::CANNOT_EXECUTE, format!("{program}: {err}")),
        })?;
        let pid = child.id().map_or(0, |id| id as i32);
        Ok(Cmd { child, pid })
    }

    pub fn stdin(&mut self) -> Option<tokio::process::ChildStdin> {
        self.child.stdin.take()
    }

    pub async fn wait(&mut self) -> i32 {
        status_code(self.child.wait().await)
    }

    pub fn signal(&self, signal: i32) {
        if self.pid > 0 {
            // SAFETY: plain kill(2) of our own child, which we have not reaped.
            unsafe {
                libc::kill(self.pid, signal);
            }
        }
    }

    /// SIGTERM, then SIGKILL after `kill_after`; returns CMD's status.
    pub async fn stop(&mut self, kill_after: Duration) -> i32 {
        self.signal(libc::SIGTERM);
        match tokio::time::timeout(kill_after, self.child.wait()).await {
            Ok(status) => status_code(status),
            Err(_) => {
                self.signal(libc::SIGKILL);
                status_code(self.child.wait().await)
            }
        }
    }
}

/// A shell's view of an exit: the code, or 128 + the signal that ended it.
fn status_code(status: std::io::Result<ExitStatus>) -> i32 {
    match status {
        Ok(status) => status
            .code()
            .or_else(|| status.signal().map(|s| 128 + s))
            .unwrap_or(exit::SOFTWARE),
        Err(_) => exit::SOFTWARE,
    }
}

/// SIGINT, SIGTERM and SIGHUP, installed before anything is obtained so that
/// none of them can kill us between taking a lock and giving it back.
pub struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Signals {
    pub fn install() -> Result<Signals, Failure> {
        let install = |kind| {
            signal(kind).map_err(|err| {
                Failure::new(exit::SOFTWARE, format!("cannot handle signals: {err}"))
            })
        };
        Ok(Signals {
            interrupt: install(SignalKind::interrupt())?,
            terminate: install(SignalKind::terminate())?,
            hangup: install(SignalKind::hangup())?,
        })
    }

    /// The next signal received.
    pub async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.interrupt.recv() => libc::SIGINT,
            _ = self.terminate.recv() => libc::SIGTERM,
            _ = self.hangup.recv() => libc::SIGHUP,
        }
    }
}
