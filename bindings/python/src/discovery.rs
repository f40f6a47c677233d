//! Service discovery: `NativeServiceDiscovery`, `NativeServiceCache`, `NativeServiceProvider`.
//!
//! An instance crosses as a row of its fields (`InstanceRow`, what `ffi::InstanceFields` holds:
//! the payload and another writer's fields as JSON text, the URI spec as its template), in both
//! directions; every rule on those fields is the core's.

use std::future::Future;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use zkrecipes::ffi::InstanceFields;
use zkrecipes::{
    DiscoveryEvent, ServiceCache, ServiceCacheEvent, ServiceDiscovery, ServiceInstance,
    ServiceProvider, Wait,
};

use crate::blocking::detached;
use crate::client::NativeClient;
use crate::errors::{to_py, IntoPyResult};
use crate::listener::{relay, relay_all, Subscription};
use crate::twins::pymethods_with_twins;

/// `(name, id, address, port, ssl_port, payload_json, registration_time_utc, service_type,
/// uri_spec, enabled, extra_json)`, as `zkrecipes.ServiceInstance` takes them.
pub type InstanceRow = (
    String,
    Option<String>,
    Option<String>,
    Option<i128>,
    Option<i128>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<bool>,
    Option<String>,
);

fn row(instance: &ServiceInstance) -> InstanceRow {
    let f = InstanceFields::of(instance);
    (
        f.name,
        f.id,
        f.address,
        f.port,
        f.ssl_port,
        f.payload,
        f.registration_time_utc,
        f.service_type,
        f.uri_spec,
        f.enabled,
        f.extra,
    )
}

fn instance(row: InstanceRow) -> PyResult<ServiceInstance> {
    let (name, id, address, port, ssl_port, payload, time, service_type, uri_spec, enabled, extra) =
        row;
    InstanceFields {
        name,
        id,
        address,
        port,
        ssl_port,
        payload,
        service_type,
        uri_spec,
        enabled,
        registration_time_utc: time,
        extra,
    }
    .build()
    .into_py_result()
}

/// The instance's URI from its URI spec (Curator's `buildUriSpec`), `None` without one.
#[pyfunction]
pub fn _instance_uri(row: InstanceRow) -> PyResult<Option<String>> {
    Ok(instance(row)?.uri())
}

/// The row of the instance a registrant's JSON describes (what `zkrecipes.ServiceInstance`
/// reads from the registry's bytes).
#[pyfunction]
pub fn _instance_from_json(json: &[u8]) -> PyResult<InstanceRow> {
    Ok(row(&ServiceInstance::from_json(json).into_py_result()?))
}

/// Spring Cloud Zookeeper's payload as JSON text, from its fields (`metadata` a JSON object of
/// strings).
#[pyfunction]
pub fn _spring_payload(id: String, name: String, metadata: &str) -> PyResult<String> {
    zkrecipes::ffi::spring_payload(id, name, metadata).into_py_result()
}

/// The instance's JSON, as Curator writes it.
#[pyfunction]
pub fn _instance_to_json(row: InstanceRow) -> PyResult<Vec<u8>> {
    Ok(instance(row)?.to_json())
}

/// `(name, service, id, error)` of a registration's event.
fn discovery_event_args(py: Python<'_>, event: DiscoveryEvent) -> PyResult<Py<PyTuple>> {
    let args = match event {
        DiscoveryEvent::Reregistered { name, id, .. } => ("REREGISTERED", name, id, None),
        DiscoveryEvent::RegistrationStopped { name, id, error } => (
            "REGISTRATION_STOPPED",
            name,
            id,
            Some(to_py(error).into_value(py)),
        ),
    };
    Ok(args.into_pyobject(py)?.unbind())
}

/// `(name, instance, old)`: the instance of `ADDED`, `CHANGED` (the new one) and `REMOVED`, the
/// old one of `CHANGED`; `None` otherwise.
fn cache_event_args(py: Python<'_>, event: ServiceCacheEvent) -> PyResult<Py<PyTuple>> {
    let name = event.name();
    let (now, old) = match &event {
        ServiceCacheEvent::Added(i) | ServiceCacheEvent::Removed(i) => (Some(row(i)), None),
        ServiceCacheEvent::Changed { old, new } => (Some(row(new)), Some(row(old))),
        _ => (None, None),
    };
    Ok((name, now, old).into_pyobject(py)?.unbind())
}

fn unregister(
    registry: ServiceDiscovery,
    name: String,
    id: String,
) -> impl Future<Output = zkrecipes::Result<()>> {
    detached("unregistering", async move {
        registry.unregister(&name, &id).await
    })
}

fn close(registry: ServiceDiscovery) -> impl Future<Output = zkrecipes::Result<()>> {
    detached("closing the service discovery", async move {
        registry.close().await
    })
}

/// A registration runs to its end in a task of its own: a cancel stops the wait; the instance
/// is then kept by the registry (its `close` removes it).
fn register(
    registry: ServiceDiscovery,
    instance: ServiceInstance,
) -> impl Future<Output = zkrecipes::Result<InstanceRow>> {
    detached("registering", async move {
        registry.register(instance.clone()).await?;
        Ok(row(&instance))
    })
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeServiceDiscovery {
    inner: ServiceDiscovery,
}

pymethods_with_twins! {
    impl NativeServiceDiscovery {
        twins {
            fn update | update_async(fields: InstanceRow) -> () {
                let updated = instance(fields)?;
            } |registry| async move { registry.update(updated).await };
            fn query_for_names | query_for_names_async() -> Vec<String> {} |registry| async move {
                registry.query_for_names().await
            };
            fn query_for_instances | query_for_instances_async(name: String) -> Vec<InstanceRow> {} |registry| async move {
                Ok(registry.query_for_instances(&name).await?.iter().map(row).collect::<Vec<_>>())
            };
            fn query_for_instance | query_for_instance_async(name: String, id: String) -> Option<InstanceRow> {} |registry| async move {
                Ok(registry.query_for_instance(&name, &id).await?.as_ref().map(row))
            };
        }
        begun {
            fn register | register_async(fields: InstanceRow) -> InstanceRow {
                let registered = instance(fields)?;
            } |registry| register(registry, registered);
            fn unregister | unregister_async(name: String, id: String) -> () {} |registry| unregister(registry, name, id);
            fn close | close_async() -> () {} |registry| close(registry);
        }

        #[new]
        fn new(client: &NativeClient, base_path: &str) -> PyResult<NativeServiceDiscovery> {
            Ok(NativeServiceDiscovery {
                inner: ServiceDiscovery::new(&client.inner, base_path).into_py_result()?,
            })
        }

        fn base_path(&self) -> String {
            self.inner.base_path().to_string()
        }

        fn registered(&self) -> Vec<InstanceRow> {
            self.inner.registered().iter().map(row).collect()
        }

        /// Closes without waiting: for an interpreter on its way out.
        fn close_soon(&self) {
            drop(close(self.inner.clone()));
        }

        fn service_cache(&self, name: &str) -> PyResult<NativeServiceCache> {
            Ok(NativeServiceCache {
                inner: self.inner.service_cache(name).into_py_result()?,
            })
        }

        #[pyo3(signature = (name, strategy, down_timeout_ms, down_errors))]
        fn service_provider(
            &self,
            name: &str,
            strategy: Option<&str>,
            down_timeout_ms: Option<f64>,
            down_errors: Option<i64>,
        ) -> PyResult<NativeServiceProvider> {
            let strategy = zkrecipes::ffi::provider_strategy(strategy).into_py_result()?;
            let policy = zkrecipes::ffi::down_policy(down_timeout_ms, down_errors).into_py_result()?;
            Ok(NativeServiceProvider {
                inner: self.inner.service_provider(name, strategy, policy).into_py_result()?,
            })
        }

        /// `callback(name, service, id, error)` for every registration event from now on.
        fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
            relay(self.inner.subscribe(), callback, discovery_event_args)
        }
    }
}

fn start_cache(cache: ServiceCache) -> impl Future<Output = zkrecipes::Result<()>> {
    detached(
        "starting the service cache",
        async move { cache.start().await },
    )
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeServiceCache {
    inner: ServiceCache,
}

pymethods_with_twins! {
    impl NativeServiceCache {
        twins {
            #[pyo3(signature = (seconds))]
            fn await_initialized | await_initialized_async(seconds: Option<f64>) -> () {
                let limit = Wait::python(seconds, true).into_py_result()?.timeout();
            } |cache| async move { cache.await_initialized(limit).await };
        }
        begun {
            fn start | start_async() -> () {} |cache| start_cache(cache);
        }

        fn name(&self) -> String {
            self.inner.name().to_string()
        }

        fn instances(&self) -> Vec<InstanceRow> {
            self.inner.instances().iter().map(row).collect()
        }

        fn close(&self) {
            self.inner.close();
        }

        /// As `close` (which never waits for the server).
        fn close_soon(&self) {
            self.inner.close();
        }

        /// `callback(name, instance, old)` for every event from now on, in order; the deliveries
        /// end when the cache is closed.
        fn subscribe(&self, callback: Py<PyAny>) -> Subscription {
            relay_all(self.inner.subscribe(), callback, cache_event_args)
        }
    }
}

#[pyclass(module = "zkrecipes._native", frozen)]
pub struct NativeServiceProvider {
    inner: ServiceProvider,
}

pymethods_with_twins! {
    impl NativeServiceProvider {
        begun {
            fn start | start_async() -> () {} |provider| {
                detached("starting the service provider", async move { provider.start().await })
            };
        }

        fn get_instance(&self) -> Option<InstanceRow> {
            self.inner.get_instance().as_ref().map(row)
        }

        fn get_all_instances(&self) -> Vec<InstanceRow> {
            self.inner.get_all_instances().iter().map(row).collect()
        }

        fn note_error(&self, fields: InstanceRow) -> PyResult<()> {
            self.inner.note_error(&instance(fields)?);
            Ok(())
        }

        fn strategy(&self) -> &'static str {
            self.inner.strategy().name()
        }

        fn close(&self) {
            self.inner.close();
        }

        /// As `close` (which never waits for the server).
        fn close_soon(&self) {
            self.inner.close();
        }
    }
}
