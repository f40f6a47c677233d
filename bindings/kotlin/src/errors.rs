//! One error type: the core's code (`"CLOSED"`, …) and its message. The
//! Kotlin layer turns it into the sealed `ZkException` hierarchy.

#[derive(Debug, uniffi::Error)]
pub enum NativeError {
    Zk { code: String, detail: String },
}

impl std::fmt::Display for NativeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let NativeError::Zk { code, detail } = self;
        write!(f, "{code}: {detail}")
    }
}

impl From<zkrecipes::Error> for NativeError {
    fn from(err: zkrecipes::Error) -> Self {
        NativeError::Zk {
            code: err.code().as_str().to_string(),
            detail: err.message().to_string(),
        }
    }
}

/// A core error as a value (not thrown): what `Client.sessionError` reads.
#[derive(uniffi::Record)]
pub struct ErrorValue {
    pub code: String,
    pub detail: String,
}

impl From<zkrecipes::Error> for ErrorValue {
    fn from(err: zkrecipes::Error) -> Self {
        ErrorValue {
            code: err.code().as_str().to_string(),
            detail: err.message().to_string(),
        }
    }
}

pub type Result<T> = std::result::Result<T, NativeError>;
