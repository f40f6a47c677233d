//! Service discovery on Curator's registry (`curator-x-discovery`, which Spring Cloud Zookeeper
//! uses): instances at `<base>/<service name>/<instance id>`, each a node whose data is the
//! instance's JSON (`instance.rs` says which, byte for byte).
//!
//! Contract, including failures:
//! - `register` returns once the instance's node exists. A DYNAMIC instance's node is ephemeral
//!   and kept by a `PersistentNode`: made again after it is deleted and under every new session
//!   (Curator re-registers on RECONNECTED; here a reconnect within the session finds the node
//!   still there and leaves it, so caches see no churn). Each re-registration is a
//!   `DiscoveryEvent::Reregistered`.
//! - An id whose DYNAMIC node another live session holds is refused with `NODE_EXISTS`, naming the
//!   session (Curator deletes the other's node and takes the id, so two processes flap). A
//!   persistent node of the id (a STATIC one) is replaced, as Curator does.
//! - Registering an id this object registered already updates it (Curator's rule).
//! - `update` writes the instance now and is what every re-registration writes; `NO_NODE` for
//!   an id this object did not register.
//! - `unregister` deletes the node, confirmed, and stops keeping it; `close` does so for every
//!   registration and closes the caches made from this object. Cancelling either does not stop
//!   the delete.
//! - Queries read the registry now. An instance whose JSON is not an instance is left out of
//!   `query_for_instances` and logged, never failing the others (Spring's reader fails them all
//!   for one bad registration); `query_for_instance` answers it with `INVALID_ARGUMENT`.
//! - A missing base path or service is an empty registry, never an error, and nothing is
//!   created by a query.

mod cache;
mod instance;
mod provider;
mod uri_spec;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures_util::future::join_all;
use tokio::sync::broadcast;

use crate::client::{delete_confirmed, Client};
use crate::emitter::Emitter;
use crate::error::{Error, ErrorCode, Result};
use crate::group::{NodeEvent, NodeMode, PersistentNode};
use crate::observe::{recipe_event, session_hex, Recipe};
use crate::path;

pub use cache::{ServiceCache, ServiceCacheEvent, ServiceCacheEvents};
pub use instance::{ServiceInstance, ServiceType, SpringPayload, SPRING_PAYLOAD_CLASS};
pub use provider::{DownInstancePolicy, ProviderStrategy, ServiceProvider};
pub use uri_spec::{UriPart, UriSpec};

/// What happens to this object's registrations without a call.
#[derive(Clone, Debug, PartialEq)]
pub enum DiscoveryEvent {
    /// The instance's node was made again after it was gone (its session expired, or somebody
    /// deleted it).
    /// `path` is the node's (a DYNAMIC_SEQUENTIAL instance's gets a new name).
    Reregistered {
        name: String,
        id: String,
        path: String,
    },
    /// The instance is no longer kept: the server refused its node (`NO_AUTH`).
    RegistrationStopped {
        name: String,
        id: String,
        error: Error,
    },
}

impl DiscoveryEvent {
    /// The name shared by every language.
    pub fn name(&self) -> &'static str {
        match self {
            DiscoveryEvent::Reregistered { .. } => "REREGISTERED",
            DiscoveryEvent::RegistrationStopped { .. } => "REGISTRATION_STOPPED",
        }
    }

    /// Every name, in declaration order.
    pub fn names() -> Vec<&'static str> {
        vec!["REREGISTERED", "REGISTRATION_STOPPED"]
    }
}

#[derive(Clone)]
pub struct ServiceDiscovery {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client,
    base: String,
    registered: Mutex<BTreeMap<(String, String), Registration>>,
    caches: Mutex<Vec<ServiceCache>>,
    closed: Mutex<bool>,
    events: Arc<Emitter<DiscoveryEvent>>,
    /// Held by an update from keeping its fields to writing them: two updates of one instance
    /// at once leave the node holding what this object keeps.
    writing: tokio::sync::Mutex<()>,
}

struct Registration {
    instance: ServiceInstance,
    node: PersistentNode,
}

impl ServiceDiscovery {
    /// The registry at `base_path` (Spring Cloud Zookeeper's default is `/services`).
    /// `INVALID_PATH` before anything is sent.
    pub fn new(client: &Client, base_path: &str) -> Result<ServiceDiscovery> {
        path::validate(base_path)?;
        client.check_open()?;
        Ok(ServiceDiscovery {
            inner: Arc::new(Inner {
                client: client.clone(),
                base: base_path.to_string(),
                registered: Mutex::new(BTreeMap::new()),
                caches: Mutex::new(Vec::new()),
                closed: Mutex::new(false),
                events: Arc::new(Emitter::new(64)),
                writing: tokio::sync::Mutex::new(()),
            }),
        })
    }

    pub fn base_path(&self) -> &str {
        &self.inner.base
    }

    /// The node of service `name`'s instance `id`.
    pub fn path_of(&self, name: &str, id: &str) -> String {
        path::join(&path::join(&self.inner.base, name), id)
    }

    /// Events of this object's registrations from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<DiscoveryEvent> {
        self.inner.events.subscribe()
    }

    /// Registers `instance` and returns once its node exists (see the module's contract).
    pub async fn register(&self, instance: ServiceInstance) -> Result<()> {
        let path = self.checked_path(&instance)?;
        let key = (instance.name.clone(), instance.id.clone());
        let data = instance.to_json();
        let existing = {
            let registered = self.inner.registered.lock().unwrap();
            self.check_open()?;
            registered
                .get(&key)
                .map(|known| (known.node.clone(), known.instance.service_type))
        };
        if let Some((node, kind)) = existing {
            if kind == instance.service_type {
                return self.write(&key, instance, node).await;
            }
            // Another type is another node mode: the node is made again, as Curator deletes
            // and re-creates the node of an id registered again.
            self.forget(&key, &node);
            node.close().await.map_err(|err| self.about(err, &path))?;
        }
        if instance.service_type == ServiceType::Dynamic {
            self.clear_for(&path).await?;
        }
        let node = PersistentNode::service_instance(
            &self.inner.client,
            &path,
            node_mode(instance.service_type),
            data,
            self.listener(&instance),
        )?;
        let mut unplaced = Some(instance);
        let raced = {
            let mut registered = self.inner.registered.lock().unwrap();
            self.check_open()?;
            match registered.get(&key) {
                Some(known) => Some(known.node.clone()),
                None => {
                    let node = node.clone();
                    let instance = unplaced.take().expect("placed once");
                    let registration = Registration { instance, node };
                    registered.insert(key.clone(), registration);
                    None
                }
            }
        };
        if let (Some(known), Some(instance)) = (raced, unplaced) {
            // Registered by another caller meanwhile: this one is an update of it.
            return self.write(&key, instance, known).await;
        }
        match node.start().await {
            Ok(_) => Ok(()),
            Err(err) => {
                self.forget(&key, &node);
                let _ = node.close().await;
                Err(self.about(err, &path))
            }
        }
    }

    /// Writes `instance` (registered by this object) now; every re-registration writes it too.
    pub async fn update(&self, instance: ServiceInstance) -> Result<()> {
        let path = self.checked_path(&instance)?;
        let key = (instance.name.clone(), instance.id.clone());
        let node = self
            .inner
            .registered
            .lock()
            .unwrap()
            .get(&key)
            .map(|known| (known.node.clone(), known.instance.service_type));
        let Some((node, kind)) = node else {
            return Err(self.about(
                Error::new(
                    ErrorCode::NoNode,
                    "the instance is not registered by this discovery (register it first)",
                ),
                &path,
            ));
        };
        if kind != instance.service_type {
            // Another node mode: made again.
            return self.register(instance).await;
        }
        self.write(&key, instance, node).await
    }

    /// Deletes the instance's node, confirmed, and stops keeping it. Nothing to do for an
    /// instance this object did not register.
    pub async fn unregister(&self, name: &str, id: &str) -> Result<()> {
        let removed = self
            .inner
            .registered
            .lock()
            .unwrap()
            .remove(&(name.to_string(), id.to_string()));
        match removed {
            Some(registration) => registration.node.close().await,
            None => Ok(()),
        }
    }

    /// The instances this object keeps registered, as last written.
    pub fn registered(&self) -> Vec<ServiceInstance> {
        let registered = self.inner.registered.lock().unwrap();
        registered.values().map(|r| r.instance.clone()).collect()
    }

    /// Unregisters every instance (each delete confirmed) and closes this object's caches.
    /// Idempotent; the first error is answered after every other delete was tried.
    pub async fn close(&self) -> Result<()> {
        let registrations = {
            let mut registered = self.inner.registered.lock().unwrap();
            *self.inner.closed.lock().unwrap() = true;
            std::mem::take(&mut *registered)
        };
        for cache in std::mem::take(&mut *self.inner.caches.lock().unwrap()) {
            cache.close();
        }
        let closes = registrations
            .into_values()
            .map(|r| async move { r.node.close().await });
        join_all(closes).await.into_iter().collect()
    }

    /// The names of every registered service, sorted.
    pub async fn query_for_names(&self) -> Result<Vec<String>> {
        let mut names = self
            .inner
            .client
            .children_if_present(&self.inner.base)
            .await?;
        names.sort();
        Ok(names)
    }

    /// Every instance of service `name`, sorted by id, read now (one listing, then the nodes'
    /// data in one pipelined round).
    pub async fn query_for_instances(&self, name: &str) -> Result<Vec<ServiceInstance>> {
        path::check_node_name("a service name", name)?;
        let service = path::join(&self.inner.base, name);
        let ids = self.inner.client.children_if_present(&service).await?;
        let client = &self.inner.client;
        let reads = ids.iter().map(|id| {
            let path = path::join(&service, id);
            async move { (client.read_if_present(&path).await, path) }
        });
        let mut instances = Vec::new();
        for (read, path) in join_all(reads).await {
            if let Some((data, _)) = read? {
                if let Some(instance) = parse_listed(&path, &data) {
                    instances.push(instance);
                }
            }
        }
        instances.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(instances)
    }

    /// Service `name`'s instance `id`, `None` if there is none; `INVALID_ARGUMENT` if its node
    /// holds no instance.
    pub async fn query_for_instance(
        &self,
        name: &str,
        id: &str,
    ) -> Result<Option<ServiceInstance>> {
        path::check_node_name("a service name", name)?;
        path::check_node_name("an instance id", id)?;
        let path = self.path_of(name, id);
        match self.inner.client.read_if_present(&path).await? {
            None => Ok(None),
            Some((data, _)) => ServiceInstance::from_json(&data)
                .map(Some)
                .map_err(|err| self.about(err, &path)),
        }
    }

    /// A cache of service `name`'s instances (`start` it); closed with this object.
    pub fn service_cache(&self, name: &str) -> Result<ServiceCache> {
        self.check_open()?;
        let cache = ServiceCache::new(&self.inner.client, &self.inner.base, name)?;
        self.inner.caches.lock().unwrap().push(cache.clone());
        Ok(cache)
    }

    /// A provider choosing among service `name`'s instances (`start` it); its cache is closed
    /// with this object.
    pub fn service_provider(
        &self,
        name: &str,
        strategy: ProviderStrategy,
        policy: DownInstancePolicy,
    ) -> Result<ServiceProvider> {
        Ok(ServiceProvider::new(
            self.service_cache(name)?,
            strategy,
            policy,
        ))
    }

    fn check_open(&self) -> Result<()> {
        self.inner.client.check_open()?;
        if *self.inner.closed.lock().unwrap() {
            return Err(Error::new(
                ErrorCode::Closed,
                "the service discovery was closed",
            ));
        }
        Ok(())
    }

    fn checked_path(&self, instance: &ServiceInstance) -> Result<String> {
        path::check_node_name("a service name", &instance.name)?;
        path::check_node_name("an instance id", &instance.id)?;
        let path = self.path_of(&instance.name, &instance.id);
        path::validate(&path)?;
        Ok(path)
    }

    async fn write(
        &self,
        key: &(String, String),
        instance: ServiceInstance,
        node: PersistentNode,
    ) -> Result<()> {
        let data = instance.to_json();
        let _writing = self.inner.writing.lock().await;
        if let Some(known) = self.inner.registered.lock().unwrap().get_mut(key) {
            known.instance = instance;
        }
        node.set_data(data).await
    }

    /// Before a DYNAMIC registration: refuses an id whose ephemeral node a live session holds,
    /// and deletes a persistent node of the id (a STATIC registration's), as Curator does.
    async fn clear_for(&self, path: &str) -> Result<()> {
        let zk = self.inner.client.zk()?;
        let Some(stat) = zk.check_stat(path).await.map_err(Error::from)? else {
            return Ok(());
        };
        if stat.ephemeral_owner != 0 {
            let owner = session_hex(stat.ephemeral_owner);
            let whose = if self.inner.client.session_id().ok() == Some(stat.ephemeral_owner) {
                format!("by another service discovery of this client (session {owner})")
            } else {
                format!("by session {owner}, which is alive")
            };
            return Err(self.about(
                Error::new(
                    ErrorCode::NodeExists,
                    format!("the instance is registered {whose}"),
                ),
                path,
            ));
        }
        match delete_confirmed(&self.inner.client, path).await {
            Err(err) if err.code() != ErrorCode::NoNode => Err(err),
            _ => Ok(()),
        }
    }

    fn listener(&self, instance: &ServiceInstance) -> crate::group::NodeListener {
        // Weak: the listener lives in the node, which this object holds.
        let inner = Arc::downgrade(&self.inner);
        let (name, id) = (instance.name.clone(), instance.id.clone());
        Box::new(move |event| {
            let Some(inner) = inner.upgrade() else {
                return;
            };
            if let NodeEvent::Stopped(_) = event {
                // No longer kept: `registered` stops listing it, and a register starts afresh.
                let mut registered = inner.registered.lock().unwrap();
                let key = (name.clone(), id.clone());
                if registered.get(&key).is_some_and(|r| r.node.has_failed()) {
                    registered.remove(&key);
                }
            }
            let (name, id) = (name.clone(), id.clone());
            inner.events.emit(match event {
                NodeEvent::Recreated(path) => DiscoveryEvent::Reregistered {
                    name,
                    id,
                    path: path.to_string(),
                },
                NodeEvent::Stopped(error) => DiscoveryEvent::RegistrationStopped {
                    name,
                    id,
                    error: error.clone(),
                },
            });
        })
    }

    /// Forgets a registration whose start failed, unless another has replaced it.
    fn forget(&self, key: &(String, String), node: &PersistentNode) {
        let mut registered = self.inner.registered.lock().unwrap();
        if registered
            .get(key)
            .is_some_and(|known| known.node.is_same(node))
        {
            registered.remove(key);
        }
    }

    fn about(&self, err: Error, path: &str) -> Error {
        self.inner.client.about(err, "service instance", path)
    }
}

/// The node mode of an instance of `kind`.
fn node_mode(kind: ServiceType) -> NodeMode {
    match kind {
        ServiceType::Dynamic => NodeMode::Ephemeral,
        ServiceType::DynamicSequential => NodeMode::EphemeralSequential,
        ServiceType::Static | ServiceType::Permanent => NodeMode::Persistent,
    }
}

/// A listed instance, or `None` (logged) for a node whose data is no instance.
fn parse_listed(path: &str, data: &[u8]) -> Option<ServiceInstance> {
    match ServiceInstance::from_json(data) {
        Ok(instance) => Some(instance),
        Err(err) => {
            let reason = err.message();
            recipe_event!(
                Recipe::Discovery,
                WARN,
                path,
                reason,
                "service instance {path}: left out, {reason}"
            );
            None
        }
    }
}

impl std::fmt::Debug for ServiceDiscovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceDiscovery")
            .field("base", &self.inner.base)
            .field("registered", &self.inner.registered.lock().unwrap().len())
            .finish()
    }
}
