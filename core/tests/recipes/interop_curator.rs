//! Apache Curator 5.9 (`InterProcessMutex`, `InterProcessReadWriteLock`, `InterProcessSemaphoreV2`,
//! `LeaderLatch`, `DistributedBarrier`, `DistributedDoubleBarrier`,
//! `SimpleDistributedQueue`, `DistributedAtomicLong`, `SharedCount`, `GroupMember`, `CuratorCache`,
//! and curator-x-discovery's `ServiceDiscovery`, `ServiceCache` and `ServiceProvider`) on the same
//! paths as ours, in both directions.
use crate::common;

use std::time::Duration;

use common::*;
use zkrecipes::{
    DistributedQueue, DownInstancePolicy, LockGuard, MultiLock, ProviderStrategy, ReadWriteLock,
    ServiceDiscovery, ServiceInstance, SpringPayload, UriSpec, WriteLock,
};

fn curator(args: &[&str]) -> Driver {
    Driver::spawn(
        &zk_harness::curator_classpath(),
        "tests/interop/CuratorDriver.java",
        args,
    )
}

async fn expect(driver: Driver, line: &str) -> Driver {
    let (driver, got) = tokio::time::timeout(Duration::from_secs(30), driver.line())
        .await
        .expect(line);
    assert_eq!(got, line);
    driver
}

/// The name of a hold's lock node inside its directory.
fn node_name(guard: &LockGuard) -> String {
    let path = guard.lock().node_path_of(guard.owner()).expect("held");
    path.rsplit('/').next().unwrap().to_string()
}

/// The `CHILDREN` line a driver started with `children` prints right after `ACQUIRED`.
async fn children_when_acquired(driver: Driver) -> (Driver, Vec<String>) {
    let (driver, line) = tokio::time::timeout(Duration::from_secs(30), driver.line())
        .await
        .expect("CHILDREN");
    let listed = line.strip_prefix("CHILDREN ").expect(&line);
    let names = listed.split(',').filter(|n| !n.is_empty());
    (driver, names.map(str::to_string).collect())
}

/// Curator's `command` on `path` (`extra` arguments after it), once it said `WAITING`.
async fn curator_waiting(command: &str, path: &str, extra: &[&str]) -> Driver {
    expect(curator_at(command, path, extra), "WAITING").await
}

/// A Curator contender (started with `children`) that queued behind our hold `guard` (of the
/// session `ours`): it must wait on our node, and get in once we release, with our node gone.
/// `got_in` says what went wrong otherwise.
async fn curator_waits_for(mut driver: Driver, guard: LockGuard, ours: i64, got_in: &str) {
    // Curator's waiter watches the node before its own, ours: it decided to
    // wait. Had it got in, it would have said so instead.
    let our_path = guard.lock().node_path_of(guard.owner()).unwrap();
    let printed = peer_waits_on(&mut driver, &our_path, ours).await;
    assert_eq!(printed, None, "{got_in}");
    let ours_node = node_name(&guard);
    guard.release().await.unwrap();
    let driver = expect(driver, "ACQUIRED").await;
    let (driver, seen) = children_when_acquired(driver).await;
    assert!(!seen.contains(&ours_node), "{got_in}: {seen:?}");
    let driver = expect(driver, "RELEASED").await;
    driver.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn curator_mutex_holder_excludes_ours() {
    let (dir, _c, ours) = recipe("curator-mutex-1", WriteLock::new).await;
    let driver = curator_waiting("mutex", &dir, &["1500"]).await;
    let driver = expect(driver, "ACQUIRED").await;
    assert!(
        ours.try_acquire().await.unwrap().is_none(),
        "Curator holds it"
    );
    let guard = acquired_within(&ours, Duration::from_secs(20), "after Curator releases").await;
    // Curator's node goes only with its release: still there means we got in while it held.
    assert_eq!(
        children_of(&dir).await,
        [node_name(&guard)],
        "we must wait for Curator's release"
    );
    let driver = expect(driver, "RELEASED").await;
    guard.release().await.unwrap();
    driver.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn our_holder_excludes_curator_mutex() {
    let (dir, c, _ours, guard) = held_lock("curator-mutex-2").await;
    let driver = curator_waiting("mutex", &dir, &["10", "children"]).await;
    let session = c.session_id().unwrap();
    curator_waits_for(driver, guard, session, "Curator got in while we held").await;
}

/// Curator's `InterProcessMultiLock` and ours over the same paths exclude each other, in both
/// directions, and neither leaves a node behind.
#[tokio::test(flavor = "multi_thread")]
async fn multi_locks_interoperate_with_curator() {
    let (a, b) = (unique("curator-multi-a"), unique("curator-multi-b"));
    let both = format!("{a},{b}");
    let connect = server().connect_string();
    let c = client().await;
    let ours = MultiLock::new(&c, &[&b, &a]).unwrap();
    let driver = curator_waiting("multi", &both, &["1500"]).await;
    let driver = expect(driver, "ACQUIRED").await;
    assert!(
        ours.try_acquire().await.unwrap().is_none(),
        "Curator holds both"
    );
    assert_eq!(children(connect, &a).await.len(), 1, "our try left nothing");
    let guard = ours
        .acquire_timeout(Duration::from_secs(20))
        .await
        .unwrap()
        .expect("after Curator releases");
    // Curator's nodes go only with its release: ours alone means we waited for it.
    assert_eq!(children(connect, &a).await.len(), 1);
    assert_eq!(children(connect, &b).await.len(), 1);
    let driver = expect(driver, "RELEASED").await;
    driver.finish();
    // Ours holds: Curator takes nothing until we release.
    let driver = curator_waiting("multi", &both, &["10"]).await;
    let zk = raw().await;
    // Curator queues on a (the first path it was given) behind our node.
    loop {
        let (names, _, watch) = zk.get_and_watch_children(&a).await.unwrap();
        if names.len() == 2 {
            break;
        }
        tokio::time::timeout(Duration::from_secs(20), watch.changed())
            .await
            .expect("Curator queues on a");
    }
    assert!(guard.is_held(), "still ours while Curator waits");
    guard.release().await.unwrap();
    let driver = expect(driver, "ACQUIRED").await;
    let driver = expect(driver, "RELEASED").await;
    driver.finish();
    assert_eq!(children(connect, &a).await.len(), 0);
    assert_eq!(children(connect, &b).await.len(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn read_write_locks_interoperate_with_curator() {
    let (dir, c, ours) = recipe("curator-rw", ReadWriteLock::new).await;
    // A Curator writer excludes our reader and our writer.
    let driver = curator_waiting("write", &dir, &["1200"]).await;
    let driver = expect(driver, "ACQUIRED").await;
    assert!(ours.read_lock().try_acquire().await.unwrap().is_none());
    assert!(ours.write_lock().try_acquire().await.unwrap().is_none());
    let read = acquired_within(
        ours.read_lock(),
        Duration::from_secs(20),
        "after Curator's writer",
    )
    .await;
    // The writer's node goes only with its release.
    assert_eq!(
        children_of(&dir).await,
        [node_name(&read)],
        "our reader must wait for Curator's writer"
    );
    let driver = expect(driver, "RELEASED").await;
    driver.finish();
    // Our reader shares with a Curator reader, and excludes a Curator writer.
    let reader = curator_waiting("read", &dir, &["10"]).await;
    let reader = expect(reader, "ACQUIRED").await;
    let reader = expect(reader, "RELEASED").await;
    reader.finish();
    let writer = curator_waiting("write", &dir, &["10", "children"]).await;
    let got_in = "Curator's writer got in while our reader held";
    curator_waits_for(writer, read, c.session_id().unwrap(), got_in).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn queues_cross_over_with_curator_in_order() {
    let (dir, _c, q) = recipe("curator-queue", DistributedQueue::new).await;
    let driver = expect(curator_at("offer", &dir, &["25"]), "OFFERED 25").await;
    driver.finish();
    poll_theirs_and_offer_ours(&q, "curator").await;
    let mut driver = curator_at("drain", &dir, &["25"]);
    for i in 0..25 {
        driver = expect(driver, &format!("ITEM ours-{i}")).await;
    }
    driver.finish();
    assert_eq!(q.size().await.unwrap(), 0);
}

/// `semaphore <connect> <path> <max> <count> <waitMs>`: Curator's `InterProcessSemaphoreV2`.
fn curator_semaphore(path: &str, max: u32, count: u32, wait_ms: u64) -> Driver {
    let (max, count, wait_ms) = (max.to_string(), count.to_string(), wait_ms.to_string());
    let connect = server().connect_string();
    curator(&["semaphore", connect, path, &max, &count, &wait_ms])
}

#[tokio::test(flavor = "multi_thread")]
async fn curator_semaphore_and_ours_share_one_count() {
    let (path, _c, ours) = recipe("curator-sem-1", semaphore_of(2)).await;
    // Curator takes one of two; we take the other; then nobody gets a third.
    let driver = expect(curator_semaphore(&path, 2, 1, 20_000), "WAITING").await;
    let (mut holder, line) = driver.line().await;
    let curator_node = line.strip_prefix("ACQUIRED ").expect(&line).to_string();
    let lease = ours
        .try_acquire(zkrecipes::Wait::No)
        .await
        .unwrap()
        .expect("one left");
    assert!(ours
        .try_acquire(zkrecipes::Wait::No)
        .await
        .unwrap()
        .is_none());
    let leases = children(server().connect_string(), &format!("{path}/leases")).await;
    assert_eq!(leases.len(), 2, "{leases:?}");
    assert!(leases.contains(&curator_node) && leases.contains(&lease.node().to_string()));
    // A Curator acquirer waits for a permit while we hold ours, and gets it from our release.
    let waiter = expect(curator_semaphore(&path, 2, 1, 30_000), "WAITING").await;
    eventually(
        "Curator's waiter lined up",
        Duration::from_secs(30),
        || async {
            children(server().connect_string(), &format!("{path}/leases"))
                .await
                .len()
                == 3
        },
    )
    .await;
    lease.release().await.unwrap();
    let (mut waiter, line) = waiter.line().await;
    assert!(line.starts_with("ACQUIRED "), "{line}");
    // Both Curator holders release; the count is free for two of ours.
    holder.say("release");
    waiter.say("release");
    let holder = expect(holder, "RELEASED").await;
    let waiter = expect(waiter, "RELEASED").await;
    holder.finish();
    waiter.finish();
    let two = ours
        .acquire_many(2, zkrecipes::Wait::No)
        .await
        .unwrap()
        .expect("both free");
    for lease in two {
        lease.release().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn our_waiter_gets_the_permit_a_curator_holder_returns() {
    let (path, _c, ours) = recipe("curator-sem-2", semaphore_of(1)).await;
    let driver = expect(curator_semaphore(&path, 1, 1, 20_000), "WAITING").await;
    let (mut holder, line) = driver.line().await;
    assert!(line.starts_with("ACQUIRED "), "{line}");
    let waiting = {
        let ours = ours.clone();
        tokio::spawn(async move {
            ours.try_acquire(zkrecipes::Wait::For(Duration::from_secs(30)))
                .await
        })
    };
    eventually("our waiter lined up", Duration::from_secs(30), || async {
        children(server().connect_string(), &format!("{path}/leases"))
            .await
            .len()
            == 2
    })
    .await;
    // Curator's next acquirer is stuck behind our waiter on Curator's mutex: it times out.
    let blocked = expect(curator_semaphore(&path, 1, 1, 300), "WAITING").await;
    let blocked = expect(blocked, "NONE").await;
    blocked.finish();
    assert!(
        !waiting.is_finished(),
        "Curator still holds the only permit"
    );
    holder.say("release");
    let lease = waiting
        .await
        .unwrap()
        .unwrap()
        .expect("Curator's returned permit");
    let holder = expect(holder, "RELEASED").await;
    holder.finish();
    assert_eq!(
        children(server().connect_string(), &format!("{path}/leases")).await,
        [lease.node()]
    );
    lease.release().await.unwrap();
}

/// `latch <connect> <path> <id>`: Curator's `LeaderLatch`, started.
async fn curator_latch(path: &str, id: &str) -> Driver {
    expect(
        curator(&["latch", server().connect_string(), path, id]),
        "STARTED",
    )
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn one_leader_across_curator_latches_and_ours() {
    let path = unique("curator-latch");
    let c = client().await;
    // Curator leads first; ours waits behind it and reads its id.
    let curator_leader = expect(curator_latch(&path, "curator-1").await, "LEADER").await;
    let ours = zkrecipes::LeaderLatch::new(&c, &path, "ours").unwrap();
    ours.start().await.unwrap();
    assert_eq!(
        ours.await_leadership(Duration::from_millis(200))
            .await
            .unwrap(),
        None
    );
    assert_eq!(latch_ids(&ours).await, ["curator-1", "ours"]);
    // Curator's close hands over to us.
    let mut curator_leader = curator_leader;
    curator_leader.say("close");
    // (Curator's default close mode is silent: no notLeader.)
    let curator_leader = expect(curator_leader, "CLOSED").await;
    curator_leader.finish();
    let token = ours
        .await_leadership(zkrecipes::Wait::For(Duration::from_secs(30)))
        .await
        .unwrap()
        .expect("ours leads after Curator's close");
    assert!(token > 0);
    // A Curator latch that starts now waits behind ours (it never says LEADER), and leads once
    // ours closes.
    let mut waiting = curator_latch(&path, "curator-2").await;
    eventually(
        "Curator's latch is in line",
        Duration::from_secs(30),
        || async { ours.participants().await.unwrap().len() == 2 },
    )
    .await;
    assert_eq!(waiting.printed(), None, "Curator must not lead beside us");
    assert!(ours.has_leadership());
    ours.close().await.unwrap();
    let mut waiting = expect(waiting, "LEADER").await;
    waiting.say("close");
    let waiting = expect(waiting, "CLOSED").await;
    waiting.finish();
}

/// Curator's driver running `command` on `path` of the test server, `extra` arguments after.
fn curator_at(command: &str, path: &str, extra: &[&str]) -> Driver {
    let mut args = vec![command, server().connect_string(), path];
    args.extend_from_slice(extra);
    curator(&args)
}

#[tokio::test(flavor = "multi_thread")]
async fn curator_and_our_barriers_release_each_other() {
    let path = unique("curator-barrier");
    let c = client().await;
    let ours = zkrecipes::Barrier::new(&c, &path).unwrap();
    // Curator's barrier holds our waiter until Curator removes it.
    expect(curator_at("barrier-set", &path, &[]), "DONE")
        .await
        .finish();
    assert!(ours.is_set().await.unwrap());
    let waiter = {
        let ours = ours.clone();
        tokio::spawn(async move {
            ours.wait(zkrecipes::Wait::For(Duration::from_secs(30)))
                .await
        })
    };
    expect(curator_at("barrier-remove", &path, &[]), "DONE")
        .await
        .finish();
    assert!(waiter.await.unwrap().unwrap());
    // Ours holds Curator's waiter until we remove it.
    ours.set().await.unwrap();
    let curator_waiter = expect(curator_at("barrier-wait", &path, &["30000"]), "WAITING").await;
    let timed_out = expect(curator_at("barrier-wait", &path, &["200"]), "WAITING").await;
    expect(timed_out, "TIMEOUT").await.finish();
    ours.remove().await.unwrap();
    expect(curator_waiter, "RELEASED").await.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mixed_double_barrier_enters_and_leaves_together() {
    let path = unique("curator-double");
    let c = client().await;
    let ours = zkrecipes::DoubleBarrier::new(&c, &path, 3).unwrap();
    let first = expect(curator_at("double", &path, &["3", "30000"]), "WAITING").await;
    let second = expect(curator_at("double", &path, &["3", "30000"]), "WAITING").await;
    // Two Curator members of three: none is in.
    eventually(
        "Curator's members are in",
        Duration::from_secs(30),
        || async { ours.members().await.unwrap().len() == 2 },
    )
    .await;
    assert!(!ours.is_ready().await.unwrap());
    // Ours makes three: everybody enters.
    assert!(ours
        .enter(zkrecipes::Wait::For(Duration::from_secs(30)))
        .await
        .unwrap());
    let mut first = expect(first, "ENTERED").await;
    let mut second = expect(second, "ENTERED").await;
    first.say("leave");
    second.say("leave");
    assert!(ours
        .leave(zkrecipes::Wait::For(Duration::from_secs(30)))
        .await
        .unwrap());
    expect(first, "LEFT").await.finish();
    expect(second, "LEFT").await.finish();
    assert!(ours.members().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn curator_and_our_atomic_longs_count_together_exactly() {
    let path = unique("curator-atomic");
    let c = client().await;
    let ours = zkrecipes::DistributedAtomicLong::new(&c, &path).unwrap();
    ours.force_set(1000).await.unwrap();
    let curator_counter = expect(
        curator(&["atomic-long", server().connect_string(), &path, "100"]),
        "READY",
    )
    .await;
    // Both increment at once: every one of the 200 counts.
    for _ in 0..100 {
        ours.increment().await.unwrap();
    }
    let (curator_counter, line) = curator_counter.line().await;
    curator_counter.finish();
    let curator_last: i64 = line.strip_prefix("DONE ").expect(&line).parse().unwrap();
    assert!(curator_last > 1000 && curator_last <= 1200, "{line}");
    assert_eq!(
        ours.get().await.unwrap(),
        1200,
        "Curator's bytes and ours are one value"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn curator_and_our_shared_counts_are_one_value() {
    let path = unique("curator-count");
    let c = client().await;
    let ours = zkrecipes::SharedCount::new(&c, &path, 5).unwrap();
    ours.start().await.unwrap();
    let mut changes = ours.subscribe();
    // Curator reads our seed (its own seed does not overwrite it) and sets 42; ours follows.
    let driver = curator(&["shared-count", server().connect_string(), &path, "99", "42"]);
    let driver = expect(expect(driver, "VALUE 5").await, "SET").await;
    driver.finish();
    let seen = tokio::time::timeout(Duration::from_secs(20), changes.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seen.value, 42);
    assert_eq!(ours.get().unwrap(), 42);
    ours.close();
}

/// `group <connect> <path> <id> <payload>`: Curator's `GroupMember`, started.
async fn curator_member(group: &str, id: &str, payload: &str) -> Driver {
    let args = ["group", server().connect_string(), group, id, payload];
    expect(curator(&args), "STARTED").await
}

/// Curator's member waits until its `getCurrentMembers()` is `members` (`id=payload,...`).
async fn curator_sees(mut driver: Driver, members: &str) -> Driver {
    driver.say(&format!("until {members}"));
    expect(driver, &format!("MEMBERS {members}")).await
}

/// Waits until our member's `members()` is `members`, written as Curator's driver prints it.
async fn we_see(member: &zkrecipes::GroupMember, members: &str) {
    let listing = || {
        let listed: Vec<String> = member
            .members()
            .iter()
            .map(|(id, payload)| format!("{id}={}", String::from_utf8_lossy(payload)))
            .collect();
        listed.join(",")
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while listing() != members {
        assert!(
            std::time::Instant::now() < deadline,
            "our member sees {} instead of {members}",
            listing()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn curator_and_our_group_members_see_each_other_join_change_and_leave() {
    let group = unique("curator-group");
    let c = client().await;
    let ours = zkrecipes::GroupMember::new(&c, &group, "ours", b"rust-1".to_vec()).unwrap();
    ours.start().await.unwrap();
    let curator_member = curator_member(&group, "curator", "java-1").await;
    let curator_member = curator_sees(curator_member, "curator=java-1,ours=rust-1").await;
    we_see(&ours, "curator=java-1,ours=rust-1").await;
    // A new payload, each way.
    ours.set_payload(b"rust-2".to_vec()).await.unwrap();
    let mut curator_member = curator_sees(curator_member, "curator=java-1,ours=rust-2").await;
    curator_member.say("payload java-2");
    let curator_member = expect(curator_member, "SET").await;
    we_see(&ours, "curator=java-2,ours=rust-2").await;
    // Ours leaves: Curator's member sees it gone.
    ours.close().await.unwrap();
    let curator_member = curator_sees(curator_member, "curator=java-2").await;
    // Curator's leaves: a member of ours sees it gone.
    let later = zkrecipes::GroupMember::new(&c, &group, "later", b"rust-3".to_vec()).unwrap();
    later.start().await.unwrap();
    we_see(&later, "curator=java-2,later=rust-3").await;
    let mut curator_member = curator_sees(curator_member, "curator=java-2,later=rust-3").await;
    curator_member.say("close");
    expect(curator_member, "CLOSED").await.finish();
    we_see(&later, "later=rust-3").await;
    later.close().await.unwrap();
}

/// Path → (czxid, mzxid, data as hex), as Curator's driver dumps its cache.
type Dump = std::collections::BTreeMap<String, (i64, i64, String)>;

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

fn dump_of(cache: &zkrecipes::Cache) -> Dump {
    let nodes = cache.snapshot().into_iter();
    nodes
        .map(|n| (n.path, (n.stat.czxid, n.stat.mzxid, hex(&n.data))))
        .collect()
}

/// Curator's cache, dumped (`NODE <path> <czxid> <mzxid> <hex>` lines, then `END`).
async fn curator_dump(mut driver: Driver) -> (Driver, Dump) {
    driver.say("dump");
    let mut dump = Dump::new();
    loop {
        let (next, line) = driver.line().await;
        driver = next;
        if line == "END" {
            return (driver, dump);
        }
        let words: Vec<&str> = line.split(' ').collect();
        let ["NODE", path, czxid, mzxid, data] = words[..] else {
            panic!("not a node: {line}");
        };
        let stat = (czxid.parse().unwrap(), mzxid.parse().unwrap());
        dump.insert(path.to_string(), (stat.0, stat.1, data.to_string()));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_curator_cache_and_ours_agree_on_a_tree_after_writes() {
    use zookeeper_client as zk;
    let open = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    let zk = raw().await;
    let root = unique("curator-cache");
    let at = |rest: &str| format!("{root}{rest}");
    zk.create("/test", &[], &open).await.ok();
    // Some of the tree is there before either cache starts.
    for (path, data) in [("", "root"), ("/a", "a"), ("/a/x", "ax"), ("/b", "")] {
        zk.create(&at(path), data.as_bytes(), &open).await.unwrap();
    }
    let c = client().await;
    let ours = zkrecipes::Cache::tree(&c, &root, None).unwrap();
    let ours_one_shot = zkrecipes::Cache::with_watches(
        &c,
        &root,
        zkrecipes::CacheScope::Tree { max_depth: None },
        true,
    )
    .unwrap();
    ours.start().await.unwrap();
    ours_one_shot.start().await.unwrap();
    let driver = expect(
        curator(&["cache", server().connect_string(), &root]),
        "STARTED",
    )
    .await;
    for i in 0..8 {
        zk.create(&at(&format!("/n{i}")), format!("n{i}").as_bytes(), &open)
            .await
            .unwrap();
        zk.create(
            &at(&format!("/n{i}/leaf")),
            format!("l{i}").as_bytes(),
            &open,
        )
        .await
        .unwrap();
    }
    for i in (0..8).step_by(2) {
        zk.set_data(&at(&format!("/n{i}")), format!("n{i}'").as_bytes(), None)
            .await
            .unwrap();
    }
    for i in (0..8).step_by(3) {
        zk.delete(&at(&format!("/n{i}/leaf")), None).await.unwrap();
        zk.delete(&at(&format!("/n{i}")), None).await.unwrap();
    }
    // Deleted and created again with the same data and version: another czxid.
    zk.delete(&at("/n1/leaf"), None).await.unwrap();
    zk.create(&at("/n1/leaf"), b"l1", &open).await.unwrap();
    zk.delete(&at("/a/x"), None).await.unwrap();
    zk.set_data(&at("/a"), b"a'", None).await.unwrap();
    zk.create(&at("/n2/leaf/deeper"), b"", &open).await.unwrap();
    zk.create(&at("/n2/leaf/deeper/deepest"), b"d", &open)
        .await
        .unwrap();
    let mut txn = zk.new_multi_writer();
    for (path, data) in [("/m", "m"), ("/m/1", "m1"), ("/m/2", "m2")] {
        txn.add_create(&at(path), data.as_bytes(), &open).unwrap();
    }
    txn.add_set_data(&at("/b"), b"b'", None).unwrap();
    txn.commit().await.unwrap();
    zk.set_data(&root, b"root'", None).await.unwrap();
    // The last write: once a cache holds it, it holds every write before it.
    zk.create(&at("/marker"), b"done", &open).await.unwrap();
    let marker = at("/marker");
    for cache in [&ours, &ours_one_shot] {
        until(
            "our cache holds the marker",
            Duration::from_secs(20),
            || cache.get(&marker).is_some_and(|m| m.data == b"done"),
        )
        .await;
    }
    let mut driver = driver;
    driver.say(&format!("await {marker} done"));
    let driver = expect(driver, "SEEN").await;
    let (driver, curator_dump) = curator_dump(driver).await;
    assert_eq!(curator_dump.len(), 19, "{curator_dump:#?}");
    assert_eq!(
        dump_of(&ours),
        curator_dump,
        "our cache and Curator's agree"
    );
    assert_eq!(
        dump_of(&ours_one_shot),
        curator_dump,
        "our one-shot cache and Curator's agree"
    );
    drop(driver);
}

/// A Curator `ServiceDiscovery` (kind `object` or `spring`) at `base`, registering `instance`
/// (`name id port`) if given, with a session of `session_ms`; once it said STARTED.
async fn curator_discovery(base: &str, kind: &str, instance: &[&str], session_ms: u32) -> Driver {
    let mut args = vec!["discovery", server().connect_string(), base, kind];
    args.extend_from_slice(instance);
    let options = [format!("-Dzkr.session.ms={session_ms}")];
    let driver = Driver::spawn_with(
        &zk_harness::curator_classpath(),
        "tests/interop/CuratorDriver.java",
        &options,
        &args,
    );
    expect(driver, "STARTED").await
}

/// What Curator's `queryForInstances(name)` read: each instance as its serializer writes it.
async fn curator_query(mut driver: Driver, name: &str) -> (Driver, Result<Vec<String>, String>) {
    driver.say(&format!("query {name}"));
    let mut found = Vec::new();
    loop {
        let (next, line) = driver.line().await;
        driver = next;
        if line == "END" {
            return (driver, Ok(found));
        }
        if let Some(failure) = line.strip_prefix("FAILED ") {
            return (driver, Err(failure.to_string()));
        }
        found.push(line.strip_prefix("INSTANCE ").expect(&line).to_string());
    }
}

async fn curator_says(mut driver: Driver, step: &str, prefix: &str) -> (Driver, String) {
    driver.say(step);
    let (driver, line) = driver.line().await;
    let said = line
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{step}: {line}"));
    let said = said.to_string();
    (driver, said)
}

fn ours(name: &str, id: &str, port: u16, payload: serde_json::Value) -> ServiceInstance {
    let mut instance = ServiceInstance::new(name);
    instance.id = id.to_string();
    instance.address = Some("127.0.0.1".into());
    instance.port = Some(port);
    instance.payload = payload;
    instance.uri_spec = Some(UriSpec::parse("{scheme}://{address}:{port}").unwrap());
    instance
}

#[tokio::test(flavor = "multi_thread")]
async fn curators_service_discovery_and_ours_see_and_choose_each_others_instances() {
    let base = unique("curator-services");
    let c = client().await;
    let discovery = ServiceDiscovery::new(&c, &base).unwrap();
    let curator = curator_discovery(&base, "object", &["api", "cur-1", "7001"], 4000).await;
    let mine = ours("api", "ours-1", 7002, serde_json::json!("ours-1"));
    discovery.register(mine.clone()).await.unwrap();

    // Curator reads ours with every field: what it writes back is our node's JSON, byte for byte.
    let (curator, read) = curator_query(curator, "api").await;
    let read = read.expect("Curator reads every instance");
    assert_eq!(read.len(), 2, "{read:?}");
    assert_eq!(read[1].as_bytes(), mine.to_json(), "Curator's view of ours");
    // Ours reads Curator's, and writes it back as Curator wrote it.
    let theirs = ServiceInstance::from_json(read[0].as_bytes()).unwrap();
    assert_eq!(theirs.to_json(), read[0].as_bytes());
    let found = discovery.query_for_instances("api").await.unwrap();
    assert_eq!(found.len(), 2);
    let cur = &found[0];
    assert_eq!((cur.id.as_str(), cur.port), ("cur-1", Some(7001)));
    assert_eq!(cur.payload, serde_json::json!("curator-cur-1"));
    assert_eq!(cur.uri().as_deref(), Some("http://127.0.0.1:7001"));
    assert_eq!(
        cur.to_json(),
        read[0].as_bytes(),
        "the node holds what Curator serialized"
    );

    // Caches and round-robin providers on both sides reach both instances.
    let (curator, cached) = curator_says(curator, "cache api 2", "CACHED ").await;
    assert_eq!(cached, "cur-1,ours-1");
    let (curator, chose) = curator_says(curator, "provider api 4", "CHOSE ").await;
    let mut chose: Vec<&str> = chose.split(',').collect();
    chose.sort();
    chose.dedup();
    assert_eq!(
        chose,
        ["cur-1", "ours-1"],
        "Curator's provider reaches both"
    );
    let provider = discovery
        .service_provider(
            "api",
            ProviderStrategy::RoundRobin,
            DownInstancePolicy::default(),
        )
        .unwrap();
    provider.start().await.unwrap();
    let mut reached: Vec<String> = (0..2)
        .map(|_| provider.get_instance().unwrap().id)
        .collect();
    reached.sort();
    assert_eq!(reached, ["cur-1", "ours-1"], "ours reaches both");

    // A SIGKILLed Curator registrant leaves our cache within its session timeout (4 s).
    let cache = discovery.service_cache("api").unwrap();
    cache.start().await.unwrap();
    let killed = std::time::Instant::now();
    drop(curator);
    until(
        "Curator's instance leaves our cache",
        Duration::from_secs(20),
        || cache.instances().len() == 1,
    )
    .await;
    assert!(
        killed.elapsed() < Duration::from_secs(4 + 6),
        "{:?}",
        killed.elapsed()
    );
    assert_eq!(cache.instances()[0].id, "ours-1");
    discovery.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn springs_payload_reads_and_writes_as_spring_cloud_zookeeper_has_it() {
    let base = unique("curator-spring");
    let c = client().await;
    let discovery = ServiceDiscovery::new(&c, &base).unwrap();
    let curator = curator_discovery(&base, "spring", &["app", "sp-1", "8001"], 60_000).await;
    let payload = SpringPayload {
        id: "ours-sp".into(),
        name: "app".into(),
        metadata: [("instance_status".to_string(), "UP".to_string())].into(),
    };
    let mine = ours("app", "ours-sp", 8002, payload.to_value());
    discovery.register(mine.clone()).await.unwrap();
    // Curator reads ours with Spring's payload class (ZookeeperInstance, of
    // spring-cloud-zookeeper-discovery 4.3.0) and writes back our node's bytes.
    let (curator, read) = curator_query(curator, "app").await;
    let read = read.expect("Spring's reader reads ours");
    assert_eq!(read.len(), 2);
    assert_eq!(read[0].as_bytes(), mine.to_json());
    let theirs = ServiceInstance::from_json(read[1].as_bytes()).unwrap();
    let spring = theirs.spring_payload().expect("Spring's payload");
    assert_eq!((spring.id.as_str(), spring.name.as_str()), ("sp-1", "app"));
    assert_eq!(spring.metadata["instance_status"], "UP");
    assert_eq!(theirs.to_json(), read[1].as_bytes());

    // Why Spring's form always carries @class: one payload without it fails Spring's whole
    // query for the service, as Spring Cloud Zookeeper's users found.
    let bare = ours(
        "app",
        "bare",
        8003,
        serde_json::json!({"id": "bare", "name": "app"}),
    );
    discovery.register(bare).await.unwrap();
    let (curator, read) = curator_query(curator, "app").await;
    assert!(
        read.is_err(),
        "Curator's typed reader fails the service: {read:?}"
    );
    assert_eq!(
        discovery.query_for_instances("app").await.unwrap().len(),
        3,
        "ours reads all"
    );
    discovery.unregister("app", "bare").await.unwrap();
    let (mut curator, read) = curator_query(curator, "app").await;
    assert_eq!(read.map(|found| found.len()), Ok(2));
    curator.say("close");
    let curator = expect(curator, "CLOSED").await;
    curator.finish();
    assert_eq!(discovery.query_for_instances("app").await.unwrap(), [mine]);
    discovery.close().await.unwrap();
}
