"""zkrecipes: ZooKeeper locks, read/write locks, semaphores, queues, leader election, leader
latches, barriers, counters, caches, persistent nodes, group membership and service discovery
on Curator's registry, implemented once
in Rust and shared with Node.js and Java."""

import atexit as _atexit

from . import _native
from .barrier import Barrier, DoubleBarrier
from .cache import Cache, CachedNode, ChildrenCache, NodeCache, NodeEvent, NodeStat, TreeCache
from .client import Client
from .counter import DistributedAtomicLong, SharedCount, Updated, VersionedCount
from .discovery import (
    SPRING_PAYLOAD_CLASS,
    DiscoveryEvent,
    DiscoveryEventKind,
    ProviderStrategy,
    ServiceCache,
    ServiceCacheEvent,
    ServiceCacheEventKind,
    ServiceDiscovery,
    ServiceInstance,
    ServiceProvider,
    ServiceType,
    spring_payload,
)
from .election import LeaderElectionSupport
from .errors import (
    AuthFailedError,
    BadVersionError,
    ClosedError,
    ConnectionLossError,
    TlsRefusedError,
    InternalError,
    InvalidArgumentError,
    InvalidPathError,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    NoSuchElementError,
    NotEmptyError,
    NotOwnerError,
    SessionExpiredError,
    WouldDeadlockError,
    ZkError,
    ZkInterruptedError,
    ZkTimeoutError,
)
from .events import CacheEvent, ConnectionState, ElectionEvent, Event, LatchEvent, LockEvent
from .group import GroupMember, NodeMode, PersistentNode
from .latch import LatchParticipant, LeaderLatch
from .lock import MultiLock, Participant, ReadLock, ReadWriteLock, WriteLock, WriteSide
from ._logs import LOGGERS, TRACE, flush_logs, refresh_log_levels, _install as _forward_logs
from .metrics import HistogramPoint, MetricPoint, MetricsSnapshot
from .queue import DistributedQueue
from .security import Acl, Sasl, Tls
from .semaphore import Lease, Semaphore
from .work_queue import Job, WorkQueue

__version__: str = _native.__version__

# Listeners must not run while the interpreter is being torn down.
_atexit.register(_native._shutdown)
# The library's events go to `logging`, at the levels it shows.
_forward_logs()

__all__ = [
    "DiscoveryEvent",
    "DiscoveryEventKind",
    "ProviderStrategy",
    "SPRING_PAYLOAD_CLASS",
    "ServiceCache",
    "ServiceCacheEvent",
    "ServiceCacheEventKind",
    "ServiceDiscovery",
    "ServiceInstance",
    "ServiceProvider",
    "ServiceType",
    "spring_payload",
    "Acl",
    "AuthFailedError",
    "BadVersionError",
    "Barrier",
    "Cache",
    "CacheEvent",
    "CachedNode",
    "ChildrenCache",
    "Client",
    "ClosedError",
    "ConnectionLossError",
    "TlsRefusedError",
    "ConnectionState",
    "DistributedAtomicLong",
    "DistributedQueue",
    "DoubleBarrier",
    "ElectionEvent",
    "Event",
    "GroupMember",
    "HistogramPoint",
    "InternalError",
    "InvalidArgumentError",
    "InvalidPathError",
    "Job",
    "LOGGERS",
    "LatchEvent",
    "LatchParticipant",
    "LeaderElectionSupport",
    "LeaderLatch",
    "Lease",
    "LockEvent",
    "MetricPoint",
    "MetricsSnapshot",
    "MultiLock",
    "NoAuthError",
    "NoNodeError",
    "NoSuchElementError",
    "NodeCache",
    "NodeEvent",
    "NodeExistsError",
    "NodeMode",
    "NodeStat",
    "NotEmptyError",
    "NotOwnerError",
    "Participant",
    "PersistentNode",
    "ReadLock",
    "ReadWriteLock",
    "Sasl",
    "Semaphore",
    "SessionExpiredError",
    "SharedCount",
    "TRACE",
    "Tls",
    "TreeCache",
    "Updated",
    "VersionedCount",
    "WorkQueue",
    "WouldDeadlockError",
    "WriteLock",
    "WriteSide",
    "ZkError",
    "ZkInterruptedError",
    "ZkTimeoutError",
    "flush_logs",
    "refresh_log_levels",
]
