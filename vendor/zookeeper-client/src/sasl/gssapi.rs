//! SASL GSSAPI (RFC 4752) over the GSS-API of MIT Kerberos, called directly rather than through
//! rsasl: rsasl's mechanism always logs in with the process's default credentials, so a client
//! could not be given a principal and keytab of its own (two clients of one process talking to
//! two ensembles as two principals, as Curator's JAAS `Client` section and kazoo allow).

use std::borrow::Cow;
use std::ffi::{c_void, CString};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::ptr;

use libgssapi_sys::*;

use super::{Mechanism, Progress, Result, SaslInitiator, SaslInnerOptions, SaslOptions, SaslSession};
use crate::error::Error;

impl From<GssapiSaslOptions> for SaslOptions {
    fn from(options: GssapiSaslOptions) -> Self {
        Self(SaslInnerOptions::Gssapi(options))
    }
}

/// GSSAPI SASL options.
///
/// Uses [SaslOptions::gssapi] to construct one.
#[derive(Clone, Debug)]
pub struct GssapiSaslOptions {
    username: Cow<'static, str>,
    hostname: Option<Cow<'static, str>>,
    principal: Option<Cow<'static, str>>,
    keytab: Option<PathBuf>,
}

impl GssapiSaslOptions {
    pub(crate) fn new() -> Self {
        Self { username: Cow::from("zookeeper"), hostname: None, principal: None, keytab: None }
    }

    /// Specifies the primary part of Kerberos principal.
    ///
    /// It is `zookeeper.sasl.client.username` in Java client, but the word "client" is misleading
    /// as it is the username of targeting server.
    ///
    /// Defaults to "zookeeper".
    pub fn with_username(self, username: impl Into<Cow<'static, str>>) -> Self {
        Self { username: username.into(), ..self }
    }

    /// Specifies the instance part of Kerberos principal.
    ///
    /// Defaults to hostname or ip of targeting server in connecting string.
    pub fn with_hostname(self, hostname: impl Into<Cow<'static, str>>) -> Self {
        Self { hostname: Some(hostname.into()), ..self }
    }

    /// Logs in as this client principal (`name@REALM`): from its tickets in the ticket cache
    /// collection, or from the keytab given by [Self::with_keytab].
    ///
    /// Defaults to the default credentials of the process (`KRB5CCNAME`, `KRB5_CLIENT_KTNAME`).
    pub fn with_principal(self, principal: impl Into<Cow<'static, str>>) -> Self {
        Self { principal: Some(principal.into()), ..self }
    }

    /// Logs in from this client keytab, as the principal of [Self::with_principal] or else the
    /// keytab's first one. The tickets are kept in a memory cache of this process (one per
    /// principal and keytab), never in the user's ticket cache, and renewed from the keytab.
    pub fn with_keytab(self, keytab: impl Into<PathBuf>) -> Self {
        Self { keytab: Some(keytab.into()), ..self }
    }

    fn hostname_or(&self, hostname: &str) -> String {
        self.hostname.as_deref().unwrap_or(hostname).to_string()
    }

    /// Whether credentials can be had for this client: a missing ticket, keytab or principal is
    /// told here, by the library's words, rather than as a refused handshake.
    pub fn check_credentials(&self) -> Result<(), GssapiError> {
        self.credential().map(drop)
    }

    /// Whether a service ticket for the server at `hostname` can be had: the exchange's first
    /// step, without connecting. An unknown service or host, or a keytab without the principal,
    /// fails here at once.
    pub fn check_service(&self, hostname: &str) -> Result<(), GssapiError> {
        let mut context = Context::new(self.credential()?, &self.service_name(hostname))?;
        context.initiate(None).map(drop)
    }

    fn service_name(&self, hostname: &str) -> String {
        format!("{}@{}", self.username, self.hostname_or(hostname))
    }

    fn credential(&self) -> Result<Credential, GssapiError> {
        let principal = match &self.principal {
            None => None,
            Some(principal) => Some(Name::import(principal, &KRB5_NT_PRINCIPAL_NAME)?),
        };
        match (&self.keytab, principal) {
            // The default principal: its tickets, or the default client keytab's.
            (None, None) => Credential::acquire(ptr::null_mut(), None),
            (None, Some(principal)) => Credential::acquire(principal.0, None),
            (Some(keytab), principal) => {
                let store = CredentialStore::new(keytab, self.principal.as_deref())?;
                Credential::acquire(principal.as_ref().map_or(ptr::null_mut(), |name| name.0), Some(store))
            },
        }
    }
}

impl SaslInitiator for GssapiSaslOptions {
    fn new_session(&self, hostname: &str) -> Result<SaslSession> {
        let context = Context::new(self.credential().map_err(Error::other)?, &self.service_name(hostname))
            .map_err(Error::other)?;
        SaslSession::new(Box::new(GssapiClient { context, state: State::Negotiating }))
    }
}

/// A GSS-API failure in the library's own words (`gss_display_status`).
#[derive(Clone, Debug, thiserror::Error)]
#[error("{message}")]
pub struct GssapiError {
    message: String,
    minor: OM_uint32,
}

/// MIT Kerberos's `KRB5_KDC_UNREACH`: "Cannot contact any KDC for realm".
const KDC_UNREACHABLE: OM_uint32 = -1765328228i32 as OM_uint32;

impl GssapiError {
    fn new(message: String) -> Self {
        Self { message, minor: 0 }
    }

    fn from_status(call: &str, major: OM_uint32, minor: OM_uint32) -> Self {
        let mut words = describe_status(major, GSS_C_GSS_CODE);
        let mech = describe_status(minor, GSS_C_MECH_CODE);
        if minor != 0 && !mech.is_empty() {
            words = format!("{words}: {mech}");
        }
        Self { message: format!("{call}: {words}"), minor }
    }

    /// No KDC of the realm answered: an outage that may pass, not a refusal of the credentials.
    pub fn is_kdc_unreachable(&self) -> bool {
        self.minor == KDC_UNREACHABLE
    }
}

fn describe_status(status: OM_uint32, kind: u32) -> String {
    let mut words = Vec::new();
    let mut more = 0;
    loop {
        let mut minor = 0;
        let mut text = OutputBuffer::new();
        let mut mech = oid(&KRB5_MECHANISM);
        // SAFETY: every pointer is to a live local; the text is released by OutputBuffer.
        let major = unsafe { gss_display_status(&mut minor, status, kind as i32, &mut mech, &mut more, &mut text.0) };
        if major != GSS_S_COMPLETE {
            break;
        }
        words.push(String::from_utf8_lossy(text.bytes()).into_owned());
        if more == 0 {
            break;
        }
    }
    words.join("; ")
}

fn failed(major: OM_uint32) -> bool {
    major
        & ((_GSS_C_CALLING_ERROR_MASK << GSS_C_CALLING_ERROR_OFFSET)
            | (_GSS_C_ROUTINE_ERROR_MASK << GSS_C_ROUTINE_ERROR_OFFSET))
        != 0
}

/// The OIDs of RFC 1964 and RFC 2743, DER-encoded.
const KRB5_MECHANISM: [u8; 9] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02];
const KRB5_NT_PRINCIPAL_NAME: [u8; 10] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02, 0x01];
const NT_HOSTBASED_SERVICE: [u8; 10] = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x01, 0x04];

/// The library reads an OID, never writes it, though its declarations take a mutable pointer.
fn oid(bytes: &'static [u8]) -> gss_OID_desc {
    gss_OID_desc { length: bytes.len() as OM_uint32, elements: bytes.as_ptr() as *mut c_void }
}

fn input(bytes: &[u8]) -> gss_buffer_desc {
    gss_buffer_desc { length: bytes.len(), value: bytes.as_ptr() as *mut c_void }
}

/// A buffer the library fills and this side releases.
struct OutputBuffer(gss_buffer_desc);

impl OutputBuffer {
    fn new() -> Self {
        Self(gss_buffer_desc { length: 0, value: ptr::null_mut() })
    }

    fn bytes(&self) -> &[u8] {
        match self.0.value.is_null() {
            true => &[],
            // SAFETY: the library wrote `length` bytes at `value`.
            false => unsafe { std::slice::from_raw_parts(self.0.value as *const u8, self.0.length) },
        }
    }
}

impl Drop for OutputBuffer {
    fn drop(&mut self) {
        if !self.0.value.is_null() {
            let mut minor = 0;
            // SAFETY: the buffer was allocated by the library.
            unsafe { gss_release_buffer(&mut minor, &mut self.0) };
        }
    }
}

struct Name(gss_name_t);

impl Name {
    fn import(text: &str, kind: &'static [u8]) -> Result<Self, GssapiError> {
        let mut minor = 0;
        let mut name = ptr::null_mut();
        let mut kind = oid(kind);
        let mut text_buffer = input(text.as_bytes());
        // SAFETY: every pointer is to a live local; the name is released by Drop.
        let major = unsafe { gss_import_name(&mut minor, &mut text_buffer, &mut kind, &mut name) };
        match failed(major) {
            true => Err(GssapiError::from_status(&format!("the Kerberos name {text:?}"), major, minor)),
            false => Ok(Self(name)),
        }
    }
}

impl Drop for Name {
    fn drop(&mut self) {
        let mut minor = 0;
        // SAFETY: the name came from gss_import_name.
        unsafe { gss_release_name(&mut minor, &mut self.0) };
    }
}

/// Where `gss_acquire_cred_from` finds a keytab's tickets: a memory cache per principal and
/// keytab path, so that clients of one identity share their tickets and the user's ticket cache is
/// never written. Not keyed by the file's contents: a keytab missing for a moment at a reconnect
/// (moved, rewritten in place) would get an empty cache, and the login with the tickets already
/// held would fail.
struct CredentialStore {
    keytab: CString,
    cache: CString,
}

impl CredentialStore {
    fn new(keytab: &Path, principal: Option<&str>) -> Result<Self, GssapiError> {
        let text =
            keytab.to_str().ok_or_else(|| GssapiError::new(format!("the keytab path {keytab:?} is not UTF-8")))?;
        // A path with a colon would read as a keytab type ("DIR:…"): the type is always a file.
        let keytab_name = match text.starts_with("FILE:") {
            true => text.to_string(),
            false => format!("FILE:{text}"),
        };
        let mut identity = std::collections::hash_map::DefaultHasher::new();
        (text, principal).hash(&mut identity);
        let cache = format!("MEMORY:zkrecipes-{:016x}", identity.finish());
        let nul = |_| GssapiError::new(format!("the keytab path {keytab:?} holds a NUL"));
        Ok(Self { keytab: CString::new(keytab_name).map_err(nul)?, cache: CString::new(cache).map_err(nul)? })
    }
}

struct Credential(gss_cred_id_t);

// SAFETY: MIT Kerberos guards a credential handle with a mutex of its own.
unsafe impl Send for Credential {}

impl Credential {
    fn acquire(name: gss_name_t, store: Option<CredentialStore>) -> Result<Self, GssapiError> {
        let mut minor = 0;
        let mut handle = ptr::null_mut();
        let mut mechanism = oid(&KRB5_MECHANISM);
        let mut mechanisms = gss_OID_set_desc { count: 1, elements: &mut mechanism };
        let major = match &store {
            // SAFETY: every pointer is to a live local; the handle is released by Drop.
            None => unsafe {
                gss_acquire_cred(
                    &mut minor,
                    name,
                    _GSS_C_INDEFINITE,
                    &mut mechanisms,
                    GSS_C_INITIATE as gss_cred_usage_t,
                    &mut handle,
                    ptr::null_mut(),
                    ptr::null_mut(),
                )
            },
            Some(store) => {
                let mut elements = [
                    gss_key_value_element_desc { key: c"client_keytab".as_ptr(), value: store.keytab.as_ptr() },
                    gss_key_value_element_desc { key: c"ccache".as_ptr(), value: store.cache.as_ptr() },
                ];
                let set =
                    gss_key_value_set_desc { count: elements.len() as OM_uint32, elements: elements.as_mut_ptr() };
                // SAFETY: as above; the store's strings outlive the call.
                unsafe {
                    gss_acquire_cred_from(
                        &mut minor,
                        name,
                        _GSS_C_INDEFINITE,
                        &mut mechanisms,
                        GSS_C_INITIATE as gss_cred_usage_t,
                        &set,
                        &mut handle,
                        ptr::null_mut(),
                        ptr::null_mut(),
                    )
                }
            },
        };
        match failed(major) {
            true => Err(GssapiError::from_status("acquiring Kerberos credentials", major, minor)),
            false => Ok(Self(handle)),
        }
    }
}

impl Drop for Credential {
    fn drop(&mut self) {
        if !self.0.is_null() {
            let mut minor = 0;
            // SAFETY: the handle came from gss_acquire_cred(_from).
            unsafe { gss_release_cred(&mut minor, &mut self.0) };
        }
    }
}

/// A security context being initiated with one server.
struct Context {
    handle: gss_ctx_id_t,
    target: Name,
    credential: Credential,
}

// SAFETY: one session steps its context, never two threads at once.
unsafe impl Send for Context {}

impl Context {
    fn new(credential: Credential, service: &str) -> Result<Self, GssapiError> {
        let target = Name::import(service, &NT_HOSTBASED_SERVICE)?;
        Ok(Self { handle: ptr::null_mut(), target, credential })
    }

    /// One `gss_init_sec_context`: the token to send, and whether the context is established.
    fn initiate(&mut self, token: Option<&[u8]>) -> Result<(Vec<u8>, bool), GssapiError> {
        let mut minor = 0;
        let mut mechanism = oid(&KRB5_MECHANISM);
        let mut received = token.map(input);
        let mut output = OutputBuffer::new();
        // Mutual authentication, as the Java client asks; no delegation of the ticket-granting
        // ticket to the server.
        let flags = GSS_C_MUTUAL_FLAG | GSS_C_SEQUENCE_FLAG | GSS_C_REPLAY_FLAG | GSS_C_INTEG_FLAG | GSS_C_CONF_FLAG;
        // SAFETY: every pointer is to a live local or field; the output is released by its Drop.
        let major = unsafe {
            gss_init_sec_context(
                &mut minor,
                self.credential.0,
                &mut self.handle,
                self.target.0,
                &mut mechanism,
                flags,
                0,
                ptr::null_mut(),
                received.as_mut().map_or(ptr::null_mut(), |buffer| buffer as gss_buffer_t),
                ptr::null_mut(),
                &mut output.0,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if failed(major) {
            return Err(GssapiError::from_status("initiating the Kerberos context", major, minor));
        }
        Ok((output.bytes().to_vec(), major & _GSS_S_CONTINUE_NEEDED == 0))
    }

    fn unwrap(&mut self, token: &[u8]) -> Result<Vec<u8>, GssapiError> {
        let mut minor = 0;
        let mut wrapped = input(token);
        let mut output = OutputBuffer::new();
        // SAFETY: as above.
        let major = unsafe {
            gss_unwrap(&mut minor, self.handle, &mut wrapped, &mut output.0, ptr::null_mut(), ptr::null_mut())
        };
        match failed(major) {
            true => Err(GssapiError::from_status("reading the server's security layers", major, minor)),
            false => Ok(output.bytes().to_vec()),
        }
    }

    fn wrap(&mut self, message: &[u8]) -> Result<Vec<u8>, GssapiError> {
        let mut minor = 0;
        let mut plain = input(message);
        let mut output = OutputBuffer::new();
        // SAFETY: as above.
        let major = unsafe {
            gss_wrap(&mut minor, self.handle, 0, GSS_C_QOP_DEFAULT, &mut plain, ptr::null_mut(), &mut output.0)
        };
        match failed(major) {
            true => Err(GssapiError::from_status("answering the server's security layers", major, minor)),
            false => Ok(output.bytes().to_vec()),
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            let mut minor = 0;
            // SAFETY: the handle came from gss_init_sec_context.
            unsafe { gss_delete_sec_context(&mut minor, &mut self.handle, ptr::null_mut()) };
        }
    }
}

enum State {
    /// Exchanging `gss_init_sec_context` tokens.
    Negotiating,
    /// Established: the server's next message offers its security layers.
    ChoosingLayer,
    Done,
}

struct GssapiClient {
    context: Context,
    state: State,
}

/// RFC 4752 3.1: the security layer "none", and the largest message size 0 that goes with it.
const NO_SECURITY_LAYER: u8 = 0x01;

impl Mechanism for GssapiClient {
    fn name(&self) -> &str {
        "GSSAPI"
    }

    fn client_first(&self) -> bool {
        true
    }

    fn step(&mut self, challenge: &[u8], output: &mut Vec<u8>) -> Result<Progress> {
        match self.state {
            State::Negotiating => {
                // The first call has no token: an empty one would be read as a defective token.
                let received = (!self.context.handle.is_null()).then_some(challenge);
                let (token, established) = self.context.initiate(received).map_err(Error::other)?;
                output.extend_from_slice(&token);
                if established {
                    self.state = State::ChoosingLayer;
                }
                Ok(Progress::Running)
            },
            State::ChoosingLayer => {
                let offer = self.context.unwrap(challenge).map_err(Error::other)?;
                if offer.len() != 4 {
                    return Err(Error::UnexpectedError(format!(
                        "SASL GSSAPI: the server's security-layer message has {} bytes, not 4",
                        offer.len()
                    )));
                }
                // ZooKeeper sends no message through a security layer: "none" or nothing.
                if offer[0] & NO_SECURITY_LAYER == 0 {
                    return Err(Error::UnexpectedError(
                        "SASL GSSAPI: the server requires a security layer (quality of protection auth-int or \
                         auth-conf), which ZooKeeper clients do not use; configure the server with qop auth"
                            .to_string(),
                    ));
                }
                let answer = self.context.wrap(&[NO_SECURITY_LAYER, 0, 0, 0]).map_err(Error::other)?;
                output.extend_from_slice(&answer);
                self.state = State::Done;
                Ok(Progress::Finished { sent: true })
            },
            State::Done => Err(Error::UnexpectedError("SASL GSSAPI session already finished".to_string())),
        }
    }
}
