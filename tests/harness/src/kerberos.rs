//! A local MIT Kerberos KDC on loopback with its own realm, and a ZooKeeper
//! that authenticates clients by Kerberos (JAAS `Krb5LoginModule`).
//!
//! The server principal is `zookeeper/localhost@REALM`: clients connect to
//! `localhost:PORT` (ZooKeeper's Java client turns 127.0.0.1 into localhost
//! when it names the service, and ours uses the host as written). Host and
//! realm are removed from the ACL identity, so a client is `sasl:client`.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{free_ports, temp_dir, Standalone};

pub const REALM: &str = "ZKRECIPES.TEST";
pub const CLIENT: &str = "client";
/// A second client principal: two identities in one process.
pub const SECOND_CLIENT: &str = "reporter";

/// `krb5kdc` with a fresh database: principals `zookeeper/localhost`,
/// `client` and `reporter`, each with a keytab.
pub struct Kdc {
    pub dir: PathBuf,
    pub port: u16,
    process: Child,
}

impl Kdc {
    pub fn start() -> Kdc {
        let dir = temp_dir("kdc");
        let port = free_ports(1)[0];
        let path = |name: &str| dir.join(name).display().to_string();
        std::fs::write(
            dir.join("krb5.conf"),
            format!(
                "[libdefaults]\n default_realm = {REALM}\n dns_lookup_realm = false\n dns_lookup_kdc = false\n \
                 dns_canonicalize_hostname = false\n rdns = false\n udp_preference_limit = 1\n \
                 ticket_lifetime = 24h\n\n[realms]\n {REALM} = {{\n  kdc = 127.0.0.1:{port}\n }}\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("kdc.conf"),
            format!(
                "[kdcdefaults]\n kdc_ports = {port}\n kdc_tcp_ports = {port}\n\n[realms]\n {REALM} = {{\n  \
                 database_name = {db}\n  key_stash_file = {stash}\n  acl_file = {acl}\n  kdc_ports = {port}\n  \
                 kdc_tcp_ports = {port}\n  max_life = 24h\n  \
                 supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n }}\n\n\
                 [logging]\n kdc = FILE:{log}\n",
                db = path("principal"),
                stash = path("stash"),
                acl = path("kadm5.acl"),
                log = path("kdc.log"),
            ),
        )
        .unwrap();
        std::fs::write(dir.join("kadm5.acl"), "").unwrap();
        let tool = |program: &str, args: &[&str]| {
            let out = Command::new(program)
                .args(args)
                .env("KRB5_CONFIG", dir.join("krb5.conf"))
                .env("KRB5_KDC_PROFILE", dir.join("kdc.conf"))
                .stdin(Stdio::null())
                .output()
                .unwrap_or_else(|err| {
                    panic!("{program}: {err} (install krb5-kdc and krb5-admin-server)")
                });
            assert!(
                out.status.success(),
                "{program} {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let sbin = |name: &str| {
            ["/usr/sbin", "/usr/local/sbin", "/sbin"]
                .iter()
                .map(|d| Path::new(d).join(name))
                .find(|p| p.exists())
                .map_or(name.to_string(), |p| p.display().to_string())
        };
        tool(
            &sbin("kdb5_util"),
            &[
                "create",
                "-s",
                "-r",
                REALM,
                "-P",
                "master-key-of-a-test-kdc",
            ],
        );
        for (principal, keytab) in [
            ("zookeeper/localhost", "server.keytab"),
            (CLIENT, "client.keytab"),
            (SECOND_CLIENT, "reporter.keytab"),
        ] {
            tool(
                &sbin("kadmin.local"),
                &[
                    "-r",
                    REALM,
                    "-q",
                    &format!("addprinc -randkey {principal}@{REALM}"),
                ],
            );
            tool(
                &sbin("kadmin.local"),
                &[
                    "-r",
                    REALM,
                    "-q",
                    &format!("ktadd -k {} {principal}@{REALM}", path(keytab)),
                ],
            );
        }
        // Tied to this process by a pipe, as the JVMs are: killed with it, even by SIGKILL
        // (found by a review: a SIGTERM'd harness left its krb5kdc running).
        let process = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "'{}' -n -r {REALM} & k=$!; read _; kill $k 2>/dev/null; wait $k",
                sbin("krb5kdc")
            ))
            .env("KRB5_CONFIG", dir.join("krb5.conf"))
            .env("KRB5_KDC_PROFILE", dir.join("kdc.conf"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("krb5kdc");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "krb5kdc did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Kdc { dir, port, process }
    }

    pub fn krb5_conf(&self) -> PathBuf {
        self.dir.join("krb5.conf")
    }

    pub fn client_keytab(&self) -> PathBuf {
        self.dir.join("client.keytab")
    }

    pub fn client_principal(&self) -> String {
        format!("{CLIENT}@{REALM}")
    }

    /// The keytab of `SECOND_CLIENT`.
    pub fn second_keytab(&self) -> PathBuf {
        self.dir.join("reporter.keytab")
    }

    pub fn second_principal(&self) -> String {
        format!("{SECOND_CLIENT}@{REALM}")
    }
}

impl Drop for Kdc {
    fn drop(&mut self) {
        // Closing the pipe makes the wrapper stop krb5kdc.
        drop(self.process.stdin.take());
        let _ = self.process.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A standalone ZooKeeper that authenticates clients by Kerberos and requires it.
pub struct KerberosServer {
    pub port: u16,
    server: Standalone,
}

impl Kdc {
    /// The JAAS `Server` section of a ZooKeeper server with the principal `zookeeper/localhost`.
    pub fn server_jaas(&self) -> String {
        format!(
            "Server {{\n  com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true\n  \
             keyTab=\"{}\"\n  storeKey=true\n  useTicketCache=false\n  \
             principal=\"zookeeper/localhost@{REALM}\";\n}};\n",
            self.dir.join("server.keytab").display()
        )
    }

    /// The JVM options of a ZooKeeper server that requires a Kerberos login of every client.
    pub fn server_jvm_options(&self) -> Vec<String> {
        vec![
            format!("-Djava.security.krb5.conf={}", self.krb5_conf().display()),
            "-Dzookeeper.authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider".to_string(),
            "-Dzookeeper.sessionRequireClientSASLAuth=true".to_string(),
            "-Dzookeeper.kerberos.removeHostFromPrincipal=true".to_string(),
            "-Dzookeeper.kerberos.removeRealmFromPrincipal=true".to_string(),
        ]
    }
}

impl KerberosServer {
    pub fn start(kdc: &Kdc) -> KerberosServer {
        let port = free_ports(1)[0];
        let options = kdc.server_jvm_options();
        let options: Vec<&str> = options.iter().map(String::as_str).collect();
        let server = Standalone::start("krb5-zk", port, "", Some(kdc.server_jaas()), &options);
        KerberosServer { port, server }
    }

    pub fn connect(&self) -> String {
        format!("localhost:{}", self.port)
    }

    pub fn log(&self) -> String {
        self.server.log()
    }
}
