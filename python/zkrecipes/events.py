"""Event and state names shared with every zkrecipes binding."""

from __future__ import annotations

import enum


class ConnectionState(str, enum.Enum):
    CONNECTED = "CONNECTED"
    SUSPENDED = "SUSPENDED"
    RECONNECTED = "RECONNECTED"
    LOST = "LOST"
    CLOSED = "CLOSED"


class LockEvent(str, enum.Enum):
    ACQUIRED = "ACQUIRED"
    RELEASED = "RELEASED"
    SUSPENDED = "SUSPENDED"
    RECONNECTED = "RECONNECTED"
    LOST = "LOST"


class ElectionEvent(str, enum.Enum):
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
