//! One registered instance of a service, as Curator's `ServiceInstance` writes it with
//! `JsonInstanceSerializer` (Jackson): the same fields in the same order, so that Curator 5.9,
//! Spring Cloud Zookeeper and this library read each other's registrations.
//!
//! What is written, byte for byte as Curator's default serializer (its "compatible" mode) writes
//! it: `name`, `id`, `address`, `port`, `sslPort`, `payload`, `registrationTimeUTC`,
//! `serviceType`, `uriSpec`, with `null` for what is unset. `enabled` is written only when it is
//! `false`: Curator's default form has no `enabled`, and a reader that finds none takes the
//! instance as enabled. Fields this library does not know (a newer Curator's) are kept in their
//! order and written back after these, so an update never drops what another version wrote.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::uri_spec::UriSpec;
use crate::error::{Error, Result};

/// How an instance's node lives (Curator's `ServiceType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ServiceType {
    /// An ephemeral node: it goes with its registrant's session (and is made again under the
    /// next one).
    Dynamic,
    /// A persistent node, for instances registered on another's behalf.
    Static,
    /// A persistent node never purged by anybody but its owner.
    Permanent,
    /// An ephemeral sequential node: several registrations of one id each get a node.
    DynamicSequential,
}

impl ServiceType {
    /// Every type, in Curator's order.
    pub const ALL: [ServiceType; 4] = [
        ServiceType::Dynamic,
        ServiceType::Static,
        ServiceType::Permanent,
        ServiceType::DynamicSequential,
    ];

    /// The name in the JSON and in every language: `DYNAMIC`, `STATIC`, ...
    pub fn name(self) -> &'static str {
        match self {
            ServiceType::Dynamic => "DYNAMIC",
            ServiceType::Static => "STATIC",
            ServiceType::Permanent => "PERMANENT",
            ServiceType::DynamicSequential => "DYNAMIC_SEQUENTIAL",
        }
    }

    /// The type named `name` (any case); `INVALID_ARGUMENT` naming the four otherwise.
    pub fn parse(name: &str) -> Result<ServiceType> {
        ServiceType::ALL
            .into_iter()
            .find(|kind| kind.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "a service type is DYNAMIC, STATIC, PERMANENT or DYNAMIC_SEQUENTIAL (got {name:?})"
                ))
            })
    }

    /// Whether the node goes with its registrant's session.
    pub fn is_dynamic(self) -> bool {
        matches!(self, ServiceType::Dynamic | ServiceType::DynamicSequential)
    }
}

/// One instance of a service: where it answers, and what its registrant says about it.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceInstance {
    /// The service's name: the node under the registry's base path.
    pub name: String,
    /// The instance's id: its node's name (a random UUID unless given).
    pub id: String,
    pub address: Option<String>,
    pub port: Option<u16>,
    pub ssl_port: Option<u16>,
    /// Any JSON value. A Java payload keeps its `@class` property (Jackson's type id), which
    /// Curator's typed readers need.
    pub payload: Value,
    /// Milliseconds since the epoch, UTC.
    pub registration_time_utc: i64,
    pub service_type: ServiceType,
    pub uri_spec: Option<UriSpec>,
    /// A disabled instance is listed but never chosen by a provider.
    pub enabled: bool,
    /// Fields of a newer (or other) writer, kept in their order.
    extra: Map<String, Value>,
}

/// The first fields of Curator's JSON, in its order: what `from_json` takes into fields of its
/// own; anything else is kept as it came.
const KNOWN: [&str; 10] = [
    "name",
    "id",
    "address",
    "port",
    "sslPort",
    "payload",
    "registrationTimeUTC",
    "serviceType",
    "uriSpec",
    "enabled",
];

impl ServiceInstance {
    /// A DYNAMIC instance of `name` with a random id, registered now, enabled, with no address
    /// or port yet.
    pub fn new(name: &str) -> ServiceInstance {
        ServiceInstance {
            name: name.to_string(),
            id: uuid::Uuid::new_v4().to_string(),
            address: None,
            port: None,
            ssl_port: None,
            payload: Value::Null,
            registration_time_utc: now_millis(),
            service_type: ServiceType::Dynamic,
            uri_spec: None,
            enabled: true,
            extra: Map::new(),
        }
    }

    /// The instance as JSON, in Curator's form (the module's docs say which).
    pub fn to_json(&self) -> Vec<u8> {
        let mut object = Map::new();
        object.insert("name".into(), Value::from(self.name.as_str()));
        object.insert("id".into(), Value::from(self.id.as_str()));
        object.insert("address".into(), Value::from(self.address.clone()));
        object.insert("port".into(), Value::from(self.port));
        object.insert("sslPort".into(), Value::from(self.ssl_port));
        object.insert("payload".into(), self.payload.clone());
        object.insert(
            "registrationTimeUTC".into(),
            Value::from(self.registration_time_utc),
        );
        object.insert("serviceType".into(), Value::from(self.service_type.name()));
        object.insert(
            "uriSpec".into(),
            self.uri_spec
                .as_ref()
                .map_or(Value::Null, UriSpec::to_value),
        );
        if !self.enabled {
            object.insert("enabled".into(), Value::Bool(false));
        }
        for (key, value) in &self.extra {
            object.insert(key.clone(), value.clone());
        }
        serde_json::to_vec(&Value::Object(object)).expect("a JSON value always serializes")
    }

    /// An instance from the JSON a registrant wrote. Curator's readers' defaults apply to what
    /// is missing (`DYNAMIC`, enabled, time 0); `INVALID_ARGUMENT` saying what is wrong for JSON
    /// that is no instance (no name or id, a port out of range, an unknown service type).
    pub fn from_json(json: &[u8]) -> Result<ServiceInstance> {
        let value: Value = serde_json::from_slice(json)
            .map_err(|err| malformed(format!("it is not JSON ({err})")))?;
        let Value::Object(mut object) = value else {
            return Err(malformed("it is not a JSON object"));
        };
        let text = |object: &Map<String, Value>, key: &str| -> Result<Option<String>> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.clone())),
                Some(other) => Err(malformed(format!("{key} is {other}, not a string"))),
            }
        };
        let name = text(&object, "name")?.ok_or_else(|| malformed("it has no name"))?;
        let id = text(&object, "id")?.ok_or_else(|| malformed("it has no id"))?;
        let address = text(&object, "address")?;
        let port = port_of(&object, "port")?;
        let ssl_port = port_of(&object, "sslPort")?;
        let registration_time_utc = match object.get("registrationTimeUTC") {
            None | Some(Value::Null) => 0,
            Some(value) => value
                .as_i64()
                .ok_or_else(|| malformed(format!("registrationTimeUTC is {value}")))?,
        };
        let service_type = match text(&object, "serviceType")? {
            None => ServiceType::Dynamic,
            Some(name) => ServiceType::parse(&name).map_err(|err| malformed(err.message()))?,
        };
        let uri_spec = match object.get("uriSpec") {
            None | Some(Value::Null) => None,
            Some(value) => {
                Some(UriSpec::from_value(value).map_err(|err| malformed(err.message()))?)
            }
        };
        let enabled = match object.get("enabled") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(enabled)) => *enabled,
            Some(other) => return Err(malformed(format!("enabled is {other}, not a boolean"))),
        };
        let payload = object.get("payload").cloned().unwrap_or(Value::Null);
        object.retain(|key, _| !KNOWN.contains(&key.as_str()));
        Ok(ServiceInstance {
            name,
            id,
            address,
            port,
            ssl_port,
            payload,
            registration_time_utc,
            service_type,
            uri_spec,
            enabled,
            extra: object,
        })
    }

    /// The fields of another writer that this library keeps without knowing them.
    pub fn extra_fields(&self) -> &Map<String, Value> {
        &self.extra
    }

    /// The first of `extra`'s names that is one of the instance's own fields (`enabled`,
    /// `port`, ...), which `set_extra_fields` would drop: a binding refuses such fields.
    pub fn own_field_among(extra: &Map<String, Value>) -> Option<&str> {
        extra
            .keys()
            .map(String::as_str)
            .find(|key| KNOWN.contains(key))
    }

    /// Replaces the fields kept for another writer; one of this library's own names among
    /// them is dropped (the field itself says it).
    pub fn set_extra_fields(&mut self, mut extra: Map<String, Value>) {
        extra.retain(|key, _| !KNOWN.contains(&key.as_str()));
        self.extra = extra;
    }

    /// The instance's URI from its `uri_spec` (Curator's `buildUriSpec`), `None` without one.
    pub fn uri(&self) -> Option<String> {
        self.uri_spec
            .as_ref()
            .map(|spec| spec.build(Some(self), &[]))
    }

    /// The payload as Spring Cloud Zookeeper writes it, `None` if it is another.
    pub fn spring_payload(&self) -> Option<SpringPayload> {
        SpringPayload::from_value(&self.payload)
    }
}

/// Spring Cloud Zookeeper's payload (`ZookeeperInstance`, in spring-cloud-zookeeper-discovery
/// 4.3.0): the application's instance id, its name, and string metadata (`instance_status` says
/// UP or OUT_OF_SERVICE). Spring's `DiscoveryClient` reads it with Curator's typed serializer,
/// which needs the `@class` property: one instance of a service without it fails Spring's whole
/// `getInstances` for that service, so this form always writes it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpringPayload {
    pub id: String,
    pub name: String,
    pub metadata: std::collections::BTreeMap<String, String>,
}

/// The Java class Spring's payload is read as.
pub const SPRING_PAYLOAD_CLASS: &str =
    "org.springframework.cloud.zookeeper.discovery.ZookeeperInstance";

impl SpringPayload {
    /// As Jackson writes it: `@class`, `id`, `name`, `metadata`.
    pub fn to_value(&self) -> Value {
        let mut object = Map::new();
        object.insert("@class".into(), Value::from(SPRING_PAYLOAD_CLASS));
        object.insert("id".into(), Value::from(self.id.as_str()));
        object.insert("name".into(), Value::from(self.name.as_str()));
        let metadata = self
            .metadata
            .iter()
            .map(|(key, value)| (key.clone(), Value::from(value.as_str())))
            .collect();
        object.insert("metadata".into(), Value::Object(metadata));
        Value::Object(object)
    }

    /// Spring's payload, `None` for any other value (a missing `@class` included).
    pub fn from_value(value: &Value) -> Option<SpringPayload> {
        let object = value.as_object()?;
        if object.get("@class")?.as_str()? != SPRING_PAYLOAD_CLASS {
            return None;
        }
        let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or_default();
        let metadata = match object.get("metadata") {
            Some(Value::Object(metadata)) => metadata
                .iter()
                .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_string())))
                .collect(),
            _ => Default::default(),
        };
        Some(SpringPayload {
            id: text("id").to_string(),
            name: text("name").to_string(),
            metadata,
        })
    }
}

fn port_of(object: &Map<String, Value>, key: &str) -> Result<Option<u16>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .and_then(|port| u16::try_from(port).ok())
            .map(Some)
            .ok_or_else(|| malformed(format!("{key} is {value}, not a port (0 to 65535)"))),
    }
}

fn malformed(why: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("not a service instance: {why}"))
}

pub(super) fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Curator 5.9's `JsonInstanceSerializer` wrote for this instance (captured from it).
    const CURATOR: &str = r#"{"name":"svc","id":"id-1","address":"10.0.0.1","port":8080,"sslPort":null,"payload":"hello","registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},{"value":"port","variable":true}]}}"#;

    #[test]
    fn curators_json_reads_and_writes_back_byte_for_byte() {
        let instance = ServiceInstance::from_json(CURATOR.as_bytes()).unwrap();
        assert_eq!(instance.port, Some(8080));
        assert_eq!(instance.uri().as_deref(), Some("http://10.0.0.1:8080"));
        assert_eq!(String::from_utf8(instance.to_json()).unwrap(), CURATOR);
    }

    #[test]
    fn fields_of_a_newer_writer_are_kept_and_disabled_is_written() {
        let json = r#"{"name":"s","id":"i","address":null,"port":null,"sslPort":443,"payload":{"@class":"x.Y","a":[1,2]},"registrationTimeUTC":1,"serviceType":"STATIC","uriSpec":null,"enabled":false,"weight":7}"#;
        let instance = ServiceInstance::from_json(json.as_bytes()).unwrap();
        assert!(!instance.enabled);
        assert_eq!(instance.service_type, ServiceType::Static);
        assert_eq!(instance.extra_fields().get("weight"), Some(&Value::from(7)));
        assert_eq!(String::from_utf8(instance.to_json()).unwrap(), json);
    }

    #[test]
    fn what_is_not_an_instance_is_refused_saying_why() {
        for (json, why) in [
            ("[]", "not a JSON object"),
            ("{\"id\":\"i\"}", "no name"),
            ("{\"name\":\"s\",\"id\":\"i\",\"port\":70000}", "not a port"),
            (
                "{\"name\":\"s\",\"id\":\"i\",\"serviceType\":\"X\"}",
                "service type",
            ),
            ("{\"name\":", "not JSON"),
        ] {
            let err = ServiceInstance::from_json(json.as_bytes()).unwrap_err();
            assert_eq!(err.code(), crate::ErrorCode::InvalidArgument);
            assert!(err.message().contains(why), "{json}: {err}");
        }
    }

    #[test]
    fn springs_payload_round_trips_with_its_class() {
        let payload = SpringPayload {
            id: "app-1".into(),
            name: "app".into(),
            metadata: [("instance_status".to_string(), "UP".to_string())].into(),
        };
        let value = payload.to_value();
        assert_eq!(
            value.to_string(),
            r#"{"@class":"org.springframework.cloud.zookeeper.discovery.ZookeeperInstance","id":"app-1","name":"app","metadata":{"instance_status":"UP"}}"#
        );
        assert_eq!(SpringPayload::from_value(&value), Some(payload));
        assert_eq!(
            SpringPayload::from_value(&serde_json::json!({"id": "x"})),
            None
        );
    }
}
