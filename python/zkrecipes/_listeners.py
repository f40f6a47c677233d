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
        # An `async def` listener runs as a task of `loop` (a listener is called from the
        # library's thread, where nothing would await its coroutine).
        is_coroutine = _is_async_def(fn)
        if is_coroutine and loop is None:
            raise TypeError("an async listener needs the loop to run on: add_listener(fn, loop=...)")

        def deliver(*native: Any) -> None:
            event = make(*native)
            if loop is None:
                fn(event)
            elif is_coroutine:
                loop.call_soon_threadsafe(_run_on, loop, fn, event)
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


def _is_async_def(fn: Any) -> bool:
    # The code flag `inspect.iscoroutinefunction` reads, without importing `inspect` (as
    # `asyncio` below, it costs a sync program memory).
    CO_COROUTINE = 0x80
    return bool(getattr(getattr(fn, "__code__", None), "co_flags", 0) & CO_COROUTINE)


def _run_on(loop: asyncio.AbstractEventLoop, fn: Callable[[Any], Any], event: Any) -> None:
    """Runs an async listener as a task of `loop`; what it raises goes to the loop's exception
    handler, as a plain listener's does."""
    task = loop.create_task(fn(event))

    def told(done: "asyncio.Task[Any]") -> None:
        if not done.cancelled() and done.exception() is not None:
            loop.call_exception_handler({"message": "a zkrecipes listener failed", "exception": done.exception(),
                                         "task": done})

    task.add_done_callback(told)


def _is_event_loop(loop: Any) -> bool:
    # asyncio is imported only by programs that use it: importing it costs a sync program
    # 11 MB of memory (issue 17). A program that has a loop has imported asyncio already.
    import asyncio

    return isinstance(loop, asyncio.AbstractEventLoop)
