//! `zkrecipes watch PATH [--children|--tree [--depth N]] [--json]`: prints the node (or its
//! children, or its subtree) as first read, then every change, until interrupted (status 0);
//! one line per event, so a pipeline sees each change once and in order.

use serde_json::json;
use zkrecipes::{Cache, CacheEvent, CacheScope, CachedNode, Client};

use crate::args::WatchArgs;
use crate::exit::{Failure, Outcome, UNAVAILABLE};
use crate::lines::print_line;
use crate::supervise::Signals;

pub async fn run(client: &Client, args: WatchArgs, json: bool) -> Outcome {
    let scope = if args.tree {
        CacheScope::Tree {
            max_depth: args.depth,
        }
    } else if args.children {
        CacheScope::Children
    } else {
        CacheScope::Node
    };
    let cache = Cache::new(client, &args.path, scope)?;
    let mut signals = Signals::install()?;
    let mut events = cache.subscribe();
    tokio::select! {
        started = cache.start() => started?,
        // Interrupting a watch is how it ends, as for `status --watch`: not a failure.
        _ = signals.recv() => return Ok(0),
    }
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
                format!("stopped following {}", args.path),
            ));
        };
        print_line(&render(&event, json))?;
        if args.once && event == CacheEvent::Initialized {
            cache.close();
            return Ok(0);
        }
    }
}

fn render(event: &CacheEvent, json: bool) -> String {
    if json {
        let mut line = json!({ "event": event.name() });
        if let Some(node) = event.node() {
            line["path"] = json!(node.path);
            line["data"] = json!(String::from_utf8_lossy(&node.data));
            line["version"] = json!(node.stat.version);
            line["czxid"] = json!(node.stat.czxid);
            line["mzxid"] = json!(node.stat.mzxid);
            line["ephemeral_owner"] = json!(format!("0x{:x}", node.stat.ephemeral_owner));
        }
        if let CacheEvent::Changed { old, .. } = event {
            line["old_data"] = json!(String::from_utf8_lossy(&old.data));
        }
        return line.to_string();
    }
    match event.node() {
        Some(node) => format!("{} {} {}", event.name(), node.path, shown(node)),
        None => event.name().to_string(),
    }
}

/// The data as text, one line: a line break or a control byte would split or garble the line.
fn shown(node: &CachedNode) -> String {
    String::from_utf8_lossy(&node.data)
        .escape_debug()
        .to_string()
}
