//! The random writes the caches follow: creates, data changes and deletes (single, and a few
//! at once in one `multi`) on a small fixed set of names under `<root>/cache` — five `a<i>`,
//! five `b<j>` under each, now and then a `c0` below one of those (past a cache of depth 2) —
//! so that the same paths are created, changed, deleted and created again many times. A write
//! the server refuses (the parent missing, the node there, not empty, a stale version) is part
//! of the mix. Those are rewritten so often that a cache which misses a change (while it is
//! cut off, say) is soon put right by the next one; so each writer also keeps a few *cold*
//! nodes, `z/<w>-<n>`, each created once, changed at most once and deleted once: a change of
//! one that a cache misses is never repaired by a later event, and shows at the end. Persistent
//! nodes only: nothing changes by itself once the writers stop.
//!
//! Each writer has a client of its own through the worker's proxy, so every fault of the worker
//! hits it too; a session it loses is replaced.

use std::sync::Arc;
use std::time::Duration;

use fastrand::Rng;
use zookeeper_client as zk;

use super::super::{breathe, pick};
use crate::worker::Ctx;

/// Nodes on the first level, and on the second under each.
const TOPS: u32 = 5;
const LEAVES: u32 = 5;
/// Cold nodes a writer keeps at most.
const COLD: usize = 4;

#[derive(Clone, Copy)]
enum Op {
    Create,
    Set,
    Delete,
    /// A parent with a few children, in one transaction.
    CreateFamily,
    /// A parent and everything below it, in one transaction.
    DeleteFamily,
    /// Two data changes in one transaction.
    SetTwo,
    /// The cache's root: its data changed, or deleted when empty.
    Root,
    /// A cold node created, changed once or deleted.
    Cold,
}

pub fn open() -> zk::CreateOptions<'static> {
    zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())
}

/// Writes until the worker is told to finish.
pub async fn run(ctx: Arc<Ctx>, root: String, seed: u64) {
    let mut rng = Rng::with_seed(seed);
    let mut zk: Option<zk::Client> = None;
    let mut n = 0u64;
    // This writer's cold nodes, and whether each was changed already.
    let mut cold: Vec<(String, bool)> = Vec::new();
    while !ctx.finishing() {
        if zk.is_none() {
            zk = connect(&ctx).await;
        }
        let Some(client) = zk.clone() else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        n += 1;
        let data = format!("{}-{n}", ctx.name).into_bytes();
        let op = pick(
            &mut rng,
            &[
                (Op::Create, 10),
                (Op::Set, 8),
                (Op::Delete, 6),
                (Op::CreateFamily, 1),
                (Op::DeleteFamily, 1),
                (Op::SetTwo, 1),
                (Op::Root, 1),
                (Op::Cold, 2),
            ],
        );
        let written = if let Op::Cold = op {
            write_cold(&ctx, &client, &mut rng, &root, &mut cold, n).await
        } else {
            write(&ctx, &client, &mut rng, &root, op, &data).await
        };
        match written {
            Ok(()) => ctx.stats.bump("cache.write.applied"),
            Err(
                zk::Error::NoNode
                | zk::Error::NodeExists
                | zk::Error::NotEmpty
                | zk::Error::BadVersion,
            ) => ctx.stats.bump("cache.write.refused"),
            Err(err) => {
                ctx.error("cache.write", &zkrecipes::Error::from(err.clone()));
                if matches!(err, zk::Error::SessionExpired | zk::Error::ClientClosed) {
                    zk = None;
                }
            }
        }
        breathe(&mut rng).await;
        tokio::time::sleep(Duration::from_millis(rng.u64(0..25))).await;
    }
}

/// A client of the writers' own (`None` if it cannot connect now: a fault is under way).
pub async fn connect(ctx: &Ctx) -> Option<zk::Client> {
    let connecting = crate::secure::raw_connect(
        ctx.client.connect_string(),
        Some(ctx.client.session_timeout()),
        ctx.secure.as_ref(),
    );
    match tokio::time::timeout(Duration::from_secs(5), connecting).await {
        Ok(Ok(client)) => Some(client),
        Ok(Err(err)) => {
            ctx.error("cache.connect", &zkrecipes::Error::from(err));
            None
        }
        Err(_) => None,
    }
}

/// Creates a cold node (and `z`), changes one once, or deletes the oldest; a node is forgotten
/// only once its delete is known to be done, so that no cold node is written again after.
async fn write_cold(
    ctx: &Ctx,
    zk: &zk::Client,
    rng: &mut Rng,
    root: &str,
    cold: &mut Vec<(String, bool)>,
    n: u64,
) -> Result<(), zk::Error> {
    let unchanged = cold.iter().position(|(_, changed)| !changed);
    if cold.len() >= COLD || (!cold.is_empty() && rng.u8(..3) == 0) {
        if let (Some(at), true) = (unchanged, rng.bool()) {
            ctx.stats.bump("op.cache.cold_set");
            cold[at].1 = true;
            let data = format!("{}-{n}", ctx.name).into_bytes();
            return zk.set_data(&cold[at].0, &data, None).await.map(|_| ());
        }
        ctx.stats.bump("op.cache.cold_delete");
        return match zk.delete(&cold[0].0, None).await {
            Ok(()) | Err(zk::Error::NoNode) => {
                cold.remove(0);
                Ok(())
            }
            Err(err) => Err(err),
        };
    }
    ctx.stats.bump("op.cache.cold_create");
    let dir = format!("{root}/z");
    let path = format!("{dir}/{}-{n}", ctx.name);
    let data = format!("{}-{n}", ctx.name).into_bytes();
    let created = match zk.create(&path, &data, &open()).await {
        Err(zk::Error::NoNode) => match zk.create(&dir, b"", &open()).await {
            Ok(_) | Err(zk::Error::NodeExists) => zk.create(&path, &data, &open()).await,
            Err(err) => Err(err),
        },
        created => created,
    };
    match created {
        // A create whose answer was lost may have made it: kept, so that it is deleted too.
        Ok(_) | Err(zk::Error::ConnectionLoss) => {
            cold.push((path, false));
            created.map(|_| ())
        }
        Err(err) => Err(err),
    }
}

fn top(rng: &mut Rng, root: &str) -> String {
    format!("{root}/a{}", rng.u32(..TOPS))
}

fn leaf(rng: &mut Rng, root: &str) -> String {
    let top = top(rng, root);
    format!("{top}/b{}", rng.u32(..LEAVES))
}

/// A node on one of the three levels, mostly the second (the widest).
fn any(rng: &mut Rng, root: &str) -> String {
    match rng.u8(..10) {
        0..=2 => top(rng, root),
        3..=8 => leaf(rng, root),
        _ => format!("{}/c0", leaf(rng, root)),
    }
}

async fn write(
    ctx: &Ctx,
    zk: &zk::Client,
    rng: &mut Rng,
    root: &str,
    op: Op,
    data: &[u8],
) -> Result<(), zk::Error> {
    match op {
        Op::Create => {
            ctx.stats.bump("op.cache.create");
            let path = any(rng, root);
            match zk.create(&path, data, &open()).await {
                // The first level's parent is the root, which the writers create too.
                Err(zk::Error::NoNode)
                    if path.matches('/').count() == root.matches('/').count() + 1 =>
                {
                    ctx.stats.bump("op.cache.create_root");
                    zk.create(root, data, &open()).await.map(|_| ())
                }
                created => created.map(|_| ()),
            }
        }
        Op::Set => {
            ctx.stats.bump("op.cache.set");
            let path = any(rng, root);
            // Now and then a versioned write, mostly of a stale version.
            let version = (rng.u8(..4) == 0).then(|| rng.i32(0..3));
            zk.set_data(&path, data, version).await.map(|_| ())
        }
        Op::Delete => {
            ctx.stats.bump("op.cache.delete");
            let path = any(rng, root);
            zk.delete(&path, None).await
        }
        Op::CreateFamily => {
            ctx.stats.bump("op.cache.multi_create");
            let top = top(rng, root);
            let mut txn = zk.new_multi_writer();
            txn.add_create(&top, data, &open())?;
            for j in 0..rng.u32(1..=LEAVES) {
                txn.add_create(&format!("{top}/b{j}"), data, &open())?;
            }
            txn.commit().await.map(|_| ()).map_err(zk::Error::from)
        }
        Op::DeleteFamily => {
            ctx.stats.bump("op.cache.multi_delete");
            let top = top(rng, root);
            // Read, then deleted in one go: a write between the two fails it (NOT_EMPTY).
            let mut doomed = Vec::new();
            for leaf in zk.list_children(&top).await? {
                let leaf = format!("{top}/{leaf}");
                for deep in zk.list_children(&leaf).await.unwrap_or_default() {
                    doomed.push(format!("{leaf}/{deep}"));
                }
                doomed.push(leaf);
            }
            doomed.push(top);
            let mut txn = zk.new_multi_writer();
            for path in &doomed {
                txn.add_delete(path, None)?;
            }
            txn.commit().await.map(|_| ()).map_err(zk::Error::from)
        }
        Op::SetTwo => {
            ctx.stats.bump("op.cache.multi_set");
            let mut txn = zk.new_multi_writer();
            txn.add_set_data(&top(rng, root), data, None)?;
            txn.add_set_data(&leaf(rng, root), data, None)?;
            txn.commit().await.map(|_| ()).map_err(zk::Error::from)
        }
        Op::Root if rng.u8(..4) == 0 => {
            ctx.stats.bump("op.cache.delete_root");
            zk.delete(root, None).await
        }
        Op::Root => {
            ctx.stats.bump("op.cache.set_root");
            zk.set_data(root, data, None).await.map(|_| ())
        }
        // Written by `write_cold`, which keeps the writer's cold nodes.
        Op::Cold => Ok(()),
    }
}
