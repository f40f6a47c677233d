"""Barriers: the barrier (Curator's ``DistributedBarrier``, kazoo's ``Barrier``) and the double
barrier (Curator's ``DistributedDoubleBarrier``, kazoo's ``DoubleBarrier``)."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, List, Optional, Type

from . import _native
from ._args import _client, _count, _timeout
from ._base import _told_beside
from ._spans import traced, traced_async, wait_span
from .errors import ZkError, ZkTimeoutError

if TYPE_CHECKING:
    from .client import Client


_WAIT = wait_span("barrier.wait")
_ENTER = wait_span("double_barrier.enter")
_LEAVE = wait_span("double_barrier.leave")


class Barrier:
    """Holds waiters back while it is up: up while its node at ``path`` exists.

    One process ``set()``\\ s it, any number ``wait()``, and ``remove()`` releases them all. A
    removal made while a waiter was disconnected releases it as soon as it is connected again.
    """

    def __init__(self, client: Client, path: str) -> None:
        """The barrier at ``path``; nothing is sent until a method is called."""
        self._native = _native.NativeBarrier(_client(client), path)

    @property
    def path(self) -> str:
        """The barrier's node: up while it exists."""
        return self._native.path()

    def set(self) -> None:
        """Puts the barrier up (creates its node; one already up stays up)."""
        self._native.set()

    async def set_async(self) -> None:
        """``set`` without blocking the event loop."""
        await self._native.set_async()

    def remove(self) -> None:
        """Takes the barrier down (deletes its node), releasing every waiter; one already down
        stays down. ``NotEmptyError`` if somebody created nodes under it."""
        self._native.remove()

    async def remove_async(self) -> None:
        """``remove`` without blocking the event loop."""
        await self._native.remove_async()

    def is_set(self) -> bool:
        """Whether the barrier is up now."""
        return self._native.is_set()

    async def is_set_async(self) -> bool:
        """``is_set`` without blocking the event loop."""
        return await self._native.is_set_async()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """``True`` once the barrier is down (at once if it is not up), ``False`` if ``timeout``
        seconds pass first (``None`` or ``-1``: wait forever; ``0``: a check). Ctrl-C interrupts
        the wait."""
        seconds = _timeout(timeout)
        return traced(_WAIT, self._native.path, lambda: self._native.wait(seconds))

    async def wait_async(self, timeout: Optional[float] = None) -> bool:
        """``wait`` without blocking the event loop."""
        seconds = _timeout(timeout)
        return await traced_async(_WAIT, self._native.path, lambda: self._native.wait_async(seconds))

    def __repr__(self) -> str:
        return f"<Barrier {self.path}>"


class DoubleBarrier:
    """``member_count`` members enter together and leave together.

    ``enter()`` waits until ``member_count`` members are in, ``leave()`` until every member has
    left; ``with barrier.entered(timeout):`` does both around a block. A member whose ``enter``
    or ``leave`` times out, fails, is interrupted or cancelled is withdrawn (its node deleted),
    so the others never count it. Curator's and kazoo's members take part in the same barrier.
    """

    def __init__(self, client: Client, path: str, member_count: int) -> None:
        """A member of the double barrier at ``path`` for ``member_count`` members (1 to
        2**31-1, ``InvalidArgumentError`` otherwise); nothing is sent until it enters."""
        self._native = _native.NativeDoubleBarrier(_client(client), path, _count("member_count", member_count))

    @property
    def path(self) -> str:
        """The barrier's node (members and ``ready`` are its children)."""
        return self._native.path()

    @property
    def member_count(self) -> int:
        """How many members open the barrier."""
        return self._native.member_count()

    @property
    def node_path(self) -> str:
        """This member's node (``<path>/<uuid>``), there while it is in."""
        return self._native.node_path()

    def enter(self, timeout: Optional[float] = None) -> bool:
        """Enters, then ``True`` once ``member_count`` members are in; ``False`` if ``timeout``
        seconds pass first (``None`` or ``-1``: wait forever; ``0``: a check), this member's
        node withdrawn. Ctrl-C interrupts the wait and withdraws the node."""
        seconds = _timeout(timeout)
        try:
            return traced(_ENTER, self._native.path, lambda: self._native.enter(seconds))
        except ZkError:
            raise  # withdrawn by the core
        except BaseException:
            self._native.withdraw_soon()  # interrupted, perhaps just as it entered
            raise

    async def enter_async(self, timeout: Optional[float] = None) -> bool:
        """``enter`` without blocking the event loop; cancelling it withdraws this member."""
        seconds = _timeout(timeout)
        try:
            return await traced_async(_ENTER, self._native.path, lambda: self._native.enter_async(seconds))
        except ZkError:
            raise
        except BaseException:
            self._native.withdraw_soon()
            raise

    def leave(self, timeout: Optional[float] = None) -> bool:
        """Leaves, then ``True`` once every member has left; ``False`` if ``timeout`` seconds
        pass first. This member's node is gone in every case."""
        seconds = _timeout(timeout)
        return traced(_LEAVE, self._native.path, lambda: self._native.leave(seconds))

    async def leave_async(self, timeout: Optional[float] = None) -> bool:
        """``leave`` without blocking the event loop."""
        seconds = _timeout(timeout)
        return await traced_async(_LEAVE, self._native.path, lambda: self._native.leave_async(seconds))

    def members(self) -> List[str]:
        """The member nodes' names now (``ready`` not among them), in Curator's order."""
        return self._native.members()

    async def members_async(self) -> List[str]:
        """``members`` without blocking the event loop."""
        return await self._native.members_async()

    def is_ready(self) -> bool:
        """Whether the barrier has opened (its ``ready`` node exists) and not everybody left."""
        return self._native.is_ready()

    async def is_ready_async(self) -> bool:
        """``is_ready`` without blocking the event loop."""
        return await self._native.is_ready_async()

    def entered(self, timeout: Optional[float] = None, *, leave_timeout: Optional[float] = None) -> Entered:
        """``with barrier.entered(timeout):`` (or ``async with``) enters, runs the block with the
        quorum in, and leaves on the way out.

        Entering raises ``ZkTimeoutError`` if ``member_count`` members are not in within
        ``timeout`` seconds (this member withdrawn, the block not run). Leaving waits for every
        member (``leave_timeout``, forever by default: the others may still be working) and
        raises ``ZkTimeoutError`` if they do not leave in time, unless the block raised.
        """
        return Entered(self, _timeout(timeout), _timeout(leave_timeout))

    def __repr__(self) -> str:
        return f"<DoubleBarrier {self.path} of {self.member_count}>"


class Entered:
    """What ``DoubleBarrier.entered()`` returns: a context manager, plain or async."""

    __slots__ = ("_barrier", "_timeout", "_leave_timeout")

    def __init__(self, barrier: DoubleBarrier, timeout: Optional[float], leave_timeout: Optional[float]) -> None:
        """Made by ``DoubleBarrier.entered``."""
        self._barrier = barrier
        self._timeout = timeout
        self._leave_timeout = leave_timeout

    def __enter__(self) -> DoubleBarrier:
        """``enter(timeout)``, ``ZkTimeoutError`` unless the quorum came in time."""
        if not self._barrier.enter(self._timeout):
            raise self._not_entered()
        return self._barrier

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """``leave(leave_timeout)``; a failing leave never replaces an exception raised in the block."""
        with _told_beside(exc, self._barrier.path):
            if not self._barrier.leave(self._leave_timeout):
                raise self._not_left()

    async def __aenter__(self) -> DoubleBarrier:
        """``enter_async(timeout)``, ``ZkTimeoutError`` unless the quorum came in time."""
        if not await self._barrier.enter_async(self._timeout):
            raise self._not_entered()
        return self._barrier

    async def __aexit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """``leave_async(leave_timeout)``; a failing leave never replaces an exception raised in the block."""
        with _told_beside(exc, self._barrier.path):
            if not await self._barrier.leave_async(self._leave_timeout):
                raise self._not_left()

    def _not_entered(self) -> ZkTimeoutError:
        b = self._barrier
        return ZkTimeoutError(
            f"double barrier {b.path}: fewer than {b.member_count} members entered within "
            f"{self._timeout} s; this member withdrew"
        )

    def _not_left(self) -> ZkTimeoutError:
        b = self._barrier
        return ZkTimeoutError(f"double barrier {b.path}: the other members did not leave within {self._leave_timeout} s")

