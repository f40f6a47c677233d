use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::ffi::{timeout_setting, SecuritySettings};
use zkrecipes::{Auth, Client, ClientOptions, Pem};

use crate::errors::{promise, IntoJs};
use crate::listener::{forward, EventCallback, NativeSubscription};
use crate::metrics::NativeMetrics;
use crate::promised::promised;

#[napi(object)]
pub struct ConnectOptions {
    pub session_timeout_ms: Option<f64>,
    pub connect_timeout_ms: Option<f64>,
    pub auth_scheme: Option<String>,
    pub auth_credentials: Option<String>,
    pub identity: Option<String>,
    /// Paths, or PEM text, or PEM `Buffer`s.
    pub tls_ca: Option<Either<String, Buffer>>,
    pub tls_cert: Option<Either<String, Buffer>>,
    pub tls_key: Option<Either<String, Buffer>>,
    pub tls_verify_hostname: Option<bool>,
    pub sasl_mechanism: Option<String>,
    pub sasl_username: Option<String>,
    pub sasl_password: Option<Buffer>,
    pub sasl_service: Option<String>,
    pub sasl_host: Option<String>,
    pub sasl_principal: Option<String>,
    pub sasl_keytab: Option<String>,
    pub acl_policy: Option<String>,
    pub acl_entries: Option<Vec<AclEntry>>,
    /// Whether metrics carry the recipe's path (default true).
    pub metric_paths: Option<bool>,
}

#[napi(object)]
pub struct AclEntry {
    /// Letters (`rwcda`, `all`) or the bits as a decimal string.
    pub perms: String,
    pub scheme: String,
    pub id: String,
}

fn pem(value: Option<Either<String, Buffer>>) -> Option<Pem> {
    value.map(|value| match value {
        Either::A(text_or_path) => zkrecipes::ffi::pem(&text_or_path),
        Either::B(bytes) => Pem::Bytes(bytes.to_vec()),
    })
}

fn millis(name: &str, value: Option<f64>, default: Duration) -> zkrecipes::Result<Duration> {
    value.map_or(Ok(default), |ms| timeout_setting(name, ms, "ms"))
}

#[napi]
pub struct NativeClient {
    pub(crate) inner: Client,
}

#[napi(ts_return_type = "Promise<NativeClient>")]
pub fn connect<'env>(
    env: &'env Env,
    connect_string: String,
    options: ConnectOptions,
) -> napi::Result<PromiseRaw<'env, NativeClient>> {
    let defaults = ClientOptions::default();
    let security = SecuritySettings {
        tls_ca: pem(options.tls_ca),
        tls_cert: pem(options.tls_cert),
        tls_key: pem(options.tls_key),
        tls_verify_hostname: options.tls_verify_hostname,
        sasl_mechanism: options.sasl_mechanism,
        sasl_username: options.sasl_username,
        sasl_password: options.sasl_password.map(|p| p.to_vec()),
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
        session_timeout: millis(
            "sessionTimeoutMs",
            options.session_timeout_ms,
            defaults.session_timeout,
        )
        .into_js(env)?,
        connect_timeout: millis(
            "connectTimeoutMs",
            options.connect_timeout_ms,
            defaults.connect_timeout,
        )
        .into_js(env)?,
        auth: match (options.auth_scheme, options.auth_credentials) {
            (Some(scheme), Some(credentials)) => Some(Auth {
                scheme,
                credentials: credentials.into_bytes(),
            }),
            _ => None,
        },
        identity: options.identity,
        metric_paths: options.metric_paths.unwrap_or(defaults.metric_paths),
        ..ClientOptions::default()
    };
    security.apply(&mut options).into_js(env)?;
    let connecting = async move { Client::connect(&connect_string, options).await };
    promise(env, connecting, |inner| NativeClient { inner })
}

#[napi]
impl NativeClient {
    #[napi]
    pub fn state(&self) -> &'static str {
        self.inner.state().as_str()
    }

    #[napi]
    pub fn session_id(&self, env: &Env) -> napi::Result<BigInt> {
        Ok(BigInt::from(self.inner.session_id().into_js(env)?))
    }

    #[napi]
    pub fn identity(&self) -> String {
        self.inner.identity().to_string()
    }

    #[napi]
    pub fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }

    #[napi]
    pub fn authenticated_as(&self) -> Vec<String> {
        self.inner.authenticated_as()
    }

    /// Why no new session comes after `LOST`, as `[code, message]` (`index.js` makes the ZkError).
    #[napi]
    pub fn session_error(&self) -> Option<Vec<String>> {
        let err = self.inner.session_error()?;
        Some(vec![
            err.code().as_str().to_string(),
            err.message().to_string(),
        ])
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let client = self.inner.clone();
        let closing = async move {
            client.close().await;
            Ok(())
        };
        promise(env, closing, |()| ())
    }

    /// What this client has recorded so far.
    #[napi]
    pub fn metrics(&self) -> NativeMetrics {
        NativeMetrics {
            snapshot: self.inner.metrics(),
        }
    }

    #[napi]
    pub fn subscribe(&self, callback: EventCallback) -> NativeSubscription {
        forward(self.inner.subscribe(), callback)
    }
}

promised! {
    impl NativeClient {
        fn whoami(env) -> "Promise<string[]>" Vec<String> {} |client| client.whoami(), |who| who;
    }
}
