//! What the driver does with ZooKeeper once the workers are gone: drain the
//! queue, scan for ephemeral nodes left behind, delete the seed's tree.

use std::time::Duration;

use tokio::time::Instant;
use zkrecipes::{Client, ClientOptions, DistributedQueue};

use crate::secure::{raw_connect, Secure};

/// Where the driver's own clients connect: directly to the servers, secured
/// like the workers on a secured ensemble.
pub struct Target<'a> {
    pub connect: &'a str,
    pub secure: Option<&'a Secure>,
}

impl Target<'_> {
    async fn raw(&self) -> Result<zookeeper_client::Client, zookeeper_client::Error> {
        raw_connect(self.connect, None, self.secure).await
    }
}

/// Takes every item left in the queue, once the workers are gone.
pub async fn drain(target: &Target<'_>, dir: &str) -> (Vec<String>, Option<String>) {
    let mut options = ClientOptions {
        session_timeout: Duration::from_secs(10),
        ..Default::default()
    };
    if let Some(secure) = target.secure {
        options = secure.options(options);
    }
    let client = match Client::connect(target.connect, options).await {
        Ok(client) => client,
        Err(err) => return (Vec::new(), Some(format!("cannot connect to drain: {err}"))),
    };
    let mut items = Vec::new();
    let mut error = None;
    match DistributedQueue::new(&client, dir) {
        Ok(queue) => {
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                match queue.poll().await {
                    Ok(Some(data)) => items.push(String::from_utf8_lossy(&data).into_owned()),
                    Ok(None) => break,
                    Err(err) if Instant::now() < deadline => {
                        error = Some(format!("drain: {err}"));
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    Err(err) => {
                        error = Some(format!("drain gave up: {err}"));
                        break;
                    }
                }
            }
        }
        Err(err) => error = Some(format!("drain: {err}")),
    }
    client.close().await;
    (items, error)
}

/// What the work queue holds once the workers are gone and the sessions of
/// the killed ones expired: read directly, so that the driver takes nothing.
#[derive(Default)]
pub struct WorkState {
    /// Jobs still queued: (id, entry name, the entry's version = its deliveries).
    pub queued: Vec<(String, String, i32)>,
    /// Ids in `dead/`.
    pub dead: Vec<String>,
    /// Claims (`taken/` nodes) left.
    pub claims: Vec<String>,
}

pub async fn work_state(target: &Target<'_>, dir: &str) -> Result<WorkState, String> {
    let zk = target
        .raw()
        .await
        .map_err(|err| format!("cannot connect to read the work queue: {err}"))?;
    let children = |path: String| {
        let zk = zk.clone();
        async move {
            match zk.list_children(&path).await {
                Ok(names) => Ok(names),
                Err(zookeeper_client::Error::NoNode) => Ok(Vec::new()),
                Err(err) => Err(format!("list {path}: {err}")),
            }
        }
    };
    let mut state = WorkState::default();
    for name in children(format!("{dir}/entries")).await? {
        match zk.get_data(&format!("{dir}/entries/{name}")).await {
            Ok((data, stat)) => {
                let id = String::from_utf8_lossy(&data).into_owned();
                state.queued.push((id, name, stat.version));
            }
            Err(zookeeper_client::Error::NoNode) => {}
            Err(err) => return Err(format!("read {dir}/entries/{name}: {err}")),
        }
    }
    for name in children(format!("{dir}/dead")).await? {
        let (data, _) = zk
            .get_data(&format!("{dir}/dead/{name}"))
            .await
            .map_err(|err| format!("read {dir}/dead/{name}: {err}"))?;
        state.dead.push(String::from_utf8_lossy(&data).into_owned());
    }
    state.claims = children(format!("{dir}/taken")).await?;
    Ok(state)
}

/// The atomic long's value once the workers are gone (0 while its node does not exist), read
/// directly in Curator's encoding: 8 bytes big-endian, empty is 0.
pub async fn counter_value(target: &Target<'_>, path: &str) -> Result<i64, String> {
    let zk = target
        .raw()
        .await
        .map_err(|err| format!("cannot connect to read the counter: {err}"))?;
    match zk.get_data(path).await {
        Ok((data, _)) if data.is_empty() => Ok(0),
        Ok((data, _)) => <[u8; 8]>::try_from(data.as_slice())
            .map(i64::from_be_bytes)
            .map_err(|_| format!("{path} holds {} bytes, not 8", data.len())),
        Err(zookeeper_client::Error::NoNode) => Ok(0),
        Err(err) => Err(format!("read {path}: {err}")),
    }
}

/// Every ephemeral node under `root`, waiting out the sessions of killed
/// workers (a session expires within its timeout plus a server tick).
pub async fn orphans(
    target: &Target<'_>,
    root: &str,
    session: Duration,
) -> Result<(usize, Vec<(String, i64)>), String> {
    let zk = target
        .raw()
        .await
        .map_err(|err| format!("cannot connect for the orphan scan: {err}"))?;
    let deadline = Instant::now() + session + Duration::from_secs(2);
    loop {
        let (scanned, found) = zk_harness::ephemerals(&zk, root)
            .await
            .map_err(|err| format!("scan: {err}"))?;
        if found.is_empty() || Instant::now() >= deadline {
            return Ok((scanned, found));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Deletes the seed's tree (best effort), so that a shared server stays clean.
pub async fn cleanup(target: &Target<'_>, root: &str) {
    let Ok(zk) = target.raw().await else {
        return;
    };
    let mut order = vec![root.to_string()];
    let mut at = 0;
    while at < order.len() {
        if let Ok(children) = zk.list_children(&order[at]).await {
            let parent = order[at].clone();
            order.extend(children.into_iter().map(|c| format!("{parent}/{c}")));
        }
        at += 1;
    }
    for path in order.iter().rev() {
        let _ = zk.delete(path, None).await;
    }
}
