//! Service discovery's arguments as a binding (or the command line) receives them: an instance
//! by its fields, with its payload as JSON text and its ports as any integer; the names of a
//! service type and a provider strategy; a down-instance policy in milliseconds.

use std::time::Duration;

use serde_json::Value;

use crate::discovery::{
    DownInstancePolicy, ProviderStrategy, ServiceInstance, ServiceType, UriSpec,
};
use crate::error::{Error, Result};

/// An instance's fields as a binding has them; `build` applies every rule.
#[derive(Clone, Debug, Default)]
pub struct InstanceFields {
    pub name: String,
    /// A random UUID when `None`.
    pub id: Option<String>,
    pub address: Option<String>,
    /// Any integer a binding was given (a Python int beyond 64 bits too): checked here.
    pub port: Option<i128>,
    pub ssl_port: Option<i128>,
    /// JSON text; `null` when `None`.
    pub payload: Option<String>,
    /// `DYNAMIC` when `None`.
    pub service_type: Option<String>,
    /// A Curator URI template (`{scheme}://{address}:{port}`).
    pub uri_spec: Option<String>,
    /// `true` when `None`.
    pub enabled: Option<bool>,
    /// Now when `None`.
    pub registration_time_utc: Option<i64>,
    /// Another writer's fields, as a JSON object's text, kept through an update.
    pub extra: Option<String>,
}

impl InstanceFields {
    /// The instance, or `INVALID_ARGUMENT` naming the field and what was given.
    pub fn build(self) -> Result<ServiceInstance> {
        crate::path::check_node_name("a service name", &self.name)?;
        let mut instance = ServiceInstance::new(&self.name);
        if let Some(id) = self.id {
            crate::path::check_node_name("an instance id", &id)?;
            instance.id = id;
        }
        instance.address = self.address;
        instance.port = port("port", self.port)?;
        instance.ssl_port = port("ssl_port", self.ssl_port)?;
        instance.payload = payload(self.payload.as_deref())?;
        if let Some(kind) = self.service_type {
            instance.service_type = ServiceType::parse(&kind)?;
        }
        instance.uri_spec = self.uri_spec.as_deref().map(UriSpec::parse).transpose()?;
        instance.enabled = self.enabled.unwrap_or(true);
        if let Some(time) = self.registration_time_utc {
            instance.registration_time_utc = time;
        }
        if let Some(extra) = self.extra {
            match serde_json::from_str(&extra) {
                Ok(Value::Object(extra)) => {
                    if let Some(own) = ServiceInstance::own_field_among(&extra) {
                        return Err(Error::invalid_argument(format!(
                            "an instance's extra fields are another writer's; {own:?} is the instance's own field: set it as such"
                        )));
                    }
                    instance.set_extra_fields(extra)
                }
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "an instance's extra fields are a JSON object, got {extra:?}"
                    )))
                }
            }
        }
        Ok(instance)
    }

    /// Every field of `instance`, as the bindings hand an instance to their callers (the
    /// payload and the extra fields as JSON text, the URI spec as its template).
    pub fn of(instance: &ServiceInstance) -> InstanceFields {
        InstanceFields {
            name: instance.name.clone(),
            id: Some(instance.id.clone()),
            address: instance.address.clone(),
            port: instance.port.map(i128::from),
            ssl_port: instance.ssl_port.map(i128::from),
            payload: Some(instance.payload.to_string()),
            service_type: Some(instance.service_type.name().to_string()),
            uri_spec: instance.uri_spec.as_ref().map(UriSpec::template),
            enabled: Some(instance.enabled),
            registration_time_utc: Some(instance.registration_time_utc),
            extra: Some(Value::Object(instance.extra_fields().clone()).to_string()),
        }
    }
}

/// A port: 0 to 65535, or none.
pub fn port(what: &str, value: Option<i128>) -> Result<Option<u16>> {
    value
        .map(|value| {
            u16::try_from(value).map_err(|_| {
                Error::invalid_argument(format!("{what} is a port, 0 to 65535, got {value}"))
            })
        })
        .transpose()
}

/// A payload given as JSON text (`null` when none): any JSON value.
pub fn payload(json: Option<&str>) -> Result<Value> {
    let Some(json) = json else {
        return Ok(Value::Null);
    };
    serde_json::from_str(json)
        .map_err(|err| Error::invalid_argument(format!("the payload is not JSON: {err}")))
}

/// Spring Cloud Zookeeper's payload as JSON text, its metadata given as a JSON object of
/// strings (`INVALID_ARGUMENT` for anything else).
pub fn spring_payload(id: String, name: String, metadata: &str) -> Result<String> {
    let metadata = serde_json::from_str(metadata).map_err(|err| {
        Error::invalid_argument(format!(
            "Spring's metadata is an object of strings, got {metadata}: {err}"
        ))
    })?;
    let payload = crate::discovery::SpringPayload { id, name, metadata };
    Ok(payload.to_value().to_string())
}

/// A provider strategy by name (`ROUND_ROBIN` when none).
pub fn provider_strategy(name: Option<&str>) -> Result<ProviderStrategy> {
    name.map_or(Ok(ProviderStrategy::RoundRobin), ProviderStrategy::parse)
}

/// A down-instance policy: `timeout_ms` (more than 0) and `error_threshold` (at least 1), each
/// Curator's default (30 s, 2) when none.
pub fn down_policy(
    timeout_ms: Option<f64>,
    error_threshold: Option<i64>,
) -> Result<DownInstancePolicy> {
    let default = DownInstancePolicy::default();
    let timeout = match timeout_ms {
        None => default.timeout,
        Some(ms) => super::timeout_setting("the down-instance timeout", ms, "ms")?,
    };
    let threshold = match error_threshold {
        None => default.error_threshold,
        Some(n) => u32::try_from(n).map_err(|_| {
            Error::invalid_argument(format!(
                "error_threshold is at least 1 (the errors that take an instance down), got {n}"
            ))
        })?,
    };
    DownInstancePolicy::new(timeout, threshold)
}

/// The whole milliseconds of a duration, as the bindings give a policy's timeout back.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_build_an_instance_or_name_what_is_wrong() {
        let named = |name: &str| InstanceFields {
            name: name.into(),
            ..Default::default()
        };
        let built = InstanceFields {
            id: Some("a".into()),
            port: Some(8080),
            payload: Some("{\"k\":[1]}".into()),
            service_type: Some("static".into()),
            uri_spec: Some("{scheme}://{address}:{port}".into()),
            ..named("api")
        }
        .build()
        .unwrap();
        assert_eq!(built.port, Some(8080));
        assert_eq!(built.payload, serde_json::json!({"k": [1]}));
        assert_eq!(built.service_type, ServiceType::Static);
        let wrong = [
            (named("a/b"), "a service name is a node name"),
            (
                InstanceFields {
                    id: Some("..".into()),
                    ..named("a")
                },
                "an instance id is",
            ),
            (
                InstanceFields {
                    port: Some(70000),
                    ..named("a")
                },
                "port is a port",
            ),
            (
                InstanceFields {
                    ssl_port: Some(-1),
                    ..named("a")
                },
                "ssl_port is a port",
            ),
            (
                InstanceFields {
                    payload: Some("{".into()),
                    ..named("a")
                },
                "not JSON",
            ),
            (
                InstanceFields {
                    service_type: Some("x".into()),
                    ..named("a")
                },
                "DYNAMIC",
            ),
            (
                InstanceFields {
                    uri_spec: Some("{a".into()),
                    ..named("a")
                },
                "not closed",
            ),
        ];
        for (fields, why) in wrong {
            let err = fields.build().unwrap_err();
            assert!(err.message().contains(why), "{err}");
        }
    }

    #[test]
    fn an_instance_round_trips_through_its_fields() {
        let json = r#"{"name":"s","id":"i","address":"h","port":1,"sslPort":null,"payload":{"@class":"x.Y","a":[1]},"registrationTimeUTC":5,"serviceType":"PERMANENT","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://x","variable":false}]},"enabled":false,"weight":7}"#;
        let instance = ServiceInstance::from_json(json.as_bytes()).unwrap();
        let again = InstanceFields::of(&instance).build().unwrap();
        assert_eq!(again, instance);
        assert_eq!(String::from_utf8(again.to_json()).unwrap(), json);
        let not_object = InstanceFields {
            extra: Some("[1]".into()),
            ..InstanceFields::of(&instance)
        };
        assert!(not_object.build().is_err());
        let own_field = InstanceFields {
            extra: Some(r#"{"weight":1,"enabled":false}"#.into()),
            ..InstanceFields::of(&instance)
        };
        let err = own_field.build().unwrap_err();
        assert!(
            err.message()
                .contains("\"enabled\" is the instance's own field"),
            "{err}"
        );
    }

    #[test]
    fn a_policy_is_checked_in_its_units() {
        assert_eq!(
            down_policy(None, None).unwrap(),
            DownInstancePolicy::default()
        );
        let policy = down_policy(Some(1500.0), Some(3)).unwrap();
        assert_eq!((millis(policy.timeout), policy.error_threshold), (1500, 3));
        assert!(down_policy(Some(0.0), None).is_err());
        assert!(down_policy(None, Some(0)).is_err());
        assert!(down_policy(None, Some(-2)).is_err());
        assert_eq!(
            provider_strategy(Some("sticky")).unwrap(),
            ProviderStrategy::Sticky
        );
    }
}
