"""An at-least-once work queue in kazoo's ``LockingQueue`` layout: a worker takes a job,
works on it, and acknowledges it; a job whose worker dies is delivered again."""

from __future__ import annotations

from collections.abc import Coroutine
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generator, Iterable, List, Optional, Type

from . import _native
from ._args import _client, _timeout
from ._base import Closing, Scoped
from ._spans import traced, traced_async, wait_span
from .queue import Payload, _bytes

if TYPE_CHECKING:
    from .client import Client

DEFAULT_PRIORITY = 100

_CONSUME = wait_span("work_queue.consume")


def _priority(priority: Any) -> int:
    # The range (0-999) is the core's rule: out of range is InvalidArgumentError, a ValueError.
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise TypeError(f"priority must be an int, got {type(priority).__name__}")
    return priority


class Job(Scoped):
    """A job claimed for this worker. ``with queue.consume() as job:`` acknowledges it when the
    block ends normally and gives it back when the block raises; or call ``ack()`` / ``nack()``.
    A job dropped unsettled goes back to the queue."""

    __slots__ = ("_native",)

    def __init__(self, native: _native.NativeDelivery) -> None:
        """Wraps a native delivery (use ``WorkQueue.consume``)."""
        self._native = native

    @property
    def data(self) -> bytes:
        """The payload."""
        return self._native.data()

    @property
    def name(self) -> str:
        """The entry's node name, ``entry-<priority>-<sequence>``."""
        return self._native.name()

    @property
    def priority(self) -> int:
        """0 (first) to 999."""
        return self._native.priority()

    @property
    def delivery_count(self) -> int:
        """How many times this job was delivered, this time included."""
        return self._native.delivery_count()

    def ack(self) -> None:
        """Deletes the job: done. Raises ``SessionExpiredError`` if the claim went with an expired
        session (the job is delivered again, possibly already was)."""
        self._native.ack()

    def nack(self) -> None:
        """Gives the job back, at its place in line."""
        self._native.nack()

    async def ack_async(self) -> None:
        """``ack`` without blocking the event loop."""
        await self._native.ack_async()

    async def nack_async(self) -> None:
        """``nack`` without blocking the event loop."""
        await self._native.nack_async()

    def _exit(self, exc: Optional[BaseException]) -> None:
        """The block's end settles the job: acknowledged on success, given back on an exception
        (which goes on)."""
        if self._native.is_settled():
            return
        if exc is None:
            self.ack()
        else:
            self.nack()

    async def _exit_async(self, exc: Optional[BaseException]) -> None:
        if self._native.is_settled():
            return
        if exc is None:
            await self.ack_async()
        else:
            await self.nack_async()

    def __repr__(self) -> str:
        return f"<Job {self.name} delivery {self.delivery_count}, {len(self.data)} bytes>"


class _Consuming(Coroutine):  # type: ignore[type-arg]
    """What ``consume_async`` returns: await it for the job, use it in ``async with``, or hand it
    to ``asyncio.create_task`` (it is a coroutine)."""

    __slots__ = ("_queue", "_timeout", "_job", "_coro")

    def __init__(self, queue: WorkQueue, timeout: Optional[float]) -> None:
        """A consume of ``queue`` not started yet."""
        self._queue = queue
        self._timeout = timeout
        self._job: Optional[Job] = None
        # Made on first use: a consume never awaited starts nothing and warns about nothing.
        self._coro: Optional[Coroutine[Any, Any, Optional[Job]]] = None

    async def _get(self) -> Optional[Job]:
        queue, seconds = self._queue, _timeout(self._timeout)
        native = await traced_async(_CONSUME, queue._path, lambda: queue._native.consume_async(seconds))
        return Job(native) if native is not None else None

    def _started(self) -> Coroutine[Any, Any, Optional[Job]]:
        if self._coro is None:
            self._coro = self._get()
        return self._coro

    def __await__(self) -> Generator[Any, None, Optional[Job]]:
        """The job, or ``None`` once ``timeout`` passed."""
        return self._started().__await__()

    def send(self, value: Any) -> Any:
        """Coroutine protocol, for ``asyncio.create_task``."""
        return self._started().send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        """Coroutine protocol, for ``asyncio.create_task`` (cancellation arrives here)."""
        if val is None and tb is None:
            return self._started().throw(typ)
        return self._started().throw(typ, val, tb)

    def close(self) -> None:
        """Coroutine protocol."""
        if self._coro is not None:
            self._coro.close()

    async def __aenter__(self) -> Job:
        """Waits for the job (no timeout with ``async with``: it always yields a job)."""
        if self._timeout is not None:
            raise ValueError("async with queue.consume_async() takes no timeout; await it instead")
        job = await self._started()
        assert job is not None
        self._job = job
        return job

    async def __aexit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """Acknowledges on success, gives back on an exception."""
        if self._job is not None:
            await self._job.__aexit__(exc_type, exc, tb)


class WorkQueue(Closing):
    """At-least-once jobs with priorities, shared with kazoo's ``LockingQueue``.

    ``prefetch`` jobs are claimed per transaction (held by this object until handed out);
    a job delivered ``max_deliveries`` times moves to ``dead_letter_path`` instead of looping.
    """

    __slots__ = ("_native", "_path_given", "__weakref__")

    def __init__(self, client: Client, path: str, *, prefetch: int = 1, max_deliveries: Optional[int] = None) -> None:
        """A work queue under ``path`` of ``client``."""
        if isinstance(prefetch, bool) or not isinstance(prefetch, int):
            raise TypeError("prefetch must be an int")
        if max_deliveries is not None and (isinstance(max_deliveries, bool) or not isinstance(max_deliveries, int)):
            raise TypeError("max_deliveries must be an int or None")
        self._native = _native.NativeWorkQueue(_client(client), path, prefetch, max_deliveries)
        self._path_given = path

    @property
    def max_payload(self) -> int:
        """The largest job, in bytes, that ``offer`` accepts."""
        return self._native.max_payload()

    @property
    def dead_letter_path(self) -> str:
        """Where jobs go after ``max_deliveries``."""
        return self._native.dead_letter_path()

    def offer(self, data: Payload, priority: int = DEFAULT_PRIORITY) -> str:
        """Appends a job; lower ``priority`` (0–999) first, FIFO within one. Returns its path."""
        return self._native.offer(_bytes(data), _priority(priority))

    def offer_all(self, items: Iterable[Payload], priority: int = DEFAULT_PRIORITY) -> List[str]:
        """Appends every job in order, one transaction per batch under the server's packet limit."""
        return self._native.offer_all([_bytes(d) for d in items], _priority(priority))

    async def offer_async(self, data: Payload, priority: int = DEFAULT_PRIORITY) -> str:
        """``offer`` without blocking the event loop."""
        return await self._native.offer_async(_bytes(data), _priority(priority))

    async def offer_all_async(self, items: Iterable[Payload], priority: int = DEFAULT_PRIORITY) -> List[str]:
        """``offer_all`` without blocking the event loop."""
        return await self._native.offer_all_async([_bytes(d) for d in items], _priority(priority))

    def consume(self, timeout: Optional[float] = None) -> Optional[Job]:
        """The next job, claimed for this worker; ``None`` once ``timeout`` seconds passed
        (``None``: wait as long as it takes, so ``with queue.consume() as job:`` always has one)."""
        seconds = _timeout(timeout)
        native = traced(_CONSUME, self._path, lambda: self._native.consume(seconds))
        return Job(native) if native is not None else None

    def consume_async(self, timeout: Optional[float] = None) -> _Consuming:
        """``await queue.consume_async(timeout)``, or ``async with queue.consume_async() as job:``.
        Cancelling the awaiting task gives back whatever it claimed."""
        return _Consuming(self, timeout)

    def _path(self) -> str:
        """The ``path`` of its consumes' spans."""
        return self._path_given

    def size(self) -> int:
        """Jobs in the queue, claimed ones included (one request). A job that used up
        ``max_deliveries`` counts until a consume moves it to the dead letters."""
        return self._native.size()

    def __len__(self) -> int:
        """``size()``."""
        return self.size()

    async def size_async(self) -> int:
        """``size`` without blocking the event loop."""
        return await self._native.size_async()

    def close(self) -> None:
        """Gives back the jobs claimed by prefetch and not handed out. Afterwards every call on the
        queue raises ``ClosedError`` (a ``consume`` waiting at that moment too); jobs already handed
        out stay yours to ``ack`` or ``nack``. Calling it again does nothing."""
        self._native.close()
