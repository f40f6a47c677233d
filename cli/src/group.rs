//! `zkrecipes group PATH --id NAME [--payload DATA] -- CMD`: a member of Curator's GroupMember
//! group while CMD runs (joining again by itself after a session expiry), and `zkrecipes group
//! PATH --list`: the members with their payloads.

use serde_json::json;
use zkrecipes::{Cache, Client, GroupMember};

use crate::args::GroupArgs;
use crate::exit::Outcome;
use crate::lines::print_line;
use crate::supervise::{Cmd, Input, Signals};

pub async fn run(client: &Client, args: GroupArgs, json: bool) -> Outcome {
    let Some(id) = args.id else {
        return list(client, &args.path, json).await;
    };
    let payload = args.payload.unwrap_or_default().into_bytes();
    let member = GroupMember::new(client, &args.path, &id, payload)?;
    let mut signals = Signals::install()?;
    tokio::select! {
        joined = member.start() => joined?,
        signal = signals.recv() => {
            let _ = member.close().await;
            return Ok(128 + signal);
        }
    }
    let env = [
        ("ZKRECIPES_GROUP_PATH", args.path.clone()),
        ("ZKRECIPES_MEMBER_ID", id.clone()),
    ];
    let mut cmd = match Cmd::spawn(&args.command, &env, Input::Inherit, args.kill_after) {
        Ok(cmd) => cmd,
        Err(failure) => {
            let _ = member.close().await;
            return Err(failure);
        }
    };
    let status = loop {
        tokio::select! {
            status = cmd.wait() => break status,
            signal = signals.recv() => cmd.pass_on(signal),
        }
    };
    member.close().await?;
    Ok(status)
}

/// The members now, one per line (`id payload`), or one JSON object.
async fn list(client: &Client, path: &str, json: bool) -> Outcome {
    let cache = Cache::children(client, path)?;
    cache.start().await?;
    let members = cache.snapshot();
    cache.close();
    let name = |path: &str| path[path.rfind('/').map_or(0, |i| i + 1)..].to_string();
    if json {
        let map: serde_json::Map<String, serde_json::Value> = members
            .iter()
            .map(|m| (name(&m.path), json!(String::from_utf8_lossy(&m.data))))
            .collect();
        print_line(&json!({ "path": path, "members": map }).to_string())?;
    } else {
        for member in &members {
            let payload = String::from_utf8_lossy(&member.data)
                .escape_debug()
                .to_string();
            print_line(&format!("{} {payload}", name(&member.path)))?;
        }
    }
    Ok(0)
}
