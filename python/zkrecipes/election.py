"""Leader election with the nodes and events of Apache's ``LeaderElectionSupport``."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Optional, Type

from . import _native
from ._base import Listened
from ._args import _client, _timeout
from ._spans import traced, traced_async, wait_span
from .events import ElectionEvent, Event, election_event

if TYPE_CHECKING:
    from .client import Client


_AWAIT = wait_span("election.await_leadership")


class LeaderElectionSupport(Listened[Event[ElectionEvent]]):
    """One member of the election under ``root`` (created if missing).

    A leader that loses its node or session gets ``FAILED`` and offers itself
    again once the client has a new session, unless stopped.

    Listeners hear each of Apache's 12 election events, in Apache's order.
    """

    _event_of = staticmethod(election_event)

    def __init__(self, client: Client, root: str, host_name: Optional[str] = None) -> None:
        """A member of the election under ``root``; ``host_name`` (default: the client's identity) is what other members read as the leader."""
        native_client = _client(client)
        self._native = _native.NativeElection(native_client, root, native_client.identity() if host_name is None else host_name)
        self._root = root

    def start(self) -> None:
        """Offers this member; returns once it knows whether it leads."""
        self._native.start()

    def stop(self) -> None:
        """Withdraws the offer; a leader hands over to the next member."""
        self._native.stop()

    async def start_async(self) -> None:
        """``start`` without blocking the event loop."""
        await self._native.start_async()

    async def stop_async(self) -> None:
        """``stop`` without blocking the event loop."""
        await self._native.stop_async()

    def is_leader(self) -> bool:
        """Whether this member leads now."""
        return self._native.is_leader()

    def leader_host_name(self) -> Optional[str]:
        """The host name of the current leader, or ``None`` when nobody offers."""
        return self._native.leader_host_name()

    async def leader_host_name_async(self) -> Optional[str]:
        """``leader_host_name`` without blocking the event loop."""
        return await self._native.leader_host_name_async()

    def await_leadership(self, timeout: Optional[float] = None) -> bool:
        """``True`` once leading; ``False`` if ``timeout`` seconds pass first."""
        seconds = _timeout(timeout)
        return traced(_AWAIT, self._path, lambda: self._native.await_leadership(seconds))

    async def await_leadership_async(self, timeout: Optional[float] = None) -> bool:
        """``await_leadership`` without blocking the event loop."""
        seconds = _timeout(timeout)
        return await traced_async(_AWAIT, self._path, lambda: self._native.await_leadership_async(seconds))

    def _path(self) -> str:
        """The ``path`` of its waits' spans: the election's root."""
        return self._root

    def __enter__(self) -> LeaderElectionSupport:
        """Starts the member; leaving the block stops it."""
        self.start()
        return self

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """Stops the member (never replacing an exception raised in the block)."""
        self.stop()
