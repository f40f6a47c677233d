//! Choosing an instance to call (Curator's `ServiceProvider`): from a service cache's instances,
//! the enabled ones not taken down by their errors, by a strategy.
//!
//! Down instances (Curator's `DownInstancePolicy`): `note_error` counts a caller's failures with
//! an instance; `error_threshold` of them within `timeout` of the first take it down for
//! `timeout`, after which it is chosen again. The counts are this provider's own, in memory.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::cache::ServiceCache;
use super::instance::ServiceInstance;
use crate::error::{Error, Result};

/// How a provider chooses among the instances it may choose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProviderStrategy {
    /// Each in turn, in id order: n calls over n instances reach each once.
    RoundRobin,
    /// Any, uniformly.
    Random,
    /// The same instance while it may be chosen; then the next in turn.
    Sticky,
}

impl ProviderStrategy {
    pub const ALL: [ProviderStrategy; 3] = [
        ProviderStrategy::RoundRobin,
        ProviderStrategy::Random,
        ProviderStrategy::Sticky,
    ];

    /// The name in every language: `ROUND_ROBIN`, `RANDOM`, `STICKY`.
    pub fn name(self) -> &'static str {
        match self {
            ProviderStrategy::RoundRobin => "ROUND_ROBIN",
            ProviderStrategy::Random => "RANDOM",
            ProviderStrategy::Sticky => "STICKY",
        }
    }

    /// The strategy named `name` (any case, `-` for `_`); `INVALID_ARGUMENT` naming the three.
    pub fn parse(name: &str) -> Result<ProviderStrategy> {
        let wanted = name.replace('-', "_");
        ProviderStrategy::ALL
            .into_iter()
            .find(|strategy| strategy.name().eq_ignore_ascii_case(&wanted))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "a provider strategy is ROUND_ROBIN, RANDOM or STICKY (got {name:?})"
                ))
            })
    }
}

/// When an instance is taken down by its errors, and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DownInstancePolicy {
    pub timeout: Duration,
    pub error_threshold: u32,
}

impl Default for DownInstancePolicy {
    /// Curator's: 2 errors within 30 s take an instance down for 30 s.
    fn default() -> Self {
        DownInstancePolicy {
            timeout: Duration::from_secs(30),
            error_threshold: 2,
        }
    }
}

impl DownInstancePolicy {
    /// `INVALID_ARGUMENT` for a threshold of 0 or a timeout of 0.
    pub fn new(timeout: Duration, error_threshold: u32) -> Result<DownInstancePolicy> {
        if error_threshold == 0 {
            return Err(Error::invalid_argument(
                "error_threshold is at least 1 (the errors that take an instance down)",
            ));
        }
        if timeout.is_zero() {
            return Err(Error::invalid_argument(
                "a down instance policy's timeout is more than 0",
            ));
        }
        Ok(DownInstancePolicy {
            timeout,
            error_threshold,
        })
    }
}

#[derive(Clone)]
pub struct ServiceProvider {
    inner: Arc<Inner>,
}

struct Inner {
    cache: ServiceCache,
    strategy: ProviderStrategy,
    policy: DownInstancePolicy,
    turn: AtomicUsize,
    /// The sticky strategy's instance, by id.
    stuck: Mutex<Option<String>>,
    errors: Mutex<HashMap<String, Errors>>,
}

/// One instance's errors within the current window.
struct Errors {
    since: Instant,
    count: u32,
    down_until: Option<Instant>,
}

impl ServiceProvider {
    pub(super) fn new(
        cache: ServiceCache,
        strategy: ProviderStrategy,
        policy: DownInstancePolicy,
    ) -> ServiceProvider {
        ServiceProvider {
            inner: Arc::new(Inner {
                cache,
                strategy,
                policy,
                turn: AtomicUsize::new(0),
                stuck: Mutex::new(None),
                errors: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Starts its cache and returns once the instances are loaded.
    pub async fn start(&self) -> Result<()> {
        self.inner.cache.start().await
    }

    pub fn strategy(&self) -> ProviderStrategy {
        self.inner.strategy
    }

    pub fn policy(&self) -> DownInstancePolicy {
        self.inner.policy
    }

    /// The instance to call, `None` if no instance may be chosen (none registered, or every one
    /// disabled or down).
    pub fn get_instance(&self) -> Option<ServiceInstance> {
        let now = Instant::now();
        let candidates: Vec<ServiceInstance> = {
            let errors = self.inner.errors.lock().unwrap();
            let instances = self.inner.cache.instances();
            instances
                .into_iter()
                .filter(|instance| instance.enabled && !is_down(&errors, &instance.id, now))
                .collect()
        };
        if candidates.is_empty() {
            return None;
        }
        let next_in_turn = || self.inner.turn.fetch_add(1, Ordering::Relaxed) % candidates.len();
        let chosen = match self.inner.strategy {
            ProviderStrategy::RoundRobin => next_in_turn(),
            ProviderStrategy::Random => fastrand::usize(..candidates.len()),
            ProviderStrategy::Sticky => {
                let mut stuck = self.inner.stuck.lock().unwrap();
                let still = stuck
                    .as_ref()
                    .and_then(|id| candidates.iter().position(|c| &c.id == id));
                let chosen = still.unwrap_or_else(next_in_turn);
                *stuck = Some(candidates[chosen].id.clone());
                chosen
            }
        };
        candidates.into_iter().nth(chosen)
    }

    /// Every instance of the service, disabled and down ones included.
    pub fn get_all_instances(&self) -> Vec<ServiceInstance> {
        self.inner.cache.instances()
    }

    /// A call to `instance` failed: counted toward taking it down (the module's docs).
    pub fn note_error(&self, instance: &ServiceInstance) {
        let now = Instant::now();
        let policy = self.inner.policy;
        let mut errors = self.inner.errors.lock().unwrap();
        errors.retain(|_, errors| {
            now.duration_since(errors.since) < policy.timeout
                || errors.down_until.is_some_and(|until| until > now)
        });
        let entry = errors.entry(instance.id.clone()).or_insert(Errors {
            since: now,
            count: 0,
            down_until: None,
        });
        if now.duration_since(entry.since) >= policy.timeout {
            entry.since = now;
            entry.count = 0;
        }
        entry.count += 1;
        if entry.count >= policy.error_threshold {
            entry.down_until = Some(now + policy.timeout);
            entry.since = now;
            entry.count = 0;
        }
    }

    /// Stops its cache. Idempotent.
    pub fn close(&self) {
        self.inner.cache.close();
    }
}

fn is_down(errors: &HashMap<String, Errors>, id: &str, now: Instant) -> bool {
    errors
        .get(id)
        .and_then(|errors| errors.down_until)
        .is_some_and(|until| until > now)
}

impl std::fmt::Debug for ServiceProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceProvider")
            .field("service", &self.inner.cache.name())
            .field("strategy", &self.inner.strategy)
            .finish()
    }
}
