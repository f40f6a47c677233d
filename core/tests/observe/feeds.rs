//! Recordings fed, as they happen, to what another metrics API needs: `observe_metrics`, and
//! the `metrics` crate's facade (feature `metrics-rs`).

use std::sync::{Arc, Mutex};

use super::common::*;
use zkrecipes::metrics::{Recorded, Recording};
use zkrecipes::Lock;

#[tokio::test]
async fn an_observer_gets_every_recording_after_the_snapshot_it_started_from() {
    let (path, client, lock) = recipe("observe-feed", Lock::new).await;
    lock.acquire().await.unwrap().release().await.unwrap();
    let seen: Arc<Mutex<Vec<Recording>>> = Arc::default();
    let sink = seen.clone();
    let subscription = client.observe_metrics(move |r| sink.lock().unwrap().push(r.clone()));
    let at = [("path", path.as_str())];
    assert_eq!(
        subscription
            .initial()
            .counter("zkrecipes.lock.acquisitions", &at),
        1
    );
    for _ in 0..3 {
        lock.acquire().await.unwrap().release().await.unwrap();
    }
    drop(subscription);
    lock.acquire().await.unwrap().release().await.unwrap();
    let seen = seen.lock().unwrap();
    let of = |name: &str| {
        seen.iter()
            .filter(|r| r.metric.name == name && r.attributes.contains(&("path", path.clone())))
            .collect::<Vec<_>>()
    };
    let acquisitions = of("zkrecipes.lock.acquisitions");
    assert_eq!(
        acquisitions.len(),
        3,
        "only the recordings while subscribed"
    );
    assert!(acquisitions.iter().all(|r| r.value == Recorded::Add(1)));
    let holds = of("zkrecipes.lock.hold.duration");
    assert_eq!(holds.len(), 3);
    assert!(holds
        .iter()
        .all(|r| matches!(r.value, Recorded::Seconds(s) if (0.0..60.0).contains(&s))));
    // Each hold went up and down again.
    let holders: i64 = of("zkrecipes.lock.holders")
        .iter()
        .map(|r| match r.value {
            Recorded::Add(n) => n,
            Recorded::Seconds(_) => 0,
        })
        .sum();
    assert_eq!(holders, 0);
    assert_eq!(
        client.metrics().counter("zkrecipes.lock.acquisitions", &at),
        5
    );
}

#[cfg(feature = "metrics-rs")]
#[tokio::test]
async fn the_metrics_crate_gets_the_catalog_names_with_their_counts_and_durations() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    recorder
        .install()
        .expect("the only recorder of this test binary");
    let (path, client, lock) = recipe("observe-metrics-crate", Lock::new).await;
    // Recorded before the export: the counter starts from it.
    lock.acquire().await.unwrap().release().await.unwrap();
    let _export = zkrecipes::metrics::export_to_metrics_crate(&client);
    let holder = lock.acquire().await.unwrap();
    let other = super::common::client().await;
    assert!(Lock::new(&other, &path)
        .unwrap()
        .try_acquire()
        .await
        .unwrap()
        .is_none());
    holder.release().await.unwrap();
    let mut acquired = None;
    let mut hold_seconds = None;
    for (key, unit, _, value) in snapshotter.snapshot().into_vec() {
        let labels: Vec<(String, String)> = key
            .key()
            .labels()
            .map(|l| (l.key().to_string(), l.value().to_string()))
            .collect();
        let at_path = labels.contains(&("path".to_string(), path.clone()));
        match (key.key().name(), value) {
            ("zkrecipes.lock.acquisitions", DebugValue::Counter(n))
                if at_path && labels.contains(&("outcome".into(), "acquired".into())) =>
            {
                acquired = Some(n)
            }
            ("zkrecipes.lock.hold.duration", DebugValue::Histogram(values)) if at_path => {
                assert_eq!(unit, Some(metrics::Unit::Seconds));
                hold_seconds = Some(values.len())
            }
            _ => {}
        }
    }
    assert_eq!(acquired, Some(2), "one before the export, one after");
    assert_eq!(hold_seconds, Some(1), "durations from the export on");
}
