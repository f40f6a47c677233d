import zkrecipes from './index.js'

export const {
  Client, Lock, MultiLock, WriteLock, ReadWriteLock, DistributedQueue, WorkQueue, Job, Semaphore, Lease, LeaderElectionSupport,
  LeaderLatch, Barrier, DoubleBarrier, SharedCount, DistributedAtomicLong, Cache, NodeCache, ChildrenCache, TreeCache,
  PersistentNode, GroupMember, ServiceDiscovery, ServiceCache, ServiceProvider, serviceInstanceFromJson,
  serviceInstanceToJson, springPayload, SERVICE_CACHE_EVENTS, DISCOVERY_EVENTS, SERVICE_TYPES, PROVIDER_STRATEGIES, ZkError, ERROR_CODES, LOCK_EVENTS, ELECTION_EVENTS, LATCH_EVENTS, CACHE_EVENTS,
  CONNECTION_STATES, MetricsSnapshot, Histogram, instrumentOpenTelemetry, OpenTelemetryInstrumentation, configureLogging,
  setLogLevel, activeLogLevel, flushLogs, LOGGERS, LOG_CHANNELS, WAIT_SPANS,
} = zkrecipes
export default zkrecipes
