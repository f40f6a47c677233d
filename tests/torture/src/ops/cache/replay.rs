//! A cache's events replayed over the snapshot `snapshot_and_subscribe` gave with them: every
//! event must fit the copy replayed so far, and the copy at the end must be the cache's.
//!
//! An event fits when it is the difference between two states of a cache that follows the
//! contract (core/src/cache/mod.rs): `CREATED` of a node not in the copy, under a parent that
//! is (the root excepted), within the cache's depth, of an incarnation newer than any before
//! it at that path (an older one is a resurrection); `CHANGED` whose `old` is the copy's node
//! exactly, to a newer state (`mzxid` up) of the same incarnation (`czxid`); `DELETED` of the
//! copy's node exactly, after its children; `INITIALIZED` at most once.

use std::collections::{BTreeMap, HashMap};

use zkrecipes::{CacheEvent, CachedNode};

/// Misfits kept for the report (the rest only counted).
const KEPT: usize = 6;

pub struct Replay {
    root: String,
    max_depth: Option<u32>,
    copy: BTreeMap<String, CachedNode>,
    /// The newest incarnation (`czxid`) each path had in the copy.
    incarnations: HashMap<String, i64>,
    /// The last few events of each path, and of the connection, for a misfit's report.
    recent: HashMap<String, Vec<String>>,
    /// Events by name.
    pub counts: BTreeMap<&'static str, u64>,
    misfits: Vec<String>,
    misfit_count: usize,
}

impl Replay {
    pub fn new(root: &str, max_depth: Option<u32>, snapshot: Vec<CachedNode>) -> Replay {
        let mut replay = Replay {
            root: root.to_string(),
            max_depth,
            copy: BTreeMap::new(),
            incarnations: HashMap::new(),
            recent: HashMap::new(),
            counts: BTreeMap::new(),
            misfits: Vec::new(),
            misfit_count: 0,
        };
        for problem in shape(root, max_depth, &snapshot) {
            replay.misfit(format!("first snapshot: {problem}"));
        }
        for node in snapshot {
            replay
                .incarnations
                .insert(node.path.clone(), node.stat.czxid);
            replay.copy.insert(node.path.clone(), node);
        }
        replay
    }

    pub fn misfit(&mut self, text: String) {
        self.misfit_count += 1;
        if self.misfits.len() < KEPT {
            self.misfits.push(text);
        }
    }

    /// What did not fit, the first few of them, with how many there were.
    pub fn misfits(&self) -> (usize, &[String]) {
        (self.misfit_count, &self.misfits)
    }

    pub fn events(&self) -> u64 {
        self.counts.values().sum()
    }

    pub fn apply(&mut self, event: &CacheEvent) {
        let n = self.events() + 1;
        *self.counts.entry(event.name()).or_insert(0) += 1;
        let before = self.misfit_count;
        if let Some(node) = event.node() {
            if let Some(why) = outside(&self.root, self.max_depth, &node.path) {
                self.misfit(format!("event {n} {} {}: {why}", event.name(), node.path));
            }
        }
        self.fit(n, event);
        let key = event
            .node()
            .map_or("", |node| node.path.as_str())
            .to_string();
        let line = match event.node() {
            Some(node) => format!("{n} {} {}", event.name(), brief(node)),
            None => format!("{n} {}", event.name()),
        };
        if self.misfit_count > before {
            // What came before it, on its path and on the connection.
            let path = self
                .recent
                .get(&key)
                .map_or(String::new(), |r| r.join("; "));
            let connection = self.recent.get("").map_or(String::new(), |r| r.join("; "));
            if let Some(last) = self.misfits.last_mut() {
                last.push_str(&format!(" (before it: {path}; connection: {connection})"));
            }
        }
        let recent = self.recent.entry(key).or_default();
        recent.push(line);
        if recent.len() > 4 {
            recent.remove(0);
        }
    }

    fn fit(&mut self, n: u64, event: &CacheEvent) {
        match event {
            CacheEvent::Created(node) => self.created(n, node),
            CacheEvent::Changed { old, new } => self.changed(n, old, new),
            CacheEvent::Deleted(node) => self.deleted(n, node),
            CacheEvent::Initialized if self.counts["INITIALIZED"] > 1 => {
                self.misfit(format!("event {n}: INITIALIZED again"))
            }
            _ => {}
        }
    }

    fn created(&mut self, n: u64, node: &CachedNode) {
        let path = &node.path;
        if let Some(had) = self.copy.get(path) {
            let text = format!(
                "event {n} CREATED {path} (czxid {:#x}) while the copy holds it (czxid {:#x})",
                node.stat.czxid, had.stat.czxid
            );
            self.misfit(text);
        } else if *path != self.root && !self.copy.contains_key(parent(path)) {
            self.misfit(format!(
                "event {n} CREATED {path} while its parent is not in the copy"
            ));
        }
        if let Some(last) = self.incarnations.get(path) {
            if node.stat.czxid <= *last {
                let text = format!(
                    "event {n} CREATED {path} of czxid {:#x}, not newer than the one it had before ({last:#x})",
                    node.stat.czxid
                );
                self.misfit(text);
            }
        }
        self.incarnations.insert(path.clone(), node.stat.czxid);
        self.copy.insert(path.clone(), node.clone());
    }

    /// An event about a node the copy holds as `expected` (CHANGED from it, DELETED): a misfit
    /// when it holds none there, or another.
    fn expect_held(&mut self, n: u64, event: &str, expected: &CachedNode) {
        let path = &expected.path;
        match self.copy.get(path) {
            None => self.misfit(format!(
                "event {n} {event} {path} while it is not in the copy"
            )),
            Some(had) if had != expected => {
                let text = format!(
                    "event {n} {event} {} while the copy holds {}",
                    brief(expected),
                    brief(had)
                );
                self.misfit(text);
            }
            Some(_) => {}
        }
    }

    fn changed(&mut self, n: u64, old: &CachedNode, new: &CachedNode) {
        self.expect_held(n, "CHANGED", old);
        if old.path != new.path
            || old.stat.czxid != new.stat.czxid
            || new.stat.mzxid <= old.stat.mzxid
        {
            self.misfit(format!(
                "event {n} CHANGED {} to {}: not a newer state of one node",
                brief(old),
                brief(new)
            ));
        }
        self.copy.insert(new.path.clone(), new.clone());
    }

    fn deleted(&mut self, n: u64, node: &CachedNode) {
        self.expect_held(n, "DELETED", node);
        let path = &node.path;
        let prefix = format!("{path}/");
        if let Some(child) = self.copy.keys().find(|p| p.starts_with(&prefix)) {
            let text = format!("event {n} DELETED {path} while {child} is still in the copy");
            self.misfit(text);
        }
        self.copy.remove(path);
    }

    /// The copy's differences from the cache's `snapshot`, leaving `except` out of both.
    pub fn differences(&self, snapshot: &[CachedNode], except: &str) -> Vec<String> {
        let cached = by_path(snapshot, except);
        let mut differences = Vec::new();
        for (path, node) in self.copy.iter().filter(|(p, _)| *p != except) {
            match cached.get(path.as_str()) {
                None => differences.push(format!("replayed {} is not in the cache", brief(node))),
                Some(c) if *c != node => differences.push(format!(
                    "replayed {} where the cache holds {}",
                    brief(node),
                    brief(c)
                )),
                Some(_) => {}
            }
        }
        for (path, node) in &cached {
            if !self.copy.contains_key(*path) {
                differences.push(format!("cached {} is not in the replay", brief(node)));
            }
        }
        differences
    }
}

/// What is wrong with the shape of a snapshot: not sorted, a node outside the cache's scope,
/// a node whose parent is not cached.
pub fn shape(root: &str, max_depth: Option<u32>, snapshot: &[CachedNode]) -> Vec<String> {
    let mut problems = Vec::new();
    let paths: Vec<&str> = snapshot.iter().map(|n| n.path.as_str()).collect();
    if paths.windows(2).any(|w| w[0] >= w[1]) {
        problems.push("not sorted by path".to_string());
    }
    for path in &paths {
        if let Some(why) = outside(root, max_depth, path) {
            problems.push(format!("{path}: {why}"));
        } else if *path != root && paths.binary_search(&parent(path)).is_err() {
            problems.push(format!("{path} without its parent"));
        }
    }
    problems
}

/// Why `path` is not in the scope of a tree cache of `root` (`None` if it is).
fn outside(root: &str, max_depth: Option<u32>, path: &str) -> Option<String> {
    if path == root {
        return None;
    }
    let Some(rest) = path.strip_prefix(&format!("{root}/")) else {
        return Some("outside the cache's root".to_string());
    };
    let depth = rest.matches('/').count() as u32 + 1;
    match max_depth {
        Some(max) if depth > max => Some(format!("{depth} levels deep, past max_depth {max}")),
        _ => None,
    }
}

fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// A node as one line: path, data, czxid, mzxid.
/// A cache's `snapshot` by path, leaving `except` out.
pub fn by_path<'a>(snapshot: &'a [CachedNode], except: &str) -> BTreeMap<&'a str, &'a CachedNode> {
    snapshot
        .iter()
        .filter(|n| n.path != except)
        .map(|n| (n.path.as_str(), n))
        .collect()
}

pub fn brief(node: &CachedNode) -> String {
    format!(
        "{} [{} czxid={:#x} mzxid={:#x}]",
        node.path,
        String::from_utf8_lossy(&node.data),
        node.stat.czxid,
        node.stat.mzxid
    )
}
