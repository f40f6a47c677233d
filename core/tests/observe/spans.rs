//! Each wait is a `tracing` span (`zkrecipes.wait`, `otel.name` the wait's name) under the
//! caller's span, with its outcome, wait and token: what an OpenTelemetry layer exports.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Instrument, Metadata, Subscriber};

use super::common::*;
use zkrecipes::Lock;

#[derive(Clone, Debug, Default)]
struct Seen {
    name: &'static str,
    parent: Option<u64>,
    fields: HashMap<&'static str, String>,
    closed: bool,
}

#[derive(Clone, Default)]
struct Spans {
    next: Arc<AtomicU64>,
    seen: Arc<Mutex<HashMap<u64, Seen>>>,
    entered: Arc<Mutex<Vec<u64>>>,
}

struct Fields<'a>(&'a mut HashMap<&'static str, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name(),
            format!("{value:?}").trim_matches('"').to_string(),
        );
    }
}

impl Subscriber for Spans {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attributes: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let parent = match attributes.parent() {
            Some(parent) => Some(parent.into_u64()),
            None if attributes.is_contextual() => self.entered.lock().unwrap().last().copied(),
            None => None,
        };
        let mut seen = Seen {
            name: attributes.metadata().name(),
            parent,
            ..Seen::default()
        };
        attributes.record(&mut Fields(&mut seen.fields));
        self.seen.lock().unwrap().insert(id, seen);
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some(seen) = self.seen.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, _: &Event<'_>) {}

    fn enter(&self, span: &Id) {
        self.entered.lock().unwrap().push(span.into_u64());
    }

    fn exit(&self, span: &Id) {
        let mut entered = self.entered.lock().unwrap();
        if let Some(at) = entered.iter().rposition(|id| *id == span.into_u64()) {
            entered.remove(at);
        }
    }

    fn try_close(&self, span: Id) -> bool {
        if let Some(seen) = self.seen.lock().unwrap().get_mut(&span.into_u64()) {
            seen.closed = true;
        }
        true
    }
}

#[tokio::test]
async fn a_wait_is_a_span_under_the_callers_span_with_its_outcome_and_token() {
    let (path, holder, lock) = recipe("observe-span", Lock::new).await;
    let waiter_client = client().await;
    let waiter = Lock::new(&waiter_client, &path).unwrap();
    let spans = Spans::default();
    let _default = tracing::subscriber::set_default(spans.clone());

    let request = tracing::info_span!("request");
    let request_id = request.id().expect("the test's span").into_u64();
    let held = lock.acquire().instrument(request.clone()).await.unwrap();
    let timed_out = waiter
        .acquire_timeout(Duration::from_millis(20))
        .instrument(request)
        .await
        .unwrap();
    assert!(timed_out.is_none());
    let token = held.fencing_token();
    held.release().await.unwrap();
    drop(holder);

    let seen = spans.seen.lock().unwrap();
    let waits: Vec<&Seen> = seen
        .values()
        .filter(|s| s.name == "zkrecipes.wait" && s.fields.get("path") == Some(&path))
        .collect();
    assert_eq!(waits.len(), 2, "{seen:?}");
    for wait in &waits {
        assert_eq!(wait.fields["otel.name"], "zkrecipes.lock.acquire");
        assert_eq!(wait.parent, Some(request_id), "under the caller's span");
        assert!(wait.closed, "closed when the acquire returned");
        assert!(wait.fields.contains_key("waited_ms"));
    }
    let acquired = waits
        .iter()
        .find(|s| s.fields["outcome"] == "acquired")
        .unwrap();
    assert_eq!(acquired.fields["fencing_token"], token.to_string());
    let timeout = waits
        .iter()
        .find(|s| s.fields["outcome"] == "timeout")
        .unwrap();
    assert!(!timeout.fields.contains_key("fencing_token"));
    assert!(timeout.fields["waited_ms"].parse::<u64>().unwrap() >= 20);
}
