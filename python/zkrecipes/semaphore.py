"""A counting semaphore with leases, on Curator's ``InterProcessSemaphoreV2`` layout."""

from __future__ import annotations

from contextvars import ContextVar
from types import TracebackType
from typing import TYPE_CHECKING, List, Optional, Tuple, Type

from . import _native
from ._args import _client, _count, _timeout
from ._base import Listened, _told_beside
from ._spans import traced, traced_async, wait_span
from .errors import NotOwnerError
from .events import Event, LockEvent, lock_event

if TYPE_CHECKING:
    from .client import Client


# The leases of the `with` blocks a thread or asyncio task is in, innermost last: each block
# releases its own lease on the way out, not another thread's.
_ENTERED: ContextVar[Tuple[Tuple[int, "Lease"], ...]] = ContextVar("zkrecipes_semaphore_entered", default=())

_ACQUIRE = wait_span("semaphore.acquire")


def _first_token(leases: List[_native.NativeLease]) -> int:
    """The fencing token of an acquire's span: its first lease's, as the core's own span says."""
    return leases[0].fencing_token()


class Lease:
    """One held lease: its fencing token, its node, and its release (once).

    A lease nobody releases is released when it is garbage collected; release it yourself, or
    use it as a context manager.
    """

    __slots__ = ("_native", "__weakref__")

    def __init__(self, native: _native.NativeLease) -> None:
        """Made by ``Semaphore.acquire``."""
        self._native = native

    @property
    def fencing_token(self) -> int:
        """The czxid of the lease's node: pass it to the resource you protect."""
        return self._native.fencing_token()

    @property
    def node_path(self) -> str:
        """The lease's node, ``<path>/leases/_c_<uuid>-lease-<seq>``."""
        return self._native.node_path()

    @property
    def is_held(self) -> bool:
        """Not released and not lost (a ``LOST`` event tells when it is lost)."""
        return self._native.is_held()

    def release(self) -> None:
        """Deletes the lease's node and returns once the server confirmed it.

        Raises the loss's error if the lease was lost before (``SessionExpiredError``,
        ``NoNodeError``), and ``NotOwnerError`` for a second release.
        """
        self._native.release()

    async def release_async(self) -> None:
        """``release`` without blocking the event loop."""
        await self._native.release_async()

    def __enter__(self) -> Lease:
        """The lease itself; leaving the block releases it."""
        return self

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """Releases; a failing release never replaces an exception raised in the block."""
        with _told_beside(exc, self.node_path):
            self._release_unless_released()

    def _release_unless_released(self) -> None:
        # A lease the block released itself is done with: leaving the block then is no second
        # release (as Java's try-with-resources and Node's dispose), while a lost one still says so.
        try:
            self.release()
        except NotOwnerError:
            pass

    async def _release_unless_released_async(self) -> None:
        try:
            await self.release_async()
        except NotOwnerError:
            pass

    def __repr__(self) -> str:
        state = "held" if self.is_held else "not held"
        return f"<Lease {self.node_path} token {self.fencing_token} {state}>"


class Semaphore(Listened[Event[LockEvent]]):
    """At most ``max_leases`` leases held at once among every process on ``path``, Curator's
    ``InterProcessSemaphoreV2`` included.

    Like ``threading.Semaphore``: ``acquire()`` then ``release()``, or ``with semaphore:``
    (``async with`` for asyncio). ``acquire`` returns the ``Lease`` itself (true) or ``None``
    (false), so ``if semaphore.acquire(timeout=1):`` reads as it does for threading.

    Listeners hear each lease of this object: ``ACQUIRED`` (with its token), ``RELEASED``,
    ``SUSPENDED`` (connection dropped: stop using the resource), ``RECONNECTED`` and ``LOST``
    (with the reason; the lease is no longer held).
    """

    _event_of = staticmethod(lock_event)

    def __init__(self, client: Client, path: str, max_leases: int) -> None:
        """A semaphore of ``max_leases`` leases at ``path`` (created on first use)."""
        self._native = _native.NativeSemaphore(_client(client), path, _count("max_leases", max_leases))

    @property
    def path(self) -> str:
        """The semaphore's path (its mutex under ``locks``, its leases under ``leases``)."""
        return self._native.path()

    @property
    def max_leases(self) -> int:
        """How many leases this process allows at once (Curator does not check that processes agree)."""
        return self._native.max_leases()

    @property
    def held(self) -> int:
        """How many leases this object holds now (not released, not lost)."""
        return self._native.held()

    def acquire(self, blocking: bool = True, timeout: Optional[float] = None) -> Optional[Lease]:
        """One lease, or ``None`` if not obtained within ``timeout`` seconds (``None`` or ``-1``:
        wait forever; ``0`` or ``blocking=False``: a try). Whenever the deadline passes, nothing
        of this call is left on the server. Ctrl-C interrupts the wait and withdraws it."""
        leases = self.acquire_many(1, blocking, timeout)
        return leases[0] if leases else None

    def acquire_many(self, count: int, blocking: bool = True, timeout: Optional[float] = None) -> Optional[List[Lease]]:
        """``count`` leases, all or none (``InvalidArgumentError`` for 0 or more than
        ``max_leases``)."""
        n, seconds = _count("count", count), _timeout(timeout)
        leases = traced(_ACQUIRE, self._native.path, lambda: self._native.acquire(n, blocking, seconds), _first_token)
        return self._wrap(leases)

    async def acquire_async(self, blocking: bool = True, timeout: Optional[float] = None) -> Optional[Lease]:
        """Awaitable ``acquire``; cancelling the awaiting task withdraws the attempt."""
        leases = await self.acquire_many_async(1, blocking, timeout)
        return leases[0] if leases else None

    async def acquire_many_async(
        self, count: int, blocking: bool = True, timeout: Optional[float] = None
    ) -> Optional[List[Lease]]:
        """Awaitable ``acquire_many``."""
        n, seconds = _count("count", count), _timeout(timeout)
        leases = await traced_async(
            _ACQUIRE, self._native.path, lambda: self._native.acquire_async(n, blocking, seconds), _first_token
        )
        return self._wrap(leases)

    def release(self) -> None:
        """Releases the oldest lease this object holds, whoever took it (as
        ``threading.Semaphore.release`` gives a permit back). ``NotOwnerError`` if it holds none.
        To give back a particular lease, call its ``release()``."""
        self._native.release_one()

    async def release_async(self) -> None:
        """``release`` without blocking the event loop."""
        await self._native.release_one_async()

    def release_all(self) -> None:
        """Releases every lease this object holds (a service shutting down)."""
        self._native.release_all()

    async def release_all_async(self) -> None:
        """``release_all`` without blocking the event loop."""
        await self._native.release_all_async()

    def lease_nodes(self) -> List[str]:
        """The lease nodes on the server now, every process's (a waiter's included)."""
        return self._native.lease_nodes()

    async def lease_nodes_async(self) -> List[str]:
        """``lease_nodes`` without blocking the event loop."""
        return await self._native.lease_nodes_async()

    def __enter__(self) -> Lease:
        """``acquire()``; leaving the block releases that lease."""
        lease = self.acquire()
        assert lease is not None  # an unbounded wait ends with a lease
        _ENTERED.set(_ENTERED.get() + ((id(self), lease),))
        return lease

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """Releases the lease of this block; a failing release never replaces an exception raised in it."""
        lease = self._leave()
        with _told_beside(exc, lease.node_path):
            lease._release_unless_released()

    async def __aenter__(self) -> Lease:
        """``acquire_async()``; leaving the block releases that lease."""
        lease = await self.acquire_async()
        assert lease is not None
        _ENTERED.set(_ENTERED.get() + ((id(self), lease),))
        return lease

    async def __aexit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """Releases the lease of this block; a failing release never replaces an exception raised in it."""
        lease = self._leave()
        with _told_beside(exc, lease.node_path):
            await lease._release_unless_released_async()

    def __repr__(self) -> str:
        return f"<Semaphore {self.path} {self.held} of {self.max_leases} held here>"

    def _wrap(self, natives: Optional[List[_native.NativeLease]]) -> Optional[List[Lease]]:
        return None if natives is None else [Lease(n) for n in natives]

    def _leave(self) -> Lease:
        """The lease of the innermost `with` block of this semaphore in this thread or task."""
        entered = _ENTERED.get()
        for at in range(len(entered) - 1, -1, -1):
            if entered[at][0] == id(self):
                _ENTERED.set(entered[:at] + entered[at + 1 :])
                return entered[at][1]
        raise RuntimeError("leaving a `with` block of a semaphore that was not entered here")
