//! One read of one node for the cache: its data and stat, its children when the cache goes
//! deeper, and (on a server without persistent watches) the one-shot watches that report its
//! next change.

use zookeeper_client as zk;

use super::tree::Found;
use super::NodeStat;

/// Which one-shot watch fired: a data watch (also set by `exists` on a missing root) or a
/// child watch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum WatchKind {
    Data,
    Children,
}

/// What to read of one node.
pub(super) struct Ask {
    pub path: String,
    /// List its children (the cache goes below it). With persistent watches only when the
    /// node has children; with one-shot watches always, for the child watch.
    pub list_children: bool,
    pub arm_data: bool,
    pub arm_children: bool,
    /// A missing root is watched for its creation (`exists`); a missing descendant is
    /// reported by its parent's child watch.
    pub is_root: bool,
}

pub(super) struct Reading {
    pub path: String,
    pub found: Found,
    /// Its children's names, if asked for and it exists (and was not deleted and created again
    /// between the two reads: the names would be of another incarnation).
    pub children: Option<Vec<String>>,
    /// The `pzxid` the children were listed at.
    pub listed_pzxid: Option<i64>,
    pub watches: Vec<(WatchKind, zk::OneshotWatcher)>,
}

pub(super) async fn read(zk: zk::Client, ask: Ask) -> Result<Reading, zk::Error> {
    let path = ask.path.as_str();
    let mut watches = Vec::new();
    let found = if ask.arm_data {
        match zk.get_and_watch_data(path).await {
            Ok((data, stat, watch)) => {
                watches.push((WatchKind::Data, watch));
                Some((data, stat))
            }
            Err(zk::Error::NoNode) if ask.is_root => {
                let (exists, watch) = zk.check_and_watch_stat(path).await?;
                watches.push((WatchKind::Data, watch));
                match exists {
                    // Created between the two requests: the `exists` watch is its data watch.
                    Some(_) => plain_data(&zk, path).await?,
                    None => None,
                }
            }
            Err(zk::Error::NoNode) => None,
            Err(err) => return Err(err),
        }
    } else {
        plain_data(&zk, path).await?
    };
    let has_children = found
        .as_ref()
        .is_some_and(|(_, stat)| stat.num_children > 0);
    // Listed with the stat they were listed at (the `pzxid` that saw them created).
    let listed = if found.is_none() || !ask.list_children || !(has_children || ask.arm_children) {
        None
    } else if ask.arm_children {
        match zk.get_and_watch_children(path).await {
            Ok((children, stat, watch)) => {
                watches.push((WatchKind::Children, watch));
                Some((children, stat))
            }
            // Deleted since the data read: its data watch reports that.
            Err(zk::Error::NoNode) => None,
            Err(err) => return Err(err),
        }
    } else {
        match zk.get_children(path).await {
            Ok(listed) => Some(listed),
            Err(zk::Error::NoNode) => None,
            Err(err) => return Err(err),
        }
    };
    let czxid = found.as_ref().map(|(_, stat)| stat.czxid);
    let (children, listed_pzxid) = match listed {
        Some((children, stat)) if Some(stat.czxid) == czxid => (Some(children), Some(stat.pzxid)),
        _ => (None, None),
    };
    let found = found.map(|(data, stat)| (data, stat_of(&stat)));
    Ok(Reading {
        path: ask.path,
        found,
        children,
        listed_pzxid,
        watches,
    })
}

async fn plain_data(zk: &zk::Client, path: &str) -> Result<Option<(Vec<u8>, zk::Stat)>, zk::Error> {
    match zk.get_data(path).await {
        Ok(read) => Ok(Some(read)),
        Err(zk::Error::NoNode) => Ok(None),
        Err(err) => Err(err),
    }
}

fn stat_of(stat: &zk::Stat) -> NodeStat {
    NodeStat {
        czxid: stat.czxid,
        mzxid: stat.mzxid,
        pzxid: stat.pzxid,
        ctime: stat.ctime,
        mtime: stat.mtime,
        version: stat.version,
        cversion: stat.cversion,
        aversion: stat.aversion,
        ephemeral_owner: stat.ephemeral_owner,
        data_length: stat.data_length,
        num_children: stat.num_children,
    }
}
