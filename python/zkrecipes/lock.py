"""Exclusive locks, multi-locks and read/write locks: fair, reentrant per thread (or asyncio
task), fenced."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Awaitable, ClassVar, Generic, List, NamedTuple, Optional, Protocol, Sequence, Tuple, TypeVar

from . import _native
from ._args import _client, _timeout
from ._base import Listened, Scoped, _told_beside
from ._spans import WaitSpan, traced, traced_async, wait_span
from ._undoable import undoable
from .events import Event, LockEvent, lock_event

if TYPE_CHECKING:
    import asyncio

    from ._native import NativeLock, NativeMultiLock, Undo
    from .client import Client


class Participant(NamedTuple):
    node: str
    identity: str
    is_reader: bool


def _thread_owner() -> int:
    return threading.get_ident()


def _task_owner() -> int:
    # Reentrancy for asyncio is per task: two tasks of one loop must exclude each other.
    # (Imported here: a sync program never pays for importing asyncio.)
    import asyncio

    task = asyncio.current_task()
    return id(task) if task is not None else threading.get_ident()


K = TypeVar("K")


class _NativeOwned(Protocol[K]):
    """The native calls a lock and a multi-lock share; ``K`` is what a hold is fenced with."""

    def lock(self, owner: int, blocking: bool, timeout: Optional[float]) -> Optional[K]: ...
    def lock_async(self, owner: int, blocking: bool, timeout: Optional[float]) -> asyncio.Future[Tuple[Optional[K], Optional[Undo]]]: ...
    def unlock(self, owner: int) -> None: ...
    def unlock_async(self, owner: int) -> Awaitable[None]: ...
    def is_held(self) -> bool: ...
    def is_held_by(self, owner: int) -> bool: ...
    def hold_count(self, owner: int) -> int: ...


class _Owned(Scoped, Generic[K]):
    """What every lock-like object shares: acquire and release per thread (per asyncio task for
    the ``_async`` forms), reentrancy, and ``with``/``async with``."""

    __slots__ = ()
    _native: _NativeOwned[K]
    # Its acquire, as the core names it for the spans.
    _acquire: ClassVar[WaitSpan] = wait_span("lock.acquire")

    def acquire(self, blocking: bool = True, timeout: Optional[float] = None) -> bool:
        """Like ``threading.RLock.acquire``: ``True`` once held, ``False`` if not obtained.

        ``timeout`` is one deadline in seconds (``None`` or ``-1``: wait forever); whenever it
        passes, at whatever stage, the answer is ``False`` (never an exception) and the waiting
        node is gone. ``timeout=0`` is a try: it takes a free lock without waiting. The GIL is
        released while waiting and Ctrl-C interrupts the wait, withdrawing the waiting node.
        """
        owner, seconds = _thread_owner(), _timeout(timeout)
        locked = traced(self._acquire, self._wait_path, lambda: self._native.lock(owner, blocking, seconds))
        return locked is not None

    def release(self) -> None:
        """Drops one hold; the last one deletes the node and returns once the server confirmed.

        Raises ``NotOwnerError`` (a ``RuntimeError``) if this thread does not hold the lock.
        """
        self._native.unlock(_thread_owner())

    async def acquire_async(self, blocking: bool = True, timeout: Optional[float] = None) -> bool:
        """Awaitable ``acquire``; cancelling the awaiting task withdraws the waiting node."""
        owner, seconds = _task_owner(), _timeout(timeout)
        locked = await traced_async(
            self._acquire, self._wait_path, lambda: undoable(self._native.lock_async(owner, blocking, seconds))
        )
        return locked is not None

    async def release_async(self) -> None:
        """``release`` for a hold taken with ``acquire_async`` (per asyncio task)."""
        await self._native.unlock_async(_task_owner())

    @property
    def is_held(self) -> bool:
        """Held by anybody in this process through this object."""
        return self._native.is_held()

    def is_held_by_current_thread(self) -> bool:
        """Whether the current thread holds the lock."""
        return self._native.is_held_by(_thread_owner())

    @property
    def hold_count(self) -> int:
        """How many holds the current thread has (locks are reentrant per thread)."""
        return self._native.hold_count(_thread_owner())

    @property
    def _what(self) -> str:
        raise NotImplementedError

    def _wait_path(self) -> str:
        """The ``path`` of its acquires' spans."""
        raise NotImplementedError

    def _enter(self) -> None:
        self.acquire()

    async def _enter_async(self) -> None:
        await self.acquire_async()

    def _exit(self, exc: Optional[BaseException]) -> None:
        with _told_beside(exc, self._what):
            self.release()

    async def _exit_async(self, exc: Optional[BaseException]) -> None:
        with _told_beside(exc, self._what):
            await self.release_async()


class _Lock(_Owned[int], Listened[Event[LockEvent]]):
    """The surface shared by ``WriteLock`` and both sides of ``ReadWriteLock``.

    Listeners hear ``ACQUIRED``, ``RELEASED``, ``SUSPENDED`` (connection dropped while held:
    stop using the resource), ``RECONNECTED`` and ``LOST`` (no longer held).
    """

    _event_of = staticmethod(lock_event)

    __slots__ = ("_native", "__weakref__")
    _native: NativeLock

    def __init__(self, native: NativeLock) -> None:
        """Wraps a native lock (use ``WriteLock`` or ``ReadWriteLock``)."""
        self._native = native

    @property
    def fencing_token(self) -> Optional[int]:
        """The czxid of the lock node while held: pass it to the resource you protect.

        The calling thread's hold if it has one, else any hold of this object.
        """
        token = self._native.fencing_token_of(_thread_owner())
        return token if token is not None else self._native.fencing_token()

    @property
    def dir(self) -> str:
        """The lock directory."""
        return self._native.dir()

    def participants(self) -> List[Participant]:
        """Contenders in lock order (the holder first) with their identities."""
        return [Participant(*row) for row in self._native.participants()]

    async def participants_async(self) -> List[Participant]:
        """``participants`` without blocking the event loop."""
        return [Participant(*row) for row in await self._native.participants_async()]

    @property
    def _what(self) -> str:
        return self.dir

    def _wait_path(self) -> str:
        return self._native.dir()

    def __repr__(self) -> str:
        state = f"held, token {self.fencing_token}" if self.is_held else "not held"
        return f"<{type(self).__name__} {self.dir} {state}>"


class WriteLock(_Lock):
    """An exclusive, fair lock on directory ``dir``, interoperable with Apache's ``WriteLock``,
    Curator's ``InterProcessMutex`` and kazoo's ``Lock``."""

    __slots__ = ()

    def __init__(self, client: Client, dir: str) -> None:
        """An exclusive lock on ``dir`` of ``client``."""
        super().__init__(_native.NativeLock(_client(client), dir))


class ReadLock(_Lock):
    """The shared side of a ``ReadWriteLock``."""

    __slots__ = ()
    _acquire = wait_span("read_lock.acquire")


class WriteSide(_Lock):
    """The exclusive side of a ``ReadWriteLock``."""

    __slots__ = ()
    _acquire = wait_span("write_lock.acquire")


class ReadWriteLock:
    """Readers share, a writer is alone, FIFO between them (Curator's node names).

    Holds are per thread (per asyncio task for the ``_async`` forms). The write holder may
    take the read lock (downgrade); a read holder asking for the write lock gets
    ``WouldDeadlockError`` at once; another thread's write request waits for the readers.
    """

    def __init__(self, client: Client, dir: str) -> None:
        """A read/write lock on ``dir`` of ``client``."""
        native = _native.NativeReadWriteLock(_client(client), dir)
        self._read = ReadLock(native.read_lock())
        self._write = WriteSide(native.write_lock())

    def read_lock(self) -> ReadLock:
        """The shared side."""
        return self._read

    def write_lock(self) -> WriteSide:
        """The exclusive side."""
        return self._write


class MultiLock(_Owned[List[int]]):
    """Exclusive locks on several paths held together, all or none (Curator's
    ``InterProcessMultiLock``, interoperable with it).

    The locks are taken in the order of their paths, sorted, whatever order they were given
    in, so two multi-locks over the same paths never wait for each other in a circle. On a
    timeout, a failure or a cancel, the locks already taken are given back before the answer.
    Release deletes the nodes last-taken first. Reentrant per thread, as ``WriteLock`` is. The
    client's listeners hear a connection's loss.
    """

    __slots__ = ("_native", "__weakref__")
    _native: NativeMultiLock
    _acquire = wait_span("multi_lock.acquire")

    def __init__(self, client: Client, dirs: Sequence[str]) -> None:
        """Exclusive locks on every directory of ``dirs`` (at least one, none twice)."""
        if isinstance(dirs, str):
            raise TypeError("dirs is a sequence of paths, not one path")
        self._native = _native.NativeMultiLock(_client(client), list(dirs))

    @property
    def fencing_tokens(self) -> Optional[List[int]]:
        """One token per path, in the order given, while held: the calling thread's holds if it
        has them, else any hold of this object."""
        tokens = self._native.fencing_tokens_of(_thread_owner())
        return tokens if tokens is not None else self._native.fencing_tokens()

    @property
    def dirs(self) -> List[str]:
        """The lock directories, in the order given."""
        return self._native.dirs()

    @property
    def _what(self) -> str:
        return ", ".join(self.dirs)

    def _wait_path(self) -> str:
        return self._native.observed_path()

    def __repr__(self) -> str:
        state = f"held, tokens {self.fencing_tokens}" if self.is_held else "not held"
        return f"<MultiLock {self._what} {state}>"
