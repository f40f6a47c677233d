//! CMD as a child process on Windows, with the Unix supervisor's promises kept by Windows' own
//! means: CMD runs in a job object that kills every process in it when its last handle closes
//! (ours, when we exit or are killed), so nothing CMD started outlives us and overlaps the next
//! holder (the Unix guardian's and parent-death signal's part). CMD starts suspended and is put
//! in the job before it runs, so no process it starts escapes. It is a console process group of
//! its own: a stop is CTRL_BREAK to that group (Windows' SIGTERM), then the job is terminated
//! after `kill_after`.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
use tokio::signal::windows::{CtrlBreak, CtrlC, CtrlClose, CtrlShutdown};
use tokio::time::Instant;
use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Console::{GenerateConsoleCtrlEvent, CTRL_BREAK_EVENT};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicAccountingInformation,
    JobObjectExtendedLimitInformation, QueryInformationJobObject, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    OpenThread, ResumeThread, CREATE_NEW_PROCESS_GROUP, CREATE_SUSPENDED, THREAD_SUSPEND_RESUME,
};

use crate::exit::{self, Failure};

/// How often a job with processes left is looked at while it is stopping.
const JOB_POLL: Duration = Duration::from_millis(20);

/// The status a killed CMD reports, as a Unix shell shows a SIGKILL (128 + 9).
const KILLED: u32 = 137;

/// The numbers `Signals::recv` gives, as on Unix: the exit status of a call ended by one is
/// 128 + it there and here alike.
const SIGHUP: i32 = 1;
const SIGINT: i32 = libc::SIGINT;
const SIGTERM: i32 = libc::SIGTERM;

/// CMD's standard input: ours, or a pipe.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Inherit,
    Piped,
}

pub struct Cmd {
    child: Child,
    /// CMD's pid, which is also its console process group's id.
    group: u32,
    /// Every process of CMD's (`None` where Windows refused a job: CMD alone is then stopped).
    job: Option<Job>,
    kill_after: Duration,
    /// When a signal we passed on has not ended CMD by then, the job is terminated.
    kill_at: Option<Instant>,
}

impl Cmd {
    /// Starts `argv` with `env` added, in a job of its own that dies with us.
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
            .env_remove("ZKRECIPES_AUTH")
            .creation_flags(CREATE_NEW_PROCESS_GROUP | CREATE_SUSPENDED);
        command.stdin(match input {
            Input::Inherit => Stdio::inherit(),
            Input::Piped => Stdio::piped(),
        });
        for (key, value) in env {
            command.env(key, value);
        }
        let job = Job::new();
        let child = command
            .spawn()
            .map_err(|err| exit::spawn_failure(program, &err))?;
        let group = child.id().unwrap_or(0);
        let job = job.filter(|job| {
            child
                .raw_handle()
                .is_some_and(|process| job.assign(process as HANDLE))
        });
        if job.is_none() {
            // Said, not hidden: what CMD starts may now outlive us and the lock.
            eprintln!(
                "zkrecipes: warning: CMD runs outside a job object (Windows refused one): \
                 programs it starts are not stopped with it"
            );
        }
        resume(group);
        Ok(Cmd {
            child,
            group,
            job,
            kill_after,
            kill_at: None,
        })
    }

    pub fn stdin(&mut self) -> Option<tokio::process::ChildStdin> {
        self.child.stdin.take()
    }

    /// CMD's status once it exits; whatever it left running in its job is stopped
    /// (CTRL_BREAK, terminated after `kill_after`) before this returns. After `pass_on`, CMD is
    /// killed if it has not exited by `kill_after`.
    pub async fn wait(&mut self) -> i32 {
        let status = loop {
            let kill_at = self.kill_at;
            tokio::select! {
                status = self.child.wait() => break status,
                _ = tokio::time::sleep_until(kill_at.unwrap_or_else(Instant::now)), if kill_at.is_some() => {
                    self.kill();
                    self.kill_at = None;
                }
            }
        };
        let status = status_code(status);
        self.finish(Instant::now() + self.kill_after).await;
        status
    }

    /// A console event we received, for CMD's group (which ignores Ctrl-C, as a new group
    /// does): CTRL_BREAK, and the job is terminated if CMD is still running `kill_after` later.
    pub fn pass_on(&mut self, _signal: i32) {
        self.interrupt();
        self.kill_at
            .get_or_insert_with(|| Instant::now() + self.kill_after);
    }

    /// CTRL_BREAK to the group, then the job terminated after `kill_after`; returns CMD's status.
    pub async fn stop(&mut self) -> i32 {
        let deadline = Instant::now() + self.kill_after;
        self.interrupt();
        let status = match tokio::time::timeout_at(deadline, self.child.wait()).await {
            Ok(status) => status_code(status),
            Err(_) => {
                self.kill();
                status_code(self.child.wait().await)
            }
        };
        self.finish(deadline).await;
        status
    }

    fn interrupt(&self) {
        if self.group != 0 {
            // SAFETY: a console event to the group we created; it fails harmlessly without a
            // shared console, and under wine, which refuses it (the job is terminated at the
            // deadline then: the stop wine has shown).
            unsafe {
                GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, self.group);
            }
        }
    }

    fn kill(&mut self) {
        match &self.job {
            Some(job) => job.terminate(),
            None => drop(self.child.start_kill()),
        }
    }

    /// CMD has exited: the rest of its job is stopped by `deadline` (terminated then).
    async fn finish(&mut self, deadline: Instant) {
        let Some(job) = &self.job else { return };
        if job.active() > 0 {
            self.interrupt();
            while job.active() > 0 && Instant::now() < deadline {
                tokio::time::sleep(JOB_POLL).await;
            }
            job.terminate();
        }
    }
}

/// A job object that kills its processes when its handle closes.
struct Job(HANDLE);

// SAFETY: a kernel handle, used from any thread.
unsafe impl Send for Job {}
unsafe impl Sync for Job {}

impl Job {
    fn new() -> Option<Job> {
        // SAFETY: an unnamed job with default security; its handle is closed on drop.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return None;
        }
        let job = Job(handle);
        // SAFETY: a zeroed limit structure with one flag set, of the size passed.
        let set = unsafe {
            let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                std::ptr::from_ref(&limits).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        (set != 0).then_some(job)
    }

    fn assign(&self, process: HANDLE) -> bool {
        // SAFETY: our job and the child we started, which has not run yet.
        unsafe { AssignProcessToJobObject(self.0, process) != 0 }
    }

    /// How many of its processes still run.
    fn active(&self) -> u32 {
        // SAFETY: a query into a structure of the size passed.
        unsafe {
            let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = std::mem::zeroed();
            let asked = QueryInformationJobObject(
                self.0,
                JobObjectBasicAccountingInformation,
                std::ptr::from_mut(&mut info).cast(),
                std::mem::size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                std::ptr::null_mut(),
            );
            if asked == 0 {
                0
            } else {
                info.ActiveProcesses
            }
        }
    }

    fn terminate(&self) {
        // SAFETY: our job; its processes end with the status a SIGKILL shows on Unix.
        unsafe {
            TerminateJobObject(self.0, KILLED);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: our handle, closed once; the job's processes die with it.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

/// Lets a process started suspended run: its threads (the main one only, so far) are resumed.
fn resume(pid: u32) {
    // SAFETY: a snapshot of the system's threads, walked with a structure of the size it
    // declares, and each of `pid`'s threads opened only to resume it.
    unsafe {
        let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
        if snapshot == INVALID_HANDLE_VALUE {
            return;
        }
        let mut entry: THREADENTRY32 = std::mem::zeroed();
        entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
        let mut more = Thread32First(snapshot, &mut entry) != 0;
        while more {
            if entry.th32OwnerProcessID == pid {
                let thread = OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID);
                if !thread.is_null() {
                    ResumeThread(thread);
                    CloseHandle(thread);
                }
            }
            more = Thread32Next(snapshot, &mut entry) != 0;
        }
        CloseHandle(snapshot);
    }
}

fn status_code(status: std::io::Result<ExitStatus>) -> i32 {
    match status {
        Ok(status) => status.code().unwrap_or(exit::SOFTWARE),
        Err(_) => exit::SOFTWARE,
    }
}

/// Ctrl-C and Ctrl-Break (SIGINT), the console closed (SIGHUP), shutdown (SIGTERM), installed
/// before anything is obtained so that none of them can end us between taking a lock and giving
/// it back.
pub struct Signals {
    interrupt: CtrlC,
    break_key: CtrlBreak,
    close: CtrlClose,
    shutdown: CtrlShutdown,
}

impl Signals {
    pub fn install() -> Result<Signals, Failure> {
        let failed = |err: std::io::Error| {
            Failure::new(exit::SOFTWARE, format!("cannot handle signals: {err}"))
        };
        Ok(Signals {
            interrupt: ctrl_c().map_err(failed)?,
            break_key: ctrl_break().map_err(failed)?,
            close: ctrl_close().map_err(failed)?,
            shutdown: ctrl_shutdown().map_err(failed)?,
        })
    }

    /// The next one received, as the Unix signal it stands for.
    pub async fn recv(&mut self) -> i32 {
        tokio::select! {
            _ = self.interrupt.recv() => SIGINT,
            _ = self.break_key.recv() => SIGINT,
            _ = self.close.recv() => SIGHUP,
            _ = self.shutdown.recv() => SIGTERM,
        }
    }
}
