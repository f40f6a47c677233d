//! Curator's `UriSpec`: a URI template such as `{scheme}://{address}:{port}`, kept in the
//! registration as its parts (`{"parts":[{"value":"scheme","variable":true},...]}`) and filled
//! from an instance by its readers.

use serde_json::{Map, Value};

use super::instance::ServiceInstance;
use crate::error::{Error, Result};

/// One piece of a template: literal text, or the name of a variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriPart {
    pub value: String,
    pub variable: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UriSpec {
    pub parts: Vec<UriPart>,
}

impl UriSpec {
    /// The template's parts, by Curator's rules: `{name}` is a variable (its name trimmed), the
    /// rest is literal; `{[}` and `{]}` write a literal brace. `INVALID_ARGUMENT` for a brace
    /// inside a variable, a `}` with no `{`, or a variable left open.
    pub fn parse(template: &str) -> Result<UriSpec> {
        let refuse = |why: &str| {
            Err(Error::invalid_argument(format!(
                "URI spec {template:?}: {why}"
            )))
        };
        let mut parts = Vec::new();
        let mut inside = false;
        let mut token = String::new();
        let flush = |token: &mut String, variable: bool, parts: &mut Vec<UriPart>| {
            if !token.is_empty() {
                let value = if variable {
                    token.trim().to_string()
                } else {
                    token.clone()
                };
                parts.push(UriPart { value, variable });
                token.clear();
            }
        };
        for c in template.chars() {
            match c {
                '{' if inside => return refuse("{ is not allowed inside of a variable"),
                '{' => {
                    flush(&mut token, false, &mut parts);
                    inside = true;
                }
                '}' if !inside => return refuse("} must be preceded by {"),
                '}' => {
                    flush(&mut token, true, &mut parts);
                    inside = false;
                }
                c => token.push(c),
            }
        }
        if inside {
            return refuse("the last variable is not closed with }");
        }
        flush(&mut token, false, &mut parts);
        Ok(UriSpec { parts })
    }

    /// The template back as text (`{scheme}://...`).
    pub fn template(&self) -> String {
        self.parts
            .iter()
            .map(|part| {
                if part.variable {
                    format!("{{{}}}", part.value)
                } else {
                    part.value.clone()
                }
            })
            .collect()
    }

    /// The URI, as Curator's `UriSpec.build` makes it: `scheme` is `https` when the instance has
    /// an SSL port, else `http`; `name`, `id`, `address`, `port`, `ssl-port`,
    /// `registration-time-utc` and `service-type` (lower case) come from the instance (empty
    /// when unset); `variables` override them; an unknown variable is left out.
    pub fn build(&self, instance: Option<&ServiceInstance>, variables: &[(&str, &str)]) -> String {
        let known = |name: &str| -> Option<String> {
            if let Some((_, value)) = variables.iter().find(|(key, _)| *key == name) {
                return Some(value.to_string());
            }
            let or_empty = |value: Option<String>| Some(value.unwrap_or_default());
            match (name, instance) {
                ("[", _) => Some("{".into()),
                ("]", _) => Some("}".into()),
                ("scheme", Some(instance)) if instance.ssl_port.is_some() => Some("https".into()),
                ("scheme", _) => Some("http".into()),
                ("name", Some(instance)) => Some(instance.name.clone()),
                ("id", Some(instance)) => Some(instance.id.clone()),
                ("address", Some(instance)) => or_empty(instance.address.clone()),
                ("port", Some(instance)) => or_empty(instance.port.map(|p| p.to_string())),
                ("ssl-port", Some(instance)) => or_empty(instance.ssl_port.map(|p| p.to_string())),
                ("registration-time-utc", Some(instance)) => {
                    Some(instance.registration_time_utc.to_string())
                }
                ("service-type", Some(instance)) => {
                    Some(instance.service_type.name().to_ascii_lowercase())
                }
                _ => None,
            }
        };
        self.parts
            .iter()
            .filter_map(|part| {
                if part.variable {
                    known(&part.value)
                } else {
                    Some(part.value.clone())
                }
            })
            .collect()
    }

    pub(super) fn to_value(&self) -> Value {
        let parts = self
            .parts
            .iter()
            .map(|part| {
                let mut object = Map::new();
                object.insert("value".into(), Value::from(part.value.as_str()));
                object.insert("variable".into(), Value::Bool(part.variable));
                Value::Object(object)
            })
            .collect();
        let mut object = Map::new();
        object.insert("parts".into(), Value::Array(parts));
        Value::Object(object)
    }

    pub(super) fn from_value(value: &Value) -> Result<UriSpec> {
        let bad = || Error::invalid_argument(format!("uriSpec is {value}, not a URI spec"));
        let parts = value
            .get("parts")
            .and_then(Value::as_array)
            .ok_or_else(bad)?
            .iter()
            .map(|part| {
                Some(UriPart {
                    value: part.get("value")?.as_str()?.to_string(),
                    variable: part
                        .get("variable")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                })
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        Ok(UriSpec { parts })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::ServiceType;

    #[test]
    fn a_uri_is_built_as_curator_builds_it() {
        // Curator 5.9 built this instance's spec into the string asserted below.
        let mut instance = ServiceInstance::new("app");
        instance.id = "6b8d".into();
        instance.address = Some("10.0.0.5".into());
        instance.port = Some(8080);
        instance.ssl_port = Some(8443);
        instance.registration_time_utc = 1700000000000;
        instance.service_type = ServiceType::Dynamic;
        let spec = UriSpec::parse(
            "{scheme}://{address}:{port}/{name}/{id}/{ssl-port}/{registration-time-utc}/{service-type}/{unknown}/{[}x{]}",
        )
        .unwrap();
        assert_eq!(
            spec.build(Some(&instance), &[]),
            "https://10.0.0.5:8080/app/6b8d/8443/1700000000000/dynamic//{x}"
        );
        assert_eq!(
            spec.build(Some(&instance), &[("unknown", "U"), ("scheme", "ftp")]),
            "ftp://10.0.0.5:8080/app/6b8d/8443/1700000000000/dynamic/U/{x}"
        );
        assert_eq!(UriSpec::parse(&spec.template()).unwrap(), spec);
    }

    #[test]
    fn a_malformed_template_is_refused_saying_why() {
        for (template, why) in [
            ("{a{b}}", "inside"),
            ("a}", "preceded"),
            ("{open", "not closed"),
        ] {
            let err = UriSpec::parse(template).unwrap_err();
            assert!(err.message().contains(why), "{template}: {err}");
        }
    }
}
