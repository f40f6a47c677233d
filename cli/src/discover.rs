//! `zkrecipes discover [NAME] [--watch] [--json] [--base /services]`: the services of Curator's
//! registry, or one service's instances (then every change, with --watch); `zkrecipes discover
//! [NAME...] --prometheus-sd FILE`: the instances as Prometheus file_sd JSON, written again on
//! every change until interrupted.

use std::path::Path;

use serde_json::{json, Value};
use zkrecipes::{Cache, Client, ServiceCacheEvent, ServiceDiscovery, ServiceInstance};

use crate::args::DiscoverArgs;
use crate::exit::{Failure, Outcome, CANNOT_CREATE, UNAVAILABLE};
use crate::lines::print_line;
use crate::supervise::Signals;

pub async fn run(client: &Client, args: DiscoverArgs, json: bool) -> Outcome {
    let registry = ServiceDiscovery::new(client, &args.base)?;
    if let Some(file) = &args.prometheus_sd {
        return prometheus_sd(client, &args.base, &args.names, file, json).await;
    }
    match (args.names.as_slice(), args.watch) {
        ([], false) => {
            let names = registry.query_for_names().await?;
            if json {
                print_line(&json!({ "base": args.base, "services": names }).to_string())?;
            } else {
                for name in names {
                    print_line(&name)?;
                }
            }
            Ok(0)
        }
        ([name], false) => {
            for instance in registry.query_for_instances(name).await? {
                print_line(&render(None, &instance, json))?;
            }
            Ok(0)
        }
        ([name], true) => watch(&registry, name, json).await,
        ([], true) => Err(Failure::usage("--watch follows one service: name it")),
        _ => Err(Failure::usage(
            "name one service (several only with --prometheus-sd)",
        )),
    }
}

/// The instances now (as ADDED), INITIALIZED, then every change, until interrupted.
async fn watch(registry: &ServiceDiscovery, name: &str, json: bool) -> Outcome {
    let cache = registry.service_cache(name)?;
    let mut signals = Signals::install()?;
    tokio::select! {
        started = cache.start() => started?,
        _ = signals.recv() => return Ok(0),
    }
    let (now, mut events) = cache.instances_and_subscribe();
    for instance in &now {
        print_line(&render(Some("ADDED"), instance, json))?;
    }
    print_line(&render_event(&ServiceCacheEvent::Initialized, json))?;
    loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = signals.recv() => {
                cache.close();
                return Ok(0);
            }
        };
        let Some(event) = event else {
            return Err(Failure::new(
                UNAVAILABLE,
                format!("stopped following {name}"),
            ));
        };
        print_line(&render_event(&event, json))?;
    }
}

fn render_event(event: &ServiceCacheEvent, json: bool) -> String {
    match event {
        ServiceCacheEvent::Added(instance) | ServiceCacheEvent::Removed(instance) => {
            render(Some(event.name()), instance, json)
        }
        ServiceCacheEvent::Changed { new, .. } => render(Some(event.name()), new, json),
        other if json => json!({ "event": other.name() }).to_string(),
        other => other.name().to_string(),
    }
}

/// One instance on one line: `[EVENT] id address:port [ssl:port] [disabled] [payload]`, or its
/// JSON as the registry holds it (under `instance`, beside `event`, for an event).
fn render(event: Option<&str>, instance: &ServiceInstance, json: bool) -> String {
    if json {
        let stored: Value = serde_json::from_slice(&instance.to_json()).unwrap_or(Value::Null);
        return match event {
            Some(event) => json!({ "event": event, "instance": stored }).to_string(),
            None => stored.to_string(),
        };
    }
    let or_dash = |value: Option<String>| value.unwrap_or_else(|| "-".to_string());
    let mut line = format!(
        "{} {}:{}",
        instance.id,
        or_dash(instance.address.clone()),
        or_dash(instance.port.map(|p| p.to_string()))
    );
    if let Some(ssl) = instance.ssl_port {
        line.push_str(&format!(" ssl:{ssl}"));
    }
    if !instance.enabled {
        line.push_str(" disabled");
    }
    if !instance.payload.is_null() {
        line.push_str(&format!(" {}", instance.payload));
    }
    // What another writer put in an address stays on one line.
    let line: String = line
        .chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect();
    match event {
        Some(event) => format!("{event} {line}"),
        None => line,
    }
}

/// Keeps `file` a Prometheus file_sd list of every enabled instance with an address and a port
/// of `names` (every service when empty): one target group per instance, labelled with its
/// service and id. One cache of the registry, two levels deep, follows every service at once.
async fn prometheus_sd(
    client: &Client,
    base: &str,
    names: &[String],
    file: &Path,
    json: bool,
) -> Outcome {
    let cache = Cache::tree(client, base, Some(2))?;
    let mut signals = Signals::install()?;
    let mut events = cache.subscribe();
    tokio::select! {
        started = cache.start() => started?,
        _ = signals.recv() => return Ok(0),
    }
    let mut written = None;
    loop {
        let groups = target_groups(base, names, &cache);
        if written.as_ref() != Some(&groups) {
            write_atomically(file, &groups)?;
            // One line per write: a script (or a test) knows the file is current.
            let targets = groups.as_array().map_or(0, Vec::len);
            let shown = file.display().to_string();
            print_line(&if json {
                json!({ "file": shown, "targets": targets }).to_string()
            } else {
                format!("wrote {targets} targets to {shown}")
            })?;
            written = Some(groups);
        }
        tokio::select! {
            event = events.recv() => if event.is_none() {
                return Err(Failure::new(UNAVAILABLE, format!("stopped following {base}")));
            },
            _ = signals.recv() => {
                cache.close();
                return Ok(0);
            }
        }
    }
}

fn target_groups(base: &str, names: &[String], cache: &Cache) -> Value {
    let prefix = format!("{}/", base.trim_end_matches('/'));
    let mut groups = Vec::new();
    for node in cache.snapshot() {
        let Some(below) = node.path.strip_prefix(&prefix) else {
            continue;
        };
        let Some((service, _)) = below.split_once('/') else {
            continue;
        };
        if !names.is_empty() && !names.iter().any(|n| n == service) {
            continue;
        }
        let Ok(instance) = ServiceInstance::from_json(&node.data) else {
            continue;
        };
        let (Some(address), Some(port)) = (&instance.address, instance.port.or(instance.ssl_port))
        else {
            continue;
        };
        if !instance.enabled {
            continue;
        }
        let target = if address.contains(':') {
            format!("[{address}]:{port}")
        } else {
            format!("{address}:{port}")
        };
        groups.push(json!({
            "targets": [target],
            "labels": { "service": service, "instance_id": instance.id },
        }));
    }
    Value::Array(groups)
}

/// Written beside `file` and renamed over it: Prometheus never reads half a file.
fn write_atomically(file: &Path, groups: &Value) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(groups).expect("JSON serializes");
    let mut partial = file.as_os_str().to_owned();
    partial.push(".partial");
    let fail = |err: std::io::Error| {
        Failure::new(CANNOT_CREATE, format!("writing {}: {err}", file.display()))
    };
    std::fs::write(&partial, text + "\n").map_err(fail)?;
    std::fs::rename(&partial, file).map_err(fail)
}
