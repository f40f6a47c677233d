"""What the recipe classes share, written once: listeners, and ``with``/``async with`` around
``start`` and ``close``. A recipe class declares what is its own (its native object, the event
its listeners get) and inherits the rest."""

from __future__ import annotations

import threading
import warnings
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Generic, Optional, Type, TypeVar

from ._listeners import Listeners
from .errors import ZkError

if TYPE_CHECKING:
    import asyncio

E = TypeVar("E")
S = TypeVar("S", bound="Started")

# Listeners are made on first use (most objects never get one: a lock per request stays small),
# under one lock for all: adding a listener is rare.
_LISTENERS_MADE = threading.Lock()


class Listened(Generic[E]):
    """``add_listener``/``remove_listener`` over the native object's subscription. A class sets
    ``_event_of`` (the event made from the native callback's arguments) and ``_listeners =
    None`` in its ``__init__``; its docstring says which events its listeners hear."""

    __slots__ = ("_listeners",)
    _listeners: Optional[Listeners[E]]
    _event_of: ClassVar[Callable[..., Any]]

    def add_listener(self, fn: Callable[[E], Any], *, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        """``fn(event)`` for every event of this object from now on, in order (the class's
        docstring says which). Called on the library's listener thread, or on ``loop`` when
        given; ``fn`` may call any method of the library, this object's included. Adding the
        same ``fn`` twice adds it once."""
        with _LISTENERS_MADE:
            if self._listeners is None:
                # Every recipe's native object has `subscribe`; the class types its own `_native`.
                native: Any = getattr(self, "_native")
                self._listeners = Listeners(native.subscribe, type(self)._event_of)
            listeners = self._listeners
        listeners.add(fn, loop)

    def remove_listener(self, fn: Callable[[E], Any]) -> None:
        """Stops calling ``fn``; unknown listeners are ignored."""
        listeners = self._listeners
        if listeners is not None:
            listeners.remove(fn)


class Started:
    """An object that follows something once started: ``with`` starts it and closes it on
    leaving, ``async with`` does so without blocking the event loop."""

    __slots__ = ()

    def start(self) -> Any:
        """Starts following (each class says what)."""
        raise NotImplementedError

    async def start_async(self) -> Any:
        """``start`` without blocking the event loop."""
        raise NotImplementedError

    def close(self) -> None:
        """Stops following (each class says what it leaves behind)."""
        raise NotImplementedError

    async def close_async(self) -> None:
        """``close`` (which never waits for the server here)."""
        self.close()

    def _start_or_close(self) -> Any:
        """The native start; one interrupted by Ctrl-C (anything but the library's own error)
        closes the object, so that no node is left behind by a start nobody waits for."""
        native: Any = getattr(self, "_native")
        try:
            return native.start()
        except ZkError:
            raise
        except BaseException:
            native.close_soon()
            raise

    async def _start_async_or_close(self) -> Any:
        """``_start_or_close`` for asyncio: a cancelled start closes the object."""
        native: Any = getattr(self, "_native")
        try:
            return await native.start_async()
        except ZkError:
            raise
        except BaseException:
            native.close_soon()
            raise

    def __enter__(self: S) -> S:
        """Starts; leaving the block closes."""
        self.start()
        return self

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """Closes (closing never replaces an exception raised in the block)."""
        self.close()

    async def __aenter__(self: S) -> S:
        """Starts without blocking the event loop; leaving the block closes."""
        await self.start_async()
        return self

    async def __aexit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """Closes without blocking the event loop."""
        await self.close_async()


def _release_failed_too(what: str, body: BaseException, err: ZkError) -> None:
    """The block raised and the release failed too (the lock was lost meanwhile, the client
    closed): the block's own exception goes on, never replaced; the release's failure is
    told beside it (a note on the exception and a RuntimeWarning)."""
    message = f"zkrecipes: releasing {what} on the way out failed too: {err!r}"
    if hasattr(body, "add_note"):
        body.add_note(message)
    warnings.warn(message, RuntimeWarning, stacklevel=3)
