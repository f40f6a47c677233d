//! The secured variant (`--secure`): a 3-node ensemble whose members take TLS clients with a
//! client certificate (`ssl.clientAuth=need`) and require a SASL DIGEST-MD5 login
//! (`sessionRequireClientSASLAuth`). Every client of a seed — the workers' recipes, the cache
//! writers' own sessions, the Java worker and the driver's sweeps — connects over TLS with the
//! test client certificate and logs in as the same SASL user, so that the recipes' default
//! (creator) ACLs let every worker touch every other's nodes. The fault proxies forward TCP, so
//! TLS passes through them; the workers name them `localhost:<port>`, the name in the servers'
//! certificate.

use std::path::{Path, PathBuf};
use std::time::Duration;

use zookeeper_client as zk;

/// The SASL user every client of the secured variant logs in as.
pub const USER: (&str, &str) = zk_harness::secure::SASL_USERS[0];

/// How a client of the secured variant connects: the test certificates' directory (`ca.pem`,
/// `client.pem`, `client-key.pem`) and the SASL DIGEST-MD5 login.
#[derive(Clone, Debug)]
pub struct Secure {
    pub certs: PathBuf,
    pub user: String,
    pub password: String,
}

impl Secure {
    pub fn new(certs: &Path) -> Secure {
        Secure {
            certs: certs.to_path_buf(),
            user: USER.0.to_string(),
            password: USER.1.to_string(),
        }
    }

    /// From a worker's flags: `--tls-dir DIR --sasl user:password`.
    pub fn from_flags(dir: &str, sasl: &str) -> Option<Secure> {
        let (user, password) = sasl.split_once(':')?;
        Some(Secure {
            certs: PathBuf::from(dir),
            user: user.to_string(),
            password: password.to_string(),
        })
    }

    /// The worker flags that carry it (the Java worker reads the same).
    pub fn flags(&self) -> [String; 4] {
        [
            "--tls-dir".to_string(),
            self.certs.display().to_string(),
            "--sasl".to_string(),
            format!("{}:{}", self.user, self.password),
        ]
    }

    fn file(&self, name: &str) -> PathBuf {
        self.certs.join(name)
    }

    /// `options` with TLS (the test CA, the client certificate) and the SASL login.
    pub fn options(&self, options: zkrecipes::ClientOptions) -> zkrecipes::ClientOptions {
        zkrecipes::ClientOptions {
            tls: Some(
                zkrecipes::Tls::new(self.file("ca.pem"))
                    .identity(self.file("client.pem"), self.file("client-key.pem")),
            ),
            sasl: Some(zkrecipes::Sasl::digest_md5(
                &self.user,
                self.password.as_bytes().to_vec(),
            )),
            ..options
        }
    }

    /// The same for a session of the raw client.
    fn connector(&self, connector: zk::Connector) -> Result<zk::Connector, zk::Error> {
        let read = |name: &str| {
            std::fs::read_to_string(self.file(name))
                .map_err(|_| zk::Error::BadArguments(&"cannot read a test certificate"))
        };
        let tls = zk::TlsOptions::new()
            .with_pem_ca(&read("ca.pem")?)?
            .with_pem_identity(&read("client.pem")?, &read("client-key.pem")?)?;
        let sasl = zk::SaslOptions::digest_md5(self.user.clone(), self.password.clone());
        Ok(connector.with_tls(tls).with_sasl(sasl))
    }
}

/// A session of the raw client to `connect`, secured like the recipes' if `secure` is given.
pub async fn raw_connect(
    connect: &str,
    session: Option<Duration>,
    secure: Option<&Secure>,
) -> Result<zk::Client, zk::Error> {
    let mut connector = zk::Client::connector();
    if let Some(session) = session {
        connector = connector.with_session_timeout(session);
    }
    match secure {
        Some(secure) => secure.connector(connector)?.secure_connect(connect).await,
        None => connector.connect(connect).await,
    }
}
