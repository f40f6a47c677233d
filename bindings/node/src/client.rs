use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::{Auth, Client, ClientOptions};

use crate::errors::{invalid_argument, run, IntoJs};
use crate::listener::{forward, EventCallback, NativeSubscription};

#[napi(object)]
pub struct ConnectOptions {
    pub session_timeout_ms: Option<f64>,
    pub connect_timeout_ms: Option<f64>,
    pub auth_scheme: Option<String>,
    pub auth_credentials: Option<String>,
    pub identity: Option<String>,
}

fn millis(name: &str, value: Option<f64>, default: Duration) -> napi::Result<Duration> {
    match value {
        None => Ok(default),
        Some(ms) if ms.is_finite() && ms > 0.0 && ms <= 86_400_000.0 => {
            Ok(Duration::from_secs_f64(ms / 1000.0))
        }
        Some(ms) => Err(invalid_argument(format!(
            "{name} must be in (0, 86400000] ms, got {ms}"
        ))),
    }
}

#[napi]
pub struct NativeClient {
    pub(crate) inner: Client,
}

#[napi]
pub async fn connect(
    connect_string: String,
    options: ConnectOptions,
) -> napi::Result<NativeClient> {
    let defaults = ClientOptions::default();
    let options = ClientOptions {
        session_timeout: millis(
            "sessionTimeoutMs",
            options.session_timeout_ms,
            defaults.session_timeout,
        )?,
        connect_timeout: millis(
            "connectTimeoutMs",
            options.connect_timeout_ms,
            defaults.connect_timeout,
        )?,
        auth: match (options.auth_scheme, options.auth_credentials) {
            (Some(scheme), Some(credentials)) => Some(Auth {
                scheme,
                credentials: credentials.into_bytes(),
            }),
            _ => None,
        },
        identity: options.identity,
    };
    let inner = run(async move { Client::connect(&connect_string, options).await }).await?;
    Ok(NativeClient { inner })
}

#[napi]
impl NativeClient {
    #[napi]
    pub fn state(&self) -> &'static str {
        self.inner.state().as_str()
    }

    #[napi]
    pub fn session_id(&self) -> napi::Result<BigInt> {
        Ok(BigInt::from(self.inner.session_id().into_js()?))
    }

    #[napi]
    pub fn identity(&self) -> String {
        self.inner.identity().to_string()
    }

    #[napi]
    pub async fn close(&self) -> napi::Result<()> {
        let client = self.inner.clone();
        run(async move {
            client.close().await;
            Ok(())
        })
        .await
    }

    #[napi]
    pub fn subscribe(&self, callback: EventCallback) -> NativeSubscription {
        forward(self.inner.subscribe(), callback)
    }
}
