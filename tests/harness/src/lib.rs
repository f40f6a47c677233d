//! Real ZooKeeper servers for tests: a standalone server, a 3-node ensemble
//! whose members can be killed and restarted, and a fault-injecting TCP proxy.
//!
//! Servers run ZooKeeper 3.9 from Maven Central jars (fetched into
//! `target/zk-jars` on first use) as child JVMs on free loopback ports, or
//! the release `ZK_VERSION` names (`3.5.10`, `3.6.4`, `3.7.2`, `3.8.4`: the
//! server-version lane, jars in `target/zk-jars-<version>`). Each JVM is tied
//! to this process through a pipe: if the test process dies, so does the
//! server. `ZK_CONNECT` makes `ZkServer::start` use an existing server.

pub mod kerberos;
mod proxy;
pub mod secure;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

pub use proxy::{Cut, FaultProxy, Request, Then};

/// Where the workspace keeps the server jars.
fn jar_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("ZK_JARS") {
        return PathBuf::from(dir);
    }
    workspace_root().join("target/zk-jars")
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

/// The ZooKeeper release the servers run when not the default 3.9 (`ZK_VERSION`).
pub fn server_version() -> Option<String> {
    std::env::var("ZK_VERSION")
        .ok()
        .filter(|v| !v.is_empty() && !v.starts_with("3.9"))
}

/// The classpath of the ZooKeeper server, fetching the jars with Maven once.
pub fn classpath() -> String {
    let Some(version) = server_version() else {
        return maven_classpath("tests/harness/pom.xml", &jar_dir(), "zookeeper-3.9", &[]);
    };
    assert!(
        version.chars().all(|c| c.is_ascii_digit() || c == '.'),
        "ZK_VERSION is a release number such as 3.6.4, got {version:?}"
    );
    maven_classpath(
        "tests/harness/pom-version.xml",
        &workspace_root().join(format!("target/zk-jars-{version}")),
        &format!("zookeeper-{version}.jar"),
        &[format!("-Dzk.version={version}")],
    )
}

/// The jars of Apache Curator 5.9 (for interop tests), fetched with Maven once.
pub fn curator_classpath() -> String {
    maven_classpath(
        "tests/interop/curator-pom.xml",
        &workspace_root().join("target/curator-jars"),
        // The pom's last addition: a directory fetched before it is fetched again.
        "spring-cloud-zookeeper-discovery",
        &[],
    )
}

/// `dir/*`, after copying the dependencies of `pom` (relative to the workspace, with Maven's
/// `properties` such as `-Dzk.version=3.6.4`) into `dir` unless a jar starting with `marker`
/// is already there.
pub fn maven_classpath(pom: &str, dir: &Path, marker: &str, properties: &[String]) -> String {
    // Tests of one binary run in parallel: one Maven download at a time.
    static FETCHING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = FETCHING.lock().unwrap_or_else(|e| e.into_inner());
    let present = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(marker))
        })
        .unwrap_or(false);
    if !present {
        let status = Command::new("mvn")
            .args(["-q", "-B", "-f"])
            .arg(workspace_root().join(pom))
            .arg("dependency:copy-dependencies")
            .arg(format!("-DoutputDirectory={}", dir.display()))
            .args(properties)
            // Maven's output goes to stderr: `zk-harness serve`'s first line on stdout is the
            // connect string its callers read (Maven's colour codes came before it).
            .stdout(std::io::stderr())
            .status()
            .expect("mvn must be installed to fetch jars");
        assert!(status.success(), "fetching {pom} jars with Maven failed");
    }
    format!("{}/*", dir.display())
}

pub fn free_port() -> u16 {
    free_ports(1)[0]
}

/// `n` distinct ports nobody listens on. They are taken below the kernel's
/// ephemeral range, where another test's outgoing connection cannot grab one
/// between our check and the server's bind, and all are held at once while
/// choosing: ports checked one at a time can come back twice, and an ensemble
/// whose client and election port are equal never starts.
pub fn free_ports(n: usize) -> Vec<u16> {
    let (low, high) = (20_000u32, 32_000u32);
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u32)
        .unwrap_or(0)
        ^ std::process::id().wrapping_mul(2_654_435_761);
    let mut held: Vec<TcpListener> = Vec::new();
    for _ in 0..n * 200 {
        if held.len() == n {
            break;
        }
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let port = (low + (seed >> 8) % (high - low)) as u16;
        // 0.0.0.0 covers the wildcard client port and the loopback quorum ports.
        if let Ok(listener) = TcpListener::bind(("0.0.0.0", port)) {
            held.push(listener);
        }
    }
    while held.len() < n {
        held.push(TcpListener::bind("127.0.0.1:0").unwrap());
    }
    held.iter()
        .map(|l| l.local_addr().unwrap().port())
        .collect()
}

/// Sends a four-letter command (`mntr`, `srvr`, `ruok`) and returns the reply.
pub fn four_letter(port: u16, command: &str) -> std::io::Result<String> {
    let mut stream =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(2))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(command.as_bytes())?;
    let mut reply = String::new();
    stream.read_to_string(&mut reply)?;
    Ok(reply)
}

/// `mntr` as a map (`zk_packets_received` → `"123"`).
pub fn mntr(port: u16) -> HashMap<String, String> {
    four_letter(port, "mntr")
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// One ZooKeeper JVM, killed with this process at the latest.
struct Jvm {
    pid: u32,
    /// Closing this pipe (drop, or our death) makes the wrapper kill the JVM.
    lifeline: Option<ChildStdin>,
    wrapper: Child,
}

impl Jvm {
    /// With extra JVM options (`-Djute.maxbuffer=4096`), each a single word.
    fn spawn_with(main_class: &str, config: &Path, log: &Path, jvm_options: &[&str]) -> Jvm {
        let extra: String = jvm_options
            .iter()
            .map(|option| format!(" '{option}'"))
            .collect();
        let script = format!(
            "java -Xmx256m -Dzookeeper.admin.enableServer=false -Dznode.container.checkIntervalMs=500{extra} -cp '{cp}' {main_class} '{cfg}' >'{log}' 2>&1 & j=$!; \
             echo $j; read _; kill -9 $j 2>/dev/null; wait $j 2>/dev/null",
            cp = classpath(),
            cfg = config.display(),
            log = log.display()
        );
        let mut wrapper = Command::new("bash")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cannot start bash");
        let mut line = String::new();
        BufReader::new(wrapper.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let pid = line.trim().parse().expect("JVM pid");
        Jvm {
            pid,
            lifeline: wrapper.stdin.take(),
            wrapper,
        }
    }

    fn kill(&mut self) {
        let _ = Command::new("kill")
            .args(["-9", &self.pid.to_string()])
            .stderr(Stdio::null())
            .status();
        self.lifeline.take();
        let _ = self.wrapper.wait();
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        self.kill();
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    remove_dirs_of_dead_processes(tag);
    let dir = std::env::temp_dir().join(format!(
        "zkrecipes-{tag}-{}-{}",
        std::process::id(),
        free_port()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A server kept in a test binary's `static` is never dropped, so its data
/// directory outlives the process: the next server removes those whose
/// process (`zkrecipes-<tag>-<pid>-<port>`) is gone.
fn remove_dirs_of_dead_processes(tag: &str) {
    let prefix = format!("zkrecipes-{tag}-");
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn wait_until_serving(port: u16, timeout: Duration, log: &Path) {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if let Ok(reply) = four_letter(port, "srvr") {
            if reply.contains("Mode:") {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = std::fs::read_to_string(log).unwrap_or_default();
    panic!("ZooKeeper on port {port} did not start within {timeout:?}; log:\n{log}");
}

const COMMON_CONFIG: &str = "tickTime=500\ninitLimit=20\nsyncLimit=10\nminSessionTimeout=1000\n\
maxSessionTimeout=60000\n4lw.commands.whitelist=*\nadmin.enableServer=false\nmaxClientCnxns=0\n";

/// `forceSync=no` when `make test` asks (ZKRECIPES_SUITE_NO_FSYNC=1), else nothing (the server's
/// default, fsync on every write, as the bench measures it). A suite runs a dozen servers on one
/// disk at once (each suite's, the reliability run's ensemble) and their fsyncs queued behind each
/// other: the Java suite took 300 s beside the reliability run, 135 s alone. A killed JVM still
/// leaves its writes in the page cache, so a restarted member finds them; only a crash of the OS
/// would lose them, which no test does.
fn suite_sync() -> &'static str {
    if std::env::var_os("ZKRECIPES_SUITE_NO_FSYNC").is_some_and(|v| v == "1") {
        "forceSync=no\n"
    } else {
        ""
    }
}

/// A standalone server of the secured kinds: a directory of its own with `zoo.cfg`
/// (the common settings, `clientPort` and `extra_config`) and, when given, a JAAS
/// file; killed and removed when dropped.
pub(crate) struct Standalone {
    jvm: Option<Jvm>,
    dir: PathBuf,
    port: u16,
    jvm_options: Vec<String>,
}

impl Standalone {
    pub(crate) fn start(
        tag: &str,
        port: u16,
        extra_config: &str,
        jaas: Option<String>,
        jvm_options: &[&str],
    ) -> Standalone {
        let dir = temp_dir(tag);
        let mut options: Vec<String> = jvm_options.iter().map(|o| o.to_string()).collect();
        if let Some(jaas) = jaas {
            let file = dir.join("jaas.conf");
            std::fs::write(&file, jaas).unwrap();
            options.push(format!(
                "-Djava.security.auth.login.config={}",
                file.display()
            ));
        }
        let config = dir.join("zoo.cfg");
        std::fs::write(
            &config,
            format!(
                // forceSync=no: these servers compare TLS with plain (bench section 10) and
                // secured with open sessions; the disk's fsync time, the same for both sides,
                // varied 2x from one round to the next on the developers' machine and drowned
                // the difference. A killed JVM still leaves its writes in the page cache.
                "{COMMON_CONFIG}forceSync=no\ndataDir={}\nclientPort={port}\n{extra_config}",
                dir.join("data").display()
            ),
        )
        .unwrap();
        let mut server = Standalone {
            jvm: None,
            dir,
            port,
            jvm_options: options,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let log = self.dir.join("server.log");
        let options: Vec<&str> = self.jvm_options.iter().map(String::as_str).collect();
        self.jvm = Some(Jvm::spawn_with(
            "org.apache.zookeeper.server.ZooKeeperServerMain",
            &self.dir.join("zoo.cfg"),
            &log,
            &options,
        ));
        wait_until_serving(self.port, Duration::from_secs(60), &log);
    }

    /// Replaces the JAAS file the next start reads.
    pub(crate) fn write_jaas(&self, jaas: &str) {
        std::fs::write(self.dir.join("jaas.conf"), jaas).unwrap();
    }

    /// kill -9, then the same server again on its data: its sessions live on (a server
    /// restart as an operator's rolling restart makes it), and the log starts afresh.
    pub(crate) fn restart(&mut self) {
        if let Some(mut jvm) = self.jvm.take() {
            jvm.kill();
        }
        self.spawn();
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

impl Drop for Standalone {
    fn drop(&mut self) {
        if let Some(mut jvm) = self.jvm.take() {
            jvm.kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A standalone server (or the one named by `ZK_CONNECT`).
pub struct ZkServer {
    connect: String,
    port: u16,
    jvm: Option<Jvm>,
    dir: Option<PathBuf>,
}

impl ZkServer {
    pub fn start() -> ZkServer {
        if let Ok(connect) = std::env::var("ZK_CONNECT") {
            let port = connect
                .split(',')
                .next()
                .and_then(|h| h.split('/').next())
                .and_then(|h| h.rsplit(':').next())
                .and_then(|p| p.parse().ok())
                .unwrap_or(2181);
            return ZkServer {
                connect,
                port,
                jvm: None,
                dir: None,
            };
        }
        ZkServer::start_local()
    }

    /// Always a new local server, whatever `ZK_CONNECT` says.
    pub fn start_local() -> ZkServer {
        ZkServer::start_local_with(&[])
    }

    /// A new local server whose JVM gets `jvm_options` too, e.g.
    /// `-Djute.maxbuffer=4096`: a server that drops the connection of any
    /// client sending a packet over 4 KiB.
    pub fn start_local_with(jvm_options: &[&str]) -> ZkServer {
        let dir = temp_dir("standalone");
        let port = free_port();
        let config = dir.join("zoo.cfg");
        std::fs::write(
            &config,
            format!(
                "{COMMON_CONFIG}{}dataDir={}\nclientPort={port}\n",
                suite_sync(),
                dir.join("data").display()
            ),
        )
        .unwrap();
        let log = dir.join("server.log");
        let jvm = Jvm::spawn_with(
            "org.apache.zookeeper.server.ZooKeeperServerMain",
            &config,
            &log,
            jvm_options,
        );
        wait_until_serving(port, Duration::from_secs(60), &log);
        ZkServer {
            connect: format!("127.0.0.1:{port}"),
            port,
            jvm: Some(jvm),
            dir: Some(dir),
        }
    }

    pub fn connect_string(&self) -> &str {
        &self.connect
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Requests the server has received so far (`zk_packets_received`).
    pub fn packets_received(&self) -> u64 {
        mntr(self.port)
            .get("zk_packets_received")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    pub fn stop(&mut self) {
        if let Some(mut jvm) = self.jvm.take() {
            jvm.kill();
        }
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Drop for ZkServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A quorum of `n` `QuorumPeerMain` processes on loopback.
pub struct Ensemble {
    dir: PathBuf,
    members: Vec<Member>,
    /// JVM options of every member (the TLS variant's Netty and x509 provider).
    jvm_options: Vec<String>,
}

struct Member {
    client_port: u16,
    /// The `secureClientPort` of a TLS ensemble.
    tls_port: Option<u16>,
    config: PathBuf,
    log: PathBuf,
    jvm: Option<Jvm>,
}

/// The SASL login an ensemble's members require: their JAAS file and JVM options.
struct Login {
    jaas: String,
    jvm_options: Vec<String>,
}

impl Ensemble {
    pub fn start(n: usize) -> Ensemble {
        Ensemble::start_with(n, None, None)
    }

    /// Clients over TLS too (`secureClientPort`, client certificate optional);
    /// the quorum itself talks plain.
    pub fn start_tls(n: usize, certs: &secure::Certs) -> Ensemble {
        Ensemble::start_with(n, Some(certs), None)
    }

    /// Clients over TLS with a client certificate required (`ssl.clientAuth=need`) and a SASL
    /// DIGEST-MD5 login required (`sessionRequireClientSASLAuth`, users `secure::SASL_USERS`).
    pub fn start_tls_sasl(n: usize, certs: &secure::Certs) -> Ensemble {
        let login = Login {
            jaas: secure::sasl_jaas(),
            jvm_options: vec![
                secure::SASL_PROVIDER.to_string(),
                secure::SASL_REQUIRED.to_string(),
            ],
        };
        Ensemble::start_with(n, Some(certs), Some(login))
    }

    /// Clients over TLS with a client certificate required and a Kerberos login (SASL GSSAPI)
    /// required: the members share the service principal `zookeeper/localhost` of `kdc`.
    pub fn start_tls_kerberos(n: usize, certs: &secure::Certs, kdc: &kerberos::Kdc) -> Ensemble {
        let login = Login {
            jaas: kdc.server_jaas(),
            jvm_options: kdc.server_jvm_options(),
        };
        Ensemble::start_with(n, Some(certs), Some(login))
    }

    fn start_with(n: usize, tls: Option<&secure::Certs>, login: Option<Login>) -> Ensemble {
        let sasl = login.is_some();
        let dir = temp_dir("ensemble");
        // Every port in one call: two calls can hand out the same port (CI: a
        // member's TLS port was its client port, and it never started).
        let all = free_ports(4 * n);
        let ports: Vec<(u16, u16, u16)> =
            all[..3 * n].chunks(3).map(|p| (p[0], p[1], p[2])).collect();
        let tls_ports = &all[3 * n..];
        let servers: String = ports
            .iter()
            .enumerate()
            .map(|(i, (_, peer, election))| {
                format!("server.{}=127.0.0.1:{peer}:{election}\n", i + 1)
            })
            .collect();
        let mut members = Vec::new();
        for (i, (client_port, _, _)) in ports.iter().enumerate() {
            let data = dir.join(format!("data{}", i + 1));
            std::fs::create_dir_all(&data).unwrap();
            std::fs::write(data.join("myid"), format!("{}\n", i + 1)).unwrap();
            let config = dir.join(format!("zoo{}.cfg", i + 1));
            let client_auth = if sasl { "need" } else { "want" };
            let secure = tls.map(|certs| secure::tls_config(certs, tls_ports[i], client_auth));
            std::fs::write(
                &config,
                format!(
                    "{COMMON_CONFIG}{}dataDir={}\nclientPort={client_port}\n{servers}{}",
                    suite_sync(),
                    data.display(),
                    secure.unwrap_or_default()
                ),
            )
            .unwrap();
            let log = dir.join(format!("server{}.log", i + 1));
            members.push(Member {
                client_port: *client_port,
                tls_port: tls.map(|_| tls_ports[i]),
                config,
                log,
                jvm: None,
            });
        }
        let mut jvm_options: Vec<String> = match tls {
            Some(_) => secure::TLS_JVM_OPTIONS
                .iter()
                .map(|o| o.to_string())
                .collect(),
            None => Vec::new(),
        };
        if let Some(login) = login {
            let jaas = dir.join("jaas.conf");
            std::fs::write(&jaas, login.jaas).unwrap();
            jvm_options.push(format!(
                "-Djava.security.auth.login.config={}",
                jaas.display()
            ));
            jvm_options.extend(login.jvm_options);
        }
        let mut ensemble = Ensemble {
            dir,
            members,
            jvm_options,
        };
        for i in 0..n {
            ensemble.spawn(i);
        }
        for m in &ensemble.members {
            wait_until_serving(m.client_port, Duration::from_secs(90), &m.log);
        }
        ensemble
    }

    fn spawn(&mut self, i: usize) {
        let options: Vec<&str> = self.jvm_options.iter().map(String::as_str).collect();
        let m = &mut self.members[i];
        m.jvm = Some(Jvm::spawn_with(
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            &m.config,
            &m.log,
            &options,
        ));
    }

    pub fn connect_string(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("127.0.0.1:{}", m.client_port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The TLS ports by the name in the servers' certificate (a TLS ensemble).
    pub fn tls_connect_string(&self) -> String {
        self.members
            .iter()
            .filter_map(|m| m.tls_port)
            .map(|port| format!("localhost:{port}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn client_port(&self, i: usize) -> u16 {
        self.members[i].client_port
    }

    /// Index of the member that is currently the quorum leader.
    pub fn leader(&self) -> Option<usize> {
        (0..self.members.len()).find(|&i| {
            self.members[i].jvm.is_some()
                && four_letter(self.members[i].client_port, "srvr")
                    .is_ok_and(|r| r.contains("Mode: leader"))
        })
    }

    /// kill -9 of member `i`.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut jvm) = self.members[i].jvm.take() {
            jvm.kill();
        }
    }

    pub fn restart(&mut self, i: usize) {
        self.spawn(i);
        wait_until_serving(
            self.members[i].client_port,
            Duration::from_secs(90),
            &self.members[i].log,
        );
    }
}

impl Drop for Ensemble {
    fn drop(&mut self) {
        for m in &mut self.members {
            if let Some(mut jvm) = m.jvm.take() {
                jvm.kill();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every ephemeral node under `root` with its owner session, and how many
/// nodes were looked at (for orphan checks in tests and `zk-harness ephemerals`).
pub async fn ephemerals(
    zk: &zookeeper_client::Client,
    root: &str,
) -> Result<(usize, Vec<(String, i64)>), zookeeper_client::Error> {
    let mut found = Vec::new();
    let mut scanned = 0;
    let mut pending = vec![root.to_string()];
    while let Some(path) = pending.pop() {
        let children = match zk.list_children(&path).await {
            Ok(children) => children,
            Err(zookeeper_client::Error::NoNode) => continue,
            Err(err) => return Err(err),
        };
        for child in children {
            let child_path = if path == "/" {
                format!("/{child}")
            } else {
                format!("{path}/{child}")
            };
            scanned += 1;
            if let Some(stat) = zk.check_stat(&child_path).await? {
                if stat.ephemeral_owner != 0 {
                    found.push((child_path.clone(), stat.ephemeral_owner));
                }
            }
            pending.push(child_path);
        }
    }
    Ok((scanned, found))
}
