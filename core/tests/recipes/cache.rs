//! The caches against a real ZooKeeper, with persistent watches and with the one-shot fallback:
//! every change reported once and in order, nothing created, and after a disconnect or a new
//! session exactly the difference (a node deleted and created again meanwhile included).
use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use tokio::sync::mpsc::UnboundedReceiver;
use zkrecipes::{Cache, CacheEvent, CacheScope, CachedNode, Client, ErrorCode};
use zookeeper_client as zk;

const LONG: Duration = Duration::from_secs(20);

fn open() -> zk::CreateOptions<'static> {
    zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())
}

/// The raw session that writes a test's tree, and the tree's root (a fresh path; it is not
/// there yet). Paths given are below the root (`""` is the root).
struct Tree {
    zk: zk::Client,
    root: String,
}

impl Tree {
    async fn fresh() -> Tree {
        let zk = raw().await;
        let root = with_parent(&zk, "cache").await;
        Tree { zk, root }
    }

    /// A fresh tree holding `nodes` (path below the root, data), made in that order.
    async fn holding(nodes: &[(&str, &[u8])]) -> Tree {
        let tree = Tree::fresh().await;
        for (below, data) in nodes {
            tree.create(below, data).await;
        }
        tree
    }

    fn at(&self, below: &str) -> String {
        format!("{}{below}", self.root)
    }

    async fn create(&self, below: &str, data: &[u8]) {
        self.zk
            .create(&self.at(below), data, &open())
            .await
            .unwrap();
    }

    async fn set(&self, below: &str, data: &[u8]) {
        self.zk.set_data(&self.at(below), data, None).await.unwrap();
    }

    async fn delete(&self, below: &str) {
        self.zk.delete(&self.at(below), None).await.unwrap();
    }
}

/// A client for a cache test. A server before 3.6 refuses the client's first persistent watch
/// and closes the connection (one SUSPENDED and RECONNECTED, and the client's caches use one-shot
/// watches from then on): learned here, with a cache of its own, so that a test's events are
/// the ones it made (the server-version lane, `tools/compat.sh --full`).
async fn cache_client() -> Client {
    let c = client().await;
    learns_the_servers_watches(&c).await;
    c
}

/// What `cache_client` does for a client made otherwise (behind a proxy).
async fn learns_the_servers_watches(c: &Client) {
    if zk_harness::server_version().is_some_and(|version| version.as_str() < "3.6") {
        let mut states = c.subscribe();
        let learner = Cache::node(c, &unique("cache-learner")).unwrap();
        learner.start().await.unwrap();
        until_told(&mut states, zkrecipes::ConnectionState::Reconnected).await;
        learner.close();
    }
}

async fn next(events: &mut UnboundedReceiver<CacheEvent>) -> CacheEvent {
    tokio::time::timeout(LONG, events.recv())
        .await
        .expect("an event in time")
        .expect("the stream goes on")
}

/// The next events up to and including the first `last`, as "NAME path" lines.
async fn until_event(events: &mut UnboundedReceiver<CacheEvent>, last: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        let event = next(events).await;
        let line = describe(&event);
        seen.push(line.clone());
        if line == last {
            return seen;
        }
    }
}

fn describe(event: &CacheEvent) -> String {
    match event.node() {
        Some(node) => format!("{} {}", event.name(), node.path),
        None => event.name().to_string(),
    }
}

/// The subtree as the server has it now, `max_depth` levels deep.
async fn server_tree(
    zk: &zk::Client,
    root: &str,
    max_depth: Option<usize>,
) -> BTreeMap<String, (Vec<u8>, i64, i64)> {
    let mut found = BTreeMap::new();
    let mut level = vec![(root.to_string(), 0)];
    while let Some((path, depth)) = level.pop() {
        let Ok((data, stat)) = zk.get_data(&path).await else {
            continue;
        };
        found.insert(path.clone(), (data, stat.czxid, stat.mzxid));
        if max_depth.is_none_or(|max| depth < max) {
            for child in zk.list_children(&path).await.unwrap_or_default() {
                level.push((format!("{path}/{child}"), depth + 1));
            }
        }
    }
    found
}

fn as_map(nodes: &[CachedNode]) -> BTreeMap<String, (Vec<u8>, i64, i64)> {
    nodes
        .iter()
        .map(|n| (n.path.clone(), (n.data.clone(), n.stat.czxid, n.stat.mzxid)))
        .collect()
}

fn by_path(nodes: Vec<CachedNode>) -> BTreeMap<String, CachedNode> {
    nodes.into_iter().map(|n| (n.path.clone(), n)).collect()
}

/// A started whole-tree cache of `root`, its first copy by path, and its events from then on.
async fn started_tree(
    c: &Client,
    root: &str,
    ordinary: bool,
) -> (
    Cache,
    BTreeMap<String, CachedNode>,
    UnboundedReceiver<CacheEvent>,
) {
    let cache =
        Cache::with_watches(c, root, CacheScope::Tree { max_depth: None }, ordinary).unwrap();
    cache.start().await.unwrap();
    let (snapshot, events) = cache.snapshot_and_subscribe();
    (cache, by_path(snapshot), events)
}

/// Replays `event` over a copy, failing on an event that does not fit it (a repeat, a change
/// of a node not there, a delete of a node not there).
fn replay(copy: &mut BTreeMap<String, CachedNode>, event: &CacheEvent) {
    match event {
        CacheEvent::Created(node) => {
            assert!(
                copy.insert(node.path.clone(), node.clone()).is_none(),
                "created twice: {}",
                node.path
            )
        }
        CacheEvent::Changed { old, new } => {
            let had = copy.insert(new.path.clone(), new.clone());
            assert_eq!(
                had.as_ref(),
                Some(old),
                "a change from a state the copy did not have"
            );
        }
        CacheEvent::Deleted(node) => {
            assert_eq!(
                copy.remove(&node.path).as_ref(),
                Some(node),
                "deleted what was not there"
            )
        }
        _ => {}
    }
}

async fn follows_a_tree(ordinary: bool) {
    let tree = Tree::fresh().await;
    let (zk, root) = (&tree.zk, &tree.root);
    let c = cache_client().await;
    let cache =
        Cache::with_watches(&c, root, CacheScope::Tree { max_depth: Some(2) }, ordinary).unwrap();
    let mut events = cache.subscribe();
    cache.start().await.unwrap();
    assert_eq!(next(&mut events).await, CacheEvent::Initialized);
    assert!(cache.is_empty());
    // Nothing is created as a side effect.
    assert_eq!(zk.check_stat(root).await.unwrap(), None);

    tree.create("", b"r").await;
    assert_eq!(
        describe(&next(&mut events).await),
        format!("CREATED {root}")
    );
    tree.create("/a", b"1").await;
    tree.create("/a/b", b"2").await;
    // Below the depth limit: never cached.
    tree.create("/a/b/c", b"3").await;
    tree.set("/a", b"1'").await;
    tree.delete("/a/b/c").await;
    tree.delete("/a/b").await;
    // A last change to wait for: every event before it has been reported by then.
    tree.set("", b"done").await;
    let mut seen = until_event(&mut events, &format!("CHANGED {root}")).await;
    // Events of different paths may come in either order (on one-shot watches the delete of a/b
    // came after the root's change, in make test): read on until the copy is the server's tree.
    let server = server_tree(zk, root, Some(2)).await;
    let created_b = format!("CREATED {root}/a/b");
    let deleted_b = format!("DELETED {root}/a/b");
    // The copy is updated before its event is read: a/b seen created waits for its delete too
    // (the copy matched with DELETED still in the stream, in make test), and a's creation is
    // read too (the root's change came first and the copy matched with CREATED a still in the
    // stream, in make test).
    let created_a = format!("CREATED {root}/a");
    while as_map(&cache.snapshot()) != server
        || (seen.contains(&created_b) && !seen.contains(&deleted_b))
        || !seen.contains(&created_a)
    {
        seen.push(describe(&next(&mut events).await));
    }
    assert!(
        !seen.iter().any(|e| e.ends_with("/c")),
        "below the depth limit: {seen:?}"
    );
    assert!(seen.contains(&format!("CREATED {root}/a")), "{seen:?}");
    // a/b lived briefly: coalesced away, or seen created and then deleted, once each.
    let b: Vec<&String> = seen.iter().filter(|e| e.ends_with("/a/b")).collect();
    assert!(
        b.is_empty()
            || b == [
                &format!("CREATED {root}/a/b"),
                &format!("DELETED {root}/a/b")
            ],
        "{seen:?}"
    );
    assert_eq!(cache.get(&format!("{root}/a")).unwrap().data, b"1'");
    assert_eq!(cache.children_of(root), ["a"]);
    assert_eq!(
        as_map(&cache.snapshot()),
        server_tree(zk, root, Some(2)).await
    );
    cache.close();
    // The stream ends at close, after the events already on their way (the copy matched the
    // server's before the last of them had been read: failed under load in make test).
    let late = tokio::time::timeout(Duration::from_secs(30), async {
        let mut late = Vec::new();
        while let Some(event) = events.recv().await {
            late.push(describe(&event));
        }
        late
    })
    .await
    .expect("the stream ends at close");
    assert!(
        !late
            .iter()
            .any(|e| e.ends_with("/c") || e.starts_with("INITIALIZED")),
        "after the copy matched: {late:?}"
    );
    assert!(cache.snapshot().is_empty(), "the copy is freed");
    assert_eq!(cache.start().await.unwrap_err().code(), ErrorCode::Closed);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tree_cache_follows_every_change_within_its_depth() {
    follows_a_tree(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tree_cache_on_one_shot_watches_follows_as_well() {
    follows_a_tree(true).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn node_and_children_caches_show_their_scope_only() {
    let tree = Tree::holding(&[("", b"parent"), ("/x", b"x")]).await;
    let root = &tree.root;
    let c = cache_client().await;
    let node = Cache::node(&c, root).unwrap();
    let children = Cache::children(&c, root).unwrap();
    node.start().await.unwrap();
    children.start().await.unwrap();
    assert_eq!(
        node.snapshot()
            .iter()
            .map(|n| n.path.clone())
            .collect::<Vec<_>>(),
        [root.as_str()]
    );
    assert_eq!(
        children
            .snapshot()
            .iter()
            .map(|n| n.path.clone())
            .collect::<Vec<_>>(),
        [format!("{root}/x")]
    );
    assert_eq!(children.len(), 1);
    assert!(
        children.get(root).is_none(),
        "a children cache does not show its parent"
    );
    let mut node_events = node.subscribe();
    let mut child_events = children.subscribe();
    tree.set("", b"parent'").await;
    tree.create("/y", b"y").await;
    assert_eq!(
        describe(&next(&mut node_events).await),
        format!("CHANGED {root}")
    );
    assert_eq!(
        describe(&next(&mut child_events).await),
        format!("CREATED {root}/y")
    );
    // The child's creation is not the node cache's: its next event is the node's next change.
    tree.set("", b"parent''").await;
    match next(&mut node_events).await {
        CacheEvent::Changed { new, .. } => assert_eq!(new.data, b"parent''"),
        other => panic!("the node cache saw {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_cache_hears_only_its_node() {
    let tree = Tree::fresh().await;
    let root = &tree.root;
    let c = cache_client().await;
    let node = Cache::node(&c, root).unwrap();
    let mut events = node.subscribe();
    node.start().await.unwrap();
    assert_eq!(next(&mut events).await, CacheEvent::Initialized);
    tree.create("", b"1").await;
    assert_eq!(
        describe(&next(&mut events).await),
        format!("CREATED {root}")
    );
    tree.create("/child", b"").await;
    tree.delete("/child").await;
    tree.set("", b"2").await;
    // The child's life is not the node cache's: its next event is the node's change.
    match next(&mut events).await {
        CacheEvent::Changed { new, .. } => assert_eq!(new.data, b"2"),
        other => panic!("the node cache saw {other:?}"),
    }
    tree.delete("").await;
    assert_eq!(
        describe(&next(&mut events).await),
        format!("DELETED {root}")
    );
    assert!(node.get(root).is_none());
}

/// Changes made while the cache is cut off are reported as exactly the difference once it is
/// back: a node deleted and created again is a delete and a create, though its version is the
/// same.
async fn catches_up_after_a_disconnect(ordinary: bool) {
    let nodes: [(&str, &[u8]); 4] = [
        ("", b"r"),
        ("/same", b"s"),
        ("/again", b"a"),
        ("/gone", b"g"),
    ];
    let tree = Tree::holding(&nodes).await;
    let (zk, root) = (&tree.zk, &tree.root);
    let (proxy, c) = behind_proxy(Duration::from_secs(20)).await;
    learns_the_servers_watches(&c).await;
    let (cache, mut copy, mut events) = started_tree(&c, root, ordinary).await;
    let mut states = c.subscribe();
    proxy.set_blackhole(true);
    proxy.drop_all();
    assert_eq!(next(&mut events).await, CacheEvent::Suspended);
    while states.recv().await.unwrap() != zkrecipes::ConnectionState::Suspended {}
    tree.delete("/again").await;
    tree.create("/again", b"a").await;
    tree.delete("/gone").await;
    tree.create("/new", b"n").await;
    tree.set("/same", b"s'").await;
    proxy.set_blackhole(false);
    let mut seen_events = vec![CacheEvent::Suspended];
    loop {
        let event = next(&mut events).await;
        seen_events.push(event.clone());
        if event == CacheEvent::Reconnected {
            break;
        }
    }
    let seen: Vec<String> = seen_events.iter().map(describe).collect();
    let mut expected = vec![
        format!("DELETED {root}/again"),
        format!("DELETED {root}/gone"),
        format!("CREATED {root}/again"),
        format!("CHANGED {root}/same"),
        format!("CREATED {root}/new"),
    ];
    let mut got: Vec<String> = seen
        .iter()
        .filter(|e| {
            e.starts_with("DELETED") || e.starts_with("CREATED") || e.starts_with("CHANGED")
        })
        .cloned()
        .collect();
    got.sort();
    expected.sort();
    assert_eq!(got, expected, "exactly the difference: {seen:?}");
    for event in &seen_events {
        replay(&mut copy, event);
    }
    let copy: Vec<CachedNode> = copy.into_values().collect();
    assert_eq!(
        as_map(&copy),
        as_map(&cache.snapshot()),
        "the events replay to the copy"
    );
    assert_eq!(as_map(&cache.snapshot()), server_tree(zk, root, None).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_disconnect_a_cache_reports_exactly_what_changed() {
    catches_up_after_a_disconnect(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_disconnect_a_one_shot_cache_reports_exactly_what_changed() {
    catches_up_after_a_disconnect(true).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_new_session_a_cache_reports_the_difference_and_its_events_replay_to_its_copy() {
    let tree = Tree::holding(&[("", b""), ("/kept", b"k")]).await;
    let (zk, root) = (&tree.zk, &tree.root);
    let (proxy, c) = behind_proxy(Duration::from_secs(2)).await;
    let session = c.session_id().unwrap();
    let cache = Cache::tree(&c, root, None).unwrap();
    cache.start().await.unwrap();
    let (snapshot, mut events) = cache.snapshot_and_subscribe();
    let mut copy = by_path(snapshot);
    // Writes while it follows, then a cut long enough to expire the session, more writes.
    for i in 0..20 {
        zk.create(&format!("{root}/n{i}"), format!("{i}").as_bytes(), &open())
            .await
            .unwrap();
    }
    // Cut without closing: the server keeps the connection until it expires the session.
    proxy.set_blackhole(true);
    until_expired(server().port(), session).await;
    for i in 0..10 {
        tree.delete(&format!("/n{i}")).await;
    }
    tree.set("/kept", b"k'").await;
    proxy.set_blackhole(false);
    let mut seen = Vec::new();
    loop {
        let event = next(&mut events).await;
        replay(&mut copy, &event);
        seen.push(describe(&event));
        if event == CacheEvent::Reconnected {
            break;
        }
    }
    assert!(seen.contains(&"LOST".to_string()), "{seen:?}");
    assert!(seen.contains(&format!("CHANGED {root}/kept")), "{seen:?}");
    // The events replayed over the first snapshot give the copy, and the copy is the server's.
    let copy: Vec<CachedNode> = copy.into_values().collect();
    assert_eq!(as_map(&copy), as_map(&cache.snapshot()));
    assert_eq!(as_map(&copy), server_tree(zk, root, None).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn start_waits_for_the_first_load_and_a_zero_wait_is_a_real_check() {
    let tree = Tree::fresh().await;
    let root = &tree.root;
    tree.create("", b"").await;
    for i in 0..200 {
        tree.create(&format!("/{i}"), b"x").await;
    }
    let c = cache_client().await;
    let cache = Cache::children(&c, root).unwrap();
    let err = cache
        .await_initialized(Some(Duration::ZERO))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Timeout, "{err}");
    // Two callers on one cache: one load, both see it.
    let (a, b) = tokio::join!(cache.start(), cache.start());
    a.unwrap();
    b.unwrap();
    assert_eq!(cache.len(), 200);
    cache.await_initialized(Some(Duration::ZERO)).await.unwrap();
    let bad = Cache::tree(&c, "no-slash", None).unwrap_err();
    assert_eq!(bad.code(), ErrorCode::InvalidPath);
    // Dropping the last handle ends the watch: the server drops it.
    drop(cache);
    let port = server().port();
    eventually("the server forgets the cache's watch", LONG, || {
        let root = root.clone();
        async move { watchers_of(port, &root).is_empty() }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thousand_caches_opened_and_closed_leave_no_watch_behind() {
    let tree = Tree::holding(&[("", b""), ("/a", b"a")]).await;
    let root = &tree.root;
    let c = cache_client().await;
    for round in 0..20 {
        let caches: Vec<Cache> = (0..50)
            .map(|i| match i % 3 {
                0 => Cache::node(&c, root).unwrap(),
                1 => Cache::children(&c, root).unwrap(),
                _ => Cache::tree(&c, root, None).unwrap(),
            })
            .collect();
        let started =
            futures_util::future::join_all(caches.iter().map(|cache| cache.start())).await;
        assert!(
            started.iter().all(|s| s.is_ok()),
            "round {round}: {started:?}"
        );
        if round == 0 {
            // The check below can fail: the server lists a live cache's watch.
            let (port, ours) = (server().port(), session_hex(c.session_id().unwrap()));
            assert!(
                watchers_of(port, root).contains(&ours),
                "a live cache's watch is listed"
            );
        }
        for (i, cache) in caches.into_iter().enumerate() {
            // Half closed, half only dropped: both end the watch.
            if i % 2 == 0 {
                cache.close();
            }
        }
    }
    let port = server().port();
    let ours = session_hex(c.session_id().unwrap());
    eventually("the server holds no watch of ours", LONG, || {
        let (root, ours) = (root.clone(), ours.clone());
        async move {
            !watchers_of(port, &root).contains(&ours)
                && !watchers_of(port, &format!("{root}/a")).contains(&ours)
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_start_with_its_client_closed_answers_closed() {
    let c = cache_client().await;
    let root = unique("cache-closed");
    let before = Cache::tree(&c, &root, None).unwrap();
    c.close().await;
    let err = tokio::time::timeout(LONG, before.start())
        .await
        .expect("an answer")
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Closed, "{err}");
}

/// Nodes deleted and created again at once, many times over: the read of a node can fall
/// between its delete and its create while the listing of its parent comes after the create
/// (and re-arms the parent's child watch past it). The copy must end as the server's tree,
/// and its events must replay to it.
async fn holds_nodes_created_again_at_once(ordinary: bool) {
    let tree = Tree::fresh().await;
    let (zk, root) = (&tree.zk, &tree.root);
    tree.create("", b"r").await;
    let parents: Vec<String> = (0..6).map(|i| format!("{root}/p{i}")).collect();
    for parent in &parents {
        zk.create(parent, b"p", &open()).await.unwrap();
        zk.create(&format!("{parent}/leaf"), b"l", &open())
            .await
            .unwrap();
    }
    let c = cache_client().await;
    let (cache, mut copy, mut events) = started_tree(&c, root, ordinary).await;
    // Every parent's leaf at once, so that the reads of one overlap the writes of another.
    for _ in 0..60 {
        let rounds = parents.iter().map(|parent| {
            let zk = zk.clone();
            let leaf = format!("{parent}/leaf");
            async move {
                zk.delete(&leaf, None).await.unwrap();
                zk.create(&leaf, b"l", &open()).await.unwrap();
            }
        });
        futures_util::future::join_all(rounds).await;
    }
    let expected = server_tree(zk, root, None).await;
    until("the cache holds the server's tree", LONG, || {
        as_map(&cache.snapshot()) == expected
    })
    .await;
    while let Ok(event) = events.try_recv() {
        replay(&mut copy, &event);
    }
    let copy: Vec<CachedNode> = copy.into_values().collect();
    assert_eq!(as_map(&copy), expected, "the events replay to the copy");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cache_holds_nodes_deleted_and_created_again_at_once() {
    holds_nodes_created_again_at_once(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_one_shot_cache_holds_nodes_deleted_and_created_again_at_once() {
    holds_nodes_created_again_at_once(true).await;
}

/// On any server: a tree, a children and a node cache follow changes whichever watches the
/// server has. ZooKeeper before 3.6 refuses the persistent watch and closes the connection (one
/// SUSPENDED and RECONNECTED, told); the cache goes on with one-shot watches, and the later
/// caches of the same client ask no more, so their starts cost no reconnect (the
/// server-version lane's cache row).
#[tokio::test]
async fn a_cache_follows_changes_on_any_server_and_a_refusal_costs_one_reconnect() {
    let tree = Tree::fresh().await;
    let root = &tree.root;
    let c = client().await;
    let first = Cache::tree(&c, root, None).unwrap();
    let mut events = first.subscribe();
    first.start().await.unwrap();
    tree.create("", b"").await;
    tree.create("/a", b"1").await;
    let seen = until_event(&mut events, &format!("CREATED {root}/a")).await;
    let suspensions = seen.iter().filter(|e| *e == "SUSPENDED").count();
    assert!(suspensions <= 1, "{seen:?}");

    let mut states = c.subscribe();
    let second = Cache::children(&c, root).unwrap();
    let mut second_events = second.subscribe();
    second.start().await.unwrap();
    tree.create("/b", b"2").await;
    let seen = until_event(&mut second_events, &format!("CREATED {root}/b")).await;
    assert!(!seen.contains(&"SUSPENDED".to_string()), "{seen:?}");

    let third = Cache::node(&c, root).unwrap();
    let mut third_events = third.subscribe();
    third.start().await.unwrap();
    until_event(&mut third_events, "INITIALIZED").await;
    tree.set("", b"3").await;
    match next(&mut third_events).await {
        CacheEvent::Changed { new, .. } => assert_eq!(new.data, b"3"),
        other => panic!("the node cache saw {other:?}"),
    }
    assert!(
        states.try_recv().is_err(),
        "a later cache's start changed the connection state"
    );
    first.close();
    second.close();
    third.close();
}
