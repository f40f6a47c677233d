//! One error type with one set of codes, shared by every language binding.

use std::fmt;

/// The enum, its names and its list, from one table: a code cannot be added to one and not the
/// others.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $code:ident => $name:literal,)*) => {
        /// The codes every binding exposes (the README's error table). Bindings map these, never
        /// the underlying ZooKeeper errors, so a Python and a Java caller see the same code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[$doc])* $code,)*
        }

        impl ErrorCode {
            /// The code string every language shows (`"CONNECTION_LOSS"`, ...).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$code => $name,)*
                }
            }

            /// Every code, in the table's order (the bindings' code lists are this one).
            pub const ALL: [ErrorCode; [$($name),*].len()] = [$(ErrorCode::$code,)*];
        }
    };
}

error_codes! {
    InvalidPath => "INVALID_PATH",
    InvalidArgument => "INVALID_ARGUMENT",
    ConnectionLoss => "CONNECTION_LOSS",
    /// The TLS connection failed for its configuration, not for an outage: an unknown CA, a
    /// hostname mismatch, an expired or refused certificate, TLS against a plain port or the
    /// other way round. It stays so until the configuration changes.
    TlsRefused => "TLS_REFUSED",
    SessionExpired => "SESSION_EXPIRED",
    Timeout => "TIMEOUT",
    NoNode => "NO_NODE",
    NodeExists => "NODE_EXISTS",
    NotEmpty => "NOT_EMPTY",
    BadVersion => "BAD_VERSION",
    NoAuth => "NO_AUTH",
    AuthFailed => "AUTH_FAILED",
    NoSuchElement => "NO_SUCH_ELEMENT",
    NotOwner => "NOT_OWNER",
    WouldDeadlock => "WOULD_DEADLOCK",
    Closed => "CLOSED",
    Interrupted => "INTERRUPTED",
    Internal => "INTERNAL",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every failure of the library: a code plus a human message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A failure to open a new session that will not pass by itself: the credentials or the TLS
    /// setup, not an outage.
    pub(crate) fn is_refusal(&self) -> bool {
        matches!(
            self.code,
            ErrorCode::AuthFailed | ErrorCode::InvalidArgument | ErrorCode::TlsRefused
        )
    }

    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub(crate) fn closed() -> Self {
        Error::new(ErrorCode::Closed, "the client is closed")
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    /// Names the node an error is about (`"lock /locks/a (chroot /app)"`), for
    /// the codes that are about a node and whose message does not say which:
    /// every error a user can hit names the thing.
    pub(crate) fn about(self, what: &str) -> Self {
        use ErrorCode::*;
        let about_a_node = matches!(
            self.code,
            NoNode | NodeExists | NotEmpty | BadVersion | NoAuth | InvalidArgument
        );
        if !about_a_node || self.message.contains(what) {
            return self;
        }
        Error::new(self.code, format!("{what}: {}", self.message))
    }

    /// Errors after which a retry on the same session may succeed.
    pub(crate) fn is_connection_loss(&self) -> bool {
        self.code == ErrorCode::ConnectionLoss
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

impl From<zookeeper_client::Error> for Error {
    fn from(err: zookeeper_client::Error) -> Self {
        use zookeeper_client::Error as Zk;
        let code = match &err {
            Zk::NoNode => ErrorCode::NoNode,
            Zk::NodeExists => ErrorCode::NodeExists,
            Zk::NotEmpty => ErrorCode::NotEmpty,
            Zk::BadVersion => ErrorCode::BadVersion,
            Zk::NoAuth => ErrorCode::NoAuth,
            // A request fails with it when a reconnect's login was refused (a password rotated,
            // a ticket expired), which ends the session: a write retried after a connection loss
            // may have been applied, so its outcome is unknown, as after an expiry (the torture
            // suite's secured variant saw an applied ack answer AUTH_FAILED). A refused connect
            // is told apart before this (`session::connect_error`).
            Zk::AuthFailed | Zk::SessionExpired | Zk::SessionMoved => ErrorCode::SessionExpired,
            // `Custom` carries the transport's own failures (a broken pipe, "no
            // response from connection in …"): the request's fate is unknown,
            // exactly as after a connection loss, so it is one.
            Zk::ConnectionLoss
            | Zk::NoHosts
            | Zk::NotReadOnly
            | Zk::Throttled
            | Zk::Timeout
            | Zk::Custom(_) => ErrorCode::ConnectionLoss,
            Zk::ClientClosed => ErrorCode::Closed,
            Zk::BadArguments(_)
            | Zk::InvalidAcl
            | Zk::NoChildrenForEphemerals
            | Zk::QuotaExceeded => ErrorCode::InvalidArgument,
            _ => ErrorCode::Internal,
        };
        let message = match &err {
            Zk::NoNode => "no such node".to_string(),
            Zk::NodeExists => "the node exists already".to_string(),
            Zk::NotEmpty => "the node has children".to_string(),
            Zk::NoAuth => "not authorized".to_string(),
            Zk::AuthFailed => "the ZooKeeper session ended: the server refused its credentials \
                               when it reconnected (a write in flight may have been applied)"
                .to_string(),
            Zk::InvalidAcl => "the server refused the ACL (an unknown scheme or a malformed id in \
                               the ACL policy?)"
                .to_string(),
            other => other.to_string(),
        };
        Error::new(code, message)
    }
}
