//! Every metric a client records, decided once here: name, instrument, unit, attributes and
//! meaning. The names follow OpenTelemetry's semantic-convention style (dots, a `.duration` in
//! seconds, a `{thing}` unit for counts); the bindings, the Prometheus text, the adapters and the
//! dashboard all take them from this table.

/// What kind of number a metric is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instrument {
    /// Only goes up (OpenTelemetry counter, Prometheus counter).
    Counter,
    /// Goes up and down: how many are waiting or holding now (a gauge in Prometheus).
    UpDownCounter,
    /// A distribution of durations in seconds, in fixed buckets (`BUCKETS`).
    Histogram,
}

impl Instrument {
    pub fn as_str(self) -> &'static str {
        match self {
            Instrument::Counter => "counter",
            Instrument::UpDownCounter => "up_down_counter",
            Instrument::Histogram => "histogram",
        }
    }
}

/// One metric of the catalog.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Metric {
    pub name: &'static str,
    pub instrument: Instrument,
    /// UCUM, as OpenTelemetry writes it: `s`, or a count's `{acquisition}`.
    pub unit: &'static str,
    pub description: &'static str,
    /// The attribute names, in the order a recording gives their values. `path` (the
    /// recipe's node) is left out of every point when the client's `metric_paths` is off.
    pub attributes: &'static [&'static str],
}

/// The upper bounds, in seconds, of every duration histogram's buckets (the last bucket
/// is everything above): from half a millisecond, a fast round trip, to five minutes.
pub const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 300.0,
];

macro_rules! metric {
    ($id:ident, $name:literal, $instrument:ident, $unit:literal, [$($attr:literal),*], $description:literal) => {
        pub const $id: Metric = Metric {
            name: $name,
            instrument: Instrument::$instrument,
            unit: $unit,
            description: $description,
            attributes: &[$($attr),*],
        };
    };
}

// The session.
metric!(
    SESSION_STATE_CHANGES,
    "zkrecipes.session.state_changes",
    Counter,
    "{change}",
    ["to"],
    "Connection state changes of the client's sessions, by the state entered"
);
metric!(
    REQUESTS,
    "zkrecipes.requests",
    Counter,
    "{request}",
    ["op"],
    "Requests sent to ZooKeeper, by operation (a multi counts once)"
);

// Locks: the lock, both sides of the read/write lock, the multi-lock.
metric!(
    LOCK_WAIT,
    "zkrecipes.lock.wait.duration",
    Histogram,
    "s",
    ["path", "kind", "outcome"],
    "How long acquiring a lock took, by outcome (acquired, timeout, cancelled, error)"
);
metric!(
    LOCK_ACQUISITIONS,
    "zkrecipes.lock.acquisitions",
    Counter,
    "{acquisition}",
    ["path", "kind", "outcome"],
    "Lock acquisitions, by outcome (acquired, timeout, cancelled, error)"
);
metric!(
    LOCK_WAITERS,
    "zkrecipes.lock.waiters",
    UpDownCounter,
    "{waiter}",
    ["path", "kind"],
    "Acquisitions of this client waiting now"
);
metric!(
    LOCK_HOLD,
    "zkrecipes.lock.hold.duration",
    Histogram,
    "s",
    ["path", "kind"],
    "How long a lock was held, from acquired to released or lost"
);
metric!(
    LOCK_HOLDERS,
    "zkrecipes.lock.holders",
    UpDownCounter,
    "{holder}",
    ["path", "kind"],
    "Holds of this client now"
);
metric!(
    LOCK_LOST,
    "zkrecipes.lock.lost",
    Counter,
    "{hold}",
    ["path", "kind"],
    "Holds lost without a release (session expired, node deleted)"
);

// The semaphore.
metric!(
    SEMAPHORE_WAIT,
    "zkrecipes.semaphore.wait.duration",
    Histogram,
    "s",
    ["path", "outcome"],
    "How long acquiring a lease took, by outcome"
);
metric!(
    SEMAPHORE_ACQUISITIONS,
    "zkrecipes.semaphore.acquisitions",
    Counter,
    "{acquisition}",
    ["path", "outcome"],
    "Lease acquisitions, by outcome (acquired, timeout, cancelled, error)"
);
metric!(
    SEMAPHORE_WAITERS,
    "zkrecipes.semaphore.waiters",
    UpDownCounter,
    "{waiter}",
    ["path"],
    "Lease acquisitions of this client waiting now"
);
metric!(
    SEMAPHORE_HOLD,
    "zkrecipes.semaphore.hold.duration",
    Histogram,
    "s",
    ["path"],
    "How long a lease was held"
);
metric!(
    SEMAPHORE_HOLDERS,
    "zkrecipes.semaphore.holders",
    UpDownCounter,
    "{lease}",
    ["path"],
    "Leases this client holds now"
);
metric!(
    SEMAPHORE_LOST,
    "zkrecipes.semaphore.lost",
    Counter,
    "{lease}",
    ["path"],
    "Leases lost without a release"
);

// The queue.
metric!(
    QUEUE_OFFERS,
    "zkrecipes.queue.offers",
    Counter,
    "{item}",
    ["path"],
    "Items offered to a queue"
);
metric!(
    QUEUE_TAKE,
    "zkrecipes.queue.take.duration",
    Histogram,
    "s",
    ["path", "outcome"],
    "How long a take waited for an item, by outcome (taken, timeout, cancelled, error)"
);
metric!(
    QUEUE_TAKES,
    "zkrecipes.queue.takes",
    Counter,
    "{take}",
    ["path", "outcome"],
    "Takes, by outcome (taken, timeout, cancelled, error)"
);
metric!(
    QUEUE_TAKERS,
    "zkrecipes.queue.takers",
    UpDownCounter,
    "{taker}",
    ["path"],
    "Takes of this client waiting now"
);

// The work queue.
metric!(
    WORK_QUEUE_OFFERS,
    "zkrecipes.work_queue.offers",
    Counter,
    "{job}",
    ["path"],
    "Jobs offered to a work queue"
);
metric!(
    WORK_QUEUE_CONSUME,
    "zkrecipes.work_queue.consume.duration",
    Histogram,
    "s",
    ["path", "outcome"],
    "How long a consumer waited for a delivery, by outcome (delivered, timeout, cancelled, error)"
);
metric!(
    WORK_QUEUE_CONSUMES,
    "zkrecipes.work_queue.consumes",
    Counter,
    "{consume}",
    ["path", "outcome"],
    "Waits for a delivery, by outcome (delivered, timeout, cancelled, error)"
);
metric!(
    WORK_QUEUE_CONSUMERS,
    "zkrecipes.work_queue.consumers",
    UpDownCounter,
    "{consumer}",
    ["path"],
    "Consumers of this client waiting for a delivery now"
);
metric!(
    WORK_QUEUE_DELIVERIES,
    "zkrecipes.work_queue.deliveries",
    Counter,
    "{delivery}",
    ["path"],
    "Jobs delivered to this client, redeliveries included"
);
metric!(
    WORK_QUEUE_REDELIVERIES,
    "zkrecipes.work_queue.redeliveries",
    Counter,
    "{delivery}",
    ["path"],
    "Deliveries of a job delivered before (its delivery count above 1)"
);
metric!(
    WORK_QUEUE_SETTLED,
    "zkrecipes.work_queue.settled",
    Counter,
    "{delivery}",
    ["path", "outcome"],
    "Deliveries settled, by outcome (ack, nack, dead_letter, lost)"
);
metric!(
    WORK_QUEUE_DEAD_LETTERS,
    "zkrecipes.work_queue.dead_letters",
    Counter,
    "{job}",
    ["path"],
    "Jobs moved to the dead-letter queue"
);
metric!(
    WORK_QUEUE_PROCESS,
    "zkrecipes.work_queue.process.duration",
    Histogram,
    "s",
    ["path", "outcome"],
    "From delivery to settlement, by outcome (ack, nack, dead_letter, lost)"
);
metric!(
    WORK_QUEUE_IN_FLIGHT,
    "zkrecipes.work_queue.in_flight",
    UpDownCounter,
    "{delivery}",
    ["path"],
    "Deliveries this client holds unsettled now"
);

// Leader election (LeaderElectionSupport) and the leader latch.
metric!(
    ELECTION_WAIT,
    "zkrecipes.election.wait.duration",
    Histogram,
    "s",
    ["path", "outcome"],
    "From joining an election to leading it or leaving it, by outcome (leader, cancelled, error)"
);
metric!(
    ELECTION_LEADERSHIP,
    "zkrecipes.election.leadership.duration",
    Histogram,
    "s",
    ["path"],
    "How long this client led"
);
metric!(
    ELECTION_LEADERS,
    "zkrecipes.election.leaders",
    UpDownCounter,
    "{leader}",
    ["path"],
    "1 while this client leads the election"
);
metric!(
    ELECTION_LOST,
    "zkrecipes.election.lost",
    Counter,
    "{term}",
    ["path"],
    "Leaderships lost without stepping down"
);
metric!(
    LATCH_WAIT,
    "zkrecipes.latch.wait.duration",
    Histogram,
    "s",
    ["path", "outcome"],
    "From joining a latch to leading it or leaving it, by outcome (leader, cancelled, error)"
);
metric!(
    LATCH_LEADERSHIP,
    "zkrecipes.latch.leadership.duration",
    Histogram,
    "s",
    ["path"],
    "How long this client's participant led the latch"
);
metric!(
    LATCH_LEADERS,
    "zkrecipes.latch.leaders",
    UpDownCounter,
    "{leader}",
    ["path"],
    "1 while a participant of this client leads the latch"
);
metric!(
    LATCH_LOST,
    "zkrecipes.latch.lost",
    Counter,
    "{term}",
    ["path"],
    "Leaderships lost without stepping down"
);

// Barriers.
metric!(BARRIER_WAIT, "zkrecipes.barrier.wait.duration", Histogram, "s", ["path", "kind", "outcome"],
    "How long a barrier wait took (kind single, enter or leave), by outcome (passed, timeout, cancelled, error)");
metric!(
    BARRIER_WAITERS,
    "zkrecipes.barrier.waiters",
    UpDownCounter,
    "{waiter}",
    ["path", "kind"],
    "Barrier waits of this client now"
);

// Caches, counters, group membership and persistent nodes.
metric!(
    CACHE_EVENTS,
    "zkrecipes.cache.events",
    Counter,
    "{event}",
    ["path", "type"],
    "Changes a cache saw, by type (added, updated, removed, initialized)"
);
metric!(
    CACHE_NODES,
    "zkrecipes.cache.nodes",
    UpDownCounter,
    "{node}",
    ["path"],
    "Nodes a cache holds now"
);
metric!(
    COUNTER_UPDATES,
    "zkrecipes.counter.updates",
    Counter,
    "{update}",
    ["path", "kind", "outcome"],
    "Counter updates (kind atomic_long or shared_count), by outcome (updated, conflict)"
);
metric!(NODE_RECREATIONS, "zkrecipes.node.recreations", Counter, "{node}", ["path", "kind"],
    "Persistent nodes and group members made again after they were gone (kind persistent_node, group_member or service_instance)");

/// The whole catalog, in the order snapshots and the Prometheus text list it.
pub const CATALOG: &[&Metric] = &[
    &SESSION_STATE_CHANGES,
    &REQUESTS,
    &LOCK_WAIT,
    &LOCK_ACQUISITIONS,
    &LOCK_WAITERS,
    &LOCK_HOLD,
    &LOCK_HOLDERS,
    &LOCK_LOST,
    &SEMAPHORE_WAIT,
    &SEMAPHORE_ACQUISITIONS,
    &SEMAPHORE_WAITERS,
    &SEMAPHORE_HOLD,
    &SEMAPHORE_HOLDERS,
    &SEMAPHORE_LOST,
    &QUEUE_OFFERS,
    &QUEUE_TAKE,
    &QUEUE_TAKES,
    &QUEUE_TAKERS,
    &WORK_QUEUE_OFFERS,
    &WORK_QUEUE_CONSUME,
    &WORK_QUEUE_CONSUMES,
    &WORK_QUEUE_CONSUMERS,
    &WORK_QUEUE_DELIVERIES,
    &WORK_QUEUE_REDELIVERIES,
    &WORK_QUEUE_SETTLED,
    &WORK_QUEUE_DEAD_LETTERS,
    &WORK_QUEUE_PROCESS,
    &WORK_QUEUE_IN_FLIGHT,
    &ELECTION_WAIT,
    &ELECTION_LEADERSHIP,
    &ELECTION_LEADERS,
    &ELECTION_LOST,
    &LATCH_WAIT,
    &LATCH_LEADERSHIP,
    &LATCH_LEADERS,
    &LATCH_LOST,
    &BARRIER_WAIT,
    &BARRIER_WAITERS,
    &CACHE_EVENTS,
    &CACHE_NODES,
    &COUNTER_UPDATES,
    &NODE_RECREATIONS,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_durations_are_histograms_in_seconds() {
        let mut names: Vec<_> = CATALOG.iter().map(|m| m.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), CATALOG.len());
        for metric in CATALOG {
            assert!(metric.name.starts_with("zkrecipes."), "{}", metric.name);
            let duration = metric.name.ends_with(".duration");
            assert_eq!(
                duration,
                metric.instrument == Instrument::Histogram,
                "{}",
                metric.name
            );
            assert_eq!(duration, metric.unit == "s", "{}", metric.name);
        }
        assert!(BUCKETS.windows(2).all(|w| w[0] < w[1]));
    }

    /// The table of `docs/observability.md`, as the catalog says it.
    fn table() -> String {
        let mut table = String::from(
            "| metric | instrument | unit | attributes | meaning |\n|---|---|---|---|---|\n",
        );
        for m in CATALOG {
            table.push_str(&format!(
                "| `{}` | {} | `{}` | {} | {} |\n",
                m.name,
                m.instrument.as_str(),
                m.unit,
                m.attributes
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                m.description
            ));
        }
        table
    }

    #[test]
    fn the_docs_list_the_catalog_as_it_is() {
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/observability.md"),
        )
        .expect("docs/observability.md");
        let start = docs
            .find("<!-- catalog -->\n")
            .expect("a <!-- catalog --> mark")
            + 17;
        let end = docs
            .find("<!-- /catalog -->")
            .expect("a <!-- /catalog --> mark");
        assert!(
            docs[start..end] == table(),
            "docs/observability.md's table differs from the catalog; it should read:\n{}",
            table()
        );
    }
}
