"""A leader latch on Curator's ``LeaderLatch`` layout, with fencing tokens."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, List, Optional

from . import _native
from ._base import Listened, Started
from ._args import _client, _timeout
from ._spans import traced, traced_async, wait_span
from .events import Event, LatchEvent, latch_event

if TYPE_CHECKING:
    from .client import Client


_AWAIT = wait_span("latch.await_leadership")


@dataclass(frozen=True)
class LatchParticipant:
    """One participant of a latch as ``participants()`` lists them, the leader first.

    ``id`` is what the participant started with (its node's data), ``node`` its node's name,
    ``is_leader`` whether it is the first in line.
    """

    id: str
    node: str
    is_leader: bool


class LeaderLatch(Started, Listened[Event[LatchEvent]]):
    """One participant of the leader latch at ``path`` (Curator's ``LeaderLatch`` nodes, so
    Curator's participants take part in the same line).

    ``start()`` takes part, ``close()`` leaves for good (a closed latch cannot start again, as
    in Curator), or ``with client.leader_latch(path) as latch:``. While leading,
    ``fencing_token`` is the leader's token (it increases across leaders: pass it to the
    resource you protect). A leader is told ``SUSPENDED`` when its connection drops (stop acting
    as the leader until ``RECONNECTED``) and ``NOT_LEADER`` once another may lead; it then lines
    up again by itself. A latch garbage collected unclosed is closed.

    Listeners hear ``IS_LEADER`` (with the fencing token), ``NOT_LEADER`` (with the reason when
    the leadership was lost, ``None`` when closed), ``SUSPENDED`` and ``RECONNECTED`` (while
    leading). Add it before ``start()`` to see the first ``IS_LEADER``.
    """

    _event_of = staticmethod(latch_event)

    def __init__(self, client: Client, path: str, id: Optional[str] = None) -> None:
        """A participant of the latch at ``path`` (created on first use) named ``id`` (default:
        the client's identity), not started yet."""
        if id is not None and not isinstance(id, str):
            raise TypeError(f"id must be a str or None, got {type(id).__name__}")
        self._native = _native.NativeLeaderLatch(_client(client), path, id)

    @property
    def path(self) -> str:
        """The latch's path (its participants' nodes are its children)."""
        return self._native.path()

    @property
    def id(self) -> str:
        """This participant's id, what ``participants()`` shows the others."""
        return self._native.id()

    @property
    def node_path(self) -> Optional[str]:
        """This participant's node while it leads, else ``None``."""
        return self._native.node_path()

    @property
    def fencing_token(self) -> Optional[int]:
        """The leader's fencing token (its node's czxid) while this participant leads, else ``None``."""
        return self._native.fencing_token()

    @property
    def is_started(self) -> bool:
        """Started and not closed."""
        return self._native.is_started()

    @property
    def is_closed(self) -> bool:
        """Closed (by ``close()``, or by the client's close)."""
        return self._native.is_closed()

    def start(self) -> None:
        """Takes part; returns once this participant is in line (leading or not).

        Starting a started latch does nothing; a closed one raises ``ClosedError``. A start
        that fails (``NoAuthError``) leaves the latch not started, to be started again. A start
        interrupted by Ctrl-C closes the latch, so that no node is left in line.
        """
        self._start_or_close()

    async def start_async(self) -> None:
        """``start`` without blocking the event loop; cancelling it closes the latch."""
        await self._start_async_or_close()

    def close(self) -> None:
        """Leaves: withdraws the node (a leader hands over, with ``NOT_LEADER``). Idempotent."""
        self._native.close()

    def has_leadership(self) -> bool:
        """Whether this participant leads now (false from the moment the leadership is lost,
        also before ``NOT_LEADER`` is delivered)."""
        return self._native.has_leadership()

    def await_leadership(self, timeout: Optional[float] = None) -> Optional[int]:
        """The fencing token once this participant leads, ``None`` if ``timeout`` seconds pass
        first (``None`` or ``-1``: wait forever; ``0``: a check).

        ``InvalidArgumentError`` on a latch never started, ``ClosedError`` once it is closed
        (also while waiting). Ctrl-C interrupts the wait.
        """
        seconds = _timeout(timeout)
        return traced(_AWAIT, self._native.path, lambda: self._native.await_leadership(seconds))

    async def await_leadership_async(self, timeout: Optional[float] = None) -> Optional[int]:
        """``await_leadership`` without blocking the event loop."""
        seconds = _timeout(timeout)
        return await traced_async(_AWAIT, self._native.path, lambda: self._native.await_leadership_async(seconds))

    def leader(self) -> Optional[LatchParticipant]:
        """The current leader, ``None`` when nobody takes part."""
        row = self._native.leader()
        return None if row is None else LatchParticipant(*row)

    async def leader_async(self) -> Optional[LatchParticipant]:
        """``leader`` without blocking the event loop."""
        row = await self._native.leader_async()
        return None if row is None else LatchParticipant(*row)

    def participants(self) -> List[LatchParticipant]:
        """Every participant in line (Curator's too), the leader first."""
        return [LatchParticipant(*row) for row in self._native.participants()]

    async def participants_async(self) -> List[LatchParticipant]:
        """``participants`` without blocking the event loop."""
        return [LatchParticipant(*row) for row in await self._native.participants_async()]

    def __repr__(self) -> str:
        if self.is_closed:
            state = "closed"
        elif not self.is_started:
            state = "not started"
        else:
            token = self.fencing_token
            state = "waiting" if token is None else f"leading, token {token}"
        return f"<LeaderLatch {self.path} id {self.id!r} {state}>"
