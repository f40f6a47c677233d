'use strict'
// zkrecipes for Node.js: the public API over the native addon (native.js).
// Every recipe decision is made in the Rust core; this file adds what a Node
// user expects: Promises, EventEmitters, ZkError codes, TypeErrors, disposal.

const { NAMES, ZkError, ERROR_CODES } = require('./lib/base.js')
const { Client } = require('./lib/client.js')
const { Lock, MultiLock, WriteLock, ReadWriteLock } = require('./lib/lock.js')
const { DistributedQueue } = require('./lib/queue.js')
const { WorkQueue, Job } = require('./lib/work_queue.js')
const { Semaphore, Lease } = require('./lib/semaphore.js')
const { LeaderElectionSupport } = require('./lib/election.js')
const { LeaderLatch } = require('./lib/latch.js')
const { Barrier, DoubleBarrier } = require('./lib/barrier.js')
const { SharedCount, DistributedAtomicLong } = require('./lib/counter.js')
const { Cache, NodeCache, ChildrenCache, TreeCache } = require('./lib/cache.js')
const { PersistentNode, GroupMember } = require('./lib/group.js')
const { ServiceCache, ServiceDiscovery, ServiceProvider, serviceInstanceFromJson, serviceInstanceToJson, springPayload } = require('./lib/discovery.js')
const { LOGGERS, LOG_CHANNELS, activeLogLevel, configureLogging, flushLogs, setLogLevel } = require('./lib/logging.js')
const { Histogram, MetricsSnapshot } = require('./lib/metrics.js')
const { OpenTelemetryInstrumentation, instrumentOpenTelemetry } = require('./lib/opentelemetry.js')
const { WAIT_SPANS } = require('./lib/wait_spans.js')

module.exports = {
  Client,
  Lock,
  MultiLock,
  WriteLock,
  ReadWriteLock,
  DistributedQueue,
  WorkQueue,
  Job,
  Semaphore,
  Lease,
  LeaderElectionSupport,
  LeaderLatch,
  Barrier,
  DoubleBarrier,
  SharedCount,
  DistributedAtomicLong,
  Cache,
  NodeCache,
  ChildrenCache,
  TreeCache,
  PersistentNode,
  GroupMember,
  ServiceDiscovery,
  ServiceCache,
  ServiceProvider,
  serviceInstanceFromJson,
  serviceInstanceToJson,
  springPayload,
  ZkError,
  ERROR_CODES,
  MetricsSnapshot,
  Histogram,
  instrumentOpenTelemetry,
  OpenTelemetryInstrumentation,
  WAIT_SPANS,
  configureLogging,
  setLogLevel,
  activeLogLevel,
  flushLogs,
  LOGGERS,
  LOG_CHANNELS,
  LOCK_EVENTS: Object.freeze(NAMES.lockEvents),
  ELECTION_EVENTS: Object.freeze(NAMES.electionEvents),
  LATCH_EVENTS: Object.freeze(NAMES.latchEvents),
  CACHE_EVENTS: Object.freeze(NAMES.cacheEvents),
  CONNECTION_STATES: Object.freeze(NAMES.connectionStates),
  SERVICE_CACHE_EVENTS: Object.freeze(NAMES.serviceCacheEvents),
  DISCOVERY_EVENTS: Object.freeze(NAMES.discoveryEvents),
  SERVICE_TYPES: Object.freeze(NAMES.serviceTypes),
  PROVIDER_STRATEGIES: Object.freeze(NAMES.providerStrategies),
}
