package io.zkrecipes.kotlin

import io.zkrecipes.kotlin.ffi.NativeClient
import io.zkrecipes.kotlin.ffi.NativeClientOptions
import io.zkrecipes.kotlin.ffi.connect as nativeConnect
import io.zkrecipes.kotlin.ffi.defaultConnectTimeoutMs
import io.zkrecipes.kotlin.ffi.defaultSessionTimeoutMs
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asStateFlow
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.seconds
import kotlin.time.DurationUnit

/** The core's default timeouts (read once, after the native library is loaded). */
private object CoreDefaults {
    val sessionTimeout: Duration
    val connectTimeout: Duration

    init {
        NativeLibrary.ensure()
        sessionTimeout = defaultSessionTimeoutMs().milliseconds
        connectTimeout = defaultConnectTimeoutMs().milliseconds
    }
}

/** How to connect. */
data class ClientOptions(
    val sessionTimeout: Duration = CoreDefaults.sessionTimeout,
    /** The longest [Client.connect] (and each later re-session attempt) may take. */
    val connectTimeout: Duration = CoreDefaults.connectTimeout,
    /** `user:password` for the `digest` scheme: recipe nodes then get an ACL for that identity only. */
    val digest: String? = null,
    /** Written into lock and election nodes; defaults to the host name. */
    val identity: String? = null,
    /** TLS to every server (also needed for `tcp+tls://` servers). */
    val tls: Tls? = null,
    /** SASL authentication (DIGEST-MD5 or Kerberos). */
    val sasl: Sasl? = null,
    /** The ACL of every node the recipes create. */
    val acl: AclPolicy? = null,
    /**
     * Whether the metrics carry each recipe's path as the `path` attribute. Off, the numbers of
     * every lock add up into one series per kind: for a lock per entity, where paths are
     * unbounded. On, the paths after the first 1,000 a client saw are counted together as `_other`.
     */
    val metricPaths: Boolean = true,
) {
    override fun toString(): String =
        "ClientOptions(sessionTimeout=$sessionTimeout, connectTimeout=$connectTimeout, " +
            "digest=${if (digest == null) "null" else "<redacted>"}, identity=$identity, tls=$tls, sasl=$sasl, acl=$acl, " +
            "metricPaths=$metricPaths)"
}

/** Curator's vocabulary: SUSPENDED = disconnected, the session may live on; LOST = it expired. */
enum class ConnectionState { CONNECTED, SUSPENDED, RECONNECTED, LOST, CLOSED }

/**
 * One ZooKeeper session, shared by every recipe made from it. `use {}` or [close] ends it: its
 * nodes go at once and every waiting call fails with [ZkException.Closed].
 *
 * The library logs through [System.Logger], one logger per recipe (`zkrecipes.lock`,
 * `zkrecipes.session`, ...: see [refreshLogLevels]), and each client counts what its recipes did
 * ([metrics]).
 */
class Client private constructor(internal val native: NativeClient) : AutoCloseable {
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.Default)
    private val states = MutableStateFlow(ConnectionState.valueOf(native.state()))

    init {
        val subscription = native.states()
        scope.launch(start = CoroutineStart.UNDISPATCHED) {
            subscription.use { events ->
                while (true) {
                    val event = events.next() ?: break
                    states.value = ConnectionState.valueOf(event.name)
                }
            }
        }
    }

    companion object {
        init {
            Logs.refresh()
        }

        /**
         * Takes the levels of the library's loggers from the logging configuration again. The
         * library asks each [System.Logger] (`zkrecipes.session`, `zkrecipes.request`,
         * `zkrecipes.lock`, `zkrecipes.semaphore`, `zkrecipes.queue`, `zkrecipes.work_queue`,
         * `zkrecipes.election`, `zkrecipes.latch`, `zkrecipes.barrier`, `zkrecipes.cache`,
         * `zkrecipes.counter`, `zkrecipes.group`, `zkrecipes.discovery`, `zkrecipes.security`, `zkrecipes.zookeeper`)
         * which levels it logs when this class is loaded and at every connect, and produces no
         * event below them: call this after changing a level while the program runs (a reloaded
         * Logback or Log4j configuration, `java.util.logging.Logger.setLevel`).
         */
        @JvmStatic
        fun refreshLogLevels() = Logs.refresh()

        /**
         * Waits until every library event emitted so far has been handed to its logger (they are
         * logged on a thread of their own, "zkrecipes-log"): for a shutdown, or a test reading
         * its log. False if [timeout] passed first; [ZkException.InvalidArgument] for a timeout
         * that is not positive, or above a day.
         */
        suspend fun flushLogs(timeout: Duration): Boolean = withContext(Dispatchers.IO) { Logs.flush(timeout) }

        /** Connects; fails with [ZkException] after [ClientOptions.connectTimeout] without a session. */
        suspend fun connect(connectString: String, options: ClientOptions = ClientOptions()): Client {
            NativeLibrary.ensure()
            Logs.refresh()
            val sasl = options.sasl
            val password = (sasl as? Sasl.DigestMd5)?.passwordBytes()
            val settings = NativeClientOptions(
                sessionTimeoutMs = options.sessionTimeout.toDouble(DurationUnit.MILLISECONDS),
                connectTimeoutMs = options.connectTimeout.toDouble(DurationUnit.MILLISECONDS),
                digest = options.digest,
                identity = options.identity,
                tlsCa = options.tls?.ca,
                tlsCert = options.tls?.cert,
                tlsKey = options.tls?.key,
                tlsVerifyHostname = options.tls?.verifyHostname,
                saslMechanism = when (sasl) { is Sasl.DigestMd5 -> "DIGEST-MD5"; is Sasl.Gssapi -> "GSSAPI"; null -> null },
                saslUsername = (sasl as? Sasl.DigestMd5)?.username,
                saslPassword = password,
                saslService = (sasl as? Sasl.Gssapi)?.service,
                saslHost = (sasl as? Sasl.Gssapi)?.host,
                saslPrincipal = (sasl as? Sasl.Gssapi)?.principal,
                saslKeytab = (sasl as? Sasl.Gssapi)?.keytab?.toString(),
                aclPolicy = options.acl?.name,
                aclEntries = options.acl?.nativeEntries(),
                metricPaths = options.metricPaths,
            )
            try {
                return Client(native { nativeConnect(connectString, settings) })
            } finally {
                password?.fill(0)
            }
        }
    }

    /** The connection's state, now and as it changes. */
    val state: StateFlow<ConnectionState> = states.asStateFlow()

    /** Written into this client's lock and election nodes. */
    val identity: String get() = native.identity()

    /** Whether the session runs over TLS. */
    val isTls: Boolean get() = native.isTls()

    /** The identities the server authenticated this session as, e.g. `[sasl:alice]`. */
    val authenticatedAs: List<String> get() = native.authenticatedAs()

    /**
     * Why there is no session after [ConnectionState.LOST]: the server's refusal of the last
     * attempt at a new one (a rotated password, an expired ticket or certificate); null once an
     * attempt succeeds.
     */
    val sessionError: ZkException? get() = native.sessionError()?.let { ZkException.of(it.code, it.detail) }

    /**
     * What this client has counted so far, now: every recipe's waits, holds and outcomes, the
     * requests sent and the connection state changes. Each call takes a new snapshot.
     */
    fun metrics(): MetricsSnapshot = MetricsSnapshot(native.metrics())

    /** Asks the server for this session's identities now. */
    suspend fun whoami(): List<String> = native { native.whoami() }

    /** The session's id; [ZkException.Closed] once closed. */
    val sessionId: Long get() = native { native.sessionId() }

    fun writeLock(path: String): WriteLock = WriteLock(this, path)

    /** A [MultiLock] over [paths]: every lock or none (Curator's `InterProcessMultiLock`). */
    fun multiLock(paths: List<String>): MultiLock = MultiLock(this, paths)

    fun readWriteLock(path: String): ReadWriteLock = ReadWriteLock(this, path)

    fun queue(path: String): DistributedQueue = DistributedQueue(this, path)

    fun workQueue(path: String, prefetch: Int = 1, maxDeliveries: Int? = null): WorkQueue =
        WorkQueue(this, path, prefetch, maxDeliveries)

    fun leaderElection(root: String, hostName: String = identity): LeaderElectionSupport =
        LeaderElectionSupport(this, root, hostName)

    fun semaphore(path: String, maxLeases: Int): Semaphore = Semaphore(this, path, maxLeases)

    /** [id] `null`: this client's [identity]. */
    fun leaderLatch(path: String, id: String? = null): LeaderLatch = LeaderLatch(this, path, id)

    fun barrier(path: String): Barrier = Barrier(this, path)

    fun doubleBarrier(path: String, memberCount: Int): DoubleBarrier = DoubleBarrier(this, path, memberCount)

    /** [seed]: the value when the node is created, or found empty. */
    fun sharedCount(path: String, seed: Int = 0): SharedCount = SharedCount(this, path, seed)

    fun atomicLong(path: String): DistributedAtomicLong = DistributedAtomicLong(this, path)

    /** [Cache.node]: a cache of the node at [path]. */
    fun nodeCache(path: String): Cache = Cache.node(this, path)

    /** [Cache.children]: a cache of the children of [path]. */
    fun childrenCache(path: String): Cache = Cache.children(this, path)

    /** [Cache.tree]: a cache of the subtree at [path], [maxDepth] deep (`null`: all of it). */
    fun treeCache(path: String, maxDepth: Int? = null): Cache = Cache.tree(this, path, maxDepth)

    fun persistentNode(path: String, mode: NodeMode, data: ByteArray): PersistentNode =
        PersistentNode(this, path, mode, data)

    fun groupMember(group: String, id: String, payload: ByteArray): GroupMember = GroupMember(this, group, id, payload)

    /** A [ServiceDiscovery] registry under [basePath] (Curator's, e.g. `/services`). */
    fun serviceDiscovery(basePath: String): ServiceDiscovery = ServiceDiscovery(this, basePath)

    /** Ends the session without blocking a thread. */
    suspend fun closeAsync() {
        native.closeAsync()
        closed()
    }

    override fun close() {
        native.closeBlocking()
        closed()
    }

    // The state collector may be cancelled before CLOSED reaches it: the flow shows it anyway.
    private fun closed() {
        states.value = ConnectionState.valueOf(native.state())
        scope.cancel()
    }
}
