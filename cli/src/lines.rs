//! Items on standard input and output: one per line, or NUL-separated (`-0`).

use std::io::Write;

use tokio::io::{AsyncBufReadExt, BufReader, Stdin};

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
        }
        Ok(Some(item))
    }
}

pub struct Sink {
    separator: u8,
}

impl Sink {
    pub fn new(null: bool) -> Sink {
        Sink {
            separator: if null { 0 } else { b'\n' },
        }
    }

    /// Writes and flushes one item: once this returns, the reader has it.
    pub fn write(&mut self, item: &[u8]) -> std::io::Result<()> {
        let mut out = std::io::stdout().lock();
        out.write_all(item)?;
        out.write_all(&[self.separator])?;
        out.flush()
    }
}
