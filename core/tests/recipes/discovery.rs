//! Service discovery against a real ZooKeeper: registrations kept across a new session and
//! never taken from a live one, queries and caches that leave a malformed registration out,
//! providers' strategies and down instances, and calls cut short anywhere leaving no node.
use crate::common;

use std::time::Duration;

use common::*;
use zkrecipes::{
    DiscoveryEvent, DownInstancePolicy, ErrorCode, ProviderStrategy, ServiceCacheEvent,
    ServiceDiscovery, ServiceInstance, ServiceType, SpringPayload, UriSpec,
};
use zookeeper_client as zk;

const LONG: Duration = Duration::from_secs(20);

fn instance(name: &str, id: &str, port: u16) -> ServiceInstance {
    let mut instance = ServiceInstance::new(name);
    instance.id = id.to_string();
    instance.address = Some("127.0.0.1".into());
    instance.port = Some(port);
    instance.uri_spec = Some(UriSpec::parse("{scheme}://{address}:{port}").unwrap());
    instance
}

async fn next_event(events: &mut zkrecipes::ServiceCacheEvents) -> ServiceCacheEvent {
    tokio::time::timeout(LONG, events.recv())
        .await
        .expect("an event in time")
        .expect("the cache is open")
}

#[tokio::test(flavor = "multi_thread")]
async fn instances_register_update_query_and_unregister() {
    let c = client().await;
    let zk = raw().await;
    let base = unique("services");
    let discovery = ServiceDiscovery::new(&c, &base).unwrap();
    assert!(
        discovery.query_for_names().await.unwrap().is_empty(),
        "no base yet"
    );
    assert!(discovery
        .query_for_instances("api")
        .await
        .unwrap()
        .is_empty());
    let mut a = instance("api", "a", 8080);
    a.payload = SpringPayload {
        id: "api-1".into(),
        name: "api".into(),
        metadata: [("instance_status".to_string(), "UP".to_string())].into(),
    }
    .to_value();
    discovery.register(a.clone()).await.unwrap();
    discovery
        .register(instance("api", "b", 8081))
        .await
        .unwrap();
    discovery.register(instance("web", "w", 80)).await.unwrap();
    let path = discovery.path_of("api", "a");
    let (data, stat) = zk.get_data(&path).await.unwrap();
    assert_eq!(data, a.to_json(), "the node holds the instance's JSON");
    assert_eq!(
        stat.ephemeral_owner,
        c.session_id().unwrap(),
        "DYNAMIC: ephemeral"
    );
    assert_eq!(discovery.query_for_names().await.unwrap(), ["api", "web"]);
    let found = discovery.query_for_instances("api").await.unwrap();
    assert_eq!(found, [a.clone(), instance_as(&found[1], "b")]);
    assert_eq!(
        found[0].spring_payload().unwrap().metadata["instance_status"],
        "UP"
    );
    assert_eq!(found[0].uri().as_deref(), Some("http://127.0.0.1:8080"));

    // An update is written now; registering the same id again is an update too.
    a.port = Some(9090);
    a.enabled = false;
    discovery.update(a.clone()).await.unwrap();
    let read = discovery
        .query_for_instance("api", "a")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((read.port, read.enabled), (Some(9090), false));
    a.port = Some(9091);
    discovery.register(a.clone()).await.unwrap();
    assert_eq!(zk.get_data(&path).await.unwrap().0, a.to_json());
    assert_eq!(discovery.registered().len(), 3);

    // Static instances are persistent nodes.
    let mut s = instance("api", "s", 1);
    s.service_type = ServiceType::Static;
    discovery.register(s).await.unwrap();
    let static_path = discovery.path_of("api", "s");
    assert_eq!(
        zk.check_stat(&static_path)
            .await
            .unwrap()
            .unwrap()
            .ephemeral_owner,
        0
    );

    discovery.unregister("api", "b").await.unwrap();
    assert_eq!(
        zk.check_stat(&discovery.path_of("api", "b")).await.unwrap(),
        None
    );
    discovery.unregister("api", "b").await.unwrap();
    let unknown = discovery.update(instance("api", "b", 1)).await.unwrap_err();
    assert_eq!(unknown.code(), ErrorCode::NoNode, "{unknown}");

    discovery.close().await.unwrap();
    for (name, id) in [("api", "a"), ("api", "s"), ("web", "w")] {
        let path = discovery.path_of(name, id);
        assert_eq!(
            zk.check_stat(&path).await.unwrap(),
            None,
            "{path} deleted at close"
        );
    }
    let closed = discovery
        .register(instance("api", "z", 1))
        .await
        .unwrap_err();
    assert_eq!(closed.code(), ErrorCode::Closed);
    discovery.close().await.unwrap();
}

/// `found` with the fields the registry gave it (its registration time), as `id` was made.
fn instance_as(found: &ServiceInstance, id: &str) -> ServiceInstance {
    let mut expected = instance("api", id, 8081);
    expected.registration_time_utc = found.registration_time_utc;
    expected
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_refused_before_anything_is_sent() {
    let c = client().await;
    let base = unique("services-bad");
    assert_eq!(
        ServiceDiscovery::new(&c, "relative").unwrap_err().code(),
        ErrorCode::InvalidPath
    );
    let discovery = ServiceDiscovery::new(&c, &base).unwrap();
    for (name, id) in [
        ("a/b", "i"),
        ("", "i"),
        ("a", ""),
        ("a", ".."),
        ("a", "x/y"),
    ] {
        let err = discovery.register(instance(name, id, 1)).await.unwrap_err();
        assert_eq!(
            err.code(),
            ErrorCode::InvalidArgument,
            "{name:?} {id:?}: {err}"
        );
    }
    assert_eq!(
        discovery
            .query_for_instances("a/b")
            .await
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    assert!(DownInstancePolicy::new(Duration::from_secs(1), 0).is_err());
    assert!(DownInstancePolicy::new(Duration::ZERO, 1).is_err());
    assert_eq!(
        ProviderStrategy::parse("round-robin").unwrap(),
        ProviderStrategy::RoundRobin
    );
    assert!(ProviderStrategy::parse("fastest").is_err());
    assert_eq!(
        ServiceType::parse("dynamic_sequential").unwrap(),
        ServiceType::DynamicSequential
    );
    let zk = raw().await;
    assert_eq!(
        zk.check_stat(&base).await.unwrap(),
        None,
        "nothing was created"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_live_sessions_instance_is_never_taken_and_a_static_leftover_is_replaced() {
    let base = unique("services-taken");
    let theirs = client().await;
    let ours = client().await;
    let first = ServiceDiscovery::new(&theirs, &base).unwrap();
    first.register(instance("api", "dup", 1)).await.unwrap();
    let second = ServiceDiscovery::new(&ours, &base).unwrap();
    let taken = second
        .register(instance("api", "dup", 2))
        .await
        .unwrap_err();
    assert_eq!(taken.code(), ErrorCode::NodeExists, "{taken}");
    let owner = format!("{:x}", theirs.session_id().unwrap());
    assert!(
        taken.message().contains(&owner),
        "names the session: {taken}"
    );
    let still = second
        .query_for_instance("api", "dup")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(still.port, Some(1), "the live one's instance stays");
    assert!(second.registered().is_empty());

    // A STATIC registration's leftover of the id (its registrant gone) is replaced by a
    // DYNAMIC one.
    let mut leftover = instance("api", "old", 3);
    leftover.service_type = ServiceType::Static;
    let zk = raw().await;
    let old = second.path_of("api", "old");
    zk.create(&old, &leftover.to_json(), &open_persistent())
        .await
        .unwrap();
    second.register(instance("api", "old", 4)).await.unwrap();
    let (data, stat) = zk.get_data(&second.path_of("api", "old")).await.unwrap();
    assert_eq!(stat.ephemeral_owner, ours.session_id().unwrap());
    assert_eq!(ServiceInstance::from_json(&data).unwrap().port, Some(4));
    second.close().await.unwrap();
    first.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dynamic_instance_is_registered_again_under_a_new_session() {
    let base = unique("services-expiry");
    let (proxy, cut) = behind_proxy(Duration::from_secs(2)).await;
    let watcher = client().await;
    let discovery = ServiceDiscovery::new(&cut, &base).unwrap();
    let mut told = discovery.subscribe();
    let view = ServiceDiscovery::new(&watcher, &base).unwrap();
    let cache = view.service_cache("api").unwrap();
    cache.start().await.unwrap();
    let mut events = cache.subscribe();
    discovery.register(instance("api", "a", 1)).await.unwrap();
    assert!(matches!(next_event(&mut events).await, ServiceCacheEvent::Added(i) if i.id == "a"));

    let session = cut.session_id().unwrap();
    proxy.set_blackhole(true);
    until_expired(server().port(), session).await;
    assert!(matches!(next_event(&mut events).await, ServiceCacheEvent::Removed(i) if i.id == "a"));
    proxy.set_blackhole(false);
    assert!(matches!(next_event(&mut events).await, ServiceCacheEvent::Added(i) if i.id == "a"));
    let event = tokio::time::timeout(LONG, told.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        event,
        DiscoveryEvent::Reregistered {
            name: "api".into(),
            id: "a".into(),
            path: discovery.path_of("api", "a"),
        }
    );
    let zk = raw().await;
    let stat = zk
        .check_stat(&discovery.path_of("api", "a"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stat.ephemeral_owner,
        cut.session_id().unwrap(),
        "under the new session"
    );
    assert_ne!(stat.ephemeral_owner, session);

    // A delete by somebody else: made again at once.
    zk.delete(&discovery.path_of("api", "a"), None)
        .await
        .unwrap();
    assert!(matches!(
        next_event(&mut events).await,
        ServiceCacheEvent::Removed(_)
    ));
    assert!(matches!(
        next_event(&mut events).await,
        ServiceCacheEvent::Added(_)
    ));
    discovery.close().await.unwrap();
    assert!(matches!(
        next_event(&mut events).await,
        ServiceCacheEvent::Removed(_)
    ));
    view.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn caches_and_providers_choose_among_the_live_enabled_instances() {
    let c = client().await;
    let zk = raw().await;
    let base = unique("services-provider");
    let discovery = ServiceDiscovery::new(&c, &base).unwrap();
    for (id, port) in [("a", 1), ("b", 2), ("c", 3)] {
        discovery.register(instance("api", id, port)).await.unwrap();
    }
    // A registration that is no instance: left out of queries and caches, never failing them.
    let junk = format!("{base}/api/junk");
    zk.create(&junk, b"{\"not\":\"an instance\"}", &open_persistent())
        .await
        .unwrap();
    assert_eq!(discovery.query_for_instances("api").await.unwrap().len(), 3);
    let err = discovery
        .query_for_instance("api", "junk")
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument, "{err}");

    let policy = DownInstancePolicy::new(Duration::from_secs(60), 2).unwrap();
    let round_robin = discovery
        .service_provider("api", ProviderStrategy::RoundRobin, policy)
        .unwrap();
    round_robin.start().await.unwrap();
    assert_eq!(round_robin.get_all_instances().len(), 3);
    let mut chosen: Vec<String> = (0..3)
        .map(|_| round_robin.get_instance().unwrap().id)
        .collect();
    chosen.sort();
    assert_eq!(chosen, ["a", "b", "c"], "each in turn");

    // Two errors take b down; a disabled c is never chosen.
    let b = discovery
        .query_for_instance("api", "b")
        .await
        .unwrap()
        .unwrap();
    round_robin.note_error(&b);
    assert!(
        (0..3).any(|_| round_robin.get_instance().unwrap().id == "b"),
        "one error: still up"
    );
    round_robin.note_error(&b);
    let mut c_off = instance("api", "c", 3);
    c_off.enabled = false;
    discovery.update(c_off).await.unwrap();
    until("the cache sees c disabled", LONG, || {
        round_robin
            .get_all_instances()
            .iter()
            .any(|i| i.id == "c" && !i.enabled)
    })
    .await;
    for _ in 0..6 {
        assert_eq!(
            round_robin.get_instance().unwrap().id,
            "a",
            "b is down, c disabled"
        );
    }

    let sticky = discovery
        .service_provider(
            "api",
            ProviderStrategy::Sticky,
            DownInstancePolicy::default(),
        )
        .unwrap();
    sticky.start().await.unwrap();
    let first = sticky.get_instance().unwrap().id;
    assert!((0..5).all(|_| sticky.get_instance().unwrap().id == first));
    discovery.unregister("api", &first).await.unwrap();
    until("the sticky provider moves on", LONG, || {
        sticky.get_instance().is_some_and(|i| i.id != first)
    })
    .await;

    let random = discovery
        .service_provider(
            "api",
            ProviderStrategy::Random,
            DownInstancePolicy::default(),
        )
        .unwrap();
    random.start().await.unwrap();
    assert!(random.get_instance().is_some());

    // A cache's events: changed, removed; a node that becomes an instance is added.
    let cache = discovery.service_cache("api").unwrap();
    cache.start().await.unwrap();
    let (now, mut events) = cache.instances_and_subscribe();
    assert_eq!(now.len(), 2, "{now:?}");
    let left = now
        .iter()
        .find(|i| i.enabled)
        .expect("one enabled left")
        .clone();
    let mut moved = left.clone();
    moved.port = Some(11);
    discovery.update(moved.clone()).await.unwrap();
    match next_event(&mut events).await {
        ServiceCacheEvent::Changed { old, new } => {
            assert_eq!((old.port, new.port), (left.port, Some(11)));
        }
        other => panic!("{other:?}"),
    }
    moved.id = "junk".into();
    zk.set_data(&junk, &moved.to_json(), None).await.unwrap();
    assert!(matches!(next_event(&mut events).await, ServiceCacheEvent::Added(i) if i.id == "junk"));
    zk.delete(&junk, None).await.unwrap();
    assert!(
        matches!(next_event(&mut events).await, ServiceCacheEvent::Removed(i) if i.id == "junk")
    );
    discovery.close().await.unwrap();
    assert!(
        tokio::time::timeout(LONG, events.recv())
            .await
            .unwrap()
            .is_none(),
        "closed with it"
    );
    assert!(
        round_robin.get_instance().is_none(),
        "its cache closed with the discovery"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn registrations_cut_short_anywhere_leave_no_node() {
    let c = client().await;
    let zk = raw().await;
    let base = unique("services-cut");
    for round in 0..150u64 {
        let discovery = ServiceDiscovery::new(&c, &base).unwrap();
        let mut kept = instance("api", &format!("i{round}"), 1);
        kept.service_type = if round % 3 == 0 {
            ServiceType::DynamicSequential
        } else {
            ServiceType::Dynamic
        };
        let cut = Duration::from_micros(round * 200);
        let _ = tokio::time::timeout(cut, discovery.register(kept)).await;
        let _ = tokio::time::timeout(cut, discovery.close()).await;
        discovery.close().await.unwrap();
    }
    let left = zk.list_children(&format!("{base}/api")).await;
    assert!(
        matches!(&left, Ok(children) if children.is_empty())
            || matches!(left, Err(zk::Error::NoNode)),
        "every cut registration's node is gone: {left:?}"
    );
}

/// A registration the server refuses when it is made again (the service's node lost its
/// CREATE grant, then somebody deleted the instance) stops, and says so: the object no longer
/// keeps it, and nothing is left behind.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_registration_stops_and_says_why() {
    let base = unique("services-refused");
    let admin = zk::Client::connector()
        .with_auth("digest", b"admin:secret")
        .connect(server().connect_string())
        .await
        .unwrap();
    let service = format!("{base}/api");
    admin
        .mkdir(
            &service,
            &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()),
        )
        .await
        .unwrap();
    let cut = client().await;
    let discovery = ServiceDiscovery::new(&cut, &base).unwrap();
    let mut told = discovery.subscribe();
    discovery.register(instance("api", "a", 1)).await.unwrap();

    let locked = [
        zk::Acl::new(zk::Permission::ALL, zk::AuthId::authed()),
        zk::Acl::new(zk::Permission::READ, zk::AuthId::anyone()),
    ];
    admin.set_acl(&service, &locked, None).await.unwrap();
    admin
        .delete(&discovery.path_of("api", "a"), None)
        .await
        .unwrap();
    let event = tokio::time::timeout(LONG, told.recv())
        .await
        .expect("told in time")
        .unwrap();
    match event {
        DiscoveryEvent::RegistrationStopped { name, id, error } => {
            assert_eq!((name.as_str(), id.as_str()), ("api", "a"));
            assert_eq!(error.code(), ErrorCode::NoAuth, "{error}");
        }
        other => panic!("expected REGISTRATION_STOPPED, got {other:?}"),
    }
    assert!(discovery.registered().is_empty(), "no longer kept");
    assert!(admin.list_children(&service).await.unwrap().is_empty());
    // A new registration is refused at once, with the server's reason.
    let refused = discovery
        .register(instance("api", "b", 2))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), ErrorCode::NoAuth, "{refused}");
    assert!(discovery.registered().is_empty());
    discovery.close().await.unwrap();
}

/// Two tasks registering one id on one object at once: one node, and the object keeps one
/// registration, holding the fields of whichever wrote last.
#[tokio::test(flavor = "multi_thread")]
async fn two_registers_of_one_id_at_once_make_one_registration() {
    let base = unique("services-same-id");
    let c = client().await;
    let discovery = ServiceDiscovery::new(&c, &base).unwrap();
    for round in 0..20u16 {
        let id = format!("i{round}");
        let first = spawn_on(&discovery, {
            let id = id.clone();
            move |d| async move { d.register(instance("api", &id, 1)).await }
        });
        let second = spawn_on(&discovery, {
            let id = id.clone();
            move |d| async move { d.register(instance("api", &id, 2)).await }
        });
        joined(first, LONG, "first register").await.unwrap();
        joined(second, LONG, "second register").await.unwrap();
        let kept: Vec<_> = discovery
            .registered()
            .into_iter()
            .filter(|i| i.id == id)
            .collect();
        assert_eq!(kept.len(), 1, "one registration of {id}");
        let found = discovery
            .query_for_instance("api", &id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            found.port, kept[0].port,
            "the node holds what the object keeps"
        );
    }
    let zk = raw().await;
    assert_eq!(
        zk.list_children(&format!("{base}/api"))
            .await
            .unwrap()
            .len(),
        20
    );
    discovery.close().await.unwrap();
    assert!(zk
        .list_children(&format!("{base}/api"))
        .await
        .unwrap()
        .is_empty());
}

/// An id registered again with another service type gets a node of that type's mode (Curator
/// deletes and re-creates it), by register and by update alike.
#[tokio::test(flavor = "multi_thread")]
async fn another_service_type_makes_the_node_again_in_its_mode() {
    let base = unique("services-retyped");
    let c = client().await;
    let discovery = ServiceDiscovery::new(&c, &base).unwrap();
    let zk = raw().await;
    let path = discovery.path_of("api", "a");
    let owner = |zk: zk::Client, path: String| async move {
        zk.check_stat(&path).await.unwrap().unwrap().ephemeral_owner
    };
    let dynamic = instance("api", "a", 1);
    discovery.register(dynamic.clone()).await.unwrap();
    assert_ne!(owner(zk.clone(), path.clone()).await, 0, "ephemeral");
    let mut permanent = dynamic.clone();
    permanent.service_type = ServiceType::Permanent;
    discovery.register(permanent.clone()).await.unwrap();
    assert_eq!(owner(zk.clone(), path.clone()).await, 0, "persistent now");
    let mut back = permanent.clone();
    back.service_type = ServiceType::Dynamic;
    back.port = Some(2);
    discovery.update(back).await.unwrap();
    assert_ne!(
        owner(zk.clone(), path.clone()).await,
        0,
        "ephemeral again, by update"
    );
    let found = discovery
        .query_for_instance("api", "a")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (found.port, found.service_type),
        (Some(2), ServiceType::Dynamic)
    );
    assert_eq!(discovery.registered().len(), 1);
    discovery.close().await.unwrap();
    assert!(zk.check_stat(&path).await.unwrap().is_none());
}
