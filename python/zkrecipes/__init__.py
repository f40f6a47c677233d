"""zkrecipes: ZooKeeper locks, read/write locks, queues and leader election,
implemented once in Rust and shared with Node.js and Java."""

import atexit as _atexit

from . import _native
from .client import Client
from .election import LeaderElectionSupport
from .errors import (
    AuthFailedError,
    BadVersionError,
    ClosedError,
    ConnectionLossError,
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
from .events import ConnectionState, ElectionEvent, Event, LockEvent
from .lock import Participant, ReadLock, ReadWriteLock, WriteLock, WriteSide
from .queue import DistributedQueue
from .security import Acl, Sasl, Tls
from .semaphore import Lease, Semaphore
from .work_queue import Job, WorkQueue

__version__: str = _native.__version__

# Listeners must not run while the interpreter is being torn down.
_atexit.register(_native._shutdown)

__all__ = [
    "Acl",
    "AuthFailedError",
    "BadVersionError",
    "Client",
    "ClosedError",
    "ConnectionLossError",
    "ConnectionState",
    "DistributedQueue",
    "ElectionEvent",
    "Event",
    "InternalError",
    "InvalidArgumentError",
    "InvalidPathError",
    "Job",
    "LeaderElectionSupport",
    "Lease",
    "LockEvent",
    "NoAuthError",
    "NoNodeError",
    "NoSuchElementError",
    "NodeExistsError",
    "NotEmptyError",
    "NotOwnerError",
    "Participant",
    "ReadLock",
    "ReadWriteLock",
    "Sasl",
    "Semaphore",
    "SessionExpiredError",
    "Tls",
    "WorkQueue",
    "WouldDeadlockError",
    "WriteLock",
    "WriteSide",
    "ZkError",
    "ZkInterruptedError",
    "ZkTimeoutError",
]
