//! Service discovery for Node.js: `NativeServiceDiscovery`, `NativeServiceCache` and
//! `NativeServiceProvider`, which `lib/discovery.js` wraps. An instance crosses as
//! `ServiceInstanceFields` (what `ffi::InstanceFields` holds: the payload and another writer's
//! fields as JSON text), in both directions; every rule on them is the core's.

use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use zkrecipes::ffi::InstanceFields;
use zkrecipes::{
    DiscoveryEvent, ServiceCache, ServiceCacheEvent, ServiceDiscovery, ServiceInstance,
    ServiceProvider,
};

use crate::client::NativeClient;
use crate::errors::{promise, wait_ms, IntoJs};
use crate::latch::eager;
use crate::listener::{relay, relay_all, NativeSubscription};
use crate::promised::promised;

/// An instance's fields; `uri` is what its URI spec makes (ignored on the way in).
#[napi(object)]
pub struct ServiceInstanceFields {
    pub name: String,
    pub id: Option<String>,
    pub address: Option<String>,
    pub port: Option<i64>,
    pub ssl_port: Option<i64>,
    /// JSON text.
    pub payload: Option<String>,
    pub service_type: Option<String>,
    pub uri_spec: Option<String>,
    pub enabled: Option<bool>,
    pub registration_time_utc: Option<i64>,
    /// Another writer's fields, a JSON object's text.
    pub extra: Option<String>,
    pub uri: Option<String>,
}

fn fields(instance: &ServiceInstance) -> ServiceInstanceFields {
    let f = InstanceFields::of(instance);
    ServiceInstanceFields {
        name: f.name,
        id: f.id,
        address: f.address,
        // A port the core built is 0 to 65535.
        port: f.port.map(|port| port as i64),
        ssl_port: f.ssl_port.map(|port| port as i64),
        payload: f.payload,
        service_type: f.service_type,
        uri_spec: f.uri_spec,
        enabled: f.enabled,
        registration_time_utc: f.registration_time_utc,
        extra: f.extra,
        uri: instance.uri(),
    }
}

fn instance(env: &Env, f: ServiceInstanceFields) -> napi::Result<ServiceInstance> {
    InstanceFields {
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
    .build()
    .into_js(env)
}

fn all(instances: Vec<ServiceInstance>) -> Vec<ServiceInstanceFields> {
    instances.iter().map(fields).collect()
}

/// The instance a registrant's JSON describes.
#[napi]
pub fn service_instance_from_json(env: Env, json: Buffer) -> napi::Result<ServiceInstanceFields> {
    Ok(fields(&ServiceInstance::from_json(&json).into_js(&env)?))
}

/// The instance's JSON as Curator writes it, and its fields as the core completes them (`uri`).
#[napi]
pub fn service_instance_to_json(
    env: Env,
    instance_fields: ServiceInstanceFields,
) -> napi::Result<Buffer> {
    Ok(instance(&env, instance_fields)?.to_json().into())
}

/// The fields as the core reads them (its rules applied, `uri` filled).
#[napi]
pub fn service_instance_checked(
    env: Env,
    instance_fields: ServiceInstanceFields,
) -> napi::Result<ServiceInstanceFields> {
    Ok(fields(&instance(&env, instance_fields)?))
}

/// Spring Cloud Zookeeper's payload as JSON text, its metadata given as a JSON object's text.
#[napi]
pub fn spring_payload(
    env: Env,
    id: String,
    name: String,
    metadata: String,
) -> napi::Result<String> {
    zkrecipes::ffi::spring_payload(id, name, &metadata).into_js(&env)
}

pub type DiscoveryEventArgs = FnArgs<(String, String, String, Option<String>, Option<String>)>;
pub type DiscoveryCallback =
    ThreadsafeFunction<DiscoveryEventArgs, (), DiscoveryEventArgs, Status, false, true>;

/// `(type, service, id, errorCode, errorMessage)`.
fn discovery_event_args(event: DiscoveryEvent) -> DiscoveryEventArgs {
    let name = event.name().to_string();
    match event {
        DiscoveryEvent::Reregistered {
            name: service, id, ..
        } => (name, service, id, None, None),
        DiscoveryEvent::RegistrationStopped {
            name: service,
            id,
            error,
        } => (
            name,
            service,
            id,
            Some(error.code().as_str().to_string()),
            Some(error.message().to_string()),
        ),
    }
    .into()
}

pub type ServiceCacheEventArgs = FnArgs<(
    String,
    Option<ServiceInstanceFields>,
    Option<ServiceInstanceFields>,
)>;
pub type ServiceCacheCallback =
    ThreadsafeFunction<ServiceCacheEventArgs, (), ServiceCacheEventArgs, Status, false, true>;

/// `(type, instance, old)`: the instance of ADDED, CHANGED (the new one) and REMOVED, the old one
/// of CHANGED; `null` otherwise.
fn cache_event_args(event: ServiceCacheEvent) -> ServiceCacheEventArgs {
    let name = event.name().to_string();
    let (now, old) = match &event {
        ServiceCacheEvent::Added(i) | ServiceCacheEvent::Removed(i) => (Some(fields(i)), None),
        ServiceCacheEvent::Changed { old, new } => (Some(fields(new)), Some(fields(old))),
        _ => (None, None),
    };
    (name, now, old).into()
}

#[napi]
pub struct NativeServiceDiscovery {
    inner: ServiceDiscovery,
}

#[napi]
impl NativeServiceDiscovery {
    #[napi(constructor)]
    pub fn new(env: &Env, client: &NativeClient, base_path: String) -> napi::Result<Self> {
        Ok(NativeServiceDiscovery {
            inner: ServiceDiscovery::new(&client.inner, &base_path).into_js(env)?,
        })
    }

    #[napi]
    pub fn base_path(&self) -> String {
        self.inner.base_path().to_string()
    }

    /// Resolves with the instance as registered once its node exists; takes effect at the call
    /// (the registry keeps it until `close`).
    #[napi(ts_return_type = "Promise<ServiceInstanceFields>")]
    pub fn register<'env>(
        &self,
        env: &'env Env,
        instance_fields: ServiceInstanceFields,
    ) -> napi::Result<PromiseRaw<'env, ServiceInstanceFields>> {
        let registered = instance(env, instance_fields)?;
        let registry = self.inner.clone();
        promise(
            env,
            eager(async move {
                registry.register(registered.clone()).await?;
                Ok(registered)
            }),
            |registered| fields(&registered),
        )
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub fn update<'env>(
        &self,
        env: &'env Env,
        instance_fields: ServiceInstanceFields,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        let updated = instance(env, instance_fields)?;
        let registry = self.inner.clone();
        promise(env, async move { registry.update(updated).await }, |()| ())
    }

    /// Resolves once the instance's node is deleted, confirmed; takes effect at the call.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn unregister<'env>(
        &self,
        env: &'env Env,
        name: String,
        id: String,
    ) -> napi::Result<PromiseRaw<'env, ()>> {
        let registry = self.inner.clone();
        promise(
            env,
            eager(async move { registry.unregister(&name, &id).await }),
            |()| (),
        )
    }

    #[napi]
    pub fn registered(&self) -> Vec<ServiceInstanceFields> {
        all(self.inner.registered())
    }

    #[napi]
    pub fn service_cache(&self, env: &Env, name: String) -> napi::Result<NativeServiceCache> {
        Ok(NativeServiceCache {
            inner: self.inner.service_cache(&name).into_js(env)?,
        })
    }

    #[napi]
    pub fn service_provider(
        &self,
        env: &Env,
        name: String,
        strategy: Option<String>,
        down_timeout_ms: Option<f64>,
        down_errors: Option<i64>,
    ) -> napi::Result<NativeServiceProvider> {
        let strategy = zkrecipes::ffi::provider_strategy(strategy.as_deref()).into_js(env)?;
        let policy = zkrecipes::ffi::down_policy(down_timeout_ms, down_errors).into_js(env)?;
        Ok(NativeServiceProvider {
            inner: self
                .inner
                .service_provider(&name, strategy, policy)
                .into_js(env)?,
        })
    }

    /// Resolves once every instance is unregistered; takes effect at the call.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let registry = self.inner.clone();
        promise(env, eager(async move { registry.close().await }), |()| ())
    }

    /// `callback(type, service, id, errorCode, errorMessage)` for every registration event.
    #[napi(
        ts_args_type = "callback: (type: string, service: string, id: string, errorCode: string | null, errorMessage: string | null) => void"
    )]
    pub fn subscribe(&self, callback: DiscoveryCallback) -> NativeSubscription {
        relay(self.inner.subscribe(), callback, discovery_event_args)
    }
}

promised! {
    impl NativeServiceDiscovery {
        fn query_for_names(env) -> "Promise<string[]>" Vec<String> {
        } |registry| registry.query_for_names(), |names| names;
        fn query_for_instances(env, name: String) -> "Promise<ServiceInstanceFields[]>" Vec<ServiceInstanceFields> {
        } |registry| async move { registry.query_for_instances(&name).await }, all;
        fn query_for_instance(env, name: String, id: String) -> "Promise<ServiceInstanceFields | null>" Option<ServiceInstanceFields> {
        } |registry| async move { registry.query_for_instance(&name, &id).await }, |found: Option<ServiceInstance>| found.as_ref().map(fields);
    }
}

#[napi]
pub struct NativeServiceCache {
    inner: ServiceCache,
}

#[napi]
impl NativeServiceCache {
    #[napi]
    pub fn name(&self) -> String {
        self.inner.name().to_string()
    }

    /// Resolves once the instances are loaded; takes effect at the call.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let cache = self.inner.clone();
        promise(env, eager(async move { cache.start().await }), |()| ())
    }

    #[napi]
    pub fn instances(&self) -> Vec<ServiceInstanceFields> {
        all(self.inner.instances())
    }

    #[napi]
    pub fn close(&self) {
        self.inner.close();
    }

    /// `callback(type, instance, old)` for every event from now on, in order.
    #[napi(
        ts_args_type = "callback: (type: string, instance: ServiceInstanceFields | null, old: ServiceInstanceFields | null) => void"
    )]
    pub fn subscribe(&self, callback: ServiceCacheCallback) -> NativeSubscription {
        relay_all(self.inner.subscribe(), callback, cache_event_args)
    }
}

promised! {
    impl NativeServiceCache {
        // Resolves once the first load is in; rejects with TIMEOUT after `timeoutMs`.
        fn await_initialized(env, timeout_ms: Option<f64>) -> "Promise<void>" () {
            let limit = wait_ms(env, timeout_ms)?.timeout();
        } |cache| cache.await_initialized(limit), |()| ();
    }
}

#[napi]
pub struct NativeServiceProvider {
    inner: ServiceProvider,
}

#[napi]
impl NativeServiceProvider {
    /// Resolves once its cache is loaded; takes effect at the call.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn start<'env>(&self, env: &'env Env) -> napi::Result<PromiseRaw<'env, ()>> {
        let provider = self.inner.clone();
        promise(env, eager(async move { provider.start().await }), |()| ())
    }

    #[napi]
    pub fn get_instance(&self) -> Option<ServiceInstanceFields> {
        self.inner.get_instance().as_ref().map(fields)
    }

    #[napi]
    pub fn get_all_instances(&self) -> Vec<ServiceInstanceFields> {
        all(self.inner.get_all_instances())
    }

    #[napi]
    pub fn note_error(
        &self,
        env: &Env,
        instance_fields: ServiceInstanceFields,
    ) -> napi::Result<()> {
        self.inner.note_error(&instance(env, instance_fields)?);
        Ok(())
    }

    #[napi]
    pub fn strategy(&self) -> String {
        self.inner.strategy().name().to_string()
    }

    #[napi]
    pub fn close(&self) {
        self.inner.close();
    }
}
