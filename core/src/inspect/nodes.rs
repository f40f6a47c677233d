//! Reading a directory's coordination nodes into `NodeStatus`es.

use super::*;

pub(super) async fn list(client: &Client, dir: &str) -> Result<Option<Vec<String>>> {
    let listed = client
        .retrying(None, |zk| async move { zk.list_children(dir).await })
        .await;
    match listed {
        Ok(children) => Ok(Some(children)),
        Err(err) if err.code() == ErrorCode::NoNode => Ok(None),
        Err(err) => Err(err),
    }
}

/// Data and stat of each child; a child deleted meanwhile is left out.
pub(super) async fn read_nodes(
    zk: &zk::Client,
    dir: &str,
    names: &[String],
) -> Result<Vec<(String, Vec<u8>, zk::Stat)>> {
    let paths: Vec<String> = names.iter().map(|n| format!("{dir}/{n}")).collect();
    // All requests are sent before the first reply is awaited.
    let requests: Vec<_> = paths.iter().map(|p| zk.get_data(p)).collect();
    let mut read = Vec::with_capacity(names.len());
    for (name, request) in names.iter().zip(requests) {
        match request.await {
            Ok((data, stat)) => read.push((name.clone(), data, stat)),
            Err(zk::Error::NoNode) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(read)
}

pub(super) async fn lock_nodes(
    zk: &zk::Client,
    dir: &str,
    names: &[String],
) -> Result<Vec<NodeStatus>> {
    let ordered = contenders::sorted(names);
    let names: Vec<String> = ordered.iter().map(|c| c.name.clone()).collect();
    let read = read_nodes(zk, dir, &names).await?;
    // The lock's own rule: a writer holds when it is first; a reader holds
    // when no writer is before it.
    let mut writer_seen = false;
    let mut nodes = Vec::with_capacity(read.len());
    for (i, (name, data, stat)) in read.into_iter().enumerate() {
        let kind = contenders::Contender::parse(&name).map(|c| c.kind);
        let holds = match kind {
            Some(Kind::Read) => !writer_seen,
            _ => i == 0,
        };
        if kind != Some(Kind::Read) {
            writer_seen = true;
        }
        let role = if holds { Role::Holder } else { Role::Waiter };
        let kind = Some(if kind == Some(Kind::Read) {
            "read"
        } else {
            "write"
        });
        nodes.push(node(name, role, kind, &data, &stat));
    }
    Ok(nodes)
}

pub(super) async fn election_nodes(
    zk: &zk::Client,
    dir: &str,
    mut names: Vec<String>,
) -> Result<Vec<NodeStatus>> {
    contenders::sort_by_sequence(&mut names, |n| {
        contenders::split_sequence(n).map_or(0, |(_, s)| s)
    });
    let read = read_nodes(zk, dir, &names).await?;
    Ok(read
        .into_iter()
        .enumerate()
        .map(|(i, (name, data, stat))| {
            let role = if i == 0 {
                Role::Leader
            } else {
                Role::Candidate
            };
            node(name, role, None, &data, &stat)
        })
        .collect())
}

pub(super) fn node(
    name: String,
    role: Role,
    kind: Option<&'static str>,
    data: &[u8],
    stat: &zk::Stat,
) -> NodeStatus {
    let (recipe, libraries) = match role {
        Role::Claim => ("work queue", &["zkrecipes", "kazoo"][..]),
        Role::Member => (
            "double barrier",
            if name.len() == 32 {
                &["kazoo"][..]
            } else {
                &["zkrecipes", "curator"][..]
            },
        ),
        Role::Instance => (
            "service discovery",
            &["zkrecipes", "curator", "spring cloud zookeeper"][..],
        ),
        _ => layout(&name, data).unwrap_or(("lock", &["unknown"])),
    };
    let mut text = String::from_utf8_lossy(data).into_owned();
    if text.len() > DATA_SHOWN {
        let mut end = DATA_SHOWN;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    let session = (stat.ephemeral_owner != 0).then_some(stat.ephemeral_owner);
    NodeStatus {
        sequence: contenders::split_sequence(&name).map(|(_, s)| s),
        name,
        role,
        kind,
        recipe,
        libraries,
        data: text,
        session,
        session_state: if session.is_some() {
            SessionState::Unknown
        } else {
            SessionState::Persistent
        },
        created_ms: stat.ctime,
        czxid: stat.czxid,
        orphan: None,
    }
}

pub(super) fn flag_orphans(nodes: &mut [NodeStatus]) {
    for node in nodes {
        node.orphan = match node.session_state {
            SessionState::Disconnected => Some(format!(
                "session {:#x} has no connection to any server: its process died or is cut off; \
                 the server deletes this node only when the session expires",
                node.session.unwrap_or_default()
            )),
            SessionState::Persistent if node.role == Role::Instance => None,
            SessionState::Persistent => Some(
                "persistent: no session will ever delete it; it stays in line until somebody does"
                    .to_string(),
            ),
            SessionState::Alive | SessionState::Unknown => None,
        };
    }
}
