"""The ``ZkError`` hierarchy: one subclass per error code of every zkrecipes binding."""

from __future__ import annotations

from typing import Dict, Type


class ZkError(Exception):
    """Base of every zkrecipes error; ``code`` is the cross-language code (``"NO_NODE"``)."""

    code: str = "INTERNAL"

    def __init__(self, message: str = "", code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"{self.code}: {super().__str__()}"


class InvalidPathError(ZkError, ValueError):
    """A path that ZooKeeper would refuse (not absolute, empty segment, trailing slash, reserved)."""
    code = "INVALID_PATH"


class InvalidArgumentError(ZkError, ValueError):
    """A bad argument value: a negative timeout, an oversized item or identity."""
    code = "INVALID_ARGUMENT"


class ConnectionLossError(ZkError, ConnectionError):
    """No answer from the server: the operation may or may not have been applied."""
    code = "CONNECTION_LOSS"


class TlsRefusedError(ZkError, ConnectionError):
    """The TLS connection failed for its configuration (an unknown CA, a hostname mismatch, a
    refused certificate, TLS and plain ports mixed up): retrying will not help until it changes."""
    code = "TLS_REFUSED"


class SessionExpiredError(ZkError):
    """The session ended; its ephemeral nodes (locks, offers) are gone."""
    code = "SESSION_EXPIRED"


class ZkTimeoutError(ZkError, TimeoutError):
    """A wait ran out of time where an answer was required."""
    code = "TIMEOUT"


class NoNodeError(ZkError):
    """A node the operation needed does not exist; the message names it."""
    code = "NO_NODE"


class NodeExistsError(ZkError):
    """A node the operation had to create already exists."""
    code = "NODE_EXISTS"


class NotEmptyError(ZkError):
    """A node to delete still has children."""
    code = "NOT_EMPTY"


class BadVersionError(ZkError):
    """A node changed between read and write."""
    code = "BAD_VERSION"


class NoAuthError(ZkError, PermissionError):
    """The client's identity may not access the node (another identity's ACL)."""
    code = "NO_AUTH"


class AuthFailedError(ZkError, PermissionError):
    """The server refused the client's credentials."""
    code = "AUTH_FAILED"


class NoSuchElementError(ZkError, LookupError):
    """``element()`` or ``remove()`` on an empty queue."""
    code = "NO_SUCH_ELEMENT"


class NotOwnerError(ZkError, RuntimeError):
    """Release of a lock the caller does not hold (``threading.RLock`` raises ``RuntimeError`` too)."""

    code = "NOT_OWNER"


class WouldDeadlockError(ZkError, RuntimeError):
    """A read holder asked for the write lock: waiting would never end."""
    code = "WOULD_DEADLOCK"


class ClosedError(ZkError):
    """The client (or this object) is closed."""
    code = "CLOSED"


class ZkInterruptedError(ZkError):
    """The operation was cancelled."""
    code = "INTERRUPTED"


class InternalError(ZkError):
    """A bug in zkrecipes: please report it with the message."""
    code = "INTERNAL"


_BY_CODE: Dict[str, Type[ZkError]] = {
    cls.code: cls
    for cls in (
        InvalidPathError,
        InvalidArgumentError,
        ConnectionLossError,
        TlsRefusedError,
        SessionExpiredError,
        ZkTimeoutError,
        NoNodeError,
        NodeExistsError,
        NotEmptyError,
        BadVersionError,
        NoAuthError,
        AuthFailedError,
        NoSuchElementError,
        NotOwnerError,
        WouldDeadlockError,
        ClosedError,
        ZkInterruptedError,
        InternalError,
    )
}


def _from_native(code: str, message: str) -> ZkError:
    """Called by the native module to build the exception for a core error."""
    return _BY_CODE.get(code, InternalError)(message, code)
