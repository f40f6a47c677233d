//! The persistent node and group membership against a real ZooKeeper: re-created after a
//! delete and after a new session, never taken over from another session, members joining,
//! changing and leaving in everybody's view.
use crate::common;

use std::time::Duration;

use common::*;
use zkrecipes::{CacheEvent, ErrorCode, GroupMember, NodeMode, PersistentNode};
use zookeeper_client as zk;

const LONG: Duration = Duration::from_secs(20);

/// A maker of ephemeral persistent nodes of `data`, for `recipe`.
fn ephemeral_with(
    data: &[u8],
) -> impl Fn(&zkrecipes::Client, &str) -> zkrecipes::Result<PersistentNode> + '_ {
    |c, path| PersistentNode::new(c, path, NodeMode::Ephemeral, data.to_vec())
}

/// Resolves once `path` exists (with `owner` as its ephemeral owner, if given): watched.
async fn until_exists(zk: &zk::Client, path: &str, owner: Option<i64>) -> zk::Stat {
    tokio::time::timeout(LONG, async {
        loop {
            let (stat, watch) = zk.check_and_watch_stat(path).await.unwrap();
            if let Some(stat) = stat {
                if owner.is_none_or(|owner| stat.ephemeral_owner == owner) {
                    return stat;
                }
            }
            watch.changed().await;
        }
    })
    .await
    .expect("the node in time")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_persistent_node_comes_back_after_a_delete_with_its_latest_data() {
    let zk = raw().await;
    let (path, c, node) = recipe("pnode", ephemeral_with(b"one")).await;
    assert_eq!(node.start().await.unwrap(), path);
    let session = c.session_id().unwrap();
    let stat = until_exists(&zk, &path, Some(session)).await;
    assert_eq!(zk.get_data(&path).await.unwrap().0, b"one");
    node.set_data(b"two".to_vec()).await.unwrap();
    zk.delete(&path, None).await.unwrap();
    let again = until_exists(&zk, &path, Some(session)).await;
    assert_ne!(again.czxid, stat.czxid, "created again");
    assert_eq!(zk.get_data(&path).await.unwrap().0, b"two");
    node.close().await.unwrap();
    assert_eq!(
        zk.check_stat(&path).await.unwrap(),
        None,
        "deleted at close"
    );
    assert_eq!(node.start().await.unwrap_err().code(), ErrorCode::Closed);
    let big = PersistentNode::new(&c, &path, NodeMode::Ephemeral, vec![0; 1 << 20]).unwrap_err();
    assert_eq!(big.code(), ErrorCode::InvalidArgument);
    // The server's limit is the bound, not an identity's 16 KiB (found by the Kotlin review:
    // a 16,385-byte payload was refused).
    let large = PersistentNode::new(&c, &path, NodeMode::Ephemeral, vec![7; 900_000]).unwrap();
    large.start().await.unwrap();
    assert_eq!(zk.get_data(&path).await.unwrap().0.len(), 900_000);
    large.set_data(vec![8; 100_000]).await.unwrap();
    assert_eq!(zk.get_data(&path).await.unwrap().0, vec![8; 100_000]);
    large.close().await.unwrap();
    let root = PersistentNode::new(&c, "/", NodeMode::Persistent, vec![]).unwrap_err();
    assert_eq!(root.code(), ErrorCode::InvalidPath);
}

/// Neither an ephemeral nor a persistent node writes over another session's ephemeral node: a
/// persistent one did (Curator's take-over rule applied to a live owner's node), and two keepers
/// of one name with different modes wrote their data in turn.
#[tokio::test(flavor = "multi_thread")]
async fn an_ephemeral_node_of_another_session_is_never_taken_over() {
    for mode in [NodeMode::Ephemeral, NodeMode::Persistent] {
        let other = raw().await;
        let path = with_parent(&other, "pnode-taken").await;
        other
            .create(
                &path,
                b"theirs",
                &zk::CreateMode::Ephemeral.with_acls(zk::Acls::anyone_all()),
            )
            .await
            .unwrap();
        let c = client().await;
        let node = PersistentNode::new(&c, &path, mode, b"ours".to_vec()).unwrap();
        let starting = tokio::spawn({
            let node = node.clone();
            async move { node.start().await }
        });
        // The node has decided once it watches the other's node for its end.
        let port = server().port();
        let ours = session_hex(c.session_id().unwrap());
        until("our node watches the other's", LONG, || {
            watchers_of(port, &path).contains(&ours)
        })
        .await;
        assert_eq!(node.actual_path(), None, "{mode:?}: not adopted");
        assert_eq!(
            other.get_data(&path).await.unwrap().0,
            b"theirs",
            "{mode:?}"
        );
        drop(other);
        let watcher = raw().await;
        let owner = if mode == NodeMode::Ephemeral {
            c.session_id().unwrap()
        } else {
            0
        };
        until_exists(&watcher, &path, Some(owner)).await;
        assert_eq!(
            tokio::time::timeout(LONG, starting)
                .await
                .unwrap()
                .unwrap()
                .unwrap(),
            path
        );
        assert_eq!(watcher.get_data(&path).await.unwrap().0, b"ours");
        node.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sequential_node_is_protected_and_made_again_under_a_new_number() {
    let zk = raw().await;
    let path = with_parent(&zk, "pnode-seq").await;
    let c = client().await;
    let node = PersistentNode::new(
        &c,
        &format!("{path}/member-"),
        NodeMode::EphemeralSequential,
        vec![],
    )
    .unwrap();
    let first = node.start().await.unwrap();
    let name = &first[path.len() + 1..];
    assert!(
        name.starts_with("_c_") && name.contains("-member-"),
        "{name}"
    );
    let first_created = zk.check_stat(&first).await.unwrap().unwrap().czxid;
    zk.delete(&first, None).await.unwrap();
    // The parent is a container: the server may delete it with its last child meanwhile.
    let again = tokio::time::timeout(LONG, async {
        loop {
            match zk.list_and_watch_children(&path).await {
                Ok((children, _)) if !children.is_empty() => {
                    return format!("{path}/{}", children[0]);
                }
                Ok((_, watch)) => drop(watch.changed().await),
                Err(zk::Error::NoNode) => {
                    let (stat, watch) = zk.check_and_watch_stat(&path).await.unwrap();
                    if stat.is_none() {
                        watch.changed().await;
                    }
                }
                Err(err) => panic!("{err}"),
            }
        }
    })
    .await
    .unwrap();
    // Made again: a new node, under a new number unless the server reaped the container and
    // the node was made in a new one, where numbering starts over (CI: the same name).
    let again_created = zk.check_stat(&again).await.unwrap().unwrap().czxid;
    assert_ne!(again_created, first_created, "{again} is the deleted node");
    assert_eq!(zk.list_children(&path).await.unwrap().len(), 1, "made once");
    node.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn members_see_each_other_join_change_and_leave_and_an_expired_member_joins_again() {
    let group = unique("group");
    let (proxy, cut) = behind_proxy(Duration::from_secs(2)).await;
    let c = client().await;
    let a = GroupMember::new(&c, &group, "a", b"pa".to_vec()).unwrap();
    let b = GroupMember::new(&cut, &group, "b", b"pb".to_vec()).unwrap();
    a.start().await.unwrap();
    assert_eq!(
        a.members().into_iter().collect::<Vec<_>>(),
        [("a".to_string(), b"pa".to_vec())]
    );
    let mut events = a.subscribe();
    b.start().await.unwrap();
    let member_b = format!("{group}/b");
    let joined = tokio::time::timeout(LONG, events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        joined.node().map(|n| n.path.as_str()),
        Some(member_b.as_str())
    );
    assert_eq!(a.members().len(), 2);
    assert_eq!(b.members()["a"], b"pa");
    b.set_payload(b"pb'".to_vec()).await.unwrap();
    let changed = tokio::time::timeout(LONG, events.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(&changed, CacheEvent::Changed { new, .. } if new.data == b"pb'"),
        "{changed:?}"
    );
    // b's session expires: it leaves a's view, then joins again by itself.
    let session = cut.session_id().unwrap();
    proxy.set_blackhole(true);
    until_expired(server().port(), session).await;
    proxy.set_blackhole(false);
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(LONG, events.recv())
            .await
            .unwrap()
            .unwrap();
        seen.push(event.name());
        if event.name() == "CREATED" {
            break;
        }
    }
    assert_eq!(seen, ["DELETED", "CREATED"]);
    assert_eq!(
        a.members()["b"],
        b"pb'",
        "joined again with its latest payload"
    );
    b.close().await.unwrap();
    let left = tokio::time::timeout(LONG, events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(left.name(), "DELETED");
    assert_eq!(a.members().keys().collect::<Vec<_>>(), ["a"]);
    for bad in ["", ".", "..", "x/y"] {
        let err = GroupMember::new(&c, &group, bad, vec![]).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{bad:?}: {err}");
    }
    a.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_start_with_its_client_closed_answers_closed() {
    let c = client().await;
    let node =
        PersistentNode::new(&c, &unique("pnode-closed"), NodeMode::Ephemeral, vec![]).unwrap();
    let member = GroupMember::new(&c, &unique("group-closed"), "m", vec![]).unwrap();
    c.close().await;
    for err in [
        tokio::time::timeout(LONG, node.start())
            .await
            .expect("an answer")
            .unwrap_err(),
        tokio::time::timeout(LONG, member.start())
            .await
            .expect("an answer")
            .unwrap_err(),
    ] {
        assert_eq!(err.code(), ErrorCode::Closed, "{err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_close_right_after_the_start_leaves_no_node() {
    let (dir, zk) = made_by_raw("pnode-race").await;
    let c = client().await;
    for (i, mode) in [
        NodeMode::Ephemeral,
        NodeMode::EphemeralSequential,
        NodeMode::Persistent,
    ]
    .into_iter()
    .cycle()
    .take(30)
    .enumerate()
    {
        let node = PersistentNode::new(&c, &format!("{dir}/n{i}-"), mode, vec![]).unwrap();
        // The start only launches the keeper: its create is on its way when the close comes.
        let starting = tokio::spawn({
            let node = node.clone();
            async move { node.start().await }
        });
        tokio::task::yield_now().await;
        node.close().await.unwrap();
        let _ = starting.await;
    }
    assert_eq!(
        zk.list_children(&dir).await.unwrap(),
        Vec::<String>::new(),
        "nothing outlives a close"
    );
}

/// Two objects of one client keep one ephemeral path in turn, as two sessions do: the second
/// waits, never shares the first's node (found by the Kotlin review: the second's start
/// returned at once, its set_data overwrote the first's payload and its close deleted the
/// first's node).
#[tokio::test(flavor = "multi_thread")]
async fn two_objects_of_one_client_keep_one_ephemeral_path_in_turn() {
    let zk = raw().await;
    let (path, c, first) = recipe("pnode-turns", ephemeral_with(b"first")).await;
    first.start().await.unwrap();
    let second = PersistentNode::new(&c, &path, NodeMode::Ephemeral, b"second".to_vec()).unwrap();
    let waiting = {
        let second = second.clone();
        tokio::spawn(async move { second.start().await })
    };
    // The second asks for its turn at once; while the first keeps the path, the node stays the
    // first's whatever the second does.
    second.set_data(b"second-2".to_vec()).await.unwrap();
    assert_eq!(second.actual_path(), None, "the second never took the node");
    assert_eq!(zk.get_data(&path).await.unwrap().0, b"first");
    assert!(!waiting.is_finished());
    first.close().await.unwrap();
    let got = joined(waiting, Duration::from_secs(10), "the second's turn came")
        .await
        .unwrap();
    assert_eq!(got, path);
    assert_eq!(zk.get_data(&path).await.unwrap().0, b"second-2");
    // A third that is closed while it waits deletes nothing of the second's.
    let third = PersistentNode::new(&c, &path, NodeMode::Ephemeral, b"third".to_vec()).unwrap();
    let starting = {
        let third = third.clone();
        tokio::spawn(async move { third.start().await })
    };
    third.close().await.unwrap();
    let ended = joined(starting, Duration::from_secs(10), "the start").await;
    assert_eq!(ended.unwrap_err().code(), ErrorCode::Closed);
    assert_eq!(zk.get_data(&path).await.unwrap().0, b"second-2");
    second.close().await.unwrap();
    assert_eq!(zk.check_stat(&path).await.unwrap(), None);
}

/// A close cut short after it took the node's path out of the object (its delete lost with the
/// connection) left the node, a persistent one for good, and a second close returned at once.
/// Closes cut short anywhere leave no node, and a close after one returns once it is gone.
#[tokio::test(flavor = "multi_thread")]
async fn closes_cut_short_anywhere_leave_no_node() {
    use zk_harness::{Cut, Request, Then};
    let (proxy, c) = behind_proxy(Duration::from_secs(20)).await;
    let dir = unique("pnode-close-cut");
    for round in 0u64..300 {
        let mode = [NodeMode::Persistent, NodeMode::Ephemeral][round as usize % 2];
        let path = format!("{dir}/n{round}");
        let node = PersistentNode::new(&c, &path, mode, vec![]).unwrap();
        node.start().await.unwrap();
        proxy.cut_at_request(Request::Delete, Cut::Before, Then::Reconnect);
        let cut = Duration::from_micros(round * 397 % 30_000);
        let _ = tokio::time::timeout(cut, node.close()).await;
        proxy.disarm_cut();
        if round % 4 < 2 {
            node.close().await.unwrap();
            let left = children(server().connect_string(), &dir).await;
            assert!(
                !left.contains(&format!("n{round}")),
                "{mode:?} closed twice"
            );
        }
    }
    eventually("no node left", LONG, || async {
        children(server().connect_string(), &dir).await.is_empty()
    })
    .await;
}
