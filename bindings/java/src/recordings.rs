//! A client's recordings to Java, value by value (`ffi::recordings`), for `MetricsFeed.java` and
//! the adapters over it (`io.zkrecipes.micrometer.ZkrecipesMetrics`): a duration histogram can
//! only be fed that way. Each recording comes from the core's delivery thread to
//! `Native.recorded` (`callbacks::recorded`), naming its metric by its index in the catalog
//! that `metricCatalog` hands Java once.
//!
//! A feed's handle owns the core's subscription: freeing it stops the recordings (those queued
//! before still arrive; `MetricsFeed.close` waits for them and shuts its gate after). The
//! subscription knows the client only weakly, so a feed never keeps a client alive: once the
//! client and its recipes are gone, nothing more comes.

use std::sync::Arc;

use jni::objects::{JByteArray, JDoubleArray, JObject};
use zkrecipes::ffi::recordings::{flush_recordings, forward_recordings, recordings_dropped};
use zkrecipes::ffi::{base_unit, timeout_setting};
use zkrecipes::metrics::{MetricsSubscription, Recording, BUCKETS, CATALOG};
use zkrecipes::Client;

use crate::callbacks;
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::metrics::pack_str;

export! {
    /// The catalog, packed as `packed_catalog` packs it (`Metric.java` reads it once).
    fn Java_io_zkrecipes_Native_metricCatalog<'l>(env; ) -> JByteArray<'l> {
        Ok(env.byte_array_from_slice(&packed_catalog())?)
    }
}

export! {
    /// Every duration histogram's bucket bounds, in seconds.
    fn Java_io_zkrecipes_Native_metricBuckets<'l>(env; ) -> JDoubleArray<'l> {
        let bounds = env.new_double_array(BUCKETS.len())?;
        bounds.set_region(env, 0, BUCKETS)?;
        Ok(bounds)
    }
}

export! {
    /// Hands every recording of `client` from now on to `feed` (`Native.recorded`); the
    /// subscription's handle is returned, its `initial()` read by `metricsFeedInitial`.
    fn Java_io_zkrecipes_Native_metricsFeedStart<'l>(env; client: i64, feed: JObject<'l>) -> i64 {
        let client = unsafe { borrow::<Client>(client) }?;
        let feed = Arc::new(env.new_global_ref(&feed)?);
        let subscription = forward_recordings(
            client,
            Arc::new(move |recording: Recording| callbacks::recorded(&feed, &recording)),
        );
        Ok(into_handle(subscription))
    }
}

export! {
    /// What the client had recorded when the feed started, as a `MetricsSnapshot`'s handle.
    fn Java_io_zkrecipes_Native_metricsFeedInitial<'l>(_env; feed: i64) -> i64 {
        let subscription = unsafe { borrow::<MetricsSubscription>(feed) }?;
        Ok(into_handle(subscription.initial().clone()))
    }
}

export_free!(
    Java_io_zkrecipes_Native_metricsFeedFree,
    MetricsSubscription
);

export! {
    /// Waits until every recording made before the call has reached its feed, `seconds` at the
    /// most; `false` then (and at once on the delivery thread itself).
    fn Java_io_zkrecipes_Native_recordingsFlush<'l>(_env; seconds: f64) -> bool {
        Ok(flush_recordings(timeout_setting("timeout", seconds, "s")?))
    }
}

export! {
    /// Recordings refused since the process started because the feeds did not keep up.
    fn Java_io_zkrecipes_Native_recordingsDropped<'l>(_env; ) -> i64 {
        Ok(i64::try_from(recordings_dropped()).unwrap_or(i64::MAX))
    }
}

/// Every metric, in the catalog's order: its name, instrument, unit, base unit (`ffi::base_unit`,
/// empty for none) and description (strings, as `metrics::pack_str` writes them), then the number
/// of its attributes (4 bytes, big-endian) and each attribute's name.
fn packed_catalog() -> Vec<u8> {
    let mut bytes = Vec::new();
    for metric in CATALOG {
        for text in [
            metric.name,
            metric.instrument.as_str(),
            metric.unit,
            base_unit(metric.unit).unwrap_or(""),
            metric.description,
        ] {
            pack_str(&mut bytes, text);
        }
        bytes.extend_from_slice(&(metric.attributes.len() as u32).to_be_bytes());
        for attribute in metric.attributes {
            pack_str(&mut bytes, attribute);
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use zkrecipes::metrics::catalog;

    #[test]
    fn the_packed_catalog_starts_with_the_first_metric_and_holds_every_one() {
        let bytes = packed_catalog();
        let mut first = Vec::new();
        let session = &catalog::SESSION_STATE_CHANGES;
        for text in [session.name, "counter", "{change}", "", session.description] {
            pack_str(&mut first, text);
        }
        first.extend_from_slice(&1u32.to_be_bytes());
        pack_str(&mut first, "to");
        assert_eq!(CATALOG[0], session);
        assert_eq!(bytes[..first.len()], first[..]);
        // A duration's base unit is seconds.
        let mut wait = Vec::new();
        pack_str(&mut wait, "s");
        pack_str(&mut wait, "seconds");
        assert!(bytes.windows(wait.len()).any(|w| w == wait.as_slice()));
        let names = CATALOG.iter().filter(|m| {
            let mut name = Vec::new();
            pack_str(&mut name, m.name);
            bytes.windows(name.len()).any(|w| w == name.as_slice())
        });
        assert_eq!(names.count(), CATALOG.len());
    }
}
