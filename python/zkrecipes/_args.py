"""Argument checks shared by the recipe modules (none of them imports ``client``,
which imports them all)."""

from __future__ import annotations

from typing import Any, Optional

from . import _native


def _timeout(timeout: Optional[float], blocking: bool = True) -> Optional[float]:
    """Seconds as the native module takes them: ``None`` (or ``-1``, as ``threading``) waits forever.

    A timeout with ``blocking=False`` is refused with ``ValueError``, as ``threading.Lock`` does.
    """
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, got {type(timeout).__name__}")
    if timeout == -1:
        return None
    if not blocking:
        raise ValueError("can't specify a timeout for a non-blocking call")
    return float(timeout)


def _client(client: Any) -> _native.NativeClient:
    native = getattr(client, "_native", None)
    if not isinstance(native, _native.NativeClient):
        raise TypeError(f"client must be a zkrecipes.Client, got {type(client).__name__}")
    return native
