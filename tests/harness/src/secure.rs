//! Secured ZooKeeper servers for the security tests: TLS (`secureClientPort`
//! over Netty, PEM key and trust stores), SASL DIGEST-MD5 (a JAAS `Server`
//! section) and x509 client identities, with test certificates made here.
//!
//! Every server also has a plain client port (for four-letter words and the
//! "TLS client at a plain port" test).

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};

use crate::{free_ports, Standalone};

/// The SASL DIGEST-MD5 users every secured server knows.
pub const SASL_USERS: [(&str, &str); 2] = [("alice", "alice-secret"), ("bob", "bob-secret")];

/// Test certificates, as PEM files in one directory:
/// - `ca.pem` (+ `ca-key.pem`): the test CA; `other-ca.pem`: a CA nobody uses (an unknown CA)
/// - `server.pem` + `server-key.pem`: for `localhost` only (127.0.0.1 is a hostname mismatch)
/// - `server-expired.pem` + `server-expired-key.pem`: expired in 2021
/// - `client.pem` + `client-key.pem`: `CN=zkclient,O=zkrecipes` (x509 identity)
/// - `client2.pem` + `client2-key.pem`: `CN=zkclient2,O=zkrecipes`
/// - `client-expired.pem` + `client-expired-key.pem`: expired in 2021
pub struct Certs {
    pub dir: PathBuf,
}

impl Certs {
    pub fn generate(dir: &Path) -> Certs {
        std::fs::create_dir_all(dir).unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "zkrecipes test CA");
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = ca_params.self_signed(&ca_key).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        // For tests that issue certificates of their own (an X.509 v1 one with openssl).
        std::fs::write(dir.join("ca-key.pem"), ca_key.serialize_pem()).unwrap();

        let other_key = KeyPair::generate().unwrap();
        let mut other = CertificateParams::new(Vec::<String>::new()).unwrap();
        other.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        other
            .distinguished_name
            .push(DnType::CommonName, "somebody else's CA");
        std::fs::write(
            dir.join("other-ca.pem"),
            other.self_signed(&other_key).unwrap().pem(),
        )
        .unwrap();

        // The test CA's name with another key: what a CA re-issued in place looks like.
        let reissued_key = KeyPair::generate().unwrap();
        let mut reissued = CertificateParams::new(Vec::<String>::new()).unwrap();
        reissued.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        reissued
            .distinguished_name
            .push(DnType::CommonName, "zkrecipes test CA");
        reissued.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        std::fs::write(
            dir.join("reissued-ca.pem"),
            reissued.self_signed(&reissued_key).unwrap().pem(),
        )
        .unwrap();

        let leaf = |name: &str, sans: Vec<String>, common: &str, server: bool, expired: bool| {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(sans).unwrap();
            params.distinguished_name.push(DnType::CommonName, common);
            params
                .distinguished_name
                .push(DnType::OrganizationName, "zkrecipes");
            params.extended_key_usages = vec![if server {
                ExtendedKeyUsagePurpose::ServerAuth
            } else {
                ExtendedKeyUsagePurpose::ClientAuth
            }];
            if expired {
                params.not_before = rcgen::date_time_ymd(2020, 1, 1);
                params.not_after = rcgen::date_time_ymd(2021, 1, 1);
            }
            let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
            std::fs::write(dir.join(format!("{name}.pem")), cert.pem()).unwrap();
            std::fs::write(dir.join(format!("{name}-key.pem")), key.serialize_pem()).unwrap();
            // Java's PEM key store reads the key and the chain from one file.
            std::fs::write(
                dir.join(format!("{name}-bundle.pem")),
                format!("{}{}", key.serialize_pem(), cert.pem()),
            )
            .unwrap();
        };
        let localhost = vec!["localhost".to_string()];
        leaf("server", localhost.clone(), "localhost", true, false);
        leaf("server-expired", localhost, "localhost", true, true);
        leaf("client", vec![], "zkclient", false, false);
        leaf("client2", vec![], "zkclient2", false, false);
        leaf("client-expired", vec![], "zkclient", false, true);
        Certs {
            dir: dir.to_path_buf(),
        }
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }
}

/// What a secured server asks of its clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// TLS with an optional client certificate (`ssl.clientAuth=want`),
    /// SASL DIGEST-MD5 offered, not required.
    Tls,
    /// TLS with a client certificate required (`ssl.clientAuth=need`) and a
    /// SASL login required (`sessionRequireClientSASLAuth=true`).
    TlsStrict,
    /// Like `Tls`, but serving the expired certificate.
    TlsExpired,
}

/// The JVM option that lets a server authenticate SASL clients.
pub const SASL_PROVIDER: &str =
    "-Dzookeeper.authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider";

/// The JVM option that closes a session whose client did not log in with SASL first.
pub const SASL_REQUIRED: &str = "-Dzookeeper.sessionRequireClientSASLAuth=true";

/// The JAAS `Server` section with the DIGEST-MD5 users of `SASL_USERS`.
pub fn sasl_jaas() -> String {
    jaas_with_users(&SASL_USERS)
}

/// The JAAS `Server` section with these DIGEST-MD5 users and passwords.
pub fn jaas_with_users(users: &[(&str, &str)]) -> String {
    let users: String = users
        .iter()
        .map(|(user, password)| format!("\n  user_{user}=\"{password}\""))
        .collect();
    format!(
        "Server {{\n  org.apache.zookeeper.server.auth.DigestLoginModule required{users};\n}};\n"
    )
}

/// What a server with a `secureClientPort` needs on its JVM's command line.
pub const TLS_JVM_OPTIONS: [&str; 2] = [
    "-Dzookeeper.serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
    "-Dzookeeper.authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
];

/// The `zoo.cfg` lines of a TLS client port with the server certificate for `localhost`.
pub fn tls_config(certs: &Certs, port: u16, client_auth: &str) -> String {
    tls_config_with(certs, port, client_auth, "server-bundle.pem")
}

fn tls_config_with(certs: &Certs, port: u16, client_auth: &str, key_store: &str) -> String {
    format!(
        "secureClientPort={port}\n\
         serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n\
         ssl.keyStore.location={key_store}\nssl.keyStore.type=PEM\n\
         ssl.trustStore.location={trust}\nssl.trustStore.type=PEM\n\
         ssl.clientAuth={client_auth}\n",
        key_store = certs.path(key_store).display(),
        trust = certs.path("ca.pem").display(),
    )
}

/// A standalone ZooKeeper with a plain and a TLS client port.
pub struct SecureServer {
    pub plain_port: u16,
    pub tls_port: u16,
    server: Standalone,
}

impl SecureServer {
    /// Starts a server of `kind` whose certificates are in `certs`.
    pub fn start(kind: Kind, certs: &Certs) -> SecureServer {
        let ports = free_ports(2);
        let (plain_port, tls_port) = (ports[0], ports[1]);
        let (client_auth, key_store) = match kind {
            Kind::Tls => ("want", "server-bundle.pem"),
            Kind::TlsStrict => ("need", "server-bundle.pem"),
            Kind::TlsExpired => ("want", "server-expired-bundle.pem"),
        };
        let jaas = sasl_jaas();
        let mut options = vec![SASL_PROVIDER];
        options.extend(TLS_JVM_OPTIONS);
        if kind == Kind::TlsStrict {
            options.push(SASL_REQUIRED);
        }
        let tls = tls_config_with(certs, tls_port, client_auth, key_store);
        let server = Standalone::start("secure", plain_port, &tls, Some(jaas), &options);
        SecureServer {
            plain_port,
            tls_port,
            server,
        }
    }

    /// The TLS port by the name in the server's certificate.
    pub fn tls_connect(&self) -> String {
        format!("localhost:{}", self.tls_port)
    }

    pub fn plain_connect(&self) -> String {
        format!("127.0.0.1:{}", self.plain_port)
    }

    pub fn log(&self) -> String {
        self.server.log()
    }

    /// kill -9 and start again on the same data and ports; returns once it serves.
    pub fn restart(&mut self) {
        self.server.restart();
    }

    /// Restarts the server with these DIGEST-MD5 users and passwords (a password rotated
    /// while clients were away); its sessions stay in its data.
    pub fn restart_with_users(&mut self, users: &[(&str, &str)]) {
        self.server.write_jaas(&jaas_with_users(users));
        self.server.restart();
    }
}
