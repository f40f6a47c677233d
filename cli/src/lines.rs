//! Items on standard input and output: one per line, or NUL-separated
//! (`-0`), and every other write to standard output, checked.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncBufReadExt, BufReader, Stdin};

use crate::exit::{self, Failure};

pub struct Reader {
    input: BufReader<Stdin>,
    separator: u8,
}

impl Reader {
    pub fn stdin(null: bool) -> Reader {
        Reader {
            input: BufReader::new(tokio::io::stdin()),
            separator: if null { 0 } else { b'\n' },
        }
    }

    /// The next item without its separator; `None` at the end of input.
    pub async fn next(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        let mut item = Vec::new();
        if self.input.read_until(self.separator, &mut item).await? == 0 {
            return Ok(None);
        }
        if item.last() == Some(&self.separator) {
            item.pop();
            // Windows' text files end lines with CRLF: the CR is the line's end there, not data
            // (found by the review: `queue offer -` of such a file stored `x1\r`).
            if cfg!(windows) && self.separator == b'\n' && item.last() == Some(&b'\r') {
                item.pop();
            }
        }
        Ok(Some(item))
    }
}

pub struct Sink {
    separator: u8,
}

impl Sink {
    /// Fails before anything is taken when standard output was closed.
    pub fn new(null: bool) -> Result<Sink, Failure> {
        check_stdout().map_err(|mut failure| {
            failure.message.push_str("; nothing was taken");
            failure
        })?;
        Ok(Sink {
            separator: if null { 0 } else { b'\n' },
        })
    }

    /// Writes and flushes one item: once this returns, the reader has it.
    pub fn write(&mut self, item: &[u8]) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        out.write_all(item)?;
        out.write_all(&[self.separator])?;
        out.flush()
    }
}

/// Prints `text` and a newline; a failure to write is a failure of the
/// command (`println!` would panic on a closed pipe).
pub fn print_line(text: &str) -> Result<(), Failure> {
    check_stdout()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(write_failure)
}

pub fn write_failure(err: std::io::Error) -> Failure {
    Failure::new(
        exit::DATA,
        format!("cannot write to standard output: {err}"),
    )
}

pub fn read_failure(err: std::io::Error) -> Failure {
    Failure::new(exit::DATA, format!("cannot read standard input: {err}"))
}

fn check_stdout() -> Result<(), Failure> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Err(Failure::new(exit::DATA, "standard output is closed"));
    }
    Ok(())
}

/// Rust's runtime opens /dev/null on a standard descriptor that is closed at
/// start, so writes to a closed standard output (`>&-`) would succeed and
/// the items taken for them be lost (found by the adversarial test). This
/// looks at descriptor 1 before that, from the initialisers, which run
/// before `main` (glibc and musl alike, and macOS's dyld). Windows opens no
/// stand-in: a closed standard output fails the write itself.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
#[used]
#[cfg_attr(target_os = "macos", link_section = "__DATA,__mod_init_func")]
#[cfg_attr(not(target_os = "macos"), link_section = ".init_array")]
static LOOK_AT_STDOUT: extern "C" fn() = {
    extern "C" fn look() {
        // SAFETY: F_GETFD only asks whether the descriptor is open.
        if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
        }
    }
    look
};
