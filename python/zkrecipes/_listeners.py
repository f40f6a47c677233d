"""Plain callables as listeners, optionally delivered on an asyncio loop."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, Optional, TypeVar

if TYPE_CHECKING:
    import asyncio

E = TypeVar("E")

# What the native module calls: (event name, fencing token, ZkError reason) for events, or a
# recipe's own values ((value, version) for a shared count).
NativeCallback = Callable[..., None]


class Listeners(Generic[E]):
    """Registered callables of one recipe object, each with its native subscription."""

    def __init__(self, subscribe: Callable[[NativeCallback], Any], make: Callable[..., E]) -> None:
        self._subscribe = subscribe
        self._make = make
        self._subscriptions: Dict[Callable[[E], Any], Any] = {}
        self._lock = threading.Lock()

    def add(self, fn: Callable[[E], Any], loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        if not callable(fn):
            raise TypeError(f"listener must be callable, got {type(fn).__name__}")
        if loop is not None and not _is_event_loop(loop):
            raise TypeError("loop must be an asyncio event loop")
        make = self._make

        def deliver(*native: Any) -> None:
            event = make(*native)
            if loop is None:
                fn(event)
            else:
                loop.call_soon_threadsafe(fn, event)

        with self._lock:
            if fn in self._subscriptions:
                return
            self._subscriptions[fn] = self._subscribe(deliver)

    def remove(self, fn: Callable[[E], Any]) -> None:
        with self._lock:
            subscription = self._subscriptions.pop(fn, None)
        if subscription is not None:
            subscription.cancel()


def _is_event_loop(loop: Any) -> bool:
    # asyncio is imported only by programs that use it: importing it costs a sync program
    # 11 MB of memory (issue 17). A program that has a loop has imported asyncio already.
    import asyncio

    return isinstance(loop, asyncio.AbstractEventLoop)
