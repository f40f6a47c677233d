use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use zkrecipes::{Auth, Client, ClientOptions};

use crate::errors::{promise, IntoJs};
use crate::listener::{forward, EventCallback, NativeSubscription};

#[napi(object)]
pub struct ConnectOptions {
    pub session_timeout_ms: Option<f64>,
    pub connect_timeout_ms: Option<f64>,
    pub auth_scheme: Option<String>,
    pub auth_credentials: Option<String>,
    pub identity: Option<String>,
}

fn millis(name: &str, value: Option<f64>, default: Duration) -> zkrecipes::Result<Duration> {
    value.map_or(Ok(default), |ms| {
        ClientOptions::timeout_setting(name, ms, "ms")
    })
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
    let options = ClientOptions {
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
    };
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

    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let client = self.inner.clone();
        let closing = async move {
            client.close().await;
            Ok(())
        };
        promise(env, closing, |()| ())
    }

    #[napi]
    pub fn subscribe(&self, callback: EventCallback) -> NativeSubscription {
        forward(self.inner.subscribe(), callback)
    }
}
