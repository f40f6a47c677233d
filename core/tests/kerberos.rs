//! SASL GSSAPI against a real MIT KDC and a ZooKeeper that requires Kerberos.
//! A test binary of its own: the Kerberos environment (`KRB5_CONFIG`,
//! `KRB5CCNAME`, `KRB5_CLIENT_KTNAME`) is per process.

mod common;

use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use zk_harness::kerberos::{Kdc, KerberosServer};
use zkrecipes::{Client, ClientOptions, DistributedQueue, ErrorCode, Sasl, WriteLock};

struct Realm {
    kdc: Kdc,
    server: KerberosServer,
}

fn realm() -> &'static Realm {
    static REALM: OnceLock<Realm> = OnceLock::new();
    REALM.get_or_init(|| {
        let kdc = Kdc::start();
        // Set once, before any Kerberos call of this process.
        std::env::set_var("KRB5_CONFIG", kdc.krb5_conf());
        let server = KerberosServer::start(&kdc);
        Realm { kdc, server }
    })
}

/// The tests change the process's credential environment: one at a time.
static CREDENTIALS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn options() -> ClientOptions {
    ClientOptions {
        sasl: Some(Sasl::gssapi()),
        connect_timeout: Duration::from_secs(10),
        ..Default::default()
    }
}

fn kinit(realm: &Realm, cache: &std::path::Path) {
    let out = Command::new("kinit")
        .arg("-kt")
        .arg(realm.kdc.client_keytab())
        .arg(realm.kdc.client_principal())
        .env("KRB5_CONFIG", realm.kdc.krb5_conf())
        .env("KRB5CCNAME", format!("FILE:{}", cache.display()))
        .output()
        .expect("kinit (install krb5-user)");
    assert!(
        out.status.success(),
        "kinit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The realm, and the process's credential environment held for this test alone.
async fn realm_held() -> (&'static Realm, tokio::sync::MutexGuard<'static, ()>) {
    let realm = realm();
    (realm, CREDENTIALS.lock().await)
}

/// Points the process's ticket cache at `name` (in the realm's directory).
fn use_ticket_cache(realm: &Realm, name: &str) -> std::path::PathBuf {
    let cache = realm.kdc.dir.join(name);
    std::env::set_var("KRB5CCNAME", format!("FILE:{}", cache.display()));
    cache
}

/// A ticket from kinit (in the cache `ccache-<tag>`) in the process's environment, no client
/// keytab.
fn with_kinit_ticket(realm: &Realm, tag: &str) {
    let cache = use_ticket_cache(realm, &format!("ccache-{tag}"));
    kinit(realm, &cache);
    std::env::remove_var("KRB5_CLIENT_KTNAME");
}

/// No credentials in the process's environment: only a client's own principal and keytab log in.
fn without_default_credentials(realm: &Realm) {
    use_ticket_cache(realm, "no-such-cache");
    std::env::remove_var("KRB5_CLIENT_KTNAME");
}

/// Test certificates, made in the realm's directory `name`.
fn certs_in(realm: &Realm, name: &str) -> zk_harness::secure::Certs {
    zk_harness::secure::Certs::generate(&realm.kdc.dir.join(name))
}

/// A client of `connect` with `options` that must log in (failing with the server's log).
async fn logged_in(realm: &Realm, connect: &str, options: ClientOptions) -> Client {
    Client::connect(connect, options)
        .await
        .unwrap_or_else(|err| panic!("{err}\n{}", realm.server.log()))
}

/// Connects to `connect` with `sasl` and expects `code` well within the connect timeout (8 s),
/// with a message naming each of `named`.
async fn refused_at_once(connect: &str, sasl: Sasl, code: ErrorCode, named: &[&str]) {
    let started = std::time::Instant::now();
    let err = Client::connect(
        connect,
        ClientOptions {
            sasl: Some(sasl),
            connect_timeout: Duration::from_secs(8),
            ..Default::default()
        },
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), code, "{err}");
    for name in named {
        assert!(err.message().contains(name), "{name}: {err}");
    }
    assert!(err.message().len() < 600, "{err}");
    assert!(started.elapsed() < Duration::from_secs(8), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ticket_from_kinit_authenticates_and_creator_acls_name_the_principal() {
    let (realm, _one) = realm_held().await;
    with_kinit_ticket(realm, "kinit");
    let client = logged_in(realm, &realm.server.connect(), options()).await;
    assert_eq!(client.authenticated_as(), vec!["sasl:client".to_string()]);
    let lock = WriteLock::new(&client, "/krb5/lock").unwrap();
    lock.acquire().await.unwrap().release().await.unwrap();
    let queue = DistributedQueue::new(&client, "/krb5/queue").unwrap();
    queue.offer(b"kerberos").await.unwrap();
    assert_eq!(queue.poll().await.unwrap().unwrap(), b"kerberos");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_keytab_authenticates_without_kinit() {
    let (realm, _one) = realm_held().await;
    use_ticket_cache(realm, "ccache-keytab");
    std::env::set_var("KRB5_CLIENT_KTNAME", realm.kdc.client_keytab());
    let client = logged_in(realm, &realm.server.connect(), options()).await;
    assert_eq!(client.authenticated_as(), vec!["sasl:client".to_string()]);
    client.close().await;
    std::env::remove_var("KRB5_CLIENT_KTNAME");
}

/// Two clients of one process log in as two principals, each from its own keytab, with no
/// credentials in the process's environment; each node's creator ACL names its own principal.
#[tokio::test(flavor = "multi_thread")]
async fn two_clients_of_one_process_log_in_as_two_principals_from_their_keytabs() {
    let (realm, _one) = realm_held().await;
    without_default_credentials(realm);
    let as_principal = |principal: String, keytab| ClientOptions {
        sasl: Some(Sasl::gssapi().principal(&principal).keytab(keytab)),
        acl: zkrecipes::AclPolicy::Creator,
        ..options()
    };
    let connect = realm.server.connect();
    let kdc = &realm.kdc;
    let as_client = as_principal(kdc.client_principal(), kdc.client_keytab());
    let client = logged_in(realm, &connect, as_client).await;
    let as_reporter = as_principal(kdc.second_principal(), kdc.second_keytab());
    let reporter = logged_in(realm, &connect, as_reporter).await;
    assert_eq!(client.authenticated_as(), vec!["sasl:client".to_string()]);
    assert_eq!(
        reporter.authenticated_as(),
        vec!["sasl:reporter".to_string()]
    );
    // The keytab alone: its first (only) principal.
    let by_keytab = logged_in(
        realm,
        &realm.server.connect(),
        ClientOptions {
            sasl: Some(Sasl::gssapi().keytab(realm.kdc.second_keytab())),
            ..options()
        },
    )
    .await;
    assert_eq!(
        by_keytab.authenticated_as(),
        vec!["sasl:reporter".to_string()]
    );
    // Each one's items are its own: the other principal may not take them.
    let queue = DistributedQueue::new(&client, "/krb5/two-principals").unwrap();
    queue.offer(b"for client only").await.unwrap();
    let theirs = DistributedQueue::new(&reporter, "/krb5/two-principals").unwrap();
    assert_eq!(theirs.poll().await.unwrap_err().code(), ErrorCode::NoAuth);
    assert_eq!(queue.poll().await.unwrap().unwrap(), b"for client only");
    for c in [client, reporter, by_keytab] {
        c.close().await;
    }
}

/// Per-client credentials x reconnect: a keytab client holding a lock reconnects on the tickets
/// it holds, with the same session and the lock still held, though its keytab is gone meanwhile
/// (moved, rewritten in place). A cache keyed by the keytab's contents lost those tickets.
#[tokio::test(flavor = "multi_thread")]
async fn a_keytab_client_reconnects_on_its_tickets_while_its_keytab_is_gone() {
    let (realm, _one) = realm_held().await;
    without_default_credentials(realm);
    let keytab = realm.kdc.dir.join("moving.keytab");
    std::fs::copy(realm.kdc.second_keytab(), &keytab).unwrap();
    let proxy = zk_harness::FaultProxy::start(&realm.server.connect());
    let through = proxy.connect_string().replace("127.0.0.1", "localhost");
    let client = logged_in(
        realm,
        &through,
        ClientOptions {
            sasl: Some(Sasl::gssapi().keytab(&keytab)),
            ..options()
        },
    )
    .await;
    let session = client.session_id().unwrap();
    let lock = WriteLock::new(&client, "/krb5/keytab-gone").unwrap();
    let held = lock.acquire().await.unwrap();
    std::fs::remove_file(&keytab).unwrap();
    let mut states = client.subscribe();
    let dropped = proxy.connections();
    proxy.drop_all();
    let reconnected = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match states.recv().await.unwrap() {
                zkrecipes::ConnectionState::Reconnected => return,
                zkrecipes::ConnectionState::Lost => panic!("LOST: {:?}", client.session_error()),
                _ => {}
            }
        }
    })
    .await;
    assert!(reconnected.is_ok(), "no RECONNECTED within 30 s");
    assert!(
        proxy.connections() > dropped,
        "the client never connected again"
    );
    assert_eq!(client.session_id().unwrap(), session);
    assert!(lock.is_held());
    assert_eq!(
        client.whoami().await.unwrap(),
        vec!["sasl:reporter".to_string()]
    );
    held.release().await.unwrap();
    client.close().await;
}

/// What a C string cannot hold, and a keytab that is no regular file, are refused at once:
/// a NUL cut `client\0evil@REALM` short to `client`, and a pipe without a writer held
/// `connect` for good (found by an adversarial review).
#[tokio::test(flavor = "multi_thread")]
async fn names_with_a_nul_and_keytabs_that_are_no_file_are_invalid_at_once() {
    let (realm, _one) = realm_held().await;
    let fifo = realm.kdc.dir.join("fifo.keytab");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let keytab = realm.kdc.second_keytab();
    for (sasl, named) in [
        (
            Sasl::gssapi()
                .principal("client\0evil@ZKRECIPES.TEST")
                .keytab(&keytab),
            "principal",
        ),
        (Sasl::gssapi().service("zoo\0keeper"), "service"),
        (Sasl::gssapi().host("local\0host"), "host"),
        (Sasl::gssapi().keytab(&fifo), "not a regular file"),
        (Sasl::gssapi().keytab(&realm.kdc.dir), "not a regular file"),
        (
            Sasl::gssapi().principal(&"x".repeat(5000)),
            "more than 1024",
        ),
    ] {
        refused_at_once(
            &realm.server.connect(),
            sasl,
            ErrorCode::InvalidArgument,
            &[named],
        )
        .await;
    }
    // `FILE:` before the path, as Kerberos spells a keytab, is the same file.
    let client = logged_in(
        realm,
        &realm.server.connect(),
        ClientOptions {
            sasl: Some(Sasl::gssapi().keytab(format!("FILE:{}", keytab.display()))),
            ..options()
        },
    )
    .await;
    assert_eq!(client.authenticated_as(), vec!["sasl:reporter".to_string()]);
    client.close().await;
}

/// A principal its keytab does not hold, or a principal with no tickets: `AUTH_FAILED` at
/// once, naming the principal and the keytab.
#[tokio::test(flavor = "multi_thread")]
async fn a_principal_its_keytab_does_not_hold_fails_at_once_naming_both() {
    let (realm, _one) = realm_held().await;
    without_default_credentials(realm);
    let keytab = realm.kdc.second_keytab();
    for (sasl, named) in [
        (
            Sasl::gssapi()
                .principal(&realm.kdc.client_principal())
                .keytab(&keytab),
            vec![realm.kdc.client_principal(), keytab.display().to_string()],
        ),
        (
            Sasl::gssapi().principal(&realm.kdc.second_principal()),
            vec![realm.kdc.second_principal()],
        ),
    ] {
        let named: Vec<&str> = named.iter().map(String::as_str).collect();
        refused_at_once(&realm.server.connect(), sasl, ErrorCode::AuthFailed, &named).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_ticket_says_kinit() {
    let (realm, _one) = realm_held().await;
    without_default_credentials(realm);
    let err = Client::connect(&realm.server.connect(), options())
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::AuthFailed, "{err}");
    assert!(
        err.message().contains("kinit") && err.message().contains("KRB5CCNAME"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_service_the_kdc_does_not_know_fails_at_once_naming_it() {
    let (realm, _one) = realm_held().await;
    with_kinit_ticket(realm, "service");
    let by_address = realm.server.connect().replace("localhost", "127.0.0.1");
    for (connect, sasl, named) in [
        (
            realm.server.connect(),
            Sasl::gssapi().service("nobody"),
            "nobody/localhost",
        ),
        (
            realm.server.connect(),
            Sasl::gssapi().host("other.example"),
            "zookeeper/other.example",
        ),
        (by_address, Sasl::gssapi(), "zookeeper/127.0.0.1"),
    ] {
        refused_at_once(&connect, sasl, ErrorCode::AuthFailed, &[named]).await;
    }
}

/// A server's one SASL mechanism is not the client's: the server closes the
/// connection (no error), which used to wait out the connect timeout and
/// then say CONNECTION_LOSS. The connect timeout is long here so that only
/// the diagnosis can end the connect with AUTH_FAILED.
#[tokio::test(flavor = "multi_thread")]
async fn a_mechanism_the_server_does_not_speak_is_auth_failed_naming_both() {
    let (realm, _one) = realm_held().await;
    with_kinit_ticket(realm, "mechanism");
    let certs = certs_in(realm, "certs");
    let digest_server =
        zk_harness::secure::SecureServer::start(zk_harness::secure::Kind::Tls, &certs);
    // By the name the KDC knows (zookeeper/localhost), so the Kerberos check passes.
    let digest_port = digest_server
        .plain_connect()
        .replace("127.0.0.1", "localhost");
    let long = |sasl| ClientOptions {
        sasl: Some(sasl),
        connect_timeout: Duration::from_secs(60),
        ..Default::default()
    };
    for (connect, sasl, said) in [
        (digest_port.clone(), Sasl::gssapi(), "DIGEST-MD5"),
        (
            realm.server.connect(),
            Sasl::digest_md5("alice", "alice-secret"),
            "Kerberos",
        ),
    ] {
        let err = Client::connect(&connect, long(sasl)).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::AuthFailed, "{connect}: {err}");
        assert!(
            err.message().contains(said) && err.message().contains(&connect),
            "{err}"
        );
    }
    // The right mechanism on the same server still works.
    let client = Client::connect(
        &digest_port,
        long(Sasl::digest_md5("alice", "alice-secret")),
    )
    .await
    .unwrap_or_else(|err| panic!("{err}\n{}", digest_server.log()));
    client.close().await;
}

/// Issue 47's proof on Kerberos: a 3-node ensemble that requires TLS with a client certificate
/// and a Kerberos login, rolled member by member and partitioned under holders of every kind
/// (see `common::rolling`): no LOST, the same sessions.
#[tokio::test(flavor = "multi_thread")]
async fn tls_kerberos_holders_keep_their_sessions_through_a_rolling_restart() {
    let (realm, _one) = realm_held().await;
    with_kinit_ticket(realm, "ensemble");
    let certs = certs_in(realm, "ensemble-certs");
    let mut ensemble = zk_harness::Ensemble::start_tls_kerberos(3, &certs, &realm.kdc);
    let tls = zkrecipes::Tls::new(certs.path("ca.pem"))
        .identity(certs.path("client.pem"), certs.path("client-key.pem"));
    let options = ClientOptions {
        tls: Some(tls),
        session_timeout: common::rolling::SESSION,
        ..options()
    };
    common::rolling::holders_keep_everything(&mut ensemble, options, "/ens-krb5").await;
}
