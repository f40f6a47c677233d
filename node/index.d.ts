// Types of the zkrecipes npm package (hand-written; native.d.ts is generated).
import { EventEmitter } from 'node:events'

export type ErrorCode =
  | 'INVALID_PATH' | 'INVALID_ARGUMENT' | 'CONNECTION_LOSS' | 'TLS_REFUSED' | 'SESSION_EXPIRED' | 'TIMEOUT' | 'NO_NODE'
  | 'NODE_EXISTS' | 'NOT_EMPTY' | 'BAD_VERSION' | 'NO_AUTH' | 'AUTH_FAILED' | 'NO_SUCH_ELEMENT'
  | 'NOT_OWNER' | 'WOULD_DEADLOCK' | 'CLOSED' | 'INTERRUPTED' | 'INTERNAL'

export declare const ERROR_CODES: readonly ErrorCode[]

/** Every error of zkrecipes; `code` is the same in Python, Java and Rust. */
export declare class ZkError extends Error {
  readonly code: ErrorCode
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown })
}

export type ConnectionState = 'CONNECTED' | 'SUSPENDED' | 'RECONNECTED' | 'LOST' | 'CLOSED'
export declare const CONNECTION_STATES: readonly ConnectionState[]

export interface ConnectOptions {
  /** Default 10000. */
  sessionTimeoutMs?: number
  /** Default 10000: how long connect() may take. */
  connectTimeoutMs?: number
  /** e.g. ['digest', 'user:secret']: recipe nodes then grant only this identity. */
  auth?: [scheme: string, credentials: string]
  /** Written into lock and election nodes; default: the host name. */
  identity?: string
  /** TLS to every server (also needed for `tcp+tls://` servers). */
  tls?: TlsOptions
  /** SASL authentication. */
  sasl?: SaslOptions
  /**
   * ACL of every node the recipes create. Default: 'open' without credentials,
   * 'creator' with any (digest, SASL or a client certificate).
   */
  acl?: 'open' | 'creator' | 'creator-world-read' | AclEntry | AclEntry[]
  /**
   * The process's logger for the library's events, as `configureLogging({ logger })` sets it:
   * process-wide (the events carry no client), the last one given wins.
   */
  logger?: Logger | null
  /**
   * Default true: metrics carry the recipe's path as the `path` attribute (past 1000 paths
   * recorded as `_other`). false drops the attribute, for clients with unbounded paths.
   */
  metricPaths?: boolean
}

/** A path, PEM text or a PEM Buffer (files are re-read when they change). */
export type PemSource = string | Buffer | Uint8Array

export interface TlsOptions {
  /** The CA bundle to trust. */
  ca: PemSource
  /** Client certificate and key, for mutual TLS. */
  cert?: PemSource
  key?: PemSource
  /** Default true. false accepts any host name the CA signed: unsafe. */
  verifyHostname?: boolean
}

export type SaslOptions =
  | { mechanism: 'DIGEST-MD5', username: string, password: string | Buffer }
  /**
   * Kerberos: by default the process's credentials (KRB5CCNAME, KRB5_CLIENT_KTNAME);
   * `principal` ('name@REALM') and `keytab` (a path) give this client an identity of its own.
   * `service` and `host` name the server principal.
   */
  | { mechanism: 'GSSAPI', service?: string, host?: string, principal?: string, keytab?: string }

export interface AclEntry {
  /** Letters of 'rwcda', 'all', or the permission bits (1 to 31). */
  perms: string | number
  scheme: string
  id: string
}

export interface WaitOptions {
  /** One deadline for the whole call; omitted = wait as long as it takes. */
  timeoutMs?: number
}

export interface Participant {
  node: string
  identity: string
  isReader: boolean
}

export declare class Client extends EventEmitter {
  static connect(connectString: string, options?: ConnectOptions): Promise<Client>
  private constructor(handle: unknown)
  readonly state: ConnectionState
  readonly sessionId: bigint
  readonly identity: string
  /** Whether the session runs over TLS. */
  readonly isTls: boolean
  /** The identities the server authenticated this session as, e.g. ['sasl:alice']. */
  readonly authenticatedAs: string[]
  /**
   * Why there is no session after 'LOST': the server's refusal of the last attempt at a new one
   * (a rotated password, an expired ticket or certificate); null once one succeeds.
   */
  readonly sessionError: ZkError | null
  /**
   * What this client recorded so far: every recipe's waits, holds and outcomes, the requests
   * sent and the connection state changes.
   */
  metrics(): MetricsSnapshot
  /** Asks the server for this session's identities now. */
  whoami(): Promise<string[]>
  /** Let the process exit while this client is open (like socket.unref()). */
  unref(): this
  ref(): this
  writeLock(dir: string): WriteLock
  multiLock(dirs: readonly string[]): MultiLock
  readWriteLock(dir: string): ReadWriteLock
  queue(dir: string): DistributedQueue
  workQueue(path: string, options?: WorkQueueOptions): WorkQueue
  /** A `Semaphore` of `maxLeases` leases at `path` (Curator's InterProcessSemaphoreV2 nodes). */
  semaphore(path: string, maxLeases: number): Semaphore
  leaderElection(root: string, hostName?: string): LeaderElectionSupport
  /** A `LeaderLatch` participant at `path` (Curator's LeaderLatch nodes); `id` defaults to `identity`. */
  leaderLatch(path: string, options?: LeaderLatchOptions | string): LeaderLatch
  /** A `Barrier` at `path` (Curator's DistributedBarrier node). */
  barrier(path: string): Barrier
  /** A `DoubleBarrier` member at `path` for `memberCount` members (Curator's DistributedDoubleBarrier nodes). */
  doubleBarrier(path: string, memberCount: number): DoubleBarrier
  /** A `SharedCount` at `path` (Curator's SharedCount node, kazoo's Counter(support_curator=True)), `seed` (default 0) when created. */
  sharedCount(path: string, seed?: number): SharedCount
  /** A `DistributedAtomicLong` at `path` (Curator's DistributedAtomicLong node). */
  atomicLong(path: string): DistributedAtomicLong
  /** A `NodeCache` of the node at `path` (Curator's NodeCache). */
  nodeCache(path: string): NodeCache
  /** A `ChildrenCache` of the children of `path` (Curator's PathChildrenCache). */
  childrenCache(path: string): ChildrenCache
  /** A `TreeCache` of the subtree at `path`, `maxDepth` levels deep (default: all; Curator's TreeCache). */
  treeCache(path: string, options?: TreeCacheOptions): TreeCache
  /** A `PersistentNode` at `path` (Curator's PersistentNode): created again after every delete or new session until closed. */
  persistentNode(path: string, options?: PersistentNodeOptions): PersistentNode
  /** A `GroupMember` `id` of the group at `group` (Curator's GroupMember nodes). */
  groupMember(group: string, id: string, options?: GroupMemberOptions): GroupMember
  /** Curator's service registry at `basePath` ('/services', Spring Cloud Zookeeper's default). */
  serviceDiscovery(basePath?: string): ServiceDiscovery
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>

  on(event: 'state', listener: (state: ConnectionState) => void): this
  on(event: 'error', listener: (error: unknown) => void): this
  once(event: 'state', listener: (state: ConnectionState) => void): this
  once(event: 'error', listener: (error: unknown) => void): this
  off(event: 'state' | 'error', listener: (...args: any[]) => void): this
}

/** 'suspended': the connection dropped while held (stop using the resource); then 'reconnected' or 'lost'. */
export type LockEventName = 'acquired' | 'released' | 'suspended' | 'reconnected' | 'lost'
export type LockEventType = Uppercase<LockEventName>
export declare const LOCK_EVENTS: readonly LockEventType[]

/** What every lock listener receives. */
export type LockEvent =
  | { readonly type: 'ACQUIRED'; readonly fencingToken: bigint }
  | { readonly type: 'RELEASED' | 'SUSPENDED' | 'RECONNECTED' }
  | { readonly type: 'LOST'; readonly reason: ZkError }

/** The typed listeners of a lock or a semaphore (a type only): both tell their holds' events. */
declare class LockEmitter extends EventEmitter {
  on(event: 'acquired', listener: (event: LockEvent & { type: 'ACQUIRED' }) => void): this
  on(event: 'lost', listener: (event: LockEvent & { type: 'LOST' }) => void): this
  on(event: 'released' | 'suspended' | 'reconnected', listener: (event: LockEvent) => void): this
  on(event: 'error', listener: (error: unknown) => void): this
  once(event: 'acquired', listener: (event: LockEvent & { type: 'ACQUIRED' }) => void): this
  once(event: 'lost', listener: (event: LockEvent & { type: 'LOST' }) => void): this
  once(event: 'released' | 'suspended' | 'reconnected', listener: (event: LockEvent) => void): this
  once(event: 'error', listener: (error: unknown) => void): this
  off(event: LockEventName | 'error', listener: (...args: any[]) => void): this
}

/**
 * A fair lock, or one side of a ReadWriteLock. JavaScript has no caller identity: outside a
 * `withLock` scope every acquire is its own holder, async functions sharing one object exclude
 * each other (a write waits for the object's read holds), and release() ends the object's oldest
 * hold. Inside a `withLock` scope the scope's async flow is the holder, as a thread is in Java.
 */
export declare class Lock extends LockEmitter {
  protected constructor(handle: unknown)
  /** true once held; false if timeoutMs passed (nothing is left on the server). */
  acquire(options?: WaitOptions): Promise<boolean>
  /** false at once if somebody else holds it (one request). */
  tryAcquire(): Promise<boolean>
  /**
   * Resolves once the server confirmed the delete; rejects with NOT_OWNER if not held. Inside a
   * scope that holds this lock it ends one of the scope's holds, otherwise the oldest hold taken
   * outside any scope (a scope's holds are never ended by a plain release).
   */
  release(): Promise<void>
  /**
   * Runs fn holding the lock, released after (also when fn throws). While fn runs, it and the
   * async work it starts are one holder: reentrant, the write holder may take the read side
   * (downgrade), the read holder's write request rejects with WOULD_DEADLOCK; work still running
   * after the scope ended acquires as holders of its own, and what the scope still holds when the
   * outermost withLock ends is released. Rejects with TIMEOUT if timeoutMs
   * passed first, with fn's error if fn threw, with the release's error if the lock was lost
   * while fn ran.
   */
  withLock<T>(fn: (fencingToken: bigint) => T | Promise<T>, options?: WaitOptions): Promise<T>
  /** The czxid of our lock node while held: pass it to the protected resource. */
  readonly fencingToken: bigint | null
  readonly isHeld: boolean
  readonly holdCount: number
  readonly dir: string
  participants(): Promise<Participant[]>
  [Symbol.asyncDispose](): Promise<void>

}

export declare class WriteLock extends Lock {
  constructor(client: Client, dir: string)
}

/**
 * Exclusive locks on several paths held together, all or none (Curator's InterProcessMultiLock,
 * interoperable with it). Taken in the order of their paths, sorted, whatever order they were
 * given in: two multi-locks over the same paths never wait for each other in a circle. On a
 * timeout, a failure or a cancel the locks already taken are given back before the answer;
 * release deletes the nodes last-taken first. Holders and scopes as Lock's. No events: the
 * client's tell a connection's loss.
 */
export declare class MultiLock {
  /** Rejects no path, or a path given twice, with INVALID_ARGUMENT. */
  constructor(client: Client, dirs: readonly string[])
  acquire(options?: WaitOptions): Promise<boolean>
  tryAcquire(): Promise<boolean>
  release(): Promise<void>
  /** Runs fn with the fencing tokens (one per path, in the order given), as Lock.withLock. */
  withLock<T>(fn: (fencingTokens: bigint[]) => T | Promise<T>, options?: WaitOptions): Promise<T>
  /** One czxid per path, in the order given, while held. */
  readonly fencingTokens: bigint[] | null
  readonly isHeld: boolean
  readonly holdCount: number
  readonly dirs: string[]
  [Symbol.asyncDispose](): Promise<void>
}

export declare class ReadWriteLock {
  constructor(client: Client, dir: string)
  readonly readLock: Lock
  readonly writeLock: Lock
  /** Releases every hold of both sides. */
  [Symbol.asyncDispose](): Promise<void>
}

/** One held lease of a `Semaphore`; a lease dropped unreleased is released once collected. */
export declare class Lease {
  private constructor()
  /** The czxid of the lease's node: pass it to the protected resource. */
  readonly fencingToken: bigint
  readonly nodePath: string
  readonly isHeld: boolean
  /** Rejects with the loss's error if the lease was lost, NOT_OWNER if already released. */
  release(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** At most `maxLeases` leases at once among every process (Curator's InterProcessSemaphoreV2 nodes). */
export declare class Semaphore extends LockEmitter {
  constructor(client: Client, path: string, maxLeases: number)
  readonly path: string
  readonly maxLeases: number
  /** Leases this object holds now. */
  readonly held: number
  /** One lease, or null once timeoutMs passed (nothing is left on the server; 0: a try). */
  acquire(options?: WaitOptions): Promise<Lease | null>
  /** `count` leases, all or none. */
  acquireMany(count: number, options?: WaitOptions): Promise<Lease[] | null>
  /** Releases the oldest lease this object holds; NOT_OWNER when it holds none. */
  release(): Promise<void>
  releaseAll(): Promise<void>
  leaseNodes(): Promise<string[]>
  [Symbol.asyncDispose](): Promise<void>

}

export type Payload = Buffer | Uint8Array | string

export interface WorkQueueOptions {
  /** Jobs claimed per transaction, 1-1000 (default 1). */
  prefetch?: number
  /** A job delivered this many times moves to `deadLetterPath` (default: no limit). */
  maxDeliveries?: number
}
export interface PriorityOptions {
  /** 0-999, lower first (default 100). */
  priority?: number
}
/**
 * A job claimed for this worker: `ack()` when done, `nack()` to give it back. Made by
 * `WorkQueue.next()` / `consume()` only; a job dropped unsettled goes back once collected.
 */
export declare class Job {
  private constructor()
  readonly data: Buffer
  readonly name: string
  readonly priority: number
  /** How many times this job was delivered, this time included. */
  readonly deliveryCount: number
  readonly settled: boolean
  ack(): Promise<void>
  nack(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}
/** At-least-once jobs in kazoo's LockingQueue layout. */
export declare class WorkQueue {
  constructor(client: Client, path: string, options?: WorkQueueOptions)
  readonly path: string
  readonly maxPayload: number
  readonly deadLetterPath: string
  offer(data: Payload, options?: PriorityOptions): Promise<string>
  offerAll(items: readonly Payload[], options?: PriorityOptions): Promise<string[]>
  /** The next job, or null once timeoutMs passed. */
  next(options?: WaitOptions): Promise<Job | null>
  /** Jobs as they come; one the loop body left unsettled goes back. */
  consume(options?: WaitOptions): AsyncGenerator<Job, void, undefined>
  /** Jobs in the queue, claimed ones included (one request). */
  size(): Promise<number>
  /** Gives back prefetched jobs; later calls reject with CLOSED. Jobs in hand can still be settled. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}
export declare class DistributedQueue {
  constructor(client: Client, dir: string)
  readonly maxPayload: number
  /** Resolves to the item's node path. */
  offer(data: Payload): Promise<string>
  peek(): Promise<Buffer | null>
  poll(): Promise<Buffer | null>
  /** Rejects with code NO_SUCH_ELEMENT when empty. */
  element(): Promise<Buffer>
  /** Rejects with code NO_SUCH_ELEMENT when empty. */
  remove(): Promise<Buffer>
  /** null if timeoutMs passed without an item. */
  take(options?: WaitOptions): Promise<Buffer | null>
  /** Up to `max` head items (1 to 1000) in queue order, taken in one transaction (one write); [] when empty. */
  pollMany(max: number): Promise<Buffer[]>
  /** Waits for an item as take() does, then takes up to `max` as pollMany(); [] if timeoutMs passed first. */
  takeMany(max: number, options?: WaitOptions): Promise<Buffer[]>
  /** The directory's child count: one request at any depth (a foreign child is counted too). */
  size(): Promise<number>
  /** Deletes this consumer's claim marker; the queue stays usable. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

export type ElectionEventName =
  | 'START' | 'OFFER_START' | 'OFFER_COMPLETE' | 'DETERMINE_START' | 'DETERMINE_COMPLETE'
  | 'ELECTED_START' | 'ELECTED_COMPLETE' | 'READY_START' | 'READY_COMPLETE' | 'FAILED'
  | 'STOP_START' | 'STOP_COMPLETE' | 'SUSPENDED' | 'RECONNECTED'
export declare const ELECTION_EVENTS: readonly ElectionEventName[]

/** What every election listener receives; `reason` comes with FAILED. */
export interface ElectionEvent {
  readonly type: ElectionEventName
  readonly reason?: ZkError
}

export declare class LeaderElectionSupport extends EventEmitter {
  constructor(client: Client, root: string, hostName?: string)
  start(): Promise<void>
  stop(): Promise<void>
  isLeader(): boolean
  leaderHostName(): Promise<string | null>
  awaitLeadership(options?: WaitOptions): Promise<boolean>
  [Symbol.asyncDispose](): Promise<void>

  on(event: 'event' | Lowercase<ElectionEventName>, listener: (event: ElectionEvent) => void): this
  on(event: 'error', listener: (error: unknown) => void): this
  once(event: 'event' | Lowercase<ElectionEventName>, listener: (event: ElectionEvent) => void): this
  once(event: 'error', listener: (error: unknown) => void): this
  off(event: 'event' | Lowercase<ElectionEventName> | 'error', listener: (...args: any[]) => void): this
}

export type LatchEventName = 'IS_LEADER' | 'NOT_LEADER' | 'SUSPENDED' | 'RECONNECTED'
export declare const LATCH_EVENTS: readonly LatchEventName[]

/**
 * What every latch listener receives. 'SUSPENDED': the leader's connection dropped (stop acting
 * as the leader until 'RECONNECTED'); 'NOT_LEADER' carries the reason when the leadership was
 * lost (none when the latch was closed).
 */
export type LatchEvent =
  | { readonly type: 'IS_LEADER'; readonly fencingToken: bigint }
  | { readonly type: 'NOT_LEADER'; readonly reason?: ZkError }
  | { readonly type: 'SUSPENDED' | 'RECONNECTED' }

export interface LeaderLatchOptions {
  /** What the other participants see as this one's id; default: the client's identity. */
  id?: string
}

/** One participant of a latch, as `participants()` lists them (the leader first). */
export interface LatchParticipant {
  readonly id: string
  readonly node: string
  readonly isLeader: boolean
}

/**
 * One participant of the leader latch at `path` (Curator's LeaderLatch nodes). A latch that is
 * dropped unclosed (and has no listeners) is closed once the garbage collector finds it.
 */
export declare class LeaderLatch extends EventEmitter {
  constructor(client: Client, path: string, options?: LeaderLatchOptions)
  readonly path: string
  readonly id: string
  /** Our node while leading, else null. */
  readonly nodePath: string | null
  /** The leader's fencing token (its node's czxid) while this participant leads, else null. */
  readonly fencingToken: bigint | null
  readonly isStarted: boolean
  readonly isClosed: boolean
  /** Resolves once in line (leading or not); rejects with CLOSED once closed. Takes effect at the call. */
  start(): Promise<void>
  /** Withdraws the node (a leader hands over with 'not_leader'); idempotent, final. */
  close(): Promise<void>
  hasLeadership(): boolean
  /**
   * The fencing token once leading; null if timeoutMs passed first (0: a check). Rejects with
   * INVALID_ARGUMENT before start(), CLOSED once closed (also while waiting).
   */
  awaitLeadership(options?: WaitOptions): Promise<bigint | null>
  /** The current leader, or null when nobody takes part. */
  leader(): Promise<LatchParticipant | null>
  /** Every participant in line, the leader first (Curator's too). */
  participants(): Promise<LatchParticipant[]>
  /** close() */
  [Symbol.asyncDispose](): Promise<void>

  on(event: 'is_leader', listener: (event: LatchEvent & { type: 'IS_LEADER' }) => void): this
  on(event: 'not_leader', listener: (event: LatchEvent & { type: 'NOT_LEADER' }) => void): this
  on(event: 'event' | 'suspended' | 'reconnected', listener: (event: LatchEvent) => void): this
  on(event: 'error', listener: (error: unknown) => void): this
  once(event: 'is_leader', listener: (event: LatchEvent & { type: 'IS_LEADER' }) => void): this
  once(event: 'not_leader', listener: (event: LatchEvent & { type: 'NOT_LEADER' }) => void): this
  once(event: 'event' | 'suspended' | 'reconnected', listener: (event: LatchEvent) => void): this
  once(event: 'error', listener: (error: unknown) => void): this
  off(event: 'event' | Lowercase<LatchEventName> | 'error', listener: (...args: any[]) => void): this
}

/** Holds waiters back while it is up: up while its node exists (Curator's DistributedBarrier). */
export declare class Barrier {
  constructor(client: Client, path: string)
  readonly path: string
  /** Puts the barrier up (one already up stays up). */
  set(): Promise<void>
  /** Takes it down, releasing every waiter (one already down stays down); NOT_EMPTY if it has children. */
  remove(): Promise<void>
  isSet(): Promise<boolean>
  /** true once the barrier is down; false if timeoutMs passed first (0: a check). */
  wait(options?: WaitOptions): Promise<boolean>
}

/**
 * `memberCount` members enter together and leave together (Curator's DistributedDoubleBarrier
 * nodes). A member whose enter or leave times out or fails is withdrawn (its node deleted).
 */
export declare class DoubleBarrier {
  constructor(client: Client, path: string, memberCount: number)
  readonly path: string
  readonly memberCount: number
  /** This member's node (`<path>/<uuid>`), there while it is in. */
  readonly nodePath: string
  /** true once memberCount members are in; false if timeoutMs passed first (this member withdrawn). */
  enter(options?: WaitOptions): Promise<boolean>
  /** true once every member left; false if timeoutMs passed first (this member's node gone anyway). */
  leave(options?: WaitOptions): Promise<boolean>
  /** The member nodes' names now (`ready` not among them). */
  members(): Promise<string[]>
  /** Whether the barrier has opened and not everybody left. */
  isReady(): Promise<boolean>
}

/** What an atomic long's update saw and wrote. */
export interface Updated {
  readonly preValue: bigint
  readonly postValue: bigint
}

/** A 64-bit integer: a bigint, or a safe integer number. RangeError beyond 64 bits. */
export type Long = bigint | number

/**
 * A 64-bit counter (Curator's DistributedAtomicLong node: 8 bytes, big-endian). Every update is a
 * versioned write repeated until it applies, so increments from any clients end exact; overflow
 * wraps as Java's long. A missing or empty node reads as 0n, another length is INVALID_ARGUMENT.
 * CONNECTION_LOSS from an update: its write may or may not have applied (never twice).
 */
export declare class DistributedAtomicLong {
  constructor(client: Client, path: string)
  readonly path: string
  /** The value now (0n while the node does not exist). */
  get(): Promise<bigint>
  increment(): Promise<Updated>
  decrement(): Promise<Updated>
  add(delta: Long): Promise<Updated>
  /** Writes `newValue` if the value is `expected` now; false (nothing written) otherwise. */
  compareAndSet(expected: Long, newValue: Long): Promise<boolean>
  /** Writes `value` whatever the value was. */
  forceSet(value: Long): Promise<void>
}

/** A shared count's value with the node version it was read at: what `trySet` writes over. */
export interface VersionedCount {
  readonly value: number
  readonly version: number
}

/**
 * A 32-bit count (Curator's SharedCount node: 4 bytes, big-endian; kazoo's
 * Counter(support_curator=True)), cached and followed by a watch once started. Values are
 * 32-bit integers (RangeError beyond). 'change' carries every value the count takes: writes the
 * watch sees, this object's own, and start()'s first read when listened to before it.
 */
export declare class SharedCount extends EventEmitter {
  constructor(client: Client, path: string, seed?: number)
  readonly path: string
  /** Creates the node with the seed if missing (never overwriting), reads it and follows it. */
  start(): Promise<void>
  /** Stops following, at once (`count` keeps its last value); start() follows again. */
  close(): void
  /** The newest value seen (no request); throws INVALID_ARGUMENT before start(). */
  readonly count: number
  get(): number
  /** `count` with its version, for trySet. */
  versioned(): VersionedCount
  /** The value on the server now (no start needed, nothing created): the seed while missing or empty. */
  read(): Promise<number>
  set(value: number): Promise<void>
  /** Writes only if the node is still at `expected`'s version; false otherwise (count refreshed). */
  trySet(expected: VersionedCount, value: number): Promise<boolean>
  /** Adds `delta` (wrapping as Java's int) with versioned writes until one applies. */
  add(delta: number): Promise<VersionedCount>
  [Symbol.asyncDispose](): Promise<void>

  on(event: 'change', listener: (change: VersionedCount) => void): this
  on(event: 'error', listener: (error: unknown) => void): this
  once(event: 'change', listener: (change: VersionedCount) => void): this
  once(event: 'error', listener: (error: unknown) => void): this
  off(event: 'change' | 'error', listener: (...args: any[]) => void): this
}

/** Bytes as the recipes take them (a string is UTF-8). */
export type NodeData = Buffer | Uint8Array | string

/** A node's Stat as the server sent it: zxids and the owning session as bigint, times in ms since the epoch. */
export interface NodeStat {
  readonly czxid: bigint
  readonly mzxid: bigint
  readonly pzxid: bigint
  readonly ctime: number
  readonly mtime: number
  readonly version: number
  readonly cversion: number
  readonly aversion: number
  /** The owning session's id; 0n when not ephemeral. */
  readonly ephemeralOwner: bigint
  readonly dataLength: number
  readonly numChildren: number
}

/** What a cache holds of one node (Curator's ChildData); `name` is the last part of the path. */
export interface CachedNode {
  readonly path: string
  readonly name: string
  readonly data: Buffer
  readonly stat: NodeStat
}

export type CacheEventType = 'CREATED' | 'CHANGED' | 'DELETED' | 'INITIALIZED' | 'SUSPENDED' | 'RECONNECTED' | 'LOST'
export type CacheEventName = Lowercase<CacheEventType>
export declare const CACHE_EVENTS: readonly CacheEventType[]

/**
 * What every cache and group member listener receives: `node` as it is now ('CREATED',
 * 'CHANGED') or was ('DELETED'), `old` before a 'CHANGED'. 'SUSPENDED' and 'LOST': the copy may
 * be behind until 'RECONNECTED', whose difference events come before it.
 */
export type CacheEvent =
  | { readonly type: 'CREATED' | 'DELETED'; readonly node: CachedNode }
  | { readonly type: 'CHANGED'; readonly node: CachedNode; readonly old: CachedNode }
  | { readonly type: 'INITIALIZED' | 'SUSPENDED' | 'RECONNECTED' | 'LOST' }

export interface TreeCacheOptions {
  /** Levels below the path (0: the node alone); omitted: all. */
  maxDepth?: number
}

/** The typed listeners of a cache or a group member (a type only): both tell a cache's events. */
declare class CacheEmitter extends EventEmitter {
  on(event: 'created' | 'deleted', listener: (event: CacheEvent & { type: 'CREATED' | 'DELETED' }) => void): this
  on(event: 'changed', listener: (event: CacheEvent & { type: 'CHANGED' }) => void): this
  on(event: 'event' | 'initialized' | 'suspended' | 'reconnected' | 'lost', listener: (event: CacheEvent) => void): this
  on(event: 'error', listener: (error: unknown) => void): this
  once(event: 'created' | 'deleted', listener: (event: CacheEvent & { type: 'CREATED' | 'DELETED' }) => void): this
  once(event: 'changed', listener: (event: CacheEvent & { type: 'CHANGED' }) => void): this
  once(event: 'event' | 'initialized' | 'suspended' | 'reconnected' | 'lost', listener: (event: CacheEvent) => void): this
  once(event: 'error', listener: (error: unknown) => void): this
  off(event: 'event' | CacheEventName | 'error', listener: (...args: any[]) => void): this
}

/**
 * A local copy of part of the tree kept in sync by one watch (NodeCache, ChildrenCache and
 * TreeCache say which part). `start()` resolves once the first load is in; `get`, `has`,
 * `snapshot`, `children` and `size` then answer from memory. After every reconnect and new
 * session exactly the difference is emitted. Nothing is created: a missing node is an empty
 * cache until it appears. A listener before `start()` hears a 'created' for every node of the
 * first load, then 'initialized'. Events are never dropped.
 */
export declare class Cache extends CacheEmitter {
  protected constructor(handle: unknown)
  readonly path: string
  readonly isInitialized: boolean
  /** Resolves once the first load is in the copy; rejects with CLOSED once closed. Takes effect at the call. */
  start(): Promise<void>
  /** Resolves once the first load is in; rejects with TIMEOUT after timeoutMs. */
  awaitInitialized(options?: WaitOptions): Promise<void>
  /** Stops following and frees the copy, at once; idempotent, final. */
  close(): void
  /** The cached node at `path`, or null (not cached, or outside the cache). */
  get(path: string): CachedNode | null
  has(path: string): boolean
  /** Every cached node, sorted by path. */
  snapshot(): CachedNode[]
  /** The names of the cached children of `path` (default: the cache's path), sorted. */
  children(path?: string): string[]
  /** How many nodes are cached. */
  readonly size: number
  /** close() */
  [Symbol.asyncDispose](): Promise<void>

}

/** A cache of the node at `path` alone (Curator's NodeCache). */
export declare class NodeCache extends Cache {
  constructor(client: Client, path: string)
  /** The node as cached now, null while it does not exist. */
  readonly node: CachedNode | null
}

/** A cache of the children of `path` with their data, never of `path` itself (Curator's PathChildrenCache). */
export declare class ChildrenCache extends Cache {
  constructor(client: Client, path: string)
}

/** A cache of the subtree at `path` down to `maxDepth` levels (Curator's TreeCache). */
export declare class TreeCache extends Cache {
  constructor(client: Client, path: string, options?: TreeCacheOptions)
}

export type NodeMode = 'ephemeral' | 'ephemeral_sequential' | 'persistent' | 'persistent_sequential'

export interface PersistentNodeOptions {
  /** Default: empty. */
  data?: NodeData
  /** Default 'ephemeral' (any case). */
  mode?: NodeMode | Uppercase<NodeMode>
}

/**
 * A node that stays (Curator's PersistentNode): created at `start()` and again whenever it is
 * deleted or its session expires, until `close()`. Another session's ephemeral node of the name
 * is never taken over: `start()` waits until it is gone. A sequential node gets Curator's
 * protected name (`_c_<uuid>-<name><sequence>`); missing parents are created as containers.
 */
export declare class PersistentNode {
  constructor(client: Client, path: string, options?: PersistentNodeOptions)
  readonly path: string
  /** The node's path once created (a sequential node's full name); null before and after close(). */
  readonly actualPath: string | null
  /** The data the node is (re-)created with. */
  readonly data: Buffer
  /** Resolves with the node's path once it exists; rejects with CLOSED once closed. Takes effect at the call. */
  start(): Promise<string>
  /** Writes `data` now (if the node exists) and for every later re-create. */
  setData(data: NodeData): Promise<void>
  /** Stops re-creating the node and deletes it, confirmed; idempotent, final. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

export interface GroupMemberOptions {
  /** Default: empty. */
  payload?: NodeData
}

/**
 * Member `id` of the group at `group` (Curator's GroupMember layout: ephemeral `<group>/<id>`
 * holding the payload; an id that is empty, '.', '..' or holds '/' is INVALID_ARGUMENT).
 * `start()` joins; `members()` is every member's payload by id, this one included. A member
 * whose session expired joins again by itself. Emits the group cache's events: 'created'
 * (joined; `event.node.name` is the id), 'changed' (a new payload), 'deleted' (left), and
 * 'initialized', 'suspended', 'reconnected', 'lost', with 'event' for each.
 */
export declare class GroupMember extends CacheEmitter {
  constructor(client: Client, group: string, id: string, options?: GroupMemberOptions)
  readonly id: string
  readonly group: string
  /** Joins; resolves once this member is in its own view. Takes effect at the call. */
  start(): Promise<void>
  /** Every member's payload by id, sorted by id (no request). */
  members(): Map<string, Buffer>
  /** A new payload, written now and kept for every re-join. */
  setPayload(payload: NodeData): Promise<void>
  /** Leaves (the node deleted, confirmed); idempotent, final. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>

}

// Service discovery on Curator's registry.

/** How an instance's node lives (Curator's ServiceType). */
export type ServiceType = 'DYNAMIC' | 'STATIC' | 'PERMANENT' | 'DYNAMIC_SEQUENTIAL'
/** How a ServiceProvider chooses. */
export type ProviderStrategy = 'ROUND_ROBIN' | 'RANDOM' | 'STICKY'
/** Any JSON value: an instance's payload. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** An instance to register: `id` (a random UUID) and `registrationTimeUtc` (now) are given when missing. */
export interface ServiceInstanceInit {
  name: string
  id?: string | null
  address?: string | null
  port?: number | null
  sslPort?: number | null
  payload?: Json
  serviceType?: ServiceType | Lowercase<ServiceType> | null
  /** A Curator URI template: '{scheme}://{address}:{port}'. */
  uriSpec?: string | null
  enabled?: boolean | null
  registrationTimeUtc?: number | null
  /** Another writer's fields, kept through an update. */
  extra?: { [key: string]: Json }
}

/** An instance as the registry holds it (Curator's ServiceInstance); `uri` is what its URI spec makes. */
export interface ServiceInstance {
  readonly name: string
  readonly id: string
  readonly address: string | null
  readonly port: number | null
  readonly sslPort: number | null
  readonly payload: Json
  readonly registrationTimeUtc: number
  readonly serviceType: ServiceType
  readonly uriSpec: string | null
  readonly enabled: boolean
  readonly extra: { readonly [key: string]: Json }
  readonly uri: string | null
}

export interface DiscoveryEvent {
  readonly type: 'REREGISTERED' | 'REGISTRATION_STOPPED'
  readonly service: string
  readonly id: string
  /** Why a registration stopped (NO_AUTH). */
  readonly reason?: ZkError
}

export interface ServiceCacheEvent {
  readonly type: 'ADDED' | 'CHANGED' | 'REMOVED' | 'INITIALIZED' | 'SUSPENDED' | 'RECONNECTED' | 'LOST'
  readonly instance?: ServiceInstance
  readonly old?: ServiceInstance
}

export interface ServiceProviderOptions {
  strategy?: ProviderStrategy | Lowercase<ProviderStrategy>
  /** How long an instance stays down, and the window its errors are counted in (30 s). */
  downTimeoutMs?: number
  /** The errors within `downTimeoutMs` that take an instance down (2). */
  downErrors?: number
}

/**
 * Curator's service registry at `basePath` ('/services', Spring Cloud Zookeeper's default):
 * instances at `<base>/<name>/<id>`, each its JSON as Curator 5.9 writes it. A DYNAMIC instance
 * is registered again by itself under every new session ('reregistered') and never taken from
 * another live session (NODE_EXISTS). `close()` unregisters every instance and closes the caches
 * and providers made here.
 */
export declare class ServiceDiscovery extends EventEmitter {
  constructor(client: Client, basePath?: string)
  readonly basePath: string
  /** Resolves with the instance as registered (id and time given) once its node exists. */
  register(instance: ServiceInstanceInit): Promise<ServiceInstance>
  /** Writes an instance this object registered (NO_NODE for another). */
  update(instance: ServiceInstanceInit): Promise<void>
  /** Deletes the instance's node, confirmed. */
  unregister(instance: ServiceInstanceInit): Promise<void>
  registered(): ServiceInstance[]
  queryForNames(): Promise<string[]>
  queryForInstances(name: string): Promise<ServiceInstance[]>
  queryForInstance(name: string, id: string): Promise<ServiceInstance | null>
  serviceCache(name: string): ServiceCache
  serviceProvider(name: string, options?: ServiceProviderOptions): ServiceProvider
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
  on(event: 'event' | 'reregistered' | 'registration_stopped', listener: (event: DiscoveryEvent) => void): this
  on(event: 'error', listener: (err: Error) => void): this
}

/** A service's instances in memory, on one watch (Curator's ServiceCache). */
export declare class ServiceCache extends EventEmitter {
  readonly name: string
  start(): Promise<void>
  awaitInitialized(options?: { timeoutMs?: number }): Promise<void>
  instances(): ServiceInstance[]
  close(): void
  [Symbol.asyncDispose](): Promise<void>
  on(event: 'event' | 'added' | 'changed' | 'removed' | 'initialized' | 'suspended' | 'reconnected' | 'lost', listener: (event: ServiceCacheEvent) => void): this
  on(event: 'error', listener: (err: Error) => void): this
}

/** Chooses an instance to call: enabled, not down, by its strategy (Curator's ServiceProvider). */
export declare class ServiceProvider {
  readonly strategy: ProviderStrategy
  start(): Promise<void>
  /** null when no instance may be chosen. */
  getInstance(): ServiceInstance | null
  getAllInstances(): ServiceInstance[]
  /** A call to `instance` failed: counted toward taking it down. */
  noteError(instance: ServiceInstanceInit): void
  close(): void
  [Symbol.asyncDispose](): Promise<void>
}

export declare function serviceInstanceFromJson(json: Buffer | string): ServiceInstance
export declare function serviceInstanceToJson(instance: ServiceInstanceInit): Buffer
/** Spring Cloud Zookeeper's payload (its ZookeeperInstance); metadata defaults to { instance_status: 'UP' }. */
export declare function springPayload(id: string, name: string, metadata?: { [key: string]: string }): { [key: string]: Json }
export declare const SERVICE_CACHE_EVENTS: readonly string[]
export declare const DISCOVERY_EVENTS: readonly string[]
export declare const SERVICE_TYPES: readonly ServiceType[]
export declare const PROVIDER_STRATEGIES: readonly ProviderStrategy[]

// Logs: the library's events on diagnostics_channel and to an optional logger.

/** The loggers of the library's events, one per recipe; `zkrecipes.zookeeper` is the ZooKeeper session's own. */
export type LoggerName =
  | 'zkrecipes.session' | 'zkrecipes.request' | 'zkrecipes.lock' | 'zkrecipes.semaphore' | 'zkrecipes.queue'
  | 'zkrecipes.work_queue' | 'zkrecipes.election' | 'zkrecipes.latch' | 'zkrecipes.barrier' | 'zkrecipes.cache'
  | 'zkrecipes.counter' | 'zkrecipes.group' | 'zkrecipes.discovery' | 'zkrecipes.security' | 'zkrecipes.zookeeper'
/**
 * The `diagnostics_channel` names, one per logger (`zkrecipes:lock` for `zkrecipes.lock`):
 * `diagnostics_channel.subscribe('zkrecipes:lock', (message) => ...)` receives a `LogMessage`.
 */
export type LogChannelName =
  | 'zkrecipes:session' | 'zkrecipes:request' | 'zkrecipes:lock' | 'zkrecipes:semaphore' | 'zkrecipes:queue'
  | 'zkrecipes:work_queue' | 'zkrecipes:election' | 'zkrecipes:latch' | 'zkrecipes:barrier' | 'zkrecipes:cache'
  | 'zkrecipes:counter' | 'zkrecipes:group' | 'zkrecipes:discovery' | 'zkrecipes:security' | 'zkrecipes:zookeeper'
export declare const LOGGERS: readonly LoggerName[]
export declare const LOG_CHANNELS: readonly LogChannelName[]

export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace'
/** A level as `setLogLevel` takes it (any case; 'warning' is 'warn'). */
export type LogLevelSetting = LogLevel | 'off' | 'warning' | Uppercase<LogLevel | 'off' | 'warning'>

/** One event of the library, as its channel publishes it (frozen, shared by every subscriber). */
export interface LogMessage {
  readonly level: LogLevel
  readonly logger: LoggerName
  /** A sentence for people: 'lock /locks/a: acquired after waiting 3012 ms'. */
  readonly message: string
  /**
   * The structured fields: `path`, `kind`, `outcome`, `session`, `reason`, … as strings;
   * `fencing_token`, every `…_ms` duration and `…_count` count as numbers (as a string past
   * Number.MAX_SAFE_INTEGER).
   */
  readonly fields: Readonly<Record<string, string | number>>
  /** Events dropped just before this one because the event loop did not keep up. */
  readonly dropped: number
}

/**
 * A logger for the library's events. pino-like (with `child` and `levels`, as pino and bunyan):
 * called as `logger.info(fields, message)`; otherwise console-like (console, winston, …):
 * `logger.info(message, fields)`. `fields` holds the event's fields and `logger`, the
 * logger's name. Methods by level: error, warn, info, debug, and trace (debug for a
 * console-like logger); `log`, then `info`, stand in for a missing one. A logger that throws
 * loses its records (one process warning, code ZKRECIPES_LOGGER_THREW), never the delivery.
 */
export interface Logger {
  info(...args: any[]): unknown
  error?(...args: any[]): unknown
  warn?(...args: any[]): unknown
  debug?(...args: any[]): unknown
  trace?(...args: any[]): unknown
  log?(...args: any[]): unknown
  child?(...args: any[]): unknown
  levels?: unknown
}

export interface LoggingOptions {
  /** The process's logger; null removes it, undefined leaves it. */
  logger?: Logger | null
  /** setLogLevel(level) for every logger. */
  level?: LogLevelSetting
}

/**
 * The process's logger and level. Events cross from the core only while somebody listens (the
 * logger, or a channel's subscribers, looked at when a client connects, at each of these calls
 * and every second).
 */
export declare function configureLogging(options: LoggingOptions): void
/**
 * The level of the events handed to JavaScript while somebody listens (default 'info'), for every
 * logger ('zkrecipes', the default) or one (its logger or channel name). RangeError for a name
 * that is neither.
 */
export declare function setLogLevel(level: LogLevelSetting, logger?: 'zkrecipes' | LoggerName | LogChannelName): void
/** The level at which the core hands `logger`'s events to JavaScript now: 'off' while nobody listens. */
export declare function activeLogLevel(logger: LoggerName | LogChannelName): LogLevel | 'off'
/**
 * Resolves true once every event emitted before the call was published and logged; false if
 * `timeoutMs` (default 5000) passed first. For a shutdown, or a test.
 */
export declare function flushLogs(options?: WaitOptions): Promise<boolean>

// Metrics: client.metrics().

/** A duration histogram in seconds: `counts[i]` values were at most `bounds[i]` (and above the bound before); the last count is everything above the last bound. */
export declare class Histogram {
  private constructor()
  readonly count: number
  readonly sum: number
  readonly min: number
  readonly max: number
  readonly bounds: readonly number[]
  readonly counts: readonly number[]
  /** The `q` quantile (0 to 1) in seconds, interpolated within its bucket; null when nothing was recorded. INVALID_ARGUMENT outside [0, 1]. */
  quantile(q: number): number | null
}

export interface MetricPointBase {
  /** e.g. 'zkrecipes.lock.acquisitions' (the catalog's name, the same in every language). */
  readonly name: string
  /** UCUM: 's', or a count's '{acquisition}'. */
  readonly unit: string
  readonly description: string
  /** e.g. { path: '/locks/a', kind: 'lock', outcome: 'timeout' } (no `path` with metricPaths: false). */
  readonly attributes: Readonly<Record<string, string>>
}
/** One series: a metric with one set of attribute values. */
export type MetricPoint =
  | (MetricPointBase & { readonly instrument: 'counter' | 'up_down_counter'; readonly value: number })
  | (MetricPointBase & { readonly instrument: 'histogram'; readonly histogram: Histogram })

/**
 * Every series a client recorded up to `client.metrics()`. The lookups sum (or merge) the series
 * whose attributes include `attributes`; a name that is no metric of that kind, or an attribute
 * the metric does not have, is a ZkError INVALID_ARGUMENT rather than a silent 0.
 */
export declare class MetricsSnapshot {
  private constructor()
  readonly points: readonly MetricPoint[]
  /** e.g. counter('zkrecipes.lock.acquisitions', { outcome: 'timeout' }). */
  counter(name: string, attributes?: Readonly<Record<string, string>>): number
  /** An up/down counter, e.g. gauge('zkrecipes.lock.waiters'): how many wait now. */
  gauge(name: string, attributes?: Readonly<Record<string, string>>): number
  /** null when no series matched. */
  histogram(name: string, attributes?: Readonly<Record<string, string>>): Histogram | null
  /** The Prometheus text exposition format (0.0.4): `zkrecipes_lock_acquisitions_total{...} 90`. */
  toPrometheus(): string
}

// Metrics: OpenTelemetry.

/**
 * Any OpenTelemetry MeterProvider (an SDK's, or `metrics.getMeterProvider()` of
 * @opentelemetry/api), typed by what is used of it so that these types need no @opentelemetry/api.
 */
export interface OpenTelemetryMeterProvider {
  getMeter(name: string, version?: string, options?: any): any
}

export interface OpenTelemetryOptions {
  /** Default: the global one, `metrics.getMeterProvider()` of @opentelemetry/api. */
  meterProvider?: OpenTelemetryMeterProvider | null
}

/** The OpenTelemetry feed of one client: stopped by close() or when the client closes. */
export declare class OpenTelemetryInstrumentation {
  private constructor()
  /** Whether the feed has stopped (close(), or the client closed). */
  readonly closed: boolean
  /**
   * Recordings of this process that never reached a meter because the meters did not keep up
   * (the library's delivery queue or the event loop's was full): the meters are short by these.
   */
  readonly dropped: number
  /** Stops the feed: what the client records from now on never reaches the meter. Closing twice is harmless. */
  close(): void
  /**
   * Resolves true once every recording the client made before the call has been fed to the meter;
   * false if `timeoutMs` (default 5000) passed first. Then read or export the meter.
   */
  flush(options?: WaitOptions): Promise<boolean>
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * Feeds every recording of `client` to OpenTelemetry: one instrument per metric of the catalog
 * (counters, up/down counters, and histograms in seconds with the library's bucket bounds as
 * advice) on the meter 'zkrecipes' of `meterProvider`; counters and up/down counters start at the
 * client's totals so far. Needs the optional peer dependency @opentelemetry/api (an Error with code
 * ZKRECIPES_NO_OPENTELEMETRY names it when it is missing).
 */
export declare function instrumentOpenTelemetry(client: Client, options?: OpenTelemetryOptions): OpenTelemetryInstrumentation

// Tracing: OpenTelemetry spans around the waits.

/**
 * One wait that gets an OpenTelemetry span once the application registered a tracer provider
 * globally (with @opentelemetry/api, an optional peer dependency): the recipe call, the span's
 * name, the `outcome` of a wait that got what it waited for (else `timeout`, `cancelled` or
 * `error`), and the span's `kind`.
 */
export interface WaitSpan {
  /** 'lock.acquire', 'read_lock.acquire', 'write_lock.acquire', 'multi_lock.acquire', 'semaphore.acquire', 'queue.take', 'work_queue.consume', 'election.await_leadership', 'latch.await_leadership', 'barrier.wait', 'double_barrier.enter', 'double_barrier.leave'. */
  readonly call: string
  /** 'zkrecipes.lock.acquire', … */
  readonly name: string
  /** 'acquired', 'taken', 'delivered', 'leader', 'passed'. */
  readonly success: string
  /** The span's `kind` attribute: 'lock', 'read', 'write', 'multi', 'lease', 'item', 'delivery', 'leadership', 'single', 'enter', 'leave'. */
  readonly kind: string
}

/** Every wait with a span, as the core names them. */
export declare const WAIT_SPANS: readonly WaitSpan[]
