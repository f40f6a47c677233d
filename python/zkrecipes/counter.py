"""Shared counters on Curator's layouts: ``DistributedAtomicLong`` (one node of 8 bytes) and
``SharedCount`` (4 bytes; also kazoo's ``Counter(support_curator=True)``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Tuple

from . import _native
from ._base import Listened, Started
from ._args import _client, _int
from .errors import ZkError

if TYPE_CHECKING:
    from .client import Client


@dataclass(frozen=True)
class Updated:
    """What an atomic long's update saw (``pre_value``) and wrote (``post_value``)."""

    pre_value: int
    post_value: int


@dataclass(frozen=True)
class VersionedCount:
    """A shared count's value with the node version it was read at: what ``try_set`` writes over."""

    value: int
    version: int


class DistributedAtomicLong:
    """A 64-bit counter at ``path`` (Curator's ``DistributedAtomicLong`` node: 8 bytes, big-endian),
    shared with Curator's and every other zkrecipes process.

    Every update is one versioned write repeated until it applies, so N increments from any mix
    of clients end at exactly N; overflow wraps as Java's ``long`` does. A missing or empty node
    reads as 0; a node of another length is ``InvalidArgumentError`` (naming the length).
    ``ConnectionLossError`` means the connection dropped while a write was on its way and the
    value changed meanwhile: that update may or may not have been applied (it is never applied
    twice). An update interrupted by Ctrl-C or a cancelled await may likewise have been applied.
    """

    def __init__(self, client: Client, path: str) -> None:
        """The counter at ``path``, created by the first write; nothing is sent until a method is called."""
        self._native = _native.NativeAtomicLong(_client(client), path)

    @property
    def path(self) -> str:
        """The counter's node."""
        return self._native.path()

    def get(self) -> int:
        """The value on the server now (0 while the node does not exist)."""
        return self._native.get()

    async def get_async(self) -> int:
        """``get`` without blocking the event loop."""
        return await self._native.get_async()

    def increment(self) -> Updated:
        """Adds 1."""
        return Updated(*self._native.increment())

    async def increment_async(self) -> Updated:
        """``increment`` without blocking the event loop."""
        return Updated(*await self._native.increment_async())

    def decrement(self) -> Updated:
        """Subtracts 1."""
        return Updated(*self._native.decrement())

    async def decrement_async(self) -> Updated:
        """``decrement`` without blocking the event loop."""
        return Updated(*await self._native.decrement_async())

    def add(self, delta: int) -> Updated:
        """Adds ``delta`` (a 64-bit int, ``OverflowError`` otherwise) atomically."""
        return Updated(*self._native.add(_int("delta", delta)))

    async def add_async(self, delta: int) -> Updated:
        """``add`` without blocking the event loop."""
        return Updated(*await self._native.add_async(_int("delta", delta)))

    def compare_and_set(self, expected: int, new: int) -> bool:
        """Writes ``new`` if the value is ``expected`` now; ``False`` (nothing written) otherwise."""
        return self._native.compare_and_set(_int("expected", expected), _int("new", new))

    async def compare_and_set_async(self, expected: int, new: int) -> bool:
        """``compare_and_set`` without blocking the event loop."""
        return await self._native.compare_and_set_async(_int("expected", expected), _int("new", new))

    def force_set(self, value: int) -> None:
        """Writes ``value`` whatever the value was (Curator's ``forceSet``)."""
        self._native.force_set(_int("value", value))

    async def force_set_async(self, value: int) -> None:
        """``force_set`` without blocking the event loop."""
        await self._native.force_set_async(_int("value", value))

    def __repr__(self) -> str:
        return f"<DistributedAtomicLong {self.path}>"


def _versioned(value: int, version: int) -> VersionedCount:
    return VersionedCount(value, version)


class SharedCount(Started, Listened[VersionedCount]):
    """A 32-bit count at ``path`` (Curator's ``SharedCount`` node: 4 bytes, big-endian; kazoo's
    ``Counter(support_curator=True)``), cached here and followed by a watch.

    ``start()`` creates the node with ``seed`` if it is missing (never overwriting a value) and
    reads it; from then on ``count`` is the newest value this process saw (read again after every
    change, reconnect and new session, never replaced by an older one), and listeners hear every
    value it takes. ``close()`` ends it for good, as Curator's (every call after it raises
    ``ClosedError``); or ``with client.shared_count(path) as count:``. A node kazoo created empty reads as the seed; a node
    of another length than 4 is ``InvalidArgumentError`` (naming the length). ``set`` is
    unconditional; ``try_set(expected, value)`` writes only over the version ``expected`` was
    read at and answers ``False`` when another write came first. ``ConnectionLossError`` from
    ``try_set`` or ``add`` means the write's outcome is unknown; an update interrupted by
    Ctrl-C or a cancelled await may have been applied too.

    Listeners hear every value the count takes from now on, in order: writes seen by the watch,
    this object's own writes, and the first read of ``start()`` if added before it. Values
    written in quick succession may reach it as only the newest.
    """

    _event_of = staticmethod(_versioned)

    def __init__(self, client: Client, path: str, seed: int = 0) -> None:
        """The count at ``path``, ``seed`` (a 32-bit int) when the node is created or empty; not
        started yet."""
        self._native = _native.NativeSharedCount(_client(client), path, _int("seed", seed))

    @property
    def path(self) -> str:
        """The count's node."""
        return self._native.path()

    def start(self) -> None:
        """Creates the node with the seed if it is missing, reads it and follows it. Starting a
        started count does nothing more; a closed one raises ``ClosedError``."""
        self._native.start()

    async def start_async(self) -> None:
        """``start`` without blocking the event loop."""
        await self._native.start_async()

    def close(self) -> None:
        """Stops following the node, at once and for good: every call after it raises
        ``ClosedError`` (an update already on its way finishes). Idempotent."""
        self._native.close()

    async def close_async(self) -> None:
        """``close`` (which never waits for the server here)."""
        self.close()

    @property
    def count(self) -> int:
        """The newest value seen (no request). ``InvalidArgumentError`` before ``start()``,
        ``ClosedError`` after ``close()`` (with only its client closed, the last value seen)."""
        return self._native.get()

    def get(self) -> int:
        """``count``, as a method (Curator's ``getCount``)."""
        return self._native.get()

    def versioned(self) -> VersionedCount:
        """``count`` with the node version it was read at, for ``try_set``."""
        return VersionedCount(*self._native.versioned())

    def read(self) -> int:
        """The value on the server now (one request, no start needed, nothing created): the
        seed while the node is missing or empty."""
        return self._native.read()

    async def read_async(self) -> int:
        """``read`` without blocking the event loop."""
        return await self._native.read_async()

    def set(self, value: int) -> None:
        """Writes ``value`` (a 32-bit int, ``OverflowError`` otherwise) whatever the count is."""
        self._native.set(_int("value", value))

    async def set_async(self, value: int) -> None:
        """``set`` without blocking the event loop."""
        await self._native.set_async(_int("value", value))

    def try_set(self, expected: VersionedCount, value: int) -> bool:
        """Writes ``value`` only if the node is still at ``expected``'s version (from
        ``versioned()``); ``False`` otherwise, ``count`` then holding the newer value."""
        return self._native.try_set(_expected(expected), _int("value", value))

    async def try_set_async(self, expected: VersionedCount, value: int) -> bool:
        """``try_set`` without blocking the event loop."""
        return await self._native.try_set_async(_expected(expected), _int("value", value))

    def add(self, delta: int) -> VersionedCount:
        """Adds ``delta`` (wrapping as Java's ``int``) with versioned writes repeated until one
        applies: N adds from any clients end exact. The value written and its version."""
        return VersionedCount(*self._native.add(_int("delta", delta)))

    async def add_async(self, delta: int) -> VersionedCount:
        """``add`` without blocking the event loop."""
        return VersionedCount(*await self._native.add_async(_int("delta", delta)))

    def __repr__(self) -> str:
        try:
            seen = self.versioned()
        except ZkError:
            return f"<SharedCount {self.path} not started>"
        return f"<SharedCount {self.path} {seen.value} (version {seen.version})>"


def _expected(expected: Any) -> Tuple[int, int]:
    """``(value, version)`` of a ``VersionedCount``, as the native module takes it."""
    if not isinstance(expected, VersionedCount):
        raise TypeError(f"expected must be a VersionedCount (from versioned()), got {type(expected).__name__}")
    return (_int("expected.value", expected.value), _int("expected.version", expected.version))
