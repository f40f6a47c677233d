//! Exit statuses (documented in the README's "Command line" section) and the
//! one-line error every failure prints.
//!
//! The numbers follow sysexits(3) where one fits, so scripts can tell "not
//! obtained in time" from "ZooKeeper unreachable" from "CMD failed".

use std::fmt;

use zkrecipes::{Error, ErrorCode};

/// Bad command line, bad path, bad duration.
pub const USAGE: i32 = 64;
/// Bad input data (a payload over the limit, an unreadable auth file).
pub const DATA: i32 = 65;
/// ZooKeeper unreachable, or the session lost before anything was obtained.
pub const UNAVAILABLE: i32 = 69;
/// A bug or an unexpected server answer.
pub const SOFTWARE: i32 = 70;
/// `--timeout` passed without the lock, leadership or items (`--timeout-exit-code` changes it).
pub const TIMEOUT: i32 = 75;
/// An output file cannot be written (`discover --prometheus-sd`).
pub const CANNOT_CREATE: i32 = 73;
/// The server refused our credentials or the path's ACL refused us.
pub const NO_PERMISSION: i32 = 77;
/// The TLS configuration does not fit the server (`TLS_REFUSED`): an unknown CA, a hostname
/// mismatch, a refused certificate, TLS and plain ports mixed up. Retrying will not help.
pub const CONFIG: i32 = 78;
/// The lock or leadership was lost while CMD ran; CMD was stopped.
pub const LOST: i32 = 79;
/// CMD exists but cannot be executed.
pub const CANNOT_EXECUTE: i32 = 126;
/// CMD was not found.
pub const NOT_FOUND: i32 = 127;

/// A failure: the status to exit with and what to say.
#[derive(Debug)]
pub struct Failure {
    pub status: i32,
    pub message: String,
}

impl Failure {
    pub fn new(status: i32, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }

    pub fn usage(message: impl Into<String>) -> Failure {
        Failure::new(USAGE, message)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<Error> for Failure {
    fn from(err: Error) -> Failure {
        let status = match err.code() {
            ErrorCode::InvalidPath | ErrorCode::InvalidArgument => USAGE,
            ErrorCode::ConnectionLoss | ErrorCode::SessionExpired | ErrorCode::Closed => {
                UNAVAILABLE
            }
            ErrorCode::Timeout => TIMEOUT,
            ErrorCode::NoAuth | ErrorCode::AuthFailed => NO_PERMISSION,
            ErrorCode::TlsRefused => CONFIG,
            ErrorCode::Interrupted => 128 + libc::SIGINT,
            _ => SOFTWARE,
        };
        Failure::new(
            status,
            format!("{} ({})", err.message(), err.code().as_str()),
        )
    }
}

/// For errors of an offer: what the library calls an invalid argument there
/// is the data itself (a payload over the limit), so 65, not 64.
pub fn offer_failure(err: Error) -> Failure {
    let bad_data = err.code() == ErrorCode::InvalidArgument;
    let mut failure = Failure::from(err);
    if bad_data {
        failure.status = DATA;
    }
    failure
}

pub type Outcome = Result<i32, Failure>;

/// CMD could not be started: 127 when there is no such command, 126 otherwise, as a shell says.
pub fn spawn_failure(program: &str, err: &std::io::Error) -> Failure {
    match err.kind() {
        std::io::ErrorKind::NotFound => {
            Failure::new(NOT_FOUND, format!("{program}: command not found"))
        }
        std::io::ErrorKind::PermissionDenied => {
            Failure::new(CANNOT_EXECUTE, format!("{program}: permission denied"))
        }
        _ => Failure::new(CANNOT_EXECUTE, format!("{program}: {err}")),
    }
}
