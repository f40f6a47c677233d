//! The cache's copy of its subtree, and the one place that turns reads into events: every
//! event is the difference between the copy and what a read found, so nothing is reported
//! twice and a node is present only because a read found it.
//!
//! A node is hung under the copy of its parent only if that incarnation of the parent is the
//! one it was created under: created with or after it (`czxid` at least the parent's) and seen
//! created by a read of it (`czxid` at most a `pzxid` read of it). A fresh read of a child can
//! be newer than the copy of its parent: a parent deleted and created again with new children
//! sends the children's events first, and the reads they cause find the new children while the
//! copy still holds the old parent. Hung there, they would be reported deleted and created
//! again once the parent's own event came, though they never went away; so the parent is read
//! again first (`Again`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::Bound;

use super::{CacheEvent, CachedNode, NodeStat};
use crate::path::join;

/// What one read of a node found: `None` if it does not exist.
pub(super) type Found = Option<(Vec<u8>, NodeStat)>;

pub(super) struct Tree {
    root: String,
    /// By full path; sorted, so a node's subtree is one range of keys.
    nodes: BTreeMap<String, (Vec<u8>, NodeStat)>,
    /// The newest `pzxid` any read of each cached node found, of its data or of its children
    /// (its stat in `nodes` changes only with its data).
    pzxids: HashMap<String, i64>,
}

/// What could not be taken yet, to be read again.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Again {
    /// Nodes whose read was older than the copy of their parent, or newer.
    pub nodes: BTreeSet<String>,
    /// Parents whose copy is older than a read of a node under them: their stat decides.
    pub parents: BTreeSet<String>,
}

/// How a read that found a node the copy has no such incarnation of stands against the copy of
/// its parent.
enum Placement {
    Fits,
    /// Created after every read of the parent's copy: that copy may be of an incarnation
    /// deleted since.
    ParentBehind,
    /// Older than the parent's incarnation: deleted since.
    NodeBehind,
}

impl Tree {
    pub(super) fn new(root: &str) -> Tree {
        Tree {
            root: root.to_string(),
            nodes: BTreeMap::new(),
            pzxids: HashMap::new(),
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

    /// The children of `path` that a listing of it and the copy disagree on: listed and not
    /// cached, or cached and not listed. Each must be read again.
    pub(super) fn unlike_listing(&self, path: &str, listed: &[String]) -> Vec<String> {
        let cached = self.children_of(path);
        let listed_set: HashSet<&str> = listed.iter().map(String::as_str).collect();
        let cached_set: HashSet<&str> = cached.iter().map(String::as_str).collect();
        let new = listed.iter().filter(|c| !cached_set.contains(c.as_str()));
        let gone = cached.iter().filter(|c| !listed_set.contains(c.as_str()));
        new.chain(gone).map(|child| join(path, child)).collect()
    }

    /// Takes what a read of `path` found (`listed`: the `pzxid` its children were listed at);
    /// what cannot be taken yet goes into `again`.
    pub(super) fn apply(
        &mut self,
        path: &str,
        found: Found,
        listed: Option<i64>,
        again: &mut Again,
    ) -> Vec<CacheEvent> {
        let mut events = Vec::new();
        match found {
            None => self.remove_subtree(path, &mut events),
            Some((data, stat)) => {
                if path != self.root && !self.contains(parent(path)) {
                    // Its parent was read as gone after this read: so is this node now.
                    return events;
                }
                match self.placement(path, &stat) {
                    Placement::Fits => self.upsert(path, data, stat, listed, &mut events),
                    Placement::ParentBehind => {
                        again.parents.insert(parent(path).to_string());
                        again.nodes.insert(path.to_string());
                    }
                    Placement::NodeBehind => {
                        again.nodes.insert(path.to_string());
                    }
                }
            }
        }
        events
    }

    fn placement(&self, path: &str, stat: &NodeStat) -> Placement {
        let same = self.nodes.get(path).map(|(_, old)| old.czxid) == Some(stat.czxid);
        if path == self.root || same {
            return Placement::Fits;
        }
        let parent = parent(path);
        let Some((_, of_parent)) = self.nodes.get(parent) else {
            return Placement::Fits;
        };
        // Created in the parent's own transaction (a multi) shares its czxid.
        if stat.czxid < of_parent.czxid {
            return Placement::NodeBehind;
        }
        let seen = self.pzxids.get(parent).copied().unwrap_or(of_parent.pzxid);
        if stat.czxid > seen {
            Placement::ParentBehind
        } else {
            Placement::Fits
        }
    }

    /// Takes a whole new reading of the subtree (after a reconnect): reports exactly the
    /// difference, deletions deepest first, then creations and changes parents first. A node
    /// created after its parent was listed is left out: the watch, added before the reading,
    /// reports its creation (or the child watch set by that listing does).
    pub(super) fn replace(
        &mut self,
        found: BTreeMap<String, (Vec<u8>, NodeStat)>,
        listed: &HashMap<String, i64>,
    ) -> Vec<CacheEvent> {
        let mut events = Vec::new();
        let gone: Vec<String> = self
            .nodes
            .keys()
            .filter(|path| !found.contains_key(*path))
            .cloned()
            .collect();
        for path in gone.iter().rev() {
            self.pzxids.remove(path);
            if let Some((data, stat)) = self.nodes.remove(path) {
                events.push(CacheEvent::Deleted(node(path, &data, &stat)));
            }
        }
        let mut by_depth: Vec<(String, (Vec<u8>, NodeStat))> = found.into_iter().collect();
        by_depth.sort_by_key(|(path, _)| (depth(path), path.clone()));
        for (path, (data, stat)) in by_depth {
            let placed = path == self.root
                || (self.contains(parent(&path))
                    && matches!(self.placement(&path, &stat), Placement::Fits));
            if placed {
                let listed = listed.get(&path).copied();
                self.upsert(&path, data, stat, listed, &mut events);
            }
        }
        events
    }

    fn upsert(
        &mut self,
        path: &str,
        data: Vec<u8>,
        stat: NodeStat,
        listed: Option<i64>,
        events: &mut Vec<CacheEvent>,
    ) {
        let seen = stat.pzxid.max(listed.unwrap_or(i64::MIN));
        match self.nodes.get(path) {
            None => {}
            Some((_, old)) if old.czxid != stat.czxid => {
                // Deleted and created again between two reads: both happened.
                self.remove_subtree(path, events);
            }
            Some((_, old)) if old.mzxid >= stat.mzxid => return self.saw(path, seen),
            Some(_) => {
                let (old_data, old_stat) =
                    self.nodes.insert(path.to_string(), (data, stat)).unwrap();
                let (new_data, new_stat) = &self.nodes[path];
                events.push(CacheEvent::Changed {
                    old: node(path, &old_data, &old_stat),
                    new: node(path, new_data, new_stat),
                });
                return self.saw(path, seen);
            }
        }
        events.push(CacheEvent::Created(node(path, &data, &stat)));
        self.nodes.insert(path.to_string(), (data, stat));
        self.pzxids.insert(path.to_string(), seen);
    }

    /// Notes a `pzxid` read of the cached incarnation of `path`.
    fn saw(&mut self, path: &str, pzxid: i64) {
        let seen = self.pzxids.entry(path.to_string()).or_insert(pzxid);
        *seen = (*seen).max(pzxid);
    }

    /// Removes `path` and everything cached below it, deepest first.
    fn remove_subtree(&mut self, path: &str, events: &mut Vec<CacheEvent>) {
        let mut doomed: Vec<String> = self.below(path).cloned().collect();
        if self.contains(path) {
            doomed.insert(0, path.to_string());
        }
        for doomed in doomed.iter().rev() {
            self.pzxids.remove(doomed);
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

    /// A stat whose `pzxid` has seen every child (the tests below about placement set it).
    fn stat(czxid: i64, mzxid: i64) -> NodeStat {
        NodeStat {
            czxid,
            mzxid,
            pzxid: i64::MAX,
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

    impl Tree {
        /// A read that the copy takes at once.
        fn take(&mut self, path: &str, found: Found) -> Vec<CacheEvent> {
            let mut again = Again::default();
            let events = self.apply(path, found, None, &mut again);
            assert_eq!(again, Again::default(), "{path} taken at once");
            events
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
            names(&tree.take("/r", Some((b"a".to_vec(), stat(1, 1))))),
            ["CREATED /r"]
        );
        assert!(tree
            .take("/r", Some((b"a".to_vec(), stat(1, 1))))
            .is_empty());
        // An older read never replaces a newer one.
        assert!(tree
            .take("/r", Some((b"old".to_vec(), stat(1, 0))))
            .is_empty());
        assert_eq!(
            names(&tree.take("/r", Some((b"b".to_vec(), stat(1, 2))))),
            ["CHANGED /r"]
        );
        assert_eq!(
            names(&tree.take("/r", Some((b"c".to_vec(), stat(5, 5))))),
            ["DELETED /r", "CREATED /r"]
        );
        assert_eq!(names(&tree.take("/r", None)), ["DELETED /r"]);
        assert!(tree.take("/r", None).is_empty());
    }

    #[test]
    fn a_gone_node_takes_its_subtree_and_orphans_are_not_added() {
        let mut tree = Tree::new("/");
        tree.take("/", Some((vec![], stat(0, 0))));
        tree.take("/a", Some((vec![], stat(1, 1))));
        tree.take("/a/b", Some((vec![], stat(2, 2))));
        tree.take("/ab", Some((vec![], stat(3, 3))));
        assert_eq!(tree.children_of("/"), ["a", "ab"]);
        assert_eq!(
            names(&tree.take("/a", None)),
            ["DELETED /a/b", "DELETED /a"]
        );
        assert!(tree.take("/a/b", Some((vec![], stat(2, 2)))).is_empty());
        assert!(tree.contains("/ab"));
    }

    #[test]
    fn a_new_reading_reports_exactly_the_difference() {
        let mut tree = Tree::new("/r");
        for (path, z) in [("/r", 1), ("/r/a", 2), ("/r/a/x", 3), ("/r/b", 4)] {
            tree.take(path, Some((vec![], stat(z, z))));
        }
        let mut found = BTreeMap::new();
        found.insert("/r".to_string(), (vec![], stat(1, 1)));
        found.insert("/r/b".to_string(), (vec![], stat(9, 9)));
        found.insert("/r/c".to_string(), (vec![], stat(10, 10)));
        assert_eq!(
            names(&tree.replace(found, &HashMap::new())),
            [
                "DELETED /r/a/x",
                "DELETED /r/a",
                "DELETED /r/b",
                "CREATED /r/b",
                "CREATED /r/c"
            ]
        );
    }

    fn stat_at(czxid: i64, mzxid: i64, pzxid: i64) -> NodeStat {
        NodeStat {
            pzxid,
            ..stat(czxid, mzxid)
        }
    }

    /// A family deleted and created again in two multis: the children's events come first, and
    /// the reads they cause find the new children while the copy holds the old parent.
    #[test]
    fn a_child_of_a_parent_created_again_waits_for_the_parent_and_is_never_reported_twice() {
        let mut tree = Tree::new("/r");
        tree.take("/r", Some((vec![], stat_at(1, 1, 20))));
        tree.take("/r/a", Some((vec![], stat_at(10, 10, 10))));
        tree.take("/r/a/b", Some((vec![], stat_at(10, 10, 10))));
        // The new child, read before the new parent: not hung under the old one.
        let mut again = Again::default();
        let found = Some((b"new".to_vec(), stat_at(20, 20, 20)));
        assert!(tree
            .apply("/r/a/b", found.clone(), None, &mut again)
            .is_empty());
        assert_eq!(again.parents, BTreeSet::from(["/r/a".to_string()]));
        assert_eq!(again.nodes, BTreeSet::from(["/r/a/b".to_string()]));
        // Read again, parent first: exactly what happened, once.
        let mut events = tree.take("/r/a", Some((vec![], stat_at(20, 20, 20))));
        events.extend(tree.take("/r/a/b", found));
        assert_eq!(
            names(&events),
            [
                "DELETED /r/a/b",
                "DELETED /r/a",
                "CREATED /r/a",
                "CREATED /r/a/b"
            ]
        );
        // A child older than its parent's incarnation is gone: read again, never hung.
        let mut again = Again::default();
        let stale = Some((vec![], stat_at(15, 15, 15)));
        assert!(tree.apply("/r/a/c", stale, None, &mut again).is_empty());
        assert_eq!(again.nodes, BTreeSet::from(["/r/a/c".to_string()]));
        assert!(again.parents.is_empty());
        // A child created after the parent was read waits for a read of the parent that saw it;
        // the parent's listing counts as one.
        let mut again = Again::default();
        let later = Some((vec![], stat_at(30, 30, 30)));
        assert!(tree
            .apply("/r/a/d", later.clone(), None, &mut again)
            .is_empty());
        assert_eq!(again.parents, BTreeSet::from(["/r/a".to_string()]));
        let mut again = Again::default();
        let unchanged = Some((vec![], stat_at(20, 20, 20)));
        assert!(tree
            .apply("/r/a", unchanged, Some(30), &mut again)
            .is_empty());
        assert_eq!(names(&tree.take("/r/a/d", later)), ["CREATED /r/a/d"]);
    }

    #[test]
    fn a_new_reading_leaves_out_a_node_created_after_its_parent_was_listed() {
        let mut tree = Tree::new("/r");
        let mut found = BTreeMap::new();
        found.insert("/r".to_string(), (vec![], stat_at(1, 1, 5)));
        found.insert("/r/old".to_string(), (vec![], stat_at(5, 5, 5)));
        found.insert("/r/new".to_string(), (vec![], stat_at(9, 9, 9)));
        let listed = HashMap::from([("/r".to_string(), 7)]);
        assert_eq!(
            names(&tree.replace(found, &listed)),
            ["CREATED /r", "CREATED /r/old"]
        );
    }

    /// A child read as gone between its delete and its create, in the same batch as a listing
    /// of its parent made after the create: the copy after the batch disagrees with the listing,
    /// so the child is read again (before, the listing was compared with the copy before the
    /// batch, which still held the old child, and the new one was never read).
    #[test]
    fn a_child_gone_in_its_read_and_listed_in_its_parents_is_read_again() {
        let mut tree = Tree::new("/r");
        tree.take("/r", Some((vec![], stat_at(1, 1, 2))));
        tree.take("/r/a", Some((vec![], stat_at(2, 2, 2))));
        let listing = vec!["a".to_string()];
        let mut again = Again::default();
        tree.apply("/r", Some((vec![], stat_at(1, 1, 4))), Some(4), &mut again);
        assert!(tree.unlike_listing("/r", &listing).is_empty());
        assert_eq!(names(&tree.take("/r/a", None)), ["DELETED /r/a"]);
        assert_eq!(tree.unlike_listing("/r", &listing), ["/r/a"]);
        assert_eq!(tree.unlike_listing("/r", &[]), Vec::<String>::new());
        tree.take("/r/b", Some((vec![], stat_at(3, 3, 3))));
        assert_eq!(tree.unlike_listing("/r", &listing), ["/r/a", "/r/b"]);
        assert_eq!(
            names(&tree.take("/r/a", Some((vec![], stat_at(4, 4, 4))))),
            ["CREATED /r/a"]
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
