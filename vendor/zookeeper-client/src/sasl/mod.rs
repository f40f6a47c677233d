#[allow(unused_imports)]
use std::borrow::Cow;

#[cfg(feature = "sasl-gssapi")]
mod gssapi;
#[cfg(feature = "sasl-gssapi")]
pub use gssapi::*;

#[cfg(feature = "sasl-digest-md5")]
mod digest_md5;
#[cfg(feature = "sasl-digest-md5")]
pub use digest_md5::*;

#[cfg(feature = "sasl-digest-md5")]
mod mechanisms {
    mod digest_md5;
}

use crate::error::Error;

pub(crate) type Result<T, E = crate::error::Error> = std::result::Result<T, E>;

pub(crate) trait SaslInitiator {
    fn new_session(&self, hostname: &str) -> Result<SaslSession>;
}

/// Client side SASL options.
#[derive(Clone, Debug)]
pub struct SaslOptions(SaslInnerOptions);

#[derive(Clone, Debug)]
enum SaslInnerOptions {
    #[cfg(feature = "sasl-gssapi")]
    Gssapi(GssapiSaslOptions),
    #[cfg(feature = "sasl-digest-md5")]
    DigestMd5(DigestMd5SaslOptions),
}

impl SaslOptions {
    /// Constructs a default [GssapiSaslOptions] for further customization.
    ///
    /// Make sure localhost is granted by Kerberos KDC, unlike Java counterpart this library
    /// provides no mean to grant ticket from KDC but simply utilizes whatever the ticket cache
    /// have.
    #[cfg(feature = "sasl-gssapi")]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "sasl", feature = "sasl-gssapi"))))]
    pub fn gssapi() -> GssapiSaslOptions {
        GssapiSaslOptions::new()
    }

    /// Construct a [DigestMd5SaslOptions] for further customization.
    #[cfg(feature = "sasl-digest-md5")]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "sasl", feature = "sasl-digest-md5"))))]
    pub fn digest_md5(
        username: impl Into<Cow<'static, str>>,
        password: impl Into<Cow<'static, str>>,
    ) -> DigestMd5SaslOptions {
        DigestMd5SaslOptions::new(username, password)
    }
}

impl SaslInitiator for SaslOptions {
    fn new_session(&self, hostname: &str) -> Result<SaslSession> {
        match &self.0 {
            #[cfg(feature = "sasl-digest-md5")]
            SaslInnerOptions::DigestMd5(options) => options.new_session(hostname),
            #[cfg(feature = "sasl-gssapi")]
            SaslInnerOptions::Gssapi(options) => options.new_session(hostname),
        }
    }
}

/// How far a mechanism got with a step.
pub(crate) enum Progress {
    Running,
    Finished { sent: bool },
}

/// The client side of one SASL mechanism's exchange.
pub(crate) trait Mechanism: Send {
    fn name(&self) -> &str;

    /// Whether the client speaks first (an initial response).
    fn client_first(&self) -> bool;

    /// Answers the server's `challenge` into `output`.
    fn step(&mut self, challenge: &[u8], output: &mut Vec<u8>) -> Result<Progress>;
}

#[cfg(feature = "sasl-digest-md5")]
impl Mechanism for rsasl::prelude::Session {
    fn name(&self) -> &str {
        self.get_mechname().as_str()
    }

    fn client_first(&self) -> bool {
        self.are_we_first()
    }

    fn step(&mut self, challenge: &[u8], output: &mut Vec<u8>) -> Result<Progress> {
        use rsasl::prelude::{MessageSent, State};
        Ok(match rsasl::prelude::Session::step(self, Some(challenge), output).map_err(Error::other)? {
            State::Running => Progress::Running,
            State::Finished(MessageSent::Yes) => Progress::Finished { sent: true },
            State::Finished(MessageSent::No) => Progress::Finished { sent: false },
        })
    }
}

pub struct SaslSession {
    output: Vec<u8>,
    mechanism: Box<dyn Mechanism>,
    finished: bool,
}

impl SaslSession {
    pub(crate) fn new(mechanism: Box<dyn Mechanism>) -> Result<Self> {
        let mut session = Self { mechanism, output: Default::default(), finished: false };
        if session.mechanism.client_first() {
            session.step(Default::default())?;
        }
        Ok(session)
    }

    pub fn name(&self) -> &str {
        self.mechanism.name()
    }

    pub fn initial(&self) -> &[u8] {
        &self.output
    }

    pub fn step(&mut self, challenge: &[u8]) -> Result<Option<&[u8]>> {
        if self.finished {
            return Err(Error::UnexpectedError(format!("SASL {} session already finished", self.name())));
        }
        self.output.clear();
        match self.mechanism.step(challenge, &mut self.output)? {
            Progress::Running => Ok(Some(&self.output)),
            Progress::Finished { sent: true } => {
                self.finished = true;
                Ok(Some(&self.output))
            },
            Progress::Finished { sent: false } => {
                self.finished = true;
                Ok(None)
            },
        }
    }
}
