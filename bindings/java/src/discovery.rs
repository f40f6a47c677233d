//! Service discovery for Java: `ServiceDiscovery`, `ServiceCache` and `ServiceProvider`
//! (Curator's names).
//!
//! An instance crosses as its fields (what `ffi::InstanceFields` holds, in its order, then the
//! URI its spec makes): to the native side as a `String[]` (numbers as decimal text, `null` for
//! none), back to Java packed (`pack_instance`: each field a 4-byte big-endian length then its
//! UTF-8, a length of -1 for none; `ServiceInstance.read` reads them). Every rule on the fields
//! is the core's (`InstanceFields::build`).

use std::collections::BTreeMap;

use jni::objects::{JByteArray, JObject, JObjectArray, JString};
use jni::refs::Global;
use jni::Env;
use zkrecipes::ffi::InstanceFields;
use zkrecipes::{
    DiscoveryEvent, Error, ErrorCode, ServiceCache, ServiceCacheEvent, ServiceDiscovery,
    ServiceInstance, ServiceProvider, SpringPayload,
};

use crate::callbacks::{self, Value};
use crate::export::export;
use crate::handles::{borrow, export_free, into_handle};
use crate::strings::{optional_string, string, strings};
use crate::{listener, tasks};

/// How many fields Java sends (`ServiceInstance.fields`): the core's, without the URI.
const FIELDS: usize = 11;

fn pack_field(bytes: &mut Vec<u8>, field: Option<&str>) {
    match field {
        Some(text) => {
            bytes.extend_from_slice(&(text.len() as u32).to_be_bytes());
            bytes.extend_from_slice(text.as_bytes());
        }
        None => bytes.extend_from_slice(&(-1i32).to_be_bytes()),
    }
}

/// One instance's fields, packed; instances of a list follow one another.
fn pack_instance(bytes: &mut Vec<u8>, instance: &ServiceInstance) {
    let f = InstanceFields::of(instance);
    let number = |n: Option<i128>| n.map(|n| n.to_string());
    let fields = [
        Some(f.name),
        f.id,
        f.address,
        number(f.port),
        number(f.ssl_port),
        f.payload,
        f.registration_time_utc.map(|t| t.to_string()),
        f.service_type,
        f.uri_spec,
        f.enabled.map(|enabled| enabled.to_string()),
        f.extra,
        instance.uri(),
    ];
    for field in &fields {
        pack_field(bytes, field.as_deref());
    }
}

fn packed_instances<'a>(instances: impl IntoIterator<Item = &'a ServiceInstance>) -> Vec<u8> {
    let mut bytes = Vec::new();
    for instance in instances {
        pack_instance(&mut bytes, instance);
    }
    bytes
}

fn packed_instance(instance: &ServiceInstance) -> Vec<u8> {
    packed_instances([instance])
}

/// A number Java wrote as decimal text (it never writes anything else).
fn number<N: std::str::FromStr>(what: &str, text: Option<String>) -> zkrecipes::Result<Option<N>> {
    text.map(|text| {
        text.parse().map_err(|_| {
            Error::new(
                ErrorCode::InvalidArgument,
                format!("{what} is a whole number, got {text:?}"),
            )
        })
    })
    .transpose()
}

/// The instance Java's fields describe, every rule applied by the core.
fn instance_of(
    env: &mut Env<'_>,
    fields: &JObjectArray<'_, JString<'_>>,
) -> crate::errors::Result<ServiceInstance> {
    let fields = strings(env, fields)?;
    let Ok(fields) = <[Option<String>; FIELDS]>::try_from(fields) else {
        return Err(Error::new(ErrorCode::Internal, "an instance crosses as 11 fields").into());
    };
    let [name, id, address, port, ssl_port, payload, time, service_type, uri_spec, enabled, extra] =
        fields;
    let name = name.ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidArgument,
            "a service instance needs a name",
        )
    })?;
    Ok(InstanceFields {
        name,
        id,
        address,
        port: number("port", port)?,
        ssl_port: number("ssl_port", ssl_port)?,
        payload,
        service_type,
        uri_spec,
        enabled: enabled.map(|enabled| enabled == "true"),
        registration_time_utc: number("registration_time_utc", time)?,
        extra,
    }
    .build()?)
}

fn bytes<'l>(env: &mut Env<'l>, bytes: &[u8]) -> crate::errors::Result<JByteArray<'l>> {
    Ok(env.byte_array_from_slice(bytes)?)
}

export! {
    /// The instance the fields make, as the core completed it (an id, a registration time),
    /// packed; `INVALID_ARGUMENT` naming what is wrong.
    fn Java_io_zkrecipes_Native_serviceInstanceBuild<'l>(env; fields: JObjectArray<'l, JString<'l>>) -> JByteArray<'l> {
        let instance = instance_of(env, &fields)?;
        bytes(env, &packed_instance(&instance))
    }
}

export! {
    /// The instance Curator's JSON describes, packed.
    fn Java_io_zkrecipes_Native_serviceInstanceFromJson<'l>(env; json: JByteArray<'l>) -> JByteArray<'l> {
        let json = env.convert_byte_array(&json)?;
        let instance = ServiceInstance::from_json(&json)?;
        bytes(env, &packed_instance(&instance))
    }
}

export! {
    /// The instance's JSON, as Curator writes it.
    fn Java_io_zkrecipes_Native_serviceInstanceToJson<'l>(env; fields: JObjectArray<'l, JString<'l>>) -> JByteArray<'l> {
        let json = instance_of(env, &fields)?.to_json();
        bytes(env, &json)
    }
}

export! {
    /// Spring Cloud Zookeeper's payload as JSON text; `metadata` keys and values one after the
    /// other.
    fn Java_io_zkrecipes_Native_springPayload<'l>(env; id: JString<'l>, name: JString<'l>, metadata: JObjectArray<'l, JString<'l>>) -> JString<'l> {
        let id = string(env, &id)?;
        let name = string(env, &name)?;
        let pairs = strings(env, &metadata)?;
        let mut metadata = BTreeMap::new();
        for pair in pairs.chunks(2) {
            if let [Some(key), Some(value)] = pair {
                metadata.insert(key.clone(), value.clone());
            } else {
                return Err(Error::new(ErrorCode::InvalidArgument, "Spring's metadata has no null key or value").into());
            }
        }
        let payload = SpringPayload { id, name, metadata }.to_value().to_string();
        Ok(env.new_string(payload)?)
    }
}

export! {
    fn Java_io_zkrecipes_Native_serviceDiscoveryNew<'l>(env; client: i64, base_path: JString<'l>) -> i64 {
        let base = string(env, &base_path)?;
        let client = unsafe { borrow::<zkrecipes::Client>(client) }?;
        Ok(into_handle(ServiceDiscovery::new(client, &base)?))
    }
}

export_free!(
    Java_io_zkrecipes_Native_serviceDiscoveryFree,
    ServiceDiscovery
);

export! {
    /// `op`: 0 register `fields` (completes with the instance registered, packed), 1 update
    /// `fields`, 2 unregister `name`'s `id`, 3 close, 4 query the names (packed as fields), 5
    /// query `name`'s instances (packed), 6 query `name`'s `id` (packed, or null).
    fn Java_io_zkrecipes_Native_serviceDiscoveryCall<'l>(env; handle: i64, op: i32, fields: JObjectArray<'l, JString<'l>>, name: JString<'l>, id: JString<'l>, future: JObject<'l>) -> i64 {
        let instance = if fields.is_null() { None } else { Some(instance_of(env, &fields)?) };
        let name = optional_string(env, &name)?.unwrap_or_default();
        let id = optional_string(env, &id)?.unwrap_or_default();
        let (registry, future) = tasks::target::<ServiceDiscovery>(env, handle, &future)?;
        let given = move || {
            instance.ok_or_else(|| Error::new(ErrorCode::Internal, "no instance given"))
        };
        Ok(match op {
            0 => {
                let instance = given()?;
                tasks::spawn(
                    future,
                    tasks::started(zkrecipes::ffi::begun(async move {
                        registry.register(instance.clone()).await?;
                        Ok(packed_instance(&instance))
                    })),
                    Value::Bytes,
                )
            }
            1 => {
                let instance = given()?;
                tasks::spawn(future, move || async move { registry.update(instance).await }, |()| Value::Null)
            }
            2 => tasks::spawn(
                future,
                tasks::started(zkrecipes::ffi::begun(async move { registry.unregister(&name, &id).await })),
                |()| Value::Null,
            ),
            3 => tasks::spawn(
                future,
                tasks::started(zkrecipes::ffi::begun(async move { registry.close().await })),
                |()| Value::Null,
            ),
            4 => tasks::spawn(
                future,
                move || async move { registry.query_for_names().await },
                |names: Vec<String>| Value::Bytes(callbacks::packed(names.iter().map(String::as_bytes))),
            ),
            5 => tasks::spawn(
                future,
                move || async move { registry.query_for_instances(&name).await },
                |instances: Vec<ServiceInstance>| Value::Bytes(packed_instances(&instances)),
            ),
            _ => tasks::spawn(
                future,
                move || async move { registry.query_for_instance(&name, &id).await },
                |instance: Option<ServiceInstance>| instance.map_or(Value::Null, |i| Value::Bytes(packed_instance(&i))),
            ),
        })
    }
}

export! {
    /// The instances this object keeps registered, packed.
    fn Java_io_zkrecipes_Native_serviceDiscoveryRegistered<'l>(env; handle: i64) -> JByteArray<'l> {
        let registered = unsafe { borrow::<ServiceDiscovery>(handle) }?.registered();
        bytes(env, &packed_instances(&registered))
    }
}

/// A registration's event for `Native.cacheEvent`: the service, the id, then (for
/// `REGISTRATION_STOPPED`) the error's code index and message, packed as fields.
fn discovery_event(sink: &Global<JObject<'static>>, event: DiscoveryEvent) {
    let mut packed = Vec::new();
    let name = event.name();
    match &event {
        DiscoveryEvent::Reregistered { name, id, .. } => {
            pack_field(&mut packed, Some(name));
            pack_field(&mut packed, Some(id));
        }
        DiscoveryEvent::RegistrationStopped { name, id, error } => {
            pack_field(&mut packed, Some(name));
            pack_field(&mut packed, Some(id));
            pack_field(&mut packed, Some(&callbacks::code_index(error).to_string()));
            pack_field(&mut packed, Some(error.message()));
        }
    }
    callbacks::data_event(sink, name, &packed);
}

export! {
    fn Java_io_zkrecipes_Native_serviceDiscoverySubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let events = unsafe { borrow::<ServiceDiscovery>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward_with(events, sink, discovery_event))
    }
}

export! {
    fn Java_io_zkrecipes_Native_serviceCacheNew<'l>(env; registry: i64, name: JString<'l>) -> i64 {
        let name = string(env, &name)?;
        let registry = unsafe { borrow::<ServiceDiscovery>(registry) }?;
        Ok(into_handle(registry.service_cache(&name)?))
    }
}

// Freeing a cache that was not closed leaves it to its registry's close.
export_free!(Java_io_zkrecipes_Native_serviceCacheFree, ServiceCache);

export! {
    /// `op`: 0 start, 1 await the first load for `timeout_nanos` (`forever`: no limit).
    fn Java_io_zkrecipes_Native_serviceCacheCall<'l>(env; handle: i64, op: i32, forever: bool, timeout_nanos: i64, future: JObject<'l>) -> i64 {
        let (cache, future) = tasks::target::<ServiceCache>(env, handle, &future)?;
        Ok(match op {
            0 => tasks::spawn(
                future,
                tasks::started(zkrecipes::ffi::begun(async move { cache.start().await })),
                |()| Value::Null,
            ),
            _ => {
                let limit = zkrecipes::Wait::java(forever, timeout_nanos).timeout();
                tasks::spawn(future, move || async move { cache.await_initialized(limit).await }, |()| Value::Null)
            }
        })
    }
}

export! {
    fn Java_io_zkrecipes_Native_serviceCacheInstances<'l>(env; handle: i64) -> JByteArray<'l> {
        let instances = unsafe { borrow::<ServiceCache>(handle) }?.instances();
        bytes(env, &packed_instances(&instances))
    }
}

export! {
    fn Java_io_zkrecipes_Native_serviceCacheClose<'l>(_env; handle: i64) -> () {
        unsafe { borrow::<ServiceCache>(handle) }?.close();
        Ok(())
    }
}

/// A service cache's event for `Native.cacheEvent`: `ADDED` and `REMOVED` carry the instance,
/// `CHANGED` the new one then the old one, packed; the connection events nothing.
fn service_cache_event(sink: &Global<JObject<'static>>, event: ServiceCacheEvent) {
    let instances = match &event {
        ServiceCacheEvent::Added(i) | ServiceCacheEvent::Removed(i) => packed_instance(i),
        ServiceCacheEvent::Changed { old, new } => packed_instances([&**new, &**old]),
        _ => Vec::new(),
    };
    callbacks::data_event(sink, event.name(), &instances);
}

export! {
    fn Java_io_zkrecipes_Native_serviceCacheSubscribe<'l>(env; handle: i64, sink: JObject<'l>) -> i64 {
        let events = unsafe { borrow::<ServiceCache>(handle) }?.subscribe();
        let sink = env.new_global_ref(&sink)?;
        Ok(listener::forward_all(events, sink, service_cache_event))
    }
}

export! {
    /// `strategy` null: round robin; `has_timeout`/`has_errors` false: Curator's defaults.
    fn Java_io_zkrecipes_Native_serviceProviderNew<'l>(env; registry: i64, name: JString<'l>, strategy: JString<'l>, has_timeout: bool, timeout_ms: f64, has_errors: bool, errors: i64) -> i64 {
        let name = string(env, &name)?;
        let strategy = optional_string(env, &strategy)?;
        let strategy = zkrecipes::ffi::provider_strategy(strategy.as_deref())?;
        let policy = zkrecipes::ffi::down_policy(has_timeout.then_some(timeout_ms), has_errors.then_some(errors))?;
        let registry = unsafe { borrow::<ServiceDiscovery>(registry) }?;
        Ok(into_handle(registry.service_provider(&name, strategy, policy)?))
    }
}

export_free!(
    Java_io_zkrecipes_Native_serviceProviderFree,
    ServiceProvider
);

export! {
    fn Java_io_zkrecipes_Native_serviceProviderStart<'l>(env; handle: i64, future: JObject<'l>) -> i64 {
        let (provider, future) = tasks::target::<ServiceProvider>(env, handle, &future)?;
        Ok(tasks::spawn(
            future,
            tasks::started(zkrecipes::ffi::begun(async move { provider.start().await })),
            |()| Value::Null,
        ))
    }
}

export! {
    /// `all`: every instance (packed); else the one the strategy picks (packed, or null).
    fn Java_io_zkrecipes_Native_serviceProviderInstances<'l>(env; handle: i64, all: bool) -> JByteArray<'l> {
        let provider = unsafe { borrow::<ServiceProvider>(handle) }?;
        if all {
            return bytes(env, &packed_instances(&provider.get_all_instances()));
        }
        match provider.get_instance() {
            Some(instance) => bytes(env, &packed_instance(&instance)),
            None => Ok(JByteArray::null()),
        }
    }
}

export! {
    fn Java_io_zkrecipes_Native_serviceProviderNoteError<'l>(env; handle: i64, fields: JObjectArray<'l, JString<'l>>) -> () {
        let instance = instance_of(env, &fields)?;
        unsafe { borrow::<ServiceProvider>(handle) }?.note_error(&instance);
        Ok(())
    }
}

export! {
    /// The strategy's name, then the policy's timeout in milliseconds and its error threshold.
    fn Java_io_zkrecipes_Native_serviceProviderSettings<'l>(env; handle: i64) -> JObjectArray<'l> {
        let provider = unsafe { borrow::<ServiceProvider>(handle) }?;
        let policy = provider.policy();
        crate::strings::string_array(env, &[
            provider.strategy().name().to_string(),
            zkrecipes::ffi::millis(policy.timeout).to_string(),
            policy.error_threshold.to_string(),
        ])
    }
}

export! {
    fn Java_io_zkrecipes_Native_serviceProviderClose<'l>(_env; handle: i64) -> () {
        unsafe { borrow::<ServiceProvider>(handle) }?.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instance_packs_its_fields_in_order_with_none_as_minus_one() {
        let mut instance = ServiceInstance::new("s");
        instance.id = "i".into();
        instance.registration_time_utc = 5;
        let mut packed = Vec::new();
        pack_instance(&mut packed, &instance);
        let mut expected = Vec::new();
        let none = (-1i32).to_be_bytes();
        for field in [
            Some("s"),
            Some("i"),
            None,
            None,
            None,
            Some("null"),
            Some("5"),
            Some("DYNAMIC"),
            None,
            Some("true"),
            Some("{}"),
            None,
        ] {
            match field {
                Some(text) => {
                    expected.extend_from_slice(&(text.len() as u32).to_be_bytes());
                    expected.extend_from_slice(text.as_bytes());
                }
                None => expected.extend_from_slice(&none),
            }
        }
        assert_eq!(packed, expected);
    }

    #[test]
    fn a_number_that_is_not_one_is_named() {
        assert_eq!(number::<i128>("port", Some("80".into())).unwrap(), Some(80));
        assert_eq!(number::<i128>("port", None).unwrap(), None);
        let err = number::<i128>("port", Some("x".into())).unwrap_err();
        assert!(err.message().contains("port is a whole number"), "{err}");
    }
}
