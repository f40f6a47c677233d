"""The ``ZkError`` hierarchy: one subclass per error code of every zkrecipes binding."""

from __future__ import annotations

from typing import Any, Dict, Optional, Type


# Every subclass that names its code, by that code: the class `_from_native` raises for it.
_BY_CODE: Dict[str, Type[ZkError]] = {}


class ZkError(Exception):
    """Base of every zkrecipes error; ``code`` is the cross-language code (``"NO_NODE"``)."""

    code: str = "INTERNAL"

    def __init_subclass__(cls, code: Optional[str] = None, **kwargs: Any) -> None:
        # `class NoNodeError(ZkError, code="NO_NODE")` says the class's code on its first line and
        # makes it the class the native module's errors of that code become.
        # Only this module's classes: a user's subclass must never change what the library raises.
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code
            if cls.__module__ == __name__:
                _BY_CODE[code] = cls

    def __init__(self, message: str = "", code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"{self.code}: {super().__str__()}"


class InvalidPathError(ZkError, ValueError, code="INVALID_PATH"):
    """A path that ZooKeeper would refuse (not absolute, empty segment, trailing slash, reserved)."""


class InvalidArgumentError(ZkError, ValueError, code="INVALID_ARGUMENT"):
    """A bad argument value: a negative timeout, an oversized item or identity."""


class ConnectionLossError(ZkError, ConnectionError, code="CONNECTION_LOSS"):
    """No answer from the server: the operation may or may not have been applied."""


class TlsRefusedError(ZkError, ConnectionError, code="TLS_REFUSED"):
    """The TLS connection failed for its configuration (an unknown CA, a hostname mismatch, a
    refused certificate, TLS and plain ports mixed up): retrying will not help until it changes."""


class SessionExpiredError(ZkError, code="SESSION_EXPIRED"):
    """The session ended; its ephemeral nodes (locks, offers) are gone."""


class ZkTimeoutError(ZkError, TimeoutError, code="TIMEOUT"):
    """A wait ran out of time where an answer was required."""


class NoNodeError(ZkError, code="NO_NODE"):
    """A node the operation needed does not exist; the message names it."""


class NodeExistsError(ZkError, code="NODE_EXISTS"):
    """A node the operation had to create already exists."""


class NotEmptyError(ZkError, code="NOT_EMPTY"):
    """A node to delete still has children."""


class BadVersionError(ZkError, code="BAD_VERSION"):
    """A node changed between read and write."""


class NoAuthError(ZkError, PermissionError, code="NO_AUTH"):
    """The client's identity may not access the node (another identity's ACL)."""


class AuthFailedError(ZkError, PermissionError, code="AUTH_FAILED"):
    """The server refused the client's credentials."""


class NoSuchElementError(ZkError, LookupError, code="NO_SUCH_ELEMENT"):
    """``element()`` or ``remove()`` on an empty queue."""


class NotOwnerError(ZkError, RuntimeError, code="NOT_OWNER"):
    """Release of a lock the caller does not hold (``threading.RLock`` raises ``RuntimeError`` too)."""


class WouldDeadlockError(ZkError, RuntimeError, code="WOULD_DEADLOCK"):
    """A read holder asked for the write lock: waiting would never end."""


class ClosedError(ZkError, code="CLOSED"):
    """The client (or this object) is closed."""


class ZkInterruptedError(ZkError, code="INTERRUPTED"):
    """The operation was cancelled."""


class InternalError(ZkError, code="INTERNAL"):
    """A bug in zkrecipes: please report it with the message."""


def _from_native(code: str, message: str) -> ZkError:
    """Called by the native module to build the exception for a core error."""
    return _BY_CODE.get(code, InternalError)(message, code)
