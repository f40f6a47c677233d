use std::sync::Arc;

use pyo3::prelude::*;
use zkrecipes::ffi::timeout_setting;
use zkrecipes::{Auth, Client, ClientOptions};

use crate::blocking::{awaitable, wait};
use crate::errors::IntoPyResult;
use crate::listener::{forward, Subscription};
use crate::metrics::MetricsSnapshot;
use crate::recordings::{Feeds, MetricsFeed};
use crate::security::SecurityArgs;

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeClient {
    pub inner: Client,
    /// The metric feeds of this client (`forward_recordings`), told when it has closed.
    feeds: Arc<Feeds>,
}

impl From<Client> for NativeClient {
    fn from(inner: Client) -> Self {
        NativeClient {
            inner,
            feeds: Arc::default(),
        }
    }
}

/// Python's `Client(...)` keywords, as one dict: `connect` and `connect_async` read them alike.
/// Named `Client` so that a wrong type reads "failed to extract field Client.metric_paths".
mod keywords {
    use super::*;

    #[derive(FromPyObject)]
    #[pyo3(from_item_all)]
    pub struct Client {
        pub connect_string: String,
        pub session_timeout: f64,
        pub connect_timeout: f64,
        pub auth: Option<(String, String)>,
        pub identity: Option<String>,
        pub security: Option<SecurityArgs>,
        pub metric_paths: bool,
    }
}
use keywords::Client as ConnectArgs;

impl ConnectArgs {
    /// The connect string and the client's options, checked.
    fn into_connect(self) -> zkrecipes::Result<(String, ClientOptions)> {
        let ConnectArgs {
            connect_string,
            session_timeout,
            connect_timeout,
            auth,
            identity,
            security,
            metric_paths,
        } = self;
        let mut options = ClientOptions {
            session_timeout: timeout_setting("session_timeout", session_timeout, "s")?,
            connect_timeout: timeout_setting("connect_timeout", connect_timeout, "s")?,
            auth: auth.map(|(scheme, credentials)| Auth {
                scheme,
                credentials: credentials.into_bytes(),
            }),
            identity,
            metric_paths,
            ..ClientOptions::default()
        };
        if let Some(security) = security {
            zkrecipes::ffi::SecuritySettings::from(security).apply(&mut options)?;
        }
        Ok((connect_string, options))
    }
}

#[pymethods]
impl NativeClient {
    #[staticmethod]
    fn connect(py: Python<'_>, args: ConnectArgs) -> PyResult<NativeClient> {
        let (connect_string, options) = args.into_connect().into_py_result()?;
        let inner = wait(py, move || async move {
            Client::connect(&connect_string, options).await
        })?;
        Ok(inner.into())
    }

    #[staticmethod]
    fn connect_async(py: Python<'_>, args: ConnectArgs) -> PyResult<Bound<'_, PyAny>> {
        let (connect_string, options) = args.into_connect().into_py_result()?;
        awaitable(py, async move {
            Ok(NativeClient::from(
                Client::connect(&connect_string, options).await?,
            ))
        })
    }

    fn state(&self) -> &'static str {
        self.inner.state().as_str()
    }

    fn session_id(&self) -> PyResult<i64> {
        self.inner.session_id().into_py_result()
    }

    fn identity(&self) -> String {
        self.inner.identity().to_string()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }

    fn authenticated_as(&self) -> Vec<String> {
        self.inner.authenticated_as()
    }

    /// The code and message of why no new session comes after `LOST` (`client.py` makes the error).
    fn session_error(&self) -> Option<(&'static str, String)> {
        let err = self.inner.session_error()?;
        Some((err.code().as_str(), err.message().to_string()))
    }

    fn whoami(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let client = self.inner.clone();
        wait(py, move || async move { client.whoami().await })
    }

    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let (client, feeds) = (self.inner.clone(), self.feeds.clone());
        wait(py, move || async move {
            client.close().await;
            feeds.client_closed();
            Ok(())
        })
    }

    fn close_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (client, feeds) = (self.inner.clone(), self.feeds.clone());
        awaitable(py, async move {
            client.close().await;
            feeds.client_closed();
            Ok(())
        })
    }

    fn metrics(&self) -> MetricsSnapshot {
        self.inner.metrics().into()
    }

    /// `deliver(name, attributes, value)` for every recording from now on, on the library's
    /// delivery thread (see `recordings.rs`).
    fn forward_recordings(&self, deliver: Py<PyAny>) -> MetricsFeed {
        self.feeds.forward(&self.inner, deliver)
    }

    fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
        forward(self.inner.subscribe(), callback)
    }
}
