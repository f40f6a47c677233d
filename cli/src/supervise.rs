//! CMD as a child process: started in a process group of its own with our
//! environment plus the recipe's, given the signals we receive, and stopped
//! with SIGTERM then SIGKILL — CMD and everything it started, since a child
//! left running (a script's `sleep`, a pipeline's other end) would overlap
//! the next holder (found by the adversarial test: a `sh -c` CMD's children
//! ran on, re-parented to init, after the lock had gone to another).

use std::io::{ErrorKind, IsTerminal, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::time::Instant;

use crate::exit::{self, Failure};

/// The hidden first argument that makes this binary a guardian (see `guard`).
pub const GUARD_ARG: &str = "__zkrecipes-guard";

/// How often a leftover process group is looked at while it is stopping.
const GROUP_POLL: Duration = Duration::from_millis(20);

/// CMD's standard input: ours (and the terminal, if we have it), or a pipe.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Inherit,
    Piped,
}

pub struct Cmd {
    child: Child,
    /// CMD's process group (its pid): CMD and whatever it starts that stays
    /// in the group.
    group: i32,
    kill_after: Duration,
    guardian: Option<Guardian>,
    /// We gave CMD the terminal's foreground and must take it back.
    terminal: bool,
    /// When a signal we passed on has not ended CMD by then, SIGKILL.
    kill_at: Option<Instant>,
    input: Input,
    /// SIGCHLD, which also tells that CMD was stopped (see `follow_stop`).
    children: Option<Signal>,
    /// Ctrl-Z when CMD does not have the terminal (see `suspend_job`).
    suspend: Option<Signal>,
}

impl Cmd {
    /// Starts `argv` with `env` added, in a new process group. If we die
    /// without stopping it (SIGKILL, OOM), the kernel kills CMD and a
    /// guardian process kills the rest of its group: our session and lock go
    /// with us, so nothing of CMD may outlive us and overlap the next holder.
    pub fn spawn(
        argv: &[String],
        env: &[(&str, String)],
        input: Input,
        kill_after: Duration,
    ) -> Result<Cmd, Failure> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| Failure::usage("no command given after `--`"))?;
        let mut command = Command::new(program);
        // CMD gets our environment but not our credentials.
        command
            .args(args)
            .process_group(0)
            .env_remove("ZKRECIPES_AUTH");
        command.stdin(match input {
            Input::Inherit => Stdio::inherit(),
            Input::Piped => Stdio::piped(),
        });
        for (key, value) in env {
            command.env(key, value);
        }
        // An interactive CMD (a shell, an editor) in a group of its own must
        // own the terminal, or reading it would stop it (SIGTTIN).
        let terminal = input == Input::Inherit && in_foreground();
        // Made before CMD exists, so that no stop of CMD goes unseen.
        let children = signal(SignalKind::child()).ok();
        // Without the terminal, Ctrl-Z reaches us alone: CMD must stop with
        // us (found by the adversarial test: `work consume`'s CMD ran on
        // while we were stopped, and another consumer ran the same job).
        let suspend = if terminal {
            None
        } else {
            signal(SignalKind::from_raw(libc::SIGTSTP)).ok()
        };
        // What CMD leaves behind is re-parented to us, not to init, so that
        // we reap it when it exits: a zombie member keeps the group alive,
        // and an init that reaps slowly (or never, in a container) would keep
        // us waiting for it.
        // (Linux only: on macOS they go to launchd, which reaps them.)
        // SAFETY: a flag of our own process.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        }
        let parent = unsafe { libc::getpid() };
        // Started before CMD, and told CMD's group by CMD itself before it runs: a kill of us
        // just after CMD started would otherwise come before any guardian (found by a test:
        // 1 run in 10 left CMD's children), or before we told it the group (found under load:
        // CMD had printed its first line, and our group was killed, before our write).
        let mut guardian = Guardian::start();
        let tell_guardian = guardian.as_ref().and_then(Guardian::pipe);
        // SAFETY: only async-signal-safe calls (sigprocmask, tcsetpgrp,
        // prctl, getppid, _exit) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if terminal {
                    with_sigttou_blocked(|| libc::tcsetpgrp(0, libc::getpid()));
                }
                // macOS has no parent-death signal: the guardian kills CMD's group, CMD
                // included, when we die.
                #[cfg(target_os = "linux")]
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // We may have died before prctl took effect (or, on macOS, before CMD runs).
                if libc::getppid() != parent {
                    libc::_exit(exit::LOST);
                }
                if let Some(pipe) = tell_guardian {
                    tell_group(pipe);
                }
                Ok(())
            });
        }
        let child = command
            .spawn()
            .map_err(|err| exit::spawn_failure(program, &err))
            .inspect_err(|_| {
                // CMD never ran: whatever group it told is gone.
                if let Some(guardian) = guardian.take() {
                    guardian.dismiss_now();
                }
            })?;
        let group = child.id().map_or(0, |id| id as i32);
        Ok(Cmd {
            child,
            group,
            kill_after,
            guardian,
            terminal,
            kill_at: None,
            input,
            children,
            suspend,
        })
    }

    pub fn stdin(&mut self) -> Option<tokio::process::ChildStdin> {
        self.child.stdin.take()
    }

    /// CMD's status once it exits; whatever it left running in its group is
    /// stopped (SIGTERM, SIGKILL after `kill_after`) before this returns.
    /// After `pass_on`, CMD is killed if it has not exited by `kill_after`.
    pub async fn wait(&mut self) -> i32 {
        let status = loop {
            let kill_at = self.kill_at;
            let stopped = async {
                match self.children.as_mut() {
                    Some(children) => children.recv().await,
                    None => std::future::pending().await,
                }
            };
            let suspended = async {
                match self.suspend.as_mut() {
                    Some(suspend) => suspend.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                status = self.child.wait() => break status,
                _ = tokio::time::sleep_until(kill_at.unwrap_or_else(Instant::now)), if kill_at.is_some() => {
                    self.signal(libc::SIGKILL);
                    self.kill_at = None;
                }
                _ = stopped => self.follow_stop().await,
                _ = suspended => self.suspend_job().await,
            }
        };
        let status = status_code(status);
        self.finish(Instant::now() + self.kill_after).await;
        status
    }

    /// A signal we received, for CMD's group: a stopped CMD is continued so
    /// that it can act on it, and one still running `kill_after` later is
    /// killed (found by the adversarial test: a stopped CMD never saw the
    /// SIGTERM, and we held the lock until somebody continued it by hand).
    pub fn pass_on(&mut self, signal: i32) {
        self.signal(signal);
        self.signal(libc::SIGCONT);
        if self.kill_at.is_none() {
            self.kill_at = Some(Instant::now() + self.kill_after);
        }
    }

    /// CMD stopped by job control (Ctrl-Z, or reading the terminal in the
    /// background): we stop the same way, so that the shell sees the job
    /// stopped and its `fg`/`bg` reach us; once continued, CMD is continued
    /// (with the terminal again if we are in the foreground). Found by the
    /// adversarial test: after Ctrl-Z, CMD stayed stopped, we kept running
    /// and the shell waited on us forever, the lock held. A plain SIGSTOP of
    /// CMD (an operator's) is left alone.
    async fn follow_stop(&mut self) {
        let Some(stop) = self.stopped_by() else {
            return;
        };
        if ![libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU].contains(&stop) {
            return;
        }
        // CMD had the terminal, so the terminal's Ctrl-Z reached CMD alone:
        // the rest of our job (`zkrecipes lock P -- CMD | cat`) must stop
        // with us, or the shell never sees the job stopped (found by an
        // adversarial review: the first Ctrl-Z stopped CMD and us, not cat).
        let whole_job = self.terminal;
        if self.terminal {
            self.terminal = false;
            with_sigttou_blocked(|| unsafe { libc::tcsetpgrp(0, libc::getpgrp()) });
        }
        let before = Instant::now();
        if whole_job {
            stop_our_group_but_us(stop);
        }
        stop_like_a_job(stop);
        if before.elapsed() < Duration::from_millis(50) {
            // Not stopped (nobody could continue us): do not spin on a CMD
            // that stops again at once.
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        if self.input == Input::Inherit && in_foreground() {
            let group = self.group;
            with_sigttou_blocked(|| unsafe { libc::tcsetpgrp(0, group) });
            self.terminal = true;
        }
        self.signal(libc::SIGCONT);
    }

    /// Ctrl-Z reached us (CMD has no terminal): CMD's group is stopped, we
    /// stop as the shell expects, and both go on when continued.
    async fn suspend_job(&mut self) {
        self.signal(libc::SIGSTOP);
        // A stop is delivered asynchronously: the shell must not report the
        // job stopped (we stop) while CMD still runs (found by make test
        // under load: "Stopped" printed, CMD still running). Bounded, as a
        // CMD stopped before (by an operator) reports no new stop.
        let deadline = Instant::now() + Duration::from_secs(1);
        while !self.stopped_or_gone() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        stop_like_a_job(libc::SIGTSTP);
        self.signal(libc::SIGCONT);
    }

    /// The signal that stopped CMD, if it is stopped now (a stop not
    /// reported before; exits are left for tokio to reap: no WEXITED).
    fn stopped_by(&self) -> Option<i32> {
        let pid = self.child.id()?;
        let stop = child_state(pid, libc::WSTOPPED).ok().flatten()?;
        // SAFETY: a state waitid reported for a stop carries its signal.
        Some(unsafe { stop.si_status() })
    }

    /// CMD has a stop or an exit to report, left in place (WNOWAIT) for
    /// `follow_stop` and tokio.
    fn stopped_or_gone(&self) -> bool {
        let Some(pid) = self.child.id() else {
            return true;
        };
        let flags = libc::WSTOPPED | libc::WEXITED | libc::WNOWAIT;
        !matches!(child_state(pid, flags), Ok(None))
    }

    /// Sends `signal` to CMD's whole group.
    fn signal(&self, signal: i32) {
        if self.group > 1 {
            // SAFETY: kill(2) of the group we created, which stays ours
            // while any member lives.
            unsafe {
                libc::kill(-self.group, signal);
            }
        }
    }

    /// SIGTERM to the group, then SIGKILL after `kill_after`; returns CMD's status.
    pub async fn stop(&mut self) -> i32 {
        let deadline = Instant::now() + self.kill_after;
        self.terminate();
        let status = match tokio::time::timeout_at(deadline, self.child.wait()).await {
            Ok(status) => status_code(status),
            Err(_) => {
                self.signal(libc::SIGKILL);
                status_code(self.child.wait().await)
            }
        };
        self.finish(deadline).await;
        status
    }

    /// A stopped process acts on SIGTERM only once continued.
    fn terminate(&self) {
        self.signal(libc::SIGTERM);
        self.signal(libc::SIGCONT);
    }

    /// Reaps the group's members that exited as our children (CMD's
    /// orphans, ours as subreaper), then looks whether any is left.
    fn group_alive(&self) -> bool {
        if self.group <= 1 {
            return false;
        }
        // SAFETY: waitid on CMD's group only (CMD itself is already reaped
        // by then, so tokio's wait is never robbed), and kill with signal 0,
        // which only checks that the group exists.
        unsafe {
            loop {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                let reaped = libc::waitid(
                    libc::P_PGID,
                    self.group as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOHANG,
                );
                if reaped != 0 || info.si_pid() == 0 {
                    break;
                }
            }
            libc::kill(-self.group, 0) == 0
        }
    }

    /// CMD has exited: the terminal comes back to us, and the rest of its
    /// group is stopped by `deadline` (killed then).
    async fn finish(&mut self, deadline: Instant) {
        if self.terminal {
            self.terminal = false;
            with_sigttou_blocked(|| unsafe { libc::tcsetpgrp(0, libc::getpgrp()) });
        }
        if self.group_alive() {
            self.terminate();
            while self.group_alive() && Instant::now() < deadline {
                tokio::time::sleep(GROUP_POLL).await;
            }
            if self.group_alive() {
                self.signal(libc::SIGKILL);
                let killed = Instant::now() + Duration::from_secs(1);
                while self.group_alive() && Instant::now() < killed {
                    tokio::time::sleep(GROUP_POLL).await;
                }
            }
        }
        if let Some(guardian) = self.guardian.take() {
            guardian.dismiss().await;
        }
    }
}

/// Stops us with a job-control signal's default action, even when we handle
/// it, until the shell continues us; nothing when our process group is
/// orphaned (the kernel drops such stops: nobody could continue us).
/// waitid(2) on our own child `pid`, never blocking: the state it reports
/// for `flags` (`None`: nothing to report), or the call's error.
fn child_state(pid: u32, flags: i32) -> std::io::Result<Option<libc::siginfo_t>> {
    // SAFETY: waitid fills `info`, zeroed first so that si_pid reads 0 when
    // nothing was reported.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        if libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            flags | libc::WNOHANG,
        ) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        Ok((info.si_pid() != 0).then_some(info))
    }
}

/// Sends `stop` to the other processes of our process group (our job), not
/// to us: ignored here for the moment of the send (an ignored signal is
/// discarded when it is generated, so none is left pending for us).
fn stop_our_group_but_us(stop: i32) {
    // SAFETY: kill(2) of our own process group.
    with_action(stop, libc::SIG_IGN, || unsafe {
        libc::kill(0, stop);
    });
}

fn stop_like_a_job(stop: i32) {
    // SAFETY: a signal to this thread alone, delivered before raise returns,
    // with its default action (stop).
    with_action(stop, libc::SIG_DFL, || unsafe {
        libc::raise(stop);
    });
}

/// Runs `call` with `signal`'s action swapped for `action`, then restores it.
fn with_action(signal: i32, action: libc::sighandler_t, call: impl FnOnce()) {
    // SAFETY: sigaction(2) on a zeroed struct with only the handler set; the
    // old action is restored as it was.
    unsafe {
        let mut swapped: libc::sigaction = std::mem::zeroed();
        let mut old: libc::sigaction = std::mem::zeroed();
        swapped.sa_sigaction = action;
        libc::sigaction(signal, &swapped, &mut old);
        call();
        libc::sigaction(signal, &old, std::ptr::null_mut());
    }
}

/// Whether we are the terminal's foreground process group.
fn in_foreground() -> bool {
    // SAFETY: plain queries of our own terminal and group.
    std::io::stdin().is_terminal() && unsafe { libc::tcgetpgrp(0) == libc::getpgrp() }
}

/// A background group that changes the terminal's foreground gets SIGTTOU
/// unless it blocks it. Async-signal-safe (used between fork and exec).
fn with_sigttou_blocked(call: impl FnOnce() -> i32) {
    // SAFETY: sigset manipulation on a local set; the old mask is restored.
    unsafe {
        let mut block: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut block);
        libc::sigaddset(&mut block, libc::SIGTTOU);
        libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
        call();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
}

/// A small process (this binary, re-executed) that SIGKILLs CMD's group
/// when we die without dismissing it: the parent-death signal reaches CMD
/// alone, not what CMD started.
struct Guardian {
    process: Child,
}

impl Guardian {
    /// `None` if it cannot be started (no /proc): CMD itself is still
    /// covered by the parent-death signal (on Linux).
    fn start() -> Option<Guardian> {
        // A group of its own: whatever kills our group (`timeout -s KILL`,
        // `kill -9 -PGID`, a supervisor stopping the job) must leave the
        // guardian to do its job (found by the adversarial test).
        // Linux: the file we run from even if it was replaced since; macOS has no /proc.
        let exe = if cfg!(target_os = "linux") {
            std::path::PathBuf::from("/proc/self/exe")
        } else {
            std::env::current_exe().ok()?
        };
        Command::new(exe)
            .arg0("zkrecipes")
            .process_group(0)
            .env_remove("ZKRECIPES_AUTH")
            .arg(GUARD_ARG)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()
            .map(|process| Guardian { process })
    }

    /// The pipe CMD tells its group through (`tell_group`, between fork and exec; the pipe is
    /// closed on exec, so CMD does not keep it open).
    fn pipe(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.process.stdin.as_ref().map(|pipe| pipe.as_raw_fd())
    }

    /// `dismiss` without waiting: CMD was never started.
    fn dismiss_now(self) {
        if let Some(pipe) = self.pipe() {
            // SAFETY: a one-byte write to the pipe we own.
            unsafe {
                libc::write(pipe, b"x".as_ptr().cast(), 1);
            }
        }
    }

    /// CMD's group is gone or stopped by us: the guardian leaves quietly.
    async fn dismiss(mut self) {
        if let Some(mut pipe) = self.process.stdin.take() {
            let _ = pipe.write_all(b"x").await;
        }
        let _ = self.process.wait().await;
    }
}

/// Run by CMD between fork and exec: writes its own pid, its group's id, and a newline to the
/// guardian's pipe, with async-signal-safe calls only (getpid, write; no allocation).
fn tell_group(pipe: std::os::fd::RawFd) {
    // SAFETY: getpid cannot fail.
    let mut pid = unsafe { libc::getpid() } as u32;
    let mut line = [0u8; 12];
    let mut start = line.len() - 1;
    line[start] = b'\n';
    loop {
        start -= 1;
        line[start] = b'0' + (pid % 10) as u8;
        pid /= 10;
        if pid == 0 {
            break;
        }
    }
    // SAFETY: a write of at most 11 bytes to an empty pipe (never blocks, never split).
    unsafe {
        libc::write(pipe, line[start..].as_ptr().cast(), line.len() - start);
    }
}

/// The guardian's life: read the group to watch (one line), then wait for a
/// byte (dismissed) or the end of the pipe (we died), and SIGKILL the group
/// in the second case.
pub fn guard() -> ! {
    // Ctrl-C at the terminal, or a signal to our process group, must not
    // take the guardian down before it has done its job.
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        // SAFETY: ignoring a signal in this single-threaded process.
        unsafe {
            libc::signal(signal, libc::SIG_IGN);
        }
    }
    let mut stdin = std::io::stdin().lock();
    let mut next = || {
        let mut byte = [0u8];
        loop {
            match stdin.read(&mut byte) {
                Ok(0) => return None,
                Ok(_) => return Some(byte[0]),
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return None,
            }
        }
    };
    let mut group = 0i32;
    loop {
        match next() {
            Some(digit @ b'0'..=b'9') => {
                group = group
                    .saturating_mul(10)
                    .saturating_add(i32::from(digit - b'0'));
            }
            Some(b'\n') => break,
            // Dismissed or gone before CMD existed: nothing to watch.
            _ => std::process::exit(0),
        }
    }
    let dismissed = next().is_some();
    if !dismissed && group > 1 {
        // SAFETY: kill(2) of the group we were started to watch.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
    std::process::exit(0)
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
