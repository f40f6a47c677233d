//! Service discovery (Curator's `ServiceDiscovery`, `ServiceCache`, `ServiceProvider`). An
//! instance crosses as `NativeServiceInstance` (what `ffi::InstanceFields` holds, plus the URI its
//! spec makes), in both directions; every rule on its fields is the core's.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::broadcast::Receiver;
use zkrecipes::ffi::{begun, EventStream, InstanceFields};
use zkrecipes::{
    DiscoveryEvent, ServiceCache, ServiceCacheEvent, ServiceCacheEvents, ServiceDiscovery,
    ServiceInstance, ServiceProvider, SpringPayload,
};

use crate::client::NativeClient;
use crate::errors::Result;
use crate::tasks::run;

/// An instance's fields; `uri` is what its URI spec makes (ignored on the way in).
#[derive(uniffi::Record)]
pub struct NativeServiceInstance {
    pub name: String,
    pub id: Option<String>,
    pub address: Option<String>,
    pub port: Option<i64>,
    pub ssl_port: Option<i64>,
    /// JSON text.
    pub payload: Option<String>,
    pub registration_time_utc: Option<i64>,
    pub service_type: Option<String>,
    pub uri_spec: Option<String>,
    pub enabled: Option<bool>,
    /// Another writer's fields, a JSON object's text.
    pub extra: Option<String>,
    pub uri: Option<String>,
}

fn fields(instance: &ServiceInstance) -> NativeServiceInstance {
    let f = InstanceFields::of(instance);
    NativeServiceInstance {
        name: f.name,
        id: f.id,
        address: f.address,
        // A port the core built is 0 to 65535.
        port: f.port.map(|port| port as i64),
        ssl_port: f.ssl_port.map(|port| port as i64),
        payload: f.payload,
        registration_time_utc: f.registration_time_utc,
        service_type: f.service_type,
        uri_spec: f.uri_spec,
        enabled: f.enabled,
        extra: f.extra,
        uri: instance.uri(),
    }
}

fn instance(f: NativeServiceInstance) -> Result<ServiceInstance> {
    Ok(InstanceFields {
        name: f.name,
        id: f.id,
        address: f.address,
        port: f.port.map(i128::from),
        ssl_port: f.ssl_port.map(i128::from),
        payload: f.payload,
        service_type: f.service_type,
        uri_spec: f.uri_spec,
        enabled: f.enabled,
        registration_time_utc: f.registration_time_utc,
        extra: f.extra,
    }
    .build()?)
}

fn all(instances: &[ServiceInstance]) -> Vec<NativeServiceInstance> {
    instances.iter().map(fields).collect()
}

/// The instance the fields make, completed by the core (an id, a registration time).
#[uniffi::export]
pub fn service_instance_build(
    fields_given: NativeServiceInstance,
) -> Result<NativeServiceInstance> {
    Ok(fields(&instance(fields_given)?))
}

/// The instance Curator's JSON describes.
#[uniffi::export]
pub fn service_instance_from_json(json: Vec<u8>) -> Result<NativeServiceInstance> {
    Ok(fields(&ServiceInstance::from_json(&json)?))
}

/// The instance's JSON, as Curator writes it.
#[uniffi::export]
pub fn service_instance_to_json(fields_given: NativeServiceInstance) -> Result<Vec<u8>> {
    Ok(instance(fields_given)?.to_json())
}

/// Spring Cloud Zookeeper's payload as JSON text.
#[uniffi::export]
pub fn spring_payload(id: String, name: String, metadata: HashMap<String, String>) -> String {
    let metadata = metadata.into_iter().collect();
    SpringPayload { id, name, metadata }.to_value().to_string()
}

/// The core's names, in its order (the Kotlin enums are tested against them): 0 discovery
/// events, 1 service cache events, 2 service types, 3 provider strategies.
#[uniffi::export]
pub fn discovery_names(list: u32) -> Vec<String> {
    let names: Vec<&str> = match list {
        0 => DiscoveryEvent::names(),
        1 => ServiceCacheEvent::names(),
        2 => zkrecipes::ServiceType::ALL
            .iter()
            .map(|t| t.name())
            .collect(),
        _ => zkrecipes::ProviderStrategy::ALL
            .iter()
            .map(|s| s.name())
            .collect(),
    };
    names.into_iter().map(String::from).collect()
}

#[derive(uniffi::Object)]
pub struct NativeServiceDiscovery {
    registry: ServiceDiscovery,
    client: zkrecipes::Client,
}

#[uniffi::export]
impl NativeServiceDiscovery {
    #[uniffi::constructor]
    pub fn new(client: &NativeClient, base_path: String) -> Result<Arc<Self>> {
        Ok(Arc::new(NativeServiceDiscovery {
            registry: ServiceDiscovery::new(&client.inner, &base_path)?,
            client: client.inner.clone(),
        }))
    }

    pub fn base_path(&self) -> String {
        self.registry.base_path().to_string()
    }

    /// The instance registered; a cancelled call leaves the registration to this object.
    pub async fn register(&self, given: NativeServiceInstance) -> Result<NativeServiceInstance> {
        let registry = self.registry.clone();
        let instance = instance(given)?;
        run(begun(async move {
            registry.register(instance.clone()).await?;
            Ok(fields(&instance))
        }))
        .await
    }

    pub async fn update(&self, given: NativeServiceInstance) -> Result<()> {
        let registry = self.registry.clone();
        let instance = instance(given)?;
        run(async move { registry.update(instance).await }).await
    }

    pub async fn unregister(&self, name: String, id: String) -> Result<()> {
        let registry = self.registry.clone();
        run(begun(async move { registry.unregister(&name, &id).await })).await
    }

    pub fn registered(&self) -> Vec<NativeServiceInstance> {
        all(&self.registry.registered())
    }

    pub async fn query_for_names(&self) -> Result<Vec<String>> {
        let registry = self.registry.clone();
        run(async move { registry.query_for_names().await }).await
    }

    pub async fn query_for_instances(&self, name: String) -> Result<Vec<NativeServiceInstance>> {
        let registry = self.registry.clone();
        run(async move { Ok(all(&registry.query_for_instances(&name).await?)) }).await
    }

    pub async fn query_for_instance(
        &self,
        name: String,
        id: String,
    ) -> Result<Option<NativeServiceInstance>> {
        let registry = self.registry.clone();
        run(async move {
            let found = registry.query_for_instance(&name, &id).await?;
            Ok(found.as_ref().map(fields))
        })
        .await
    }

    pub fn service_cache(&self, name: String) -> Result<Arc<NativeServiceCache>> {
        Ok(Arc::new(NativeServiceCache {
            cache: self.registry.service_cache(&name)?,
            client: self.client.clone(),
        }))
    }

    /// `strategy` `None`: round robin; the policy's parts `None`: Curator's defaults.
    pub fn service_provider(
        &self,
        name: String,
        strategy: Option<String>,
        down_timeout_ms: Option<f64>,
        down_errors: Option<i64>,
    ) -> Result<Arc<NativeServiceProvider>> {
        let strategy = zkrecipes::ffi::provider_strategy(strategy.as_deref())?;
        let policy = zkrecipes::ffi::down_policy(down_timeout_ms, down_errors)?;
        Ok(Arc::new(NativeServiceProvider {
            provider: self.registry.service_provider(&name, strategy, policy)?,
        }))
    }

    pub fn events(&self) -> Arc<NativeDiscoveryEvents> {
        Arc::new(NativeDiscoveryEvents {
            source: tokio::sync::Mutex::new(self.registry.subscribe()),
            client: self.client.clone(),
        })
    }

    /// Unregisters every instance (confirmed) and closes this object's caches.
    pub async fn close_async(&self) -> Result<()> {
        let registry = self.registry.clone();
        run(begun(async move { registry.close().await })).await
    }

    /// `close_async()` for a thread that may block (its error is dropped: the instances are no
    /// longer kept either way, and a DYNAMIC one goes with its session).
    pub fn close_blocking(&self) {
        let registry = self.registry.clone();
        crate::tasks::block(async move {
            let _ = registry.close().await;
        });
    }
}

/// A registration's event: `REREGISTERED` or `REGISTRATION_STOPPED` (with the reason).
#[derive(uniffi::Record)]
pub struct NativeDiscoveryEvent {
    pub name: String,
    pub service: String,
    pub id: String,
    pub reason_code: Option<String>,
    pub reason: Option<String>,
}

fn discovery_event(event: DiscoveryEvent) -> NativeDiscoveryEvent {
    let name = event.name().to_string();
    match event {
        DiscoveryEvent::Reregistered {
            name: service, id, ..
        } => NativeDiscoveryEvent {
            name,
            service,
            id,
            reason_code: None,
            reason: None,
        },
        DiscoveryEvent::RegistrationStopped {
            name: service,
            id,
            error,
        } => NativeDiscoveryEvent {
            name,
            service,
            id,
            reason_code: Some(error.code().as_str().to_string()),
            reason: Some(error.message().to_string()),
        },
    }
}

/// A registry's events as Kotlin collects them; the stream ends with the client.
#[derive(uniffi::Object)]
pub struct NativeDiscoveryEvents {
    source: tokio::sync::Mutex<Receiver<DiscoveryEvent>>,
    client: zkrecipes::Client,
}

#[uniffi::export]
impl NativeDiscoveryEvents {
    pub async fn next(&self) -> Option<NativeDiscoveryEvent> {
        let mut source = self.source.lock().await;
        crate::events::recv(&mut source, self.client.closed(), discovery_event).await
    }
}

#[derive(uniffi::Object)]
pub struct NativeServiceCache {
    cache: ServiceCache,
    client: zkrecipes::Client,
}

#[uniffi::export]
impl NativeServiceCache {
    pub fn name(&self) -> String {
        self.cache.name().to_string()
    }

    /// Returns once the first load is in; a cancelled call leaves the cache going.
    pub async fn start(&self) -> Result<()> {
        let cache = self.cache.clone();
        run(begun(async move { cache.start().await })).await
    }

    pub fn instances(&self) -> Vec<NativeServiceInstance> {
        all(&self.cache.instances())
    }

    pub fn events(&self) -> Arc<NativeServiceCacheEvents> {
        Arc::new(NativeServiceCacheEvents {
            source: tokio::sync::Mutex::new(self.cache.subscribe()),
            client: self.client.clone(),
        })
    }

    /// Stops following; the event flows end. (Not `close`: uniffi's objects have one.)
    pub fn end(&self) {
        self.cache.close();
    }
}

/// One event of a service cache: the instance of `ADDED`, `CHANGED` (the new one) and
/// `REMOVED`, the old one of `CHANGED`.
#[derive(uniffi::Record)]
pub struct NativeServiceCacheEvent {
    pub name: String,
    pub instance: Option<NativeServiceInstance>,
    pub old: Option<NativeServiceInstance>,
}

fn cache_event(event: ServiceCacheEvent) -> NativeServiceCacheEvent {
    let name = event.name().to_string();
    let (instance, old) = match &event {
        ServiceCacheEvent::Added(i) | ServiceCacheEvent::Removed(i) => (Some(fields(i)), None),
        ServiceCacheEvent::Changed { old, new } => (Some(fields(new)), Some(fields(old))),
        _ => (None, None),
    };
    NativeServiceCacheEvent {
        name,
        instance,
        old,
    }
}

/// A service cache's events: none dropped; the stream ends with the cache or its client.
#[derive(uniffi::Object)]
pub struct NativeServiceCacheEvents {
    source: tokio::sync::Mutex<ServiceCacheEvents>,
    client: zkrecipes::Client,
}

#[uniffi::export]
impl NativeServiceCacheEvents {
    pub async fn next(&self) -> Option<NativeServiceCacheEvent> {
        let mut events = self.source.lock().await;
        tokio::select! {
            biased;
            event = events.next_event() => event.map(cache_event),
            () = self.client.closed() => events.try_recv().map(cache_event),
        }
    }
}

#[derive(uniffi::Object)]
pub struct NativeServiceProvider {
    provider: ServiceProvider,
}

#[uniffi::export]
impl NativeServiceProvider {
    pub async fn start(&self) -> Result<()> {
        let provider = self.provider.clone();
        run(begun(async move { provider.start().await })).await
    }

    pub fn get_instance(&self) -> Option<NativeServiceInstance> {
        self.provider.get_instance().as_ref().map(fields)
    }

    pub fn get_all_instances(&self) -> Vec<NativeServiceInstance> {
        all(&self.provider.get_all_instances())
    }

    pub fn note_error(&self, given: NativeServiceInstance) -> Result<()> {
        self.provider.note_error(&instance(given)?);
        Ok(())
    }

    pub fn strategy(&self) -> String {
        self.provider.strategy().name().to_string()
    }

    /// The down-instance policy: its timeout in milliseconds, then its error threshold.
    pub fn policy(&self) -> Vec<u64> {
        let policy = self.provider.policy();
        vec![
            zkrecipes::ffi::millis(policy.timeout),
            u64::from(policy.error_threshold),
        ]
    }

    pub fn end(&self) {
        self.provider.close();
    }
}
