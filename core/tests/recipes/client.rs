use crate::common;

use std::time::Duration;

use common::*;
use zkrecipes::{
    Auth, Client, ClientOptions, ConnectionState, DistributedQueue, ErrorCode, WriteLock,
};

/// A client that authenticates as alice (digest auth).
async fn as_alice() -> Client {
    let alice = ClientOptions {
        auth: Some(Auth::digest("alice:secret")),
        ..options(Duration::from_secs(10))
    };
    Client::connect(server().connect_string(), alice)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn lost_create_reply_leaves_no_orphan_contender() {
    let (proxy, c) = behind_proxy(Duration::from_secs(10)).await;
    let dir = unique("orphan");
    let lock = WriteLock::new(&c, &dir).unwrap();
    lock.acquire().await.unwrap().release().await.unwrap();
    // The create reaches the server, its reply does not; then the connection drops.
    proxy.set_drop_replies(true);
    let task = spawn_on(&lock, |lock| async move {
        lock.acquire_timeout(Duration::from_secs(20)).await
    });
    until_child_count("create applied", &dir, 1, Duration::from_secs(5)).await;
    proxy.set_drop_replies(false);
    proxy.drop_all();
    let acquired = joined(task, Duration::from_secs(30), "the acquire").await;
    let guard = acquired
        .unwrap()
        .expect("acquired by adopting its own node");
    let nodes = children_of(&dir).await;
    assert_eq!(nodes.len(), 1, "exactly our adopted node: {nodes:?}");
    assert_eq!(lock.node_path().unwrap(), format!("{dir}/{}", nodes[0]));
    guard.release().await.unwrap();
    assert!(children_of(&dir).await.is_empty());
    c.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn connection_states_follow_a_connection_drop() {
    let (proxy, c) = behind_proxy(Duration::from_secs(10)).await;
    assert_eq!(c.state(), ConnectionState::Connected);
    let mut states = c.subscribe();
    proxy.drop_all();
    let first = next_within(&mut states, Duration::from_secs(10)).await;
    assert_eq!(first, ConnectionState::Suspended);
    let second = next_within(&mut states, Duration::from_secs(10)).await;
    assert_eq!(second, ConnectionState::Reconnected);
    c.close().await;
    assert_eq!(states.recv().await.unwrap(), ConnectionState::Closed);
}

#[tokio::test(flavor = "multi_thread")]
async fn unreachable_server_fails_within_the_connect_timeout() {
    let port = zk_harness::free_port();
    let options = ClientOptions {
        connect_timeout: Duration::from_millis(800),
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let err = Client::connect(&format!("127.0.0.1:{port}"), options)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ConnectionLoss, "{err}");
    let took = started.elapsed();
    println!("an unreachable server failed the connect in {took:?}");
    // 5x the 800 ms promised, and still half the 10 s session a connect that
    // ignored its timeout would wait.
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

/// A malformed host is refused before any connection is tried, not after
/// the connect timeout.
#[tokio::test(flavor = "multi_thread")]
async fn malformed_hosts_are_refused_at_once() {
    for connect in [
        "::::",
        "host:",
        ":2181",
        "host:0",
        "host:http",
        "a:1,:2/chroot",
    ] {
        let options = ClientOptions {
            connect_timeout: Duration::from_secs(30),
            ..Default::default()
        };
        let started = std::time::Instant::now();
        let err = Client::connect(connect, options).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{connect}: {err}");
        // Microseconds on an idle machine; a third of the 30 s connect timeout
        // that a refusal after trying would take.
        let took = started.elapsed();
        assert!(took < Duration::from_secs(10), "{connect}: {took:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_options_are_refused() {
    for options in [
        ClientOptions {
            session_timeout: Duration::ZERO,
            ..Default::default()
        },
        ClientOptions {
            connect_timeout: Duration::ZERO,
            ..Default::default()
        },
    ] {
        let err = Client::connect(server().connect_string(), options)
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument);
    }
    let err = Client::connect("", ClientOptions::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
}

#[tokio::test(flavor = "multi_thread")]
async fn digest_auth_protects_recipe_nodes_from_other_identities() {
    let dir = unique("acl");
    let owner = as_alice().await;
    let queue = DistributedQueue::new(&owner, &dir).unwrap();
    queue.offer(b"private").await.unwrap();
    let stranger = client().await;
    let theirs = DistributedQueue::new(&stranger, &dir).unwrap();
    // The directory is readable (listing), the item is not.
    let err = theirs.poll().await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::NoAuth, "{err}");
    let same_identity = as_alice().await;
    assert_eq!(
        DistributedQueue::new(&same_identity, &dir)
            .unwrap()
            .poll()
            .await
            .unwrap()
            .unwrap(),
        b"private"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn use_after_close_is_closed() {
    let c = client().await;
    let lock = WriteLock::new(&c, &unique("closed")).unwrap();
    let queue = DistributedQueue::new(&c, &unique("closed-q")).unwrap();
    c.close().await;
    assert_eq!(lock.acquire().await.unwrap_err().code(), ErrorCode::Closed);
    assert_eq!(
        queue.offer(b"x").await.unwrap_err().code(),
        ErrorCode::Closed
    );
    assert_eq!(queue.poll().await.unwrap_err().code(), ErrorCode::Closed);
    assert_eq!(c.session_id().unwrap_err().code(), ErrorCode::Closed);
}

#[test]
fn credentials_never_show_in_debug_output() {
    let options = ClientOptions {
        auth: Some(Auth::digest("alice:s3cret-pass")),
        ..Default::default()
    };
    let shown = format!("{options:?}");
    assert!(
        shown.contains("digest") && !shown.contains("s3cret"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn another_identity_cannot_delete_a_protected_lock_node() {
    let dir = unique("acl-lock");
    let owner = as_alice().await;
    let lock = WriteLock::new(&owner, &dir).unwrap();
    let guard = lock.acquire().await.unwrap();
    // Mallory authenticates as somebody else: digest auth never fails, the ACL refuses.
    let mallory = zookeeper_client::Client::connector()
        .with_auth("digest", b"mallory:guess")
        .connect(server().connect_string())
        .await
        .unwrap();
    let err = mallory
        .delete(&lock.node_path().unwrap(), None)
        .await
        .unwrap_err();
    assert_eq!(err, zookeeper_client::Error::NoAuth);
    let theirs = WriteLock::new(&client().await, &dir).unwrap();
    assert_eq!(
        theirs.try_acquire().await.unwrap_err().code(),
        ErrorCode::NoAuth
    );
    guard.release().await.unwrap();
}

/// Issue 16: a chroot that did not exist made every recipe fail with NO_NODE.
/// It is created on connect (as Curator's namespace), and the queue's payload
/// limit counts its length.
#[tokio::test(flavor = "multi_thread")]
async fn a_missing_chroot_is_created_and_counted_in_the_payload_limit() {
    let chroot = format!("{}/{}", unique("chroot"), "x".repeat(700));
    let connect = format!("{}{chroot}", server().connect_string());
    let c = zkrecipes::Client::connect(&connect, options(Duration::from_secs(10)))
        .await
        .unwrap();
    let lock = zkrecipes::WriteLock::new(&c, "/locks/first").unwrap();
    let guard = lock
        .acquire()
        .await
        .expect("a recipe works in a fresh chroot");
    assert!(raw()
        .await
        .check_stat(&format!("{chroot}/locks/first"))
        .await
        .unwrap()
        .is_some());
    guard.release().await.unwrap();

    let queue = zkrecipes::DistributedQueue::new(&c, "/q").unwrap();
    let plain = zkrecipes::DistributedQueue::new(&client().await, "/q").unwrap();
    assert_eq!(plain.max_payload() - queue.max_payload(), chroot.len());
    let biggest = vec![7u8; queue.max_payload()];
    queue
        .offer(&biggest)
        .await
        .expect("an item of max_payload fits");
    assert_eq!(queue.poll().await.unwrap(), Some(biggest));
    let err = queue
        .offer(&vec![7u8; queue.max_payload() + 1])
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");
    c.close().await;
}
