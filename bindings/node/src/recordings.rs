//! A client's recordings to JavaScript, value by value (`ffi::recordings`), for
//! `lib/opentelemetry.js`: it makes one OpenTelemetry instrument per catalog metric (`catalog`
//! below) and feeds each recording as `{ metric, attributes, value }`, `metric` being the
//! metric's index in the catalog (no name to look up per recording).
//!
//! The recordings come from the core's delivery thread through a threadsafe function that is
//! weak (recordings on their way never keep the process alive) and called without blocking, so
//! that a busy event loop never holds up the delivery thread: past `QUEUE_LIMIT` recordings
//! waiting for the event loop, newer ones are dropped and counted (`droppedRecordings`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use zkrecipes::ffi::metrics::value_as_i64;
use zkrecipes::ffi::recordings::{flush_recordings, forward_recordings, recordings_dropped};
use zkrecipes::ffi::timeout_setting;
use zkrecipes::metrics::{
    Metric, MetricValue, MetricsSnapshot, MetricsSubscription, Recorded, Recording, BUCKETS,
    CATALOG,
};

use crate::client::NativeClient;
use crate::errors::{promise, IntoJs};
use crate::ordered::Ordered;

/// Recordings the event loop may leave waiting before newer ones are dropped (the core's own
/// queue holds as many again).
const QUEUE_LIMIT: usize = 10_000;

/// Recordings the event loop could not take (its queue full, or the environment closing).
static DROPPED_AT_EVENT_LOOP: AtomicU64 = AtomicU64::new(0);

/// One metric of the core's catalog, as `lib/opentelemetry.js` makes its instrument.
#[napi(object, object_from_js = false)]
pub struct CatalogMetric {
    pub name: String,
    /// 'counter', 'up_down_counter' or 'histogram'.
    pub instrument: String,
    pub unit: String,
    pub description: String,
    pub attributes: Vec<String>,
}

#[napi(object, object_from_js = false)]
pub struct MetricCatalog {
    /// In the core's order: a recording's `metric` is an index into it.
    pub metrics: Vec<CatalogMetric>,
    /// Every duration histogram's bucket bounds, in seconds.
    pub buckets: Vec<f64>,
}

/// The core's catalog, which the adapters take their instruments from (never a copy of it).
#[napi]
pub fn metric_catalog() -> MetricCatalog {
    MetricCatalog {
        metrics: CATALOG
            .iter()
            .map(|metric| CatalogMetric {
                name: metric.name.to_string(),
                instrument: metric.instrument.as_str().to_string(),
                unit: metric.unit.to_string(),
                description: metric.description.to_string(),
                attributes: metric.attributes.iter().map(|a| a.to_string()).collect(),
            })
            .collect(),
        buckets: BUCKETS.to_vec(),
    }
}

/// A metric's index in `CATALOG`, by name: a `const` metric has no one address to compare.
fn catalog_index(metric: &Metric) -> u32 {
    static INDEX: OnceLock<HashMap<&'static str, u32>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        (0u32..)
            .zip(CATALOG.iter())
            .map(|(at, metric)| (metric.name, at))
            .collect()
    });
    // Every recording's metric is one of the catalog's (the core records nothing else).
    index[metric.name]
}

/// What crosses to JavaScript: a recording, or the marker of a `flush` (its number), which
/// follows every recording handed over before it.
pub enum Delivery {
    Recording(Recording),
    Flushed(u32),
}

type Deliver = ThreadsafeFunction<Delivery, (), Delivery, Status, false, true, QUEUE_LIMIT>;

impl ToNapiValue for Delivery {
    unsafe fn to_napi_value(env: sys::napi_env, delivery: Self) -> napi::Result<sys::napi_value> {
        let recording = match delivery {
            Delivery::Flushed(marker) => return unsafe { u32::to_napi_value(env, marker) },
            Delivery::Recording(recording) => recording,
        };
        let value = match recording.value {
            Recorded::Add(n) => n as f64,
            Recorded::Seconds(seconds) => seconds,
        };
        let mut object = Object::new(&Env::from_raw(env))?;
        object.set("metric", catalog_index(recording.metric))?;
        object.set("attributes", Ordered(recording.attributes))?;
        object.set("value", value)?;
        unsafe { Object::to_napi_value(env, object) }
    }
}

/// The counters and up/down counters of `snapshot` as additions from zero, so that an adapter
/// started late begins at the client's totals; a histogram's past values are gone.
fn seeds(snapshot: &MetricsSnapshot) -> Vec<Delivery> {
    snapshot
        .points
        .iter()
        .filter(|point| !matches!(point.value, MetricValue::Histogram(_)))
        .map(|point| {
            Delivery::Recording(Recording {
                metric: point.metric,
                attributes: point.attributes.clone(),
                value: Recorded::Add(value_as_i64(&point.value)),
            })
        })
        .collect()
}

/// Every recording of a client handed to one JavaScript function until `close()`.
#[napi]
pub struct NativeRecordings {
    subscription: Mutex<Option<MetricsSubscription>>,
    /// What the client had recorded when the forwarding began.
    initial: MetricsSnapshot,
    deliver: Arc<Deliver>,
}

/// Hands every recording of `client` from now on to `deliver`, on the JavaScript thread, in
/// order; `initial()` is what came before. A closed client records nothing more: its
/// forwarding is closed at once (its `initial()` still answers).
#[napi(
    ts_args_type = "client: NativeClient, deliver: (recording: { metric: number, attributes: Record<string, string>, value: number } | number) => void"
)]
pub fn forward_client_recordings(client: &NativeClient, deliver: Deliver) -> NativeRecordings {
    let deliver = Arc::new(deliver);
    let sending = deliver.clone();
    let subscription = forward_recordings(
        &client.inner,
        Arc::new(move |recording| {
            let status = sending.call(
                Delivery::Recording(recording),
                ThreadsafeFunctionCallMode::NonBlocking,
            );
            if status != Status::Ok {
                DROPPED_AT_EVENT_LOOP.fetch_add(1, Ordering::Relaxed);
            }
        }),
    );
    let initial = subscription.initial().clone();
    // Checked after subscribing: a close racing this call either comes after (and its
    // recordings arrive) or before (and the forwarding ends here).
    let subscription = (!client.inner.is_closed()).then_some(subscription);
    NativeRecordings {
        subscription: Mutex::new(subscription),
        initial,
        deliver,
    }
}

#[napi]
impl NativeRecordings {
    /// The client's counters and up/down counters when the forwarding began, as recordings.
    #[napi(
        ts_return_type = "Array<{ metric: number, attributes: Record<string, string>, value: number }>"
    )]
    pub fn initial(&self) -> Vec<Delivery> {
        seeds(&self.initial)
    }

    /// Stops the forwarding: nothing recorded from now on is handed over (what was recorded
    /// before still arrives).
    #[napi]
    pub fn close(&self) {
        self.subscription.lock().unwrap().take();
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.subscription.lock().unwrap().is_none()
    }

    /// Resolves true once every recording made before the call has been handed to the event
    /// loop and the marker `marker` follows them (`lib/opentelemetry.js` then waits for it);
    /// false if `timeoutMs` passed first.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn flush<'env>(
        &self,
        env: &'env Env,
        marker: u32,
        timeout_ms: f64,
    ) -> napi::Result<PromiseRaw<'env, bool>> {
        let timeout = timeout_setting("timeoutMs", timeout_ms, "ms").into_js(env)?;
        let deliver = self.deliver.clone();
        let flushing = async move {
            let sent = tokio::task::spawn_blocking(move || {
                // Blocking: the marker must not be dropped, and the event loop is free (it
                // awaits this).
                flush_recordings(timeout)
                    && deliver.call(
                        Delivery::Flushed(marker),
                        ThreadsafeFunctionCallMode::Blocking,
                    ) == Status::Ok
            })
            .await;
            Ok(sent.unwrap_or(false))
        };
        promise(env, flushing, |sent| sent)
    }
}

/// Recordings of this process that never reached JavaScript: refused by the core's delivery
/// queue or by the event loop's, both full because the meters did not keep up.
#[napi]
pub fn dropped_recordings() -> f64 {
    (recordings_dropped() + DROPPED_AT_EVENT_LOOP.load(Ordering::Relaxed)) as f64
}
