"""Caches of a node, of a node's children or of a subtree (Curator's ``NodeCache``,
``PathChildrenCache`` and ``TreeCache``): a local copy kept in sync by one watch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, Optional, Tuple, TypeVar

from . import _native
from ._base import Listened, Started
from ._args import _client, _timeout
from .events import CacheEvent, _OfKind

if TYPE_CHECKING:
    from .client import Client


@dataclass(frozen=True)
class NodeStat:
    """A node's ``Stat`` as the server sent it (zxids, times in ms since the epoch, versions)."""

    czxid: int
    mzxid: int
    pzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    data_length: int
    num_children: int


@dataclass(frozen=True)
class CachedNode:
    """What a cache holds of one node (Curator's ``ChildData``): its path, data and stat."""

    path: str
    data: bytes
    stat: NodeStat

    @property
    def name(self) -> str:
        """The last part of the path (a member's id, a child's name)."""
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True, eq=False)
class NodeEvent(_OfKind):
    """What a cache or group member listener receives.

    ``kind`` is the event (``CacheEvent.CREATED``); ``node`` is the node as it is now
    (``CREATED``, ``CHANGED``) or was (``DELETED``), ``old`` the node before a ``CHANGED``;
    both are ``None`` for ``INITIALIZED`` and the connection events. An event equals its kind
    and its name: ``event == CacheEvent.DELETED``, ``event == "DELETED"``.
    """

    kind: CacheEvent
    node: Optional[CachedNode] = None
    old: Optional[CachedNode] = None

    @property
    def name(self) -> str:
        """The kind's name, the same in every language (``"CREATED"``)."""
        return self.kind.value

    def __str__(self) -> str:
        return self.kind.value if self.node is None else f"{self.kind.value} {self.node.path}"


# What the native module passes: (path, data, the stat's fields in order).
_NodeRow = Tuple[str, bytes, Tuple[int, ...]]


def _node(row: Optional[_NodeRow]) -> Optional[CachedNode]:
    if row is None:
        return None
    path, data, stat = row
    return CachedNode(path, data, NodeStat(*stat))


def node_event(name: str, node: Optional[_NodeRow], old: Optional[_NodeRow]) -> NodeEvent:
    """How the native module's ``(name, node, old)`` becomes what a listener gets."""
    return NodeEvent(CacheEvent(name), _node(node), _node(old))


C = TypeVar("C", bound="Cache")


class Cache(Started, Listened[NodeEvent]):
    """A local copy of part of the tree, kept in sync by one watch (a persistent recursive
    watch on ZooKeeper 3.6+, ordinary watches on older servers); ``NodeCache``,
    ``ChildrenCache`` and ``TreeCache`` say which part.

    ``start()`` returns once the first load is in the copy; from then on ``get``, ``snapshot``,
    ``children``, ``len()`` and ``in`` answer from memory, with no request. After every
    reconnect and every new session the part is read again and listeners hear exactly the
    difference (a node deleted and re-created meanwhile is a ``DELETED`` and a ``CREATED``),
    after ``SUSPENDED`` and ``LOST`` and before ``RECONNECTED``: between those the copy may be
    behind. Changes that undo themselves between two reads are not seen. Nothing is created: a
    missing node is an empty cache until it appears. ``close()`` stops following and frees the
    copy (a closed cache is empty and cannot start again); or ``with client.tree_cache(path) as
    cache:``. A start interrupted by Ctrl-C or a cancelled await leaves the cache loading
    (``await_initialized`` waits for it); a cache garbage collected stops following.

    Listeners hear every change of the copy from now on, in order: ``CREATED``, ``CHANGED``
    (with ``old``), ``DELETED``, ``INITIALIZED`` once the first load is in (add the listener
    before ``start()`` to hear a ``CREATED`` for every node of it), and ``SUSPENDED``, ``LOST``,
    ``RECONNECTED``. No event is dropped, however slow ``fn`` is.
    """

    _event_of = staticmethod(node_event)

    def __init__(self, native: _native.NativeCache) -> None:
        """Made by ``NodeCache``, ``ChildrenCache`` and ``TreeCache`` (or ``client.node_cache``
        and the like), not directly."""
        self._native = native

    @property
    def path(self) -> str:
        """The cached node (of a ``ChildrenCache``, the parent of the cached nodes)."""
        return self._native.path()

    @property
    def is_initialized(self) -> bool:
        """Whether the first load is in the copy."""
        return self._native.is_initialized()

    def start(self) -> None:
        """Starts following and returns once the first load is in the copy; starting again only
        waits for that load. ``ClosedError`` once closed; the server's error (``NoAuthError``)
        if the node cannot be read."""
        self._native.start()

    async def start_async(self) -> None:
        """``start`` without blocking the event loop."""
        await self._native.start_async()

    def await_initialized(self, timeout: Optional[float] = None) -> None:
        """Waits until the first load is in the copy; ``ZkTimeoutError`` after ``timeout``
        seconds (``None`` or ``-1``: forever). Ctrl-C interrupts the wait."""
        self._native.await_initialized(_timeout(timeout))

    async def await_initialized_async(self, timeout: Optional[float] = None) -> None:
        """``await_initialized`` without blocking the event loop."""
        await self._native.await_initialized_async(_timeout(timeout))

    def close(self) -> None:
        """Stops following and frees the copy, at once; listeners hear nothing more (what was
        already on its way to them may still arrive). Idempotent."""
        self._native.close()

    async def close_async(self) -> None:
        """``close`` (which never waits for the server here)."""
        self.close()

    def get(self, path: str) -> Optional[CachedNode]:
        """The cached node at ``path``; ``None`` if it is not cached or outside the cache."""
        return _node(self._native.get(_path(path)))

    def snapshot(self) -> List[CachedNode]:
        """Every cached node, sorted by path."""
        return [CachedNode(p, d, NodeStat(*s)) for p, d, s in self._native.snapshot()]

    def children(self, path: Optional[str] = None) -> List[str]:
        """The names of the cached children of ``path`` (default: the cache's path), sorted."""
        return self._native.children_of(self.path if path is None else _path(path))

    def __len__(self) -> int:
        """How many nodes are cached."""
        return self._native.len()

    def __contains__(self, path: object) -> bool:
        """Whether the node at ``path`` is cached."""
        return isinstance(path, str) and self._native.contains(path)

    def __repr__(self) -> str:
        state = f"{len(self)} cached" if self.is_initialized else "not loaded"
        return f"<{type(self).__name__} {self.path} {state}>"


class NodeCache(Cache):
    """A cache of the node at ``path`` alone (Curator's ``NodeCache``)."""

    def __init__(self, client: Client, path: str) -> None:
        """Nothing is sent before ``start()``."""
        super().__init__(_native.NativeCache.node(_client(client), path))

    @property
    def node(self) -> Optional[CachedNode]:
        """The node as cached now, ``None`` while it does not exist (Curator's ``getCurrentData``)."""
        return self.get(self.path)


class ChildrenCache(Cache):
    """A cache of the children of ``path`` with their data, not of ``path`` itself (Curator's
    ``PathChildrenCache``)."""

    def __init__(self, client: Client, path: str) -> None:
        """Nothing is sent before ``start()``."""
        super().__init__(_native.NativeCache.children(_client(client), path))


class TreeCache(Cache):
    """A cache of the node at ``path`` and its descendants down to ``max_depth`` levels below
    it (``None``: all of them; 0: the node alone) (Curator's ``TreeCache``)."""

    def __init__(self, client: Client, path: str, max_depth: Optional[int] = None) -> None:
        """Nothing is sent before ``start()``."""
        super().__init__(_native.NativeCache.tree(_client(client), path, _depth(max_depth)))


def _path(path: Any) -> str:
    if not isinstance(path, str):
        raise TypeError(f"path must be a str, got {type(path).__name__}")
    return path


def _depth(max_depth: Any) -> Optional[int]:
    """A depth as the native module takes it: only the type is checked here; the core decides
    the range (``InvalidArgumentError``)."""
    if max_depth is None:
        return None
    if isinstance(max_depth, bool) or not isinstance(max_depth, int):
        raise TypeError(f"max_depth must be an int or None, got {type(max_depth).__name__}")
    return max_depth
