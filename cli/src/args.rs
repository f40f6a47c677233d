//! The command line, as clap reads it.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::duration;

fn duration(text: &str) -> Result<Duration, String> {
    duration::parse(text)
}

const EXAMPLES: &str = "\
Examples:
  # cron: run the backup on one host only; skip this run if another holds the lock
  zkrecipes lock /locks/backup --timeout 0 -- ./backup.sh

  # run the scheduler only on the elected leader, restart it on re-election
  zkrecipes elect /election/scheduler --id \"$(hostname)\" -- ./scheduler

  # who holds what, and which nodes outlived their process
  zkrecipes status /locks/backup

Exit statuses: CMD's own; 64 usage, 65 bad data, 69 ZooKeeper unavailable,
70 internal, 73 output file not writable, 75 timeout, 77 permission, 78 TLS configuration refused,
79 lock/leadership lost (CMD stopped),
126 CMD not executable, 127 CMD not found.
Environment: ZK_CONNECT, ZKRECIPES_AUTH (user:password), ZKRECIPES_LOG
(e.g. debug, or zkrecipes.lock=debug,info), NO_COLOR.";

/// Locks, leader election and queues on ZooKeeper, for scripts, cron jobs and operators.
#[derive(Parser, Debug)]
#[command(name = "zkrecipes", version, after_help = EXAMPLES)]
pub struct Cli {
    #[command(flatten)]
    pub common: Common,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every command takes.
#[derive(Args, Debug)]
pub struct Common {
    /// ZooKeeper servers: host:port[,host:port...][/chroot].
    #[arg(
        long,
        global = true,
        env = "ZK_CONNECT",
        default_value = "127.0.0.1:2181"
    )]
    pub connect: String,
    /// Session timeout: how long after a crash our nodes stay (e.g. 10s).
    #[arg(long, global = true, value_parser = duration, default_value = "10s")]
    pub session_timeout: Duration,
    /// The longest the first connection may take.
    #[arg(long, global = true, value_parser = duration, default_value = "10s")]
    pub connect_timeout: Duration,
    /// File holding digest credentials `user:password` (ZKRECIPES_AUTH in the
    /// environment works too); never put them on the command line.
    #[arg(long, global = true, value_name = "FILE")]
    pub auth_file: Option<PathBuf>,
    /// Written into lock and election nodes (default: the host name).
    #[arg(long, global = true)]
    pub identity: Option<String>,
    /// TLS to every server: the CA bundle (PEM) to trust. Files are re-read when they change.
    #[arg(long, global = true, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM) for mutual TLS; needs --tls-key.
    #[arg(long, global = true, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM: PKCS#8, PKCS#1 or SEC1) of --tls-cert.
    #[arg(long, global = true, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Accept a server certificate for any host name the CA signed (unsafe:
    /// a man in the middle with any certificate of that CA gets in).
    #[arg(long, global = true, requires = "tls_ca")]
    pub tls_no_verify_hostname: bool,
    /// SASL authentication: `digest` (DIGEST-MD5, `user:password` from
    /// --auth-file or ZKRECIPES_AUTH) or `gssapi` (Kerberos: the ticket cache, KRB5_CLIENT_KTNAME, or --sasl-principal/--sasl-keytab).
    #[arg(long, global = true, value_name = "MECHANISM")]
    pub sasl: Option<String>,
    /// The Kerberos service of the server principal (default zookeeper).
    #[arg(long, global = true, value_name = "NAME")]
    pub sasl_service: Option<String>,
    /// The host of the server principal (default: the server connected to).
    #[arg(long, global = true, value_name = "HOST")]
    pub sasl_host: Option<String>,
    /// The Kerberos principal to log in as (name@REALM), not the default one.
    #[arg(long, global = true, value_name = "PRINCIPAL")]
    pub sasl_principal: Option<String>,
    /// The Kerberos client keytab to log in from (as --sasl-principal, or its first principal).
    #[arg(long, global = true, value_name = "FILE")]
    pub sasl_keytab: Option<PathBuf>,
    /// ACL of every node the recipes create: open, creator, creator-world-read,
    /// or entries scheme:id:perms separated by commas (e.g. sasl:alice:rwcda,world:anyone:r).
    /// Default: open without credentials, creator with any.
    #[arg(long, global = true, value_name = "POLICY")]
    pub acl: Option<String>,
    /// Machine-readable output of `status` and `elect --observe`: one JSON
    /// object per line (queue and work output is the items themselves).
    #[arg(long, global = true)]
    pub json: bool,
    /// The library's events on standard error: -v warnings and info (acquired after waiting,
    /// leadership, session changes), -vv debug (every request), -vvv trace; ZKRECIPES_LOG
    /// (e.g. zkrecipes.lock=debug) sets loggers one by one.
    #[arg(short, long = "verbose", global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Serve this process's metrics in the Prometheus text format on http://HOST:PORT/metrics
    /// while the command runs (e.g. 127.0.0.1:9464).
    #[arg(long, global = true, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run CMD while holding a lock; CMD gets ZKRECIPES_FENCING_TOKEN.
    #[command(
        after_help = "Example: zkrecipes lock /locks/backup --timeout 0 -- ./backup.sh\n         zkrecipes lock /locks/db /locks/cache -- ./migrate.sh  (both or none)"
    )]
    Lock(LockArgs),
    /// Run CMD while holding one of N leases (at most N CMDs at once everywhere).
    #[command(
        after_help = "Example: zkrecipes semaphore /semaphores/render --permits 4 -- ./render scene-7"
    )]
    Semaphore(SemaphoreArgs),
    /// Run CMD only while leader (Apache's election, or Curator's LeaderLatch with --latch), or
    /// watch who leads (--observe).
    #[command(
        after_help = "Example: zkrecipes elect /election/scheduler --id web-1 -- ./scheduler"
    )]
    Elect(ElectArgs),
    /// A barrier (Curator's DistributedBarrier, kazoo's Barrier): up while its node exists.
    #[command(subcommand)]
    Barrier(BarrierCommand),
    /// Run CMD together with N members (Curator's DistributedDoubleBarrier): enter when N are
    /// in, run CMD, leave when all are done.
    #[command(
        after_help = "Example: zkrecipes double-barrier /barriers/stage-2 --members 3 -- ./stage-2"
    )]
    DoubleBarrier(DoubleBarrierArgs),
    /// A FIFO queue (Apache's and Curator's `qn-` layout).
    #[command(subcommand)]
    Queue(QueueCommand),
    /// An acknowledged job queue (kazoo's LockingQueue layout): a job comes back
    /// unless CMD succeeds.
    #[command(subcommand)]
    Work(WorkCommand),
    /// A shared counter: Curator's SharedCount (4-byte int), or DistributedAtomicLong with --long.
    #[command(after_help = "Example: zkrecipes count /counters/deploys add 1")]
    Count(CountArgs),
    /// Print a node (or its children, or its subtree) and then every change, until
    /// interrupted: Curator's caches on one persistent watch.
    #[command(after_help = "Example: zkrecipes watch /config --tree --json")]
    Watch(WatchArgs),
    /// Be a member of a group (Curator's GroupMember: node name = id) while CMD runs, or list
    /// the members with --list.
    #[command(
        after_help = "Example: zkrecipes group /services/api --id web-1 --payload 10.0.0.5:8080 -- ./serve"
    )]
    Group(GroupArgs),
    /// Register an instance of a service in Curator's registry (ServiceDiscovery, which Spring
    /// Cloud Zookeeper uses) while CMD runs: registered again under every new session, removed
    /// when CMD ends.
    #[command(
        after_help = "Example: zkrecipes register billing --address 10.0.0.5 --port 8080 -- ./serve"
    )]
    Register(RegisterArgs),
    /// The services of Curator's registry, or one service's instances; --watch follows them,
    /// --prometheus-sd keeps a Prometheus file_sd file of them current.
    #[command(
        after_help = "Examples: zkrecipes discover billing --json\n          zkrecipes discover --prometheus-sd /etc/prometheus/zk.json"
    )]
    Discover(DiscoverArgs),
    /// Who holds, waits, leads; queue depth; which library made each node;
    /// nodes of dead sessions.
    Status(StatusArgs),
}

/// How CMD is stopped when the lock or leadership goes.
#[derive(Args, Debug)]
pub struct StopArgs {
    /// After SIGTERM, how long CMD has before SIGKILL.
    #[arg(long, value_parser = duration, default_value = "10s")]
    pub kill_after: Duration,
    /// Stop CMD once the connection has been down this long, before the
    /// lock is known lost (default: only when it is lost, which the library
    /// reports before another client can take it).
    #[arg(long, value_parser = duration)]
    pub suspended_grace: Option<Duration>,
}

#[derive(Args, Debug)]
pub struct LockArgs {
    /// The lock's directory, e.g. /locks/backup. Several: hold them all at once, or none
    /// (Curator's InterProcessMultiLock).
    #[arg(required = true, num_args = 1..)]
    pub paths: Vec<String>,
    /// Give up after this long (0: only if free now); default: wait forever.
    #[arg(long, short = 'w', value_parser = duration)]
    pub timeout: Option<Duration>,
    /// Exit status when --timeout passes (default 75).
    #[arg(long, default_value_t = crate::exit::TIMEOUT as u8)]
    pub timeout_exit_code: u8,
    /// Take the read side of a read/write lock (shared with other readers; one path only).
    #[arg(long, conflicts_with = "write")]
    pub read: bool,
    /// Take the write side of a read/write lock.
    #[arg(long)]
    pub write: bool,
    #[command(flatten)]
    pub stop: StopArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct SemaphoreArgs {
    /// The semaphore's path, e.g. /semaphores/render (Curator's InterProcessSemaphoreV2 nodes).
    pub path: String,
    /// How many leases may be held at once, by every process on PATH.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(i32::MAX)))]
    pub permits: u32,
    /// Give up after this long (0: only if a permit is free now); default: wait forever.
    #[arg(long, short = 'w', value_parser = duration)]
    pub timeout: Option<Duration>,
    /// Exit status when --timeout passes (default 75).
    #[arg(long, default_value_t = crate::exit::TIMEOUT as u8)]
    pub timeout_exit_code: u8,
    #[command(flatten)]
    pub stop: StopArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ElectArgs {
    /// The election's directory, e.g. /election/scheduler.
    pub path: String,
    /// This member's name, shown to the others as the leader's name.
    #[arg(long, required_unless_present = "observe", value_parser = member_id)]
    pub id: Option<String>,
    /// Print every change of leader (no CMD).
    #[arg(long, conflicts_with_all = ["id", "command"])]
    pub observe: bool,
    /// Take part in Curator's LeaderLatch (`_c_<uuid>-latch-<seq>` nodes) instead of Apache's
    /// election: CMD also gets ZKRECIPES_FENCING_TOKEN.
    #[arg(long, conflicts_with = "observe")]
    pub latch: bool,
    #[command(flatten)]
    pub stop: StopArgs,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required_unless_present = "observe", value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub enum QueueCommand {
    /// Append DATA, or every line of standard input with `-`.
    Offer {
        path: String,
        /// The item, or `-` for one item per line of standard input.
        data: String,
        /// Items are separated by NUL instead of newline.
        #[arg(long, short = '0')]
        null: bool,
    },
    /// Remove items from the head and print them, one per line.
    Take {
        path: String,
        /// Give up after this long (0: only what is there now); default: wait.
        #[arg(long, short = 'w', value_parser = duration)]
        timeout: Option<Duration>,
        /// Take this many items (at least 1).
        #[arg(long, short = 'n', default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
        count: u64,
        /// Exit status when --timeout passes first (default 75).
        #[arg(long, default_value_t = crate::exit::TIMEOUT as u8)]
        timeout_exit_code: u8,
        /// Print a NUL after each item instead of a newline.
        #[arg(long, short = '0')]
        null: bool,
    },
    /// Print the head item without removing it.
    Peek { path: String },
    /// Print the number of items.
    Size { path: String },
}

#[derive(Subcommand, Debug)]
pub enum WorkCommand {
    /// Add a job (DATA, or every line of standard input with `-`).
    Offer {
        path: String,
        data: String,
        /// 0 (first) to 999; default 100.
        #[arg(long, default_value_t = zkrecipes::DEFAULT_PRIORITY as i64)]
        priority: i64,
        #[arg(long, short = '0')]
        null: bool,
    },
    /// Run CMD once per job with the job on its standard input: exit 0 acks
    /// the job, anything else gives it back. Without CMD, print jobs and ack them.
    Consume {
        path: String,
        /// Stop after this many jobs (at least 1); default: run until interrupted.
        #[arg(long, short = 'n', value_parser = clap::value_parser!(u64).range(1..))]
        count: Option<u64>,
        /// Stop when no job came for this long.
        #[arg(long, short = 'w', value_parser = duration)]
        timeout: Option<Duration>,
        /// Exit status when --timeout passes before --count jobs (default 75).
        #[arg(long, default_value_t = crate::exit::TIMEOUT as u8)]
        timeout_exit_code: u8,
        /// Deliveries after which a job is moved to `<path>/dead`.
        #[arg(long)]
        max_deliveries: Option<i64>,
        /// After SIGTERM (on SIGINT/SIGTERM/SIGHUP to us, or for what CMD
        /// left running), how long CMD has before SIGKILL.
        #[arg(long, value_parser = duration, default_value = "10s")]
        kill_after: Duration,
        #[arg(long, short = '0')]
        null: bool,
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Print the number of jobs waiting or in progress.
    Size { path: String },
}

#[derive(Subcommand, Debug)]
pub enum BarrierCommand {
    /// Put the barrier up (create its node).
    Set { path: String },
    /// Take it down (delete its node), releasing every waiter.
    Remove { path: String },
    /// Wait until the barrier is down.
    Wait {
        path: String,
        /// Give up after this long (0: only a check); default: wait forever.
        #[arg(long, short = 'w', value_parser = duration)]
        timeout: Option<Duration>,
        /// Exit status when --timeout passes (default 75).
        #[arg(long, default_value_t = crate::exit::TIMEOUT as u8)]
        timeout_exit_code: u8,
    },
}

#[derive(Args, Debug)]
pub struct DoubleBarrierArgs {
    /// The barrier's directory, e.g. /barriers/stage-2.
    pub path: String,
    /// How many members enter together.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(i32::MAX)))]
    pub members: u32,
    /// Give up entering, and leaving, after this long each; default: wait forever.
    #[arg(long, short = 'w', value_parser = duration)]
    pub timeout: Option<Duration>,
    /// Exit status when --timeout passes (default 75).
    #[arg(long, default_value_t = crate::exit::TIMEOUT as u8)]
    pub timeout_exit_code: u8,
    /// After SIGTERM, how long CMD has before SIGKILL.
    #[arg(long, value_parser = duration, default_value = "10s")]
    pub kill_after: Duration,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct CountArgs {
    /// The counter's node, e.g. /counters/deploys.
    pub path: String,
    /// Curator's DistributedAtomicLong (8 bytes) instead of its SharedCount (4 bytes).
    #[arg(long)]
    pub long: bool,
    #[command(subcommand)]
    pub op: CountOp,
}

#[derive(Subcommand, Debug)]
pub enum CountOp {
    /// Print the value (0 when the node is missing; nothing is created).
    Get,
    /// Write VALUE whatever the value is.
    Set {
        #[arg(allow_negative_numbers = true)]
        value: i64,
    },
    /// Add DELTA atomically (a versioned write, repeated until it applies); prints the new value.
    Add {
        #[arg(allow_negative_numbers = true)]
        delta: i64,
    },
}

#[derive(Args, Debug)]
pub struct WatchArgs {
    /// The node to follow, e.g. /config.
    pub path: String,
    /// Follow its children (with their data), not the node itself.
    #[arg(long, conflicts_with = "tree")]
    pub children: bool,
    /// Follow the node and everything below it.
    #[arg(long)]
    pub tree: bool,
    /// With --tree: at most this many levels below the node.
    #[arg(long, requires = "tree")]
    pub depth: Option<u32>,
    /// Print the first reading (up to INITIALIZED) and exit.
    #[arg(long)]
    pub once: bool,
}

#[derive(Args, Debug)]
pub struct GroupArgs {
    /// The group's node, e.g. /services/api.
    pub path: String,
    /// This member's id (its node's name under PATH).
    #[arg(long, required_unless_present = "list", conflicts_with = "list", value_parser = member_id)]
    pub id: Option<String>,
    /// Print the members and their payloads, one per line (`id payload`).
    #[arg(long)]
    pub list: bool,
    /// What the other members read for this one (e.g. its address).
    #[arg(long, requires = "id")]
    pub payload: Option<String>,
    /// After SIGTERM, how long CMD has before SIGKILL.
    #[arg(long, value_parser = duration, default_value = "10s")]
    pub kill_after: Duration,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required_unless_present = "list", value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct RegisterArgs {
    /// The service's name (its node under --base).
    pub name: String,
    /// The registry's base path (Spring Cloud Zookeeper's default).
    #[arg(long, default_value = "/services")]
    pub base: String,
    /// The instance's id (its node's name); a random UUID by default.
    #[arg(long)]
    pub id: Option<String>,
    /// Where the instance answers.
    #[arg(long)]
    pub address: String,
    /// The instance's port (this, --ssl-port or both).
    #[arg(
        long,
        required_unless_present = "ssl_port",
        allow_negative_numbers = true
    )]
    pub port: Option<i64>,
    /// The instance's TLS port.
    #[arg(long, allow_negative_numbers = true)]
    pub ssl_port: Option<i64>,
    /// Any JSON value, e.g. '{"zone":"eu-1"}' (Spring's readers need a ZookeeperInstance payload:
    /// use --spring).
    #[arg(long, conflicts_with = "spring")]
    pub payload: Option<String>,
    /// Write Spring Cloud Zookeeper's payload (its ZookeeperInstance: id, name, metadata with
    /// instance_status UP), so that Spring's DiscoveryClient reads the instance.
    #[arg(long)]
    pub spring: bool,
    /// DYNAMIC (ephemeral, the default), STATIC, PERMANENT or DYNAMIC_SEQUENTIAL.
    #[arg(long = "type")]
    pub service_type: Option<String>,
    /// A Curator URI template, e.g. '{scheme}://{address}:{port}'.
    #[arg(long)]
    pub uri_spec: Option<String>,
    /// After SIGTERM, how long CMD has before SIGKILL.
    #[arg(long, value_parser = duration, default_value = "10s")]
    pub kill_after: Duration,
    /// The command and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub struct DiscoverArgs {
    /// A service's name: its instances; none: the services. With --prometheus-sd, the services
    /// to write (all of them by default).
    pub names: Vec<String>,
    /// The registry's base path (Spring Cloud Zookeeper's default).
    #[arg(long, default_value = "/services")]
    pub base: String,
    /// Then print every change (ADDED, CHANGED, REMOVED), until interrupted.
    #[arg(long, conflicts_with = "prometheus_sd")]
    pub watch: bool,
    /// Write the instances as Prometheus file_sd JSON to FILE, and again on every change, until
    /// interrupted (disabled instances and those without an address or port are left out).
    #[arg(long, value_name = "FILE")]
    pub prometheus_sd: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The directory of a lock, election or queue, e.g. /locks/backup.
    pub path: String,
    /// Print again whenever something changes, until interrupted.
    #[arg(long)]
    pub watch: bool,
    /// Then print this client's metrics (Prometheus text; one JSON object per series with --json).
    #[arg(long, conflicts_with = "watch")]
    pub metrics: bool,
}

/// A member's name shows in one-line messages and `--observe` lines: it must
/// say something and stay on one line.
fn member_id(id: &str) -> Result<String, String> {
    if id.trim().is_empty() {
        return Err("an empty name".to_string());
    }
    if id.chars().any(char::is_control) {
        return Err("a name with a control character (newline, tab…)".to_string());
    }
    Ok(id.to_string())
}
