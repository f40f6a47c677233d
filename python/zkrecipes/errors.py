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
    code = "INVALID_PATH"


class InvalidArgumentError(ZkError, ValueError):
    code = "INVALID_ARGUMENT"


class ConnectionLossError(ZkError, ConnectionError):
    code = "CONNECTION_LOSS"


class SessionExpiredError(ZkError):
    code = "SESSION_EXPIRED"


class ZkTimeoutError(ZkError, TimeoutError):
    code = "TIMEOUT"


class NoNodeError(ZkError):
    code = "NO_NODE"


class NodeExistsError(ZkError):
    code = "NODE_EXISTS"


class NotEmptyError(ZkError):
    code = "NOT_EMPTY"


class BadVersionError(ZkError):
    code = "BAD_VERSION"


class NoAuthError(ZkError, PermissionError):
    code = "NO_AUTH"


class AuthFailedError(ZkError, PermissionError):
    code = "AUTH_FAILED"


class NoSuchElementError(ZkError, LookupError):
    code = "NO_SUCH_ELEMENT"


class NotOwnerError(ZkError, RuntimeError):
    """Release of a lock the caller does not hold (``threading.RLock`` raises ``RuntimeError`` too)."""

    code = "NOT_OWNER"


class WouldDeadlockError(ZkError, RuntimeError):
    code = "WOULD_DEADLOCK"


class ClosedError(ZkError):
    code = "CLOSED"


class ZkInterruptedError(ZkError):
    code = "INTERRUPTED"


class InternalError(ZkError):
    code = "INTERNAL"


_BY_CODE: Dict[str, Type[ZkError]] = {
    cls.code: cls
    for cls in (
        InvalidPathError,
        InvalidArgumentError,
        ConnectionLossError,
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
