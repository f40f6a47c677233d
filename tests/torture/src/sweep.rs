//! What the driver does with ZooKeeper once the workers are gone: drain the
//! queue, scan for ephemeral nodes left behind, delete the seed's tree.

use std::time::Duration;

use tokio::time::Instant;
use zkrecipes::{Client, ClientOptions, DistributedQueue};

/// Takes every item left in the queue, once the workers are gone.
pub async fn drain(connect: &str, dir: &str) -> (Vec<String>, Option<String>) {
    let options = ClientOptions {
        session_timeout: Duration::from_secs(10),
        ..Default::default()
    };
    let client = match Client::connect(connect, options).await {
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

/// Every ephemeral node under `root`, waiting out the sessions of killed
/// workers (a session expires within its timeout plus a server tick).
pub async fn orphans(
    connect: &str,
    root: &str,
    session: Duration,
) -> Result<(usize, Vec<(String, i64)>), String> {
    let zk = zookeeper_client::Client::connect(connect)
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
pub async fn cleanup(connect: &str, root: &str) {
    let Ok(zk) = zookeeper_client::Client::connect(connect).await else {
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
