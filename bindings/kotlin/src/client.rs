//! The client: one ZooKeeper session shared by every recipe made from it.

use std::sync::Arc;
use std::time::Duration;

use zkrecipes::ffi::{timeout_setting, SecuritySettings};
use zkrecipes::{Auth, Client, ClientOptions};

use crate::errors::Result;
use crate::events::NativeEvents;
use crate::tasks::run;

/// How to connect, as the Kotlin layer passes it (durations in ms).
#[derive(uniffi::Record)]
pub struct NativeClientOptions {
    pub session_timeout_ms: f64,
    pub connect_timeout_ms: f64,
    /// `user:password` for the `digest` scheme.
    pub digest: Option<String>,
    pub identity: Option<String>,
    /// Paths or PEM text.
    pub tls_ca: Option<String>,
    pub tls_cert: Option<String>,
    pub tls_key: Option<String>,
    pub tls_verify_hostname: Option<bool>,
    pub sasl_mechanism: Option<String>,
    pub sasl_username: Option<String>,
    pub sasl_password: Option<Vec<u8>>,
    pub sasl_service: Option<String>,
    pub sasl_host: Option<String>,
    pub sasl_principal: Option<String>,
    pub sasl_keytab: Option<String>,
    pub acl_policy: Option<String>,
    pub acl_entries: Option<Vec<NativeAcl>>,
    /// Whether metrics carry each recipe's path (`ClientOptions::metric_paths`).
    pub metric_paths: bool,
}

/// One ACL entry; perms as letters (`rwcda`, `all`) or the bits in decimal.
#[derive(uniffi::Record)]
pub struct NativeAcl {
    pub perms: String,
    pub scheme: String,
    pub id: String,
}

#[derive(uniffi::Object)]
pub struct NativeClient {
    pub(crate) inner: Client,
}

/// Connects; fails after `connect_timeout_ms` without a session.
#[uniffi::export]
pub async fn connect(
    connect_string: String,
    options: NativeClientOptions,
) -> Result<Arc<NativeClient>> {
    let settings = SecuritySettings {
        tls_ca: SecuritySettings::pem(options.tls_ca),
        tls_cert: SecuritySettings::pem(options.tls_cert),
        tls_key: SecuritySettings::pem(options.tls_key),
        tls_verify_hostname: options.tls_verify_hostname,
        sasl_mechanism: options.sasl_mechanism,
        sasl_username: options.sasl_username,
        sasl_password: options.sasl_password,
        sasl_service: options.sasl_service,
        sasl_host: options.sasl_host,
        sasl_principal: options.sasl_principal,
        sasl_keytab: options.sasl_keytab,
        acl_policy: options.acl_policy,
        acl_entries: options.acl_entries.map(|entries| {
            entries
                .into_iter()
                .map(|e| (e.perms, e.scheme, e.id))
                .collect()
        }),
    };
    let mut options = ClientOptions {
        session_timeout: setting("sessionTimeout", options.session_timeout_ms)?,
        connect_timeout: setting("connectTimeout", options.connect_timeout_ms)?,
        auth: options.digest.as_deref().map(Auth::digest),
        identity: options.identity,
        metric_paths: options.metric_paths,
        ..ClientOptions::default()
    };
    settings.apply(&mut options)?;
    let client = run(async move { Client::connect(&connect_string, options).await }).await?;
    Ok(Arc::new(NativeClient { inner: client }))
}

/// The core's default session timeout (Kotlin's `ClientOptions` reads it, not restating it).
#[uniffi::export]
pub fn default_session_timeout_ms() -> i64 {
    zkrecipes::DEFAULT_SESSION_TIMEOUT.as_millis() as i64
}

/// The core's default connect timeout.
#[uniffi::export]
pub fn default_connect_timeout_ms() -> i64 {
    zkrecipes::DEFAULT_CONNECT_TIMEOUT.as_millis() as i64
}

fn setting(name: &str, ms: f64) -> Result<Duration> {
    Ok(timeout_setting(name, ms, "ms")?)
}

#[uniffi::export]
impl NativeClient {
    /// `"CONNECTED"`, `"SUSPENDED"`, `"RECONNECTED"`, `"LOST"` or `"CLOSED"`.
    pub fn state(&self) -> String {
        self.inner.state().as_str().to_string()
    }

    pub fn states(&self) -> Arc<NativeEvents> {
        NativeEvents::connection(&self.inner)
    }

    /// What this client has counted so far (`Metrics.kt` wraps it).
    pub fn metrics(&self) -> Arc<crate::metrics::NativeMetrics> {
        Arc::new(crate::metrics::NativeMetrics::new(self.inner.metrics()))
    }

    pub fn session_id(&self) -> Result<i64> {
        Ok(self.inner.session_id()?)
    }

    pub fn identity(&self) -> String {
        self.inner.identity().to_string()
    }

    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    pub fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }

    pub fn authenticated_as(&self) -> Vec<String> {
        self.inner.authenticated_as()
    }

    /// Why no new session comes after `LOST` (`Client.kt` makes the `ZkException`).
    pub fn session_error(&self) -> Option<crate::errors::ErrorValue> {
        self.inner.session_error().map(Into::into)
    }

    pub async fn whoami(&self) -> Result<Vec<String>> {
        let client = self.inner.clone();
        run(async move { client.whoami().await }).await
    }

    /// `close()` for a thread that may block.
    pub fn close_blocking(&self) {
        let client = self.inner.clone();
        crate::tasks::block(async move { client.close().await });
    }

    /// Ends the session: its nodes go at once, every waiter gets `CLOSED`.
    /// (Not `close`: that is the generated object's own `AutoCloseable`.)
    pub async fn close_async(&self) {
        let client = self.inner.clone();
        let _ = run(async move {
            client.close().await;
            Ok(())
        })
        .await;
    }
}
