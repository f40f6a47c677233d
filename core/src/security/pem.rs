//! PEM text as a binding gives it: a file, re-read when it changes, or the text itself.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::error::{Error, Result};

/// PEM text, given as a file (re-read when it changes) or as its contents.
#[derive(Clone, PartialEq, Eq)]
pub enum Pem {
    File(PathBuf),
    Bytes(Vec<u8>),
}

impl Pem {
    /// A binding's string: PEM text if it holds a PEM header, else a path
    /// (what Node's `tls.connect` users and `zookeeper.ssl.*` users pass).
    pub(crate) fn from_text_or_path(value: &str) -> Pem {
        if looks_like_pem(value) {
            Pem::Bytes(value.as_bytes().to_vec())
        } else {
            Pem::File(PathBuf::from(value))
        }
    }

    pub(super) fn name(&self, what: &str) -> String {
        match self {
            // PEM text given where a path was expected must not land in a message: it may be a key.
            Pem::File(path) if looks_like_pem(&path.to_string_lossy()) => {
                format!("{what} (PEM text given as a path: pass it as PEM bytes/text)")
            }
            Pem::File(path) => format!("{what} {}", path.display()),
            Pem::Bytes(bytes) => match source_of(bytes) {
                Some(source) => format!("{what} {source}"),
                None => format!("{what} (PEM given in memory)"),
            },
        }
    }

    pub(super) fn modified(&self) -> Option<SystemTime> {
        match self {
            Pem::File(path) => std::fs::metadata(path).and_then(|m| m.modified()).ok(),
            Pem::Bytes(_) => None,
        }
    }

    pub(super) fn text(&self, what: &str) -> Result<String> {
        let bytes = match self {
            Pem::File(path) if path.as_os_str().is_empty() => {
                return Err(Error::invalid_argument(format!(
                    "{what} is empty: give the path of a PEM file, or the PEM itself"
                )))
            }
            Pem::Bytes(bytes) if bytes.is_empty() => {
                return Err(Error::invalid_argument(format!(
                    "{what} is empty: give the path of a PEM file, or the PEM itself"
                )))
            }
            Pem::File(path) => read_limited(path).map_err(|err| {
                Error::invalid_argument(format!("cannot read {}: {err}", self.name(what)))
            })?,
            Pem::Bytes(bytes) => bytes.clone(),
        };
        if bytes.len() > MAX_PEM {
            return Err(Error::invalid_argument(format!(
                "{} is over {} KiB: not a certificate or key file",
                self.name(what),
                MAX_PEM / 1024
            )));
        }
        String::from_utf8(bytes)
            .map_err(|_| Error::invalid_argument(format!("{} is not PEM text", self.name(what))))
    }
}

/// Where PEM made in memory came from, for messages: a binding that converts
/// a key store (Java's PKCS#12 and JKS) writes `# source: <its path>` as the
/// first line (text before `-----BEGIN` is no part of PEM, parsers skip it).
/// Only certificates are named so; never a key.
const SOURCE_LINE: &str = "# source: ";

fn source_of(bytes: &[u8]) -> Option<&str> {
    let first = bytes.split(|&byte| byte == b'\n').next()?;
    let source = std::str::from_utf8(first).ok()?.strip_prefix(SOURCE_LINE)?;
    (!source.is_empty() && source.len() <= 1024).then_some(source.trim_end())
}

/// Certificate bundles of whole CA stores stay well under this; `/dev/zero` does not.
const MAX_PEM: usize = 4 * 1024 * 1024;

/// PEM text, or something that may be a damaged piece of it (a key with a
/// broken header, its newlines lost): never a path to print or open.
fn looks_like_pem(text: &str) -> bool {
    text.contains('\n') || text.to_ascii_uppercase().contains("BEGIN ") || text.len() > 4096
}

/// Up to one byte more than `MAX_PEM`: enough to tell a file is too big.
fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_PEM as u64 + 1)
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

impl std::fmt::Debug for Pem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pem::File(path) if looks_like_pem(&path.to_string_lossy()) => f.write_str("<PEM text>"),
            Pem::File(path) => write!(f, "{}", path.display()),
            Pem::Bytes(bytes) => match source_of(bytes) {
                Some(source) => f.write_str(source),
                None => write!(f, "<{} bytes of PEM>", bytes.len()),
            },
        }
    }
}

impl From<&str> for Pem {
    fn from(path: &str) -> Pem {
        Pem::File(PathBuf::from(path))
    }
}

impl From<String> for Pem {
    fn from(path: String) -> Pem {
        Pem::File(PathBuf::from(path))
    }
}

impl From<&Path> for Pem {
    fn from(path: &Path) -> Pem {
        Pem::File(path.to_path_buf())
    }
}

impl From<PathBuf> for Pem {
    fn from(path: PathBuf) -> Pem {
        Pem::File(path)
    }
}

impl From<Vec<u8>> for Pem {
    fn from(bytes: Vec<u8>) -> Pem {
        Pem::Bytes(bytes)
    }
}
