"""The ZooKeeper client that every recipe object shares."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _native
from ._base import Closing, Listened
from ._logs import refresh_log_levels
from .barrier import Barrier, DoubleBarrier
from .cache import ChildrenCache, NodeCache, TreeCache
from .counter import DistributedAtomicLong, SharedCount
from .discovery import ServiceDiscovery
from .election import LeaderElectionSupport
from .errors import ZkError, _from_native
from .events import ConnectionState, connection_state
from .group import Data, GroupMember, NodeMode, PersistentNode
from .latch import LeaderLatch
from .lock import MultiLock, ReadWriteLock, WriteLock
from .metrics import MetricsSnapshot
from .queue import DistributedQueue
from .security import AclPolicy, Sasl, Tls, _settings
from .semaphore import Semaphore
from .work_queue import WorkQueue


def _keywords(given: Dict[str, Any]) -> Dict[str, object]:
    """``Client(...)``'s keywords (``locals()`` of ``__init__`` or ``connect_async``) as the
    native connect takes them: the security settings made one."""
    keywords: Dict[str, object] = {
        name: given[name]
        for name in ("connect_string", "session_timeout", "connect_timeout", "auth", "identity", "metric_paths")
    }
    keywords["security"] = _settings(given["tls"], given["sasl"], given["acl"])
    return keywords


class Client(Closing, Listened[ConnectionState]):
    """One ZooKeeper session (renewed by itself after expiry), shared by recipes.

    ``Client("zk1:2181,zk2:2181/chroot")`` connects and blocks until connected
    or ``connect_timeout`` passes (``ConnectionLossError``). In asyncio code use
    ``await Client.connect_async(...)``. ``close()`` ends the session: held
    locks are released, election offers withdrawn and latches closed.

    ``tls=Tls(ca=..., cert=..., key=...)`` connects over TLS, ``sasl=Sasl.digest_md5(...)`` or
    ``Sasl.gssapi()`` authenticates, and ``acl`` sets the ACL of every node the recipes create
    (``"open"`` by default without credentials, ``"creator"`` with any).

    ``metrics()`` tells what the client has recorded (waits, holds, outcomes, requests, state
    changes); ``metric_paths=False`` leaves the recipes' paths out of those numbers (for
    applications with many or unbounded paths). Events go to the standard ``logging`` module, on
    the loggers ``zkrecipes.lock``, ``zkrecipes.session``, … (see ``zkrecipes.refresh_log_levels``).

    Listeners hear every connection state change (``ConnectionState``).
    """

    _event_of = staticmethod(connection_state)

    def __init__(
        self,
        connect_string: str,
        *,
        session_timeout: float = _native.DEFAULT_SESSION_TIMEOUT,
        connect_timeout: float = _native.DEFAULT_CONNECT_TIMEOUT,
        auth: Optional[Tuple[str, str]] = None,
        identity: Optional[str] = None,
        tls: Optional[Tls] = None,
        sasl: Optional[Sasl] = None,
        acl: Optional[AclPolicy] = None,
        metric_paths: bool = True,
    ) -> None:
        """Connects (blocking, up to ``connect_timeout`` seconds); ``ConnectionLossError`` if no server answers."""
        refresh_log_levels()
        self._native = _native.NativeClient.connect(_keywords(locals()))

    @classmethod
    async def connect_async(
        cls,
        connect_string: str,
        *,
        session_timeout: float = _native.DEFAULT_SESSION_TIMEOUT,
        connect_timeout: float = _native.DEFAULT_CONNECT_TIMEOUT,
        auth: Optional[Tuple[str, str]] = None,
        identity: Optional[str] = None,
        tls: Optional[Tls] = None,
        sasl: Optional[Sasl] = None,
        acl: Optional[AclPolicy] = None,
        metric_paths: bool = True,
    ) -> Client:
        """Connects without blocking the event loop: ``await Client.connect_async("zk1:2181/app")``."""
        refresh_log_levels()
        client = cls.__new__(cls)
        client._native = await _native.NativeClient.connect_async(_keywords(locals()))
        return client

    @property
    def state(self) -> ConnectionState:
        """The current ``ConnectionState`` (``CONNECTED``, ``SUSPENDED``, ``RECONNECTED``, ``LOST``, ``CLOSED``)."""
        return ConnectionState(self._native.state())

    @property
    def session_id(self) -> int:
        """The current session's id; ``ClosedError`` once closed."""
        return self._native.session_id()

    @property
    def identity(self) -> str:
        """Written into lock and election nodes (default: the host name)."""
        return self._native.identity()

    @property
    def is_tls(self) -> bool:
        """Whether the session runs over TLS."""
        return self._native.is_tls()

    @property
    def authenticated_as(self) -> List[str]:
        """The identities the server authenticated this session as (``["sasl:alice", "x509:CN=app"]``)."""
        return self._native.authenticated_as()

    @property
    def session_error(self) -> Optional[ZkError]:
        """Why there is no session after ``LOST``: the server's refusal of the last attempt at a
        new one (a rotated password, an expired ticket or certificate), ``None`` once one succeeds."""
        err = self._native.session_error()
        return None if err is None else _from_native(*err)

    def whoami(self) -> List[str]:
        """Asks the server for this session's identities now (after a certificate rotation, say)."""
        return self._native.whoami()

    def metrics(self) -> MetricsSnapshot:
        """What this client has recorded so far, every number of the catalog (also after
        ``close()``): ``client.metrics().counter("zkrecipes.lock.acquisitions", outcome="timeout")``,
        ``.gauge(...)``, ``.histogram(...)``, ``.points``, ``.to_prometheus()``."""
        return self._native.metrics()

    def write_lock(self, dir: str) -> WriteLock:
        """A ``WriteLock`` on ``dir`` (Apache's and Curator's lock nodes)."""
        return WriteLock(self, dir)

    def multi_lock(self, dirs: Sequence[str]) -> MultiLock:
        """A ``MultiLock`` over ``dirs``: every lock or none (Curator's ``InterProcessMultiLock``)."""
        return MultiLock(self, dirs)

    def read_write_lock(self, dir: str) -> ReadWriteLock:
        """A ``ReadWriteLock`` on ``dir`` (Curator's read/write lock nodes)."""
        return ReadWriteLock(self, dir)

    def queue(self, dir: str) -> DistributedQueue:
        """A ``DistributedQueue`` on ``dir`` (Apache's queue nodes)."""
        return DistributedQueue(self, dir)

    def work_queue(self, path: str, *, prefetch: int = 1, max_deliveries: Optional[int] = None) -> WorkQueue:
        """A ``WorkQueue`` under ``path`` (kazoo's ``LockingQueue`` nodes): at-least-once jobs."""
        return WorkQueue(self, path, prefetch=prefetch, max_deliveries=max_deliveries)

    def semaphore(self, path: str, max_leases: int) -> Semaphore:
        """A ``Semaphore`` of ``max_leases`` leases at ``path`` (Curator's ``InterProcessSemaphoreV2`` nodes)."""
        return Semaphore(self, path, max_leases)

    def leader_election(self, root: str, host_name: Optional[str] = None) -> LeaderElectionSupport:
        """A ``LeaderElectionSupport`` member under ``root``; ``host_name`` defaults to the client's identity."""
        return LeaderElectionSupport(self, root, host_name)

    def leader_latch(self, path: str, id: Optional[str] = None) -> LeaderLatch:
        """A ``LeaderLatch`` participant at ``path`` (Curator's ``LeaderLatch`` nodes); ``id``
        defaults to the client's identity. Start it, or ``with client.leader_latch(path) as latch:``."""
        return LeaderLatch(self, path, id)

    def barrier(self, path: str) -> Barrier:
        """A ``Barrier`` at ``path`` (Curator's ``DistributedBarrier`` node)."""
        return Barrier(self, path)

    def double_barrier(self, path: str, member_count: int) -> DoubleBarrier:
        """A ``DoubleBarrier`` member at ``path`` for ``member_count`` members (Curator's
        ``DistributedDoubleBarrier`` nodes)."""
        return DoubleBarrier(self, path, member_count)

    def shared_count(self, path: str, seed: int = 0) -> SharedCount:
        """A ``SharedCount`` at ``path`` (Curator's ``SharedCount`` node, kazoo's
        ``Counter(support_curator=True)``), ``seed`` when created. Start it, or ``with
        client.shared_count(path) as count:``."""
        return SharedCount(self, path, seed)

    def atomic_long(self, path: str) -> DistributedAtomicLong:
        """A ``DistributedAtomicLong`` at ``path`` (Curator's ``DistributedAtomicLong`` node)."""
        return DistributedAtomicLong(self, path)

    def node_cache(self, path: str) -> NodeCache:
        """A ``NodeCache`` of the node at ``path`` (Curator's ``NodeCache``). Start it, or
        ``with client.node_cache(path) as cache:``."""
        return NodeCache(self, path)

    def children_cache(self, path: str) -> ChildrenCache:
        """A ``ChildrenCache`` of the children of ``path`` (Curator's ``PathChildrenCache``)."""
        return ChildrenCache(self, path)

    def tree_cache(self, path: str, max_depth: Optional[int] = None) -> TreeCache:
        """A ``TreeCache`` of the subtree at ``path``, ``max_depth`` levels deep (``None``: all;
        Curator's ``TreeCache``)."""
        return TreeCache(self, path, max_depth)

    def persistent_node(self, path: str, data: Data = b"", mode: Union[NodeMode, str] = NodeMode.EPHEMERAL) -> PersistentNode:
        """A ``PersistentNode`` at ``path`` (Curator's ``PersistentNode``): created again after
        every delete or new session until closed. ``mode`` is a ``NodeMode`` or its name
        (``"persistent"``)."""
        return PersistentNode(self, path, data, mode)

    def group_member(self, group: str, id: str, payload: Data = b"") -> GroupMember:
        """A ``GroupMember`` ``id`` of the group at ``group`` (Curator's ``GroupMember`` nodes).
        Start it, or ``with client.group_member(group, id) as member:``."""
        return GroupMember(self, group, id, payload)

    def service_discovery(self, base_path: str = "/services") -> ServiceDiscovery:
        """Curator's service registry at ``base_path`` (Spring Cloud Zookeeper's default): register,
        query, cache and choose instances. Close it, or ``with client.service_discovery() as registry:``."""
        return ServiceDiscovery(self, base_path)

    def close(self) -> None:
        """Ends the session: held locks are released, election offers withdrawn. Closing twice is harmless."""
        self._native.close()

    def __repr__(self) -> str:
        return f"<zkrecipes.Client {self.state.value}>"

