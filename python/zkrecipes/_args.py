"""Argument checks shared by the recipe modules (none of them imports ``client``,
which imports them all)."""

from __future__ import annotations

from typing import Any, Optional

from . import _native


def _timeout(timeout: Optional[float]) -> Optional[float]:
    """Seconds as the native module takes them (it applies ``threading``'s rules: ``None`` and
    ``-1`` wait forever, ``blocking=False`` with a timeout is refused); only the type is checked here."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, got {type(timeout).__name__}")
    return float(timeout)


def _count(name: str, count: Any) -> int:
    """A count as the native module takes it (a 64-bit integer; the core decides the range and
    names it): only the type is checked here. An int beyond 64 bits is out of every range; it
    is clamped so that the core refuses it with its range instead of the native conversion
    raising ``OverflowError`` (the number the message quotes is then the clamped one)."""
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"{name} must be an int, got {type(count).__name__}")
    return max(min(count, 2**63 - 1), -(2**63))


def _client(client: Any) -> _native.NativeClient:
    native = getattr(client, "_native", None)
    if not isinstance(native, _native.NativeClient):
        raise TypeError(f"client must be a zkrecipes.Client, got {type(client).__name__}")
    return native


def _int(name: str, value: Any) -> int:
    """A number a counter's node holds (a Java ``int`` or ``long``): only the type is checked
    here; the core decides the width and names the argument (``InvalidArgumentError``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    return value


def _data(name: str, data: Any) -> bytes:
    """A node's data as the native module takes it: ``bytes`` (a ``bytearray`` or
    ``memoryview`` is copied); the core decides the size."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"{name} must be bytes, got {type(data).__name__}")
