"""Event and state names shared with every zkrecipes binding."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Generic, Optional, TypeVar

from .errors import ZkError


class _Named(str, enum.Enum):
    """Prints as its name (``ACQUIRED``), the same in every language."""

    def __str__(self) -> str:
        return str(self.value)


class ConnectionState(_Named):
    """A client's connection state (Curator's vocabulary)."""
    CONNECTED = "CONNECTED"
    SUSPENDED = "SUSPENDED"
    RECONNECTED = "RECONNECTED"
    LOST = "LOST"
    CLOSED = "CLOSED"


class LockEvent(_Named):
    """The kinds of lock events (``Event.kind`` of a lock listener's event)."""
    ACQUIRED = "ACQUIRED"
    RELEASED = "RELEASED"
    SUSPENDED = "SUSPENDED"
    RECONNECTED = "RECONNECTED"
    LOST = "LOST"


class ElectionEvent(_Named):
    """Apache ``LeaderElectionSupport.EventType`` names, emitted in Apache's order."""

    START = "START"
    OFFER_START = "OFFER_START"
    OFFER_COMPLETE = "OFFER_COMPLETE"
    DETERMINE_START = "DETERMINE_START"
    DETERMINE_COMPLETE = "DETERMINE_COMPLETE"
    ELECTED_START = "ELECTED_START"
    ELECTED_COMPLETE = "ELECTED_COMPLETE"
    READY_START = "READY_START"
    READY_COMPLETE = "READY_COMPLETE"
    FAILED = "FAILED"
    STOP_START = "STOP_START"
    STOP_COMPLETE = "STOP_COMPLETE"
    SUSPENDED = "SUSPENDED"
    RECONNECTED = "RECONNECTED"


class LatchEvent(_Named):
    """The kinds of leader latch events (``Event.kind`` of a latch listener's event)."""

    IS_LEADER = "IS_LEADER"
    NOT_LEADER = "NOT_LEADER"
    SUSPENDED = "SUSPENDED"
    RECONNECTED = "RECONNECTED"


class CacheEvent(_Named):
    """The kinds of cache events (``NodeEvent.kind`` of a cache or group member listener's
    event), in the order the core declares them."""

    CREATED = "CREATED"
    CHANGED = "CHANGED"
    DELETED = "DELETED"
    INITIALIZED = "INITIALIZED"
    SUSPENDED = "SUSPENDED"
    RECONNECTED = "RECONNECTED"
    LOST = "LOST"


class _OfKind:
    """An event that equals its kind and the kind's name (``event == LockEvent.LOST``, ``event ==
    "LOST"``), and an event of its class with the same fields; it hashes as its kind."""

    __slots__ = ()
    kind: _Named

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            # A kind (an enum of str) or its name: ``event == "ACQUIRED"``.
            return bool(self.kind == other)
        if isinstance(other, type(self)):
            # The fields of a frozen dataclass, all of them (``fencing_token``, ``reason``; ``node``, ``old``).
            return vars(self) == vars(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.kind)


K = TypeVar("K", LockEvent, ElectionEvent, LatchEvent)


@dataclass(frozen=True, eq=False)
class Event(_OfKind, Generic[K]):
    """What a lock, election or latch listener receives.

    ``kind`` is the event (``LockEvent.ACQUIRED``); ``fencing_token`` comes
    with ``ACQUIRED`` and ``IS_LEADER``; ``reason`` (a ``ZkError``) with ``LOST``,
    ``FAILED`` and a ``NOT_LEADER`` that lost the leadership.
    An event equals its kind and its name: ``event == LockEvent.LOST``,
    ``event == "LOST"`` (``is`` compares objects: ``event.kind is LockEvent.LOST``).
    """

    kind: K
    fencing_token: Optional[int] = None
    reason: Optional[ZkError] = None

    def __str__(self) -> str:
        if self.fencing_token is not None:
            return f"{self.kind.value} (fencing token {self.fencing_token})"
        if self.reason is not None:
            return f"{self.kind.value} ({self.reason})"
        return self.kind.value


# How the native module's (name, fencing token, reason) become what a listener gets.
def connection_state(name: str, _fencing_token: Optional[int], _reason: Optional[ZkError]) -> ConnectionState:
    return ConnectionState(name)


def lock_event(name: str, fencing_token: Optional[int], reason: Optional[ZkError]) -> Event[LockEvent]:
    return Event(LockEvent(name), fencing_token, reason)


def election_event(name: str, fencing_token: Optional[int], reason: Optional[ZkError]) -> Event[ElectionEvent]:
    return Event(ElectionEvent(name), fencing_token, reason)


def latch_event(name: str, fencing_token: Optional[int], reason: Optional[ZkError]) -> Event[LatchEvent]:
    return Event(LatchEvent(name), fencing_token, reason)
