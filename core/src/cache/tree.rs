//! The cache's copy of its subtree, and the one place that turns reads into events: every
//! event is the difference between the copy and what a read found, so nothing is reported
//! twice and a node is present only because a read found it.

use std::collections::BTreeMap;
use std::ops::Bound;

use super::{CacheEvent, CachedNode, NodeStat};
#[cfg(test)]
use crate::path::join;

/// What one read of a node found: `None` if it does not exist.
pub(super) type Found = Option<(Vec<u8>, NodeStat)>;

pub(super) struct Tree {
    root: String,
    /// By full path; sorted, so a node's subtree is one range of keys.
    nodes: BTreeMap<String, (Vec<u8>, NodeStat)>,
}

impl Tree {
    pub(super) fn new(root: &str) -> Tree {
        Tree {
            root: root.to_string(),
            nodes: BTreeMap::new(),
        }
    }

    pub(super) fn get(&self, path: &str) -> Option<CachedNode> {
        let (key, (data, stat)) = self.nodes.get_key_value(path)?;
        Some(node(key, data, stat))
    }

    pub(super) fn contains(&self, path: &str) -> bool {
        self.nodes.contains_key(path)
    }

    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    pub(super) fn nodes(&self) -> impl Iterator<Item = CachedNode> + '_ {
        self.nodes
            .iter()
            .map(|(path, (data, stat))| node(path, data, stat))
    }

    /// The names of `path`'s cached children, sorted.
    pub(super) fn children_of(&self, path: &str) -> Vec<String> {
        let prefix = prefix(path);
        self.below(path)
            .filter_map(|key| {
                let name = &key[prefix.len()..];
                (!name.contains('/')).then(|| name.to_string())
            })
            .collect()
    }

    /// Takes what a read of `path` found.
    pub(super) fn apply(&mut self, path: &str, found: Found) -> Vec<CacheEvent> {
        let mut events = Vec::new();
        match found {
            None => self.remove_subtree(path, &mut events),
            Some((data, stat)) => {
                if path != self.root && !self.contains(parent(path)) {
                    // Its parent was read as gone after this read: so is this node now.
                    return events;
                }
                self.upsert(path, data, stat, &mut events);
            }
        }
        events
    }

    /// Takes a whole new reading of the subtree (after a reconnect): reports exactly the
    /// difference, deletions deepest first, then creations and changes parents first.
    pub(super) fn replace(
        &mut self,
        found: BTreeMap<String, (Vec<u8>, NodeStat)>,
    ) -> Vec<CacheEvent> {
        let mut events = Vec::new();
        let gone: Vec<String> = self
            .nodes
            .keys()
            .filter(|path| !found.contains_key(*path))
            .cloned()
            .collect();
        for path in gone.iter().rev() {
            if let Some((data, stat)) = self.nodes.remove(path) {
                events.push(CacheEvent::Deleted(node(path, &data, &stat)));
            }
        }
        let mut by_depth: Vec<(String, (Vec<u8>, NodeStat))> = found.into_iter().collect();
        by_depth.sort_by_key(|(path, _)| (depth(path), path.clone()));
        for (path, (data, stat)) in by_depth {
            if path == self.root || self.contains(parent(&path)) {
                self.upsert(&path, data, stat, &mut events);
            }
        }
        events
    }

    fn upsert(&mut self, path: &str, data: Vec<u8>, stat: NodeStat, events: &mut Vec<CacheEvent>) {
        match self.nodes.get(path) {
            None => {}
            Some((_, old)) if old.czxid != stat.czxid => {
                // Deleted and created again between two reads: both happened.
                self.remove_subtree(path, events);
            }
            Some((_, old)) if old.mzxid >= stat.mzxid => return,
            Some(_) => {
                let (old_data, old_stat) =
                    self.nodes.insert(path.to_string(), (data, stat)).unwrap();
                let (new_data, new_stat) = &self.nodes[path];
                events.push(CacheEvent::Changed {
                    old: node(path, &old_data, &old_stat),
                    new: node(path, new_data, new_stat),
                });
                return;
            }
        }
        events.push(CacheEvent::Created(node(path, &data, &stat)));
        self.nodes.insert(path.to_string(), (data, stat));
    }

    /// Removes `path` and everything cached below it, deepest first.
    fn remove_subtree(&mut self, path: &str, events: &mut Vec<CacheEvent>) {
        let mut doomed: Vec<String> = self.below(path).cloned().collect();
        if self.contains(path) {
            doomed.insert(0, path.to_string());
        }
        for doomed in doomed.iter().rev() {
            if let Some((data, stat)) = self.nodes.remove(doomed) {
                events.push(CacheEvent::Deleted(node(doomed, &data, &stat)));
            }
        }
    }

    /// The cached paths strictly below `path`, sorted.
    fn below<'a>(&'a self, path: &'a str) -> impl Iterator<Item = &'a String> + 'a {
        let prefix = prefix(path);
        self.nodes
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .map(|(key, _)| key)
            // The filesystem root's prefix, "/", is also its own path.
            .skip_while(move |key| key.as_str() == path)
            .take_while(move |key| key.starts_with(&prefix))
    }
}

fn node(path: &str, data: &[u8], stat: &NodeStat) -> CachedNode {
    CachedNode {
        path: path.to_string(),
        data: data.to_vec(),
        stat: *stat,
    }
}

/// What every path below `path` starts with.
fn prefix(path: &str) -> String {
    if path == "/" {
        "/".to_string()
    } else {
        format!("{path}/")
    }
}

pub(super) fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// Levels below the filesystem root.
fn depth(path: &str) -> usize {
    path.matches('/').count() - usize::from(path == "/")
}

/// Levels of `path` below `root` (`None` if it is not in `root`'s subtree).
pub(super) fn depth_below(root: &str, path: &str) -> Option<u32> {
    if path == root {
        return Some(0);
    }
    let rest = path.strip_prefix(&prefix(root))?;
    Some(rest.matches('/').count() as u32 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(czxid: i64, mzxid: i64) -> NodeStat {
        NodeStat {
            czxid,
            mzxid,
            pzxid: 0,
            ctime: 0,
            mtime: 0,
            version: 0,
            cversion: 0,
            aversion: 0,
            ephemeral_owner: 0,
            data_length: 0,
            num_children: 0,
        }
    }

    fn names(events: &[CacheEvent]) -> Vec<String> {
        events
            .iter()
            .map(|e| format!("{} {}", e.name(), e.node().map_or("", |n| n.path.as_str())))
            .collect()
    }

    #[test]
    fn a_read_is_an_event_only_when_it_differs() {
        let mut tree = Tree::new("/r");
        assert_eq!(
            names(&tree.apply("/r", Some((b"a".to_vec(), stat(1, 1))))),
            ["CREATED /r"]
        );
        assert!(tree
            .apply("/r", Some((b"a".to_vec(), stat(1, 1))))
            .is_empty());
        // An older read never replaces a newer one.
        assert!(tree
            .apply("/r", Some((b"old".to_vec(), stat(1, 0))))
            .is_empty());
        assert_eq!(
            names(&tree.apply("/r", Some((b"b".to_vec(), stat(1, 2))))),
            ["CHANGED /r"]
        );
        assert_eq!(
            names(&tree.apply("/r", Some((b"c".to_vec(), stat(5, 5))))),
            ["DELETED /r", "CREATED /r"]
        );
        assert_eq!(names(&tree.apply("/r", None)), ["DELETED /r"]);
        assert!(tree.apply("/r", None).is_empty());
    }

    #[test]
    fn a_gone_node_takes_its_subtree_and_orphans_are_not_added() {
        let mut tree = Tree::new("/");
        tree.apply("/", Some((vec![], stat(0, 0))));
        tree.apply("/a", Some((vec![], stat(1, 1))));
        tree.apply("/a/b", Some((vec![], stat(2, 2))));
        tree.apply("/ab", Some((vec![], stat(3, 3))));
        assert_eq!(tree.children_of("/"), ["a", "ab"]);
        assert_eq!(
            names(&tree.apply("/a", None)),
            ["DELETED /a/b", "DELETED /a"]
        );
        assert!(tree.apply("/a/b", Some((vec![], stat(2, 2)))).is_empty());
        assert!(tree.contains("/ab"));
    }

    #[test]
    fn a_new_reading_reports_exactly_the_difference() {
        let mut tree = Tree::new("/r");
        for (path, z) in [("/r", 1), ("/r/a", 2), ("/r/a/x", 3), ("/r/b", 4)] {
            tree.apply(path, Some((vec![], stat(z, z))));
        }
        let mut found = BTreeMap::new();
        found.insert("/r".to_string(), (vec![], stat(1, 1)));
        found.insert("/r/b".to_string(), (vec![], stat(9, 9)));
        found.insert("/r/c".to_string(), (vec![], stat(10, 10)));
        assert_eq!(
            names(&tree.replace(found)),
            [
                "DELETED /r/a/x",
                "DELETED /r/a",
                "DELETED /r/b",
                "CREATED /r/b",
                "CREATED /r/c"
            ]
        );
    }

    #[test]
    fn depth_is_counted_from_the_root() {
        assert_eq!(depth_below("/r", "/r"), Some(0));
        assert_eq!(depth_below("/r", "/r/a/b"), Some(2));
        assert_eq!(depth_below("/r", "/rx"), None);
        assert_eq!(depth_below("/", "/a"), Some(1));
        assert_eq!(parent("/a"), "/");
        assert_eq!(parent("/a/b"), "/a");
        assert_eq!(join("/", "a"), "/a");
    }
}
