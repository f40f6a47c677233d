"""What the recipe classes share, written once: listeners, ``with``/``async with`` (around
``start`` and ``close``, ``acquire`` and ``release``, or a ``close`` alone) and the release on
the way out of a block. A recipe class declares what is its own (its native object, the event
its listeners get, what entering and leaving do) and inherits the rest."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Generic, Iterator, Optional, Type, TypeVar

from ._listeners import Listeners
from .errors import ZkError

if TYPE_CHECKING:
    import asyncio

E = TypeVar("E")
S = TypeVar("S", bound="Scoped")

# Listeners are made on first use (most objects never get one: a lock per request stays small),
# under one lock for all: adding a listener is rare.
_LISTENERS_MADE = threading.Lock()


class Listened(Generic[E]):
    """``add_listener``/``remove_listener`` over the native object's subscription. A class sets
    ``_event_of`` (the event made from the native callback's arguments); its docstring says
    which events its listeners hear."""

    __slots__ = ("_listeners",)
    # Unset until the first listener is added: no recipe's `__init__` has to set it.
    _listeners: Listeners[E]
    _event_of: ClassVar[Callable[..., Any]]

    def add_listener(self, fn: Callable[[E], Any], *, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        """``fn(event)`` for every event of this object from now on, in order (the class's
        docstring says which). Called on the library's listener thread, or on ``loop`` when
        given; ``fn`` may call any method of the library, this object's included. Adding the
        same ``fn`` twice adds it once."""
        with _LISTENERS_MADE:
            listeners: Optional[Listeners[E]] = getattr(self, "_listeners", None)
            if listeners is None:
                # Every recipe's native object has `subscribe`; the class types its own `_native`.
                native: Any = getattr(self, "_native")
                listeners = self._listeners = Listeners(native.subscribe, type(self)._event_of)
        listeners.add(fn, loop)

    def remove_listener(self, fn: Callable[[E], Any]) -> None:
        """Stops calling ``fn``; unknown listeners are ignored."""
        listeners: Optional[Listeners[E]] = getattr(self, "_listeners", None)
        if listeners is not None:
            listeners.remove(fn)


class Scoped:
    """``with`` and ``async with`` around what a class does on the way in (``_enter``: start,
    acquire, or nothing) and on the way out (``_exit``: close, release, settle), each with its
    ``_async`` form for ``async with``; the block gets the object itself."""

    __slots__ = ()

    def _enter(self) -> None:
        pass

    async def _enter_async(self) -> None:
        pass

    def _exit(self, exc: Optional[BaseException]) -> None:
        raise NotImplementedError

    async def _exit_async(self, exc: Optional[BaseException]) -> None:
        raise NotImplementedError

    def __enter__(self: S) -> S:
        """The object itself, once entered as its class says (started, acquired, as it is);
        leaving the block closes, releases or settles it."""
        self._enter()
        return self

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """Closes, releases or settles the object, as its class says; a failing release never
        replaces an exception raised in the block."""
        self._exit(exc)

    async def __aenter__(self: S) -> S:
        """``__enter__`` without blocking the event loop."""
        await self._enter_async()
        return self

    async def __aexit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        """``__exit__`` without blocking the event loop."""
        await self._exit_async(exc)


class Closing(Scoped):
    """An object that ``with`` closes on leaving, and ``async with`` without blocking the event loop."""

    __slots__ = ()

    def close(self) -> None:
        """Each class says what closing leaves behind."""
        raise NotImplementedError

    async def close_async(self) -> None:
        """``close`` without blocking the event loop."""
        native: Any = getattr(self, "_native")
        await native.close_async()

    def _exit(self, exc: Optional[BaseException]) -> None:
        self.close()

    async def _exit_async(self, exc: Optional[BaseException]) -> None:
        await self.close_async()


class Started(Closing):
    """An object that follows something once started: ``with`` starts it and closes it on
    leaving, ``async with`` does so without blocking the event loop."""

    __slots__ = ()

    def start(self) -> Any:
        """Starts following (each class says what)."""
        raise NotImplementedError

    async def start_async(self) -> Any:
        """``start`` without blocking the event loop."""
        raise NotImplementedError

    def _enter(self) -> None:
        self.start()

    async def _enter_async(self) -> None:
        await self.start_async()

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


@contextlib.contextmanager
def _told_beside(exc: Optional[BaseException], what: str) -> Iterator[None]:
    """Around a release on the way out of a ``with`` block (of ``what``): after a block that
    raised ``exc``, the release's own failure (the lock lost meanwhile, the client closed) is
    told beside ``exc``, never in its place (a note on it and a RuntimeWarning); after a clean
    block it raises as it is."""
    try:
        yield
    except ZkError as err:
        if exc is None:
            raise
        message = f"zkrecipes: releasing {what} on the way out failed too: {err!r}"
        if hasattr(exc, "add_note"):
            exc.add_note(message)
        warnings.warn(message, RuntimeWarning, stacklevel=_user_level())


# The frames a release on the way out of a block passes through: this package's and contextlib's.
_OURS = (os.path.dirname(os.path.abspath(__file__)) + os.sep, contextlib.__file__)


def _user_level() -> int:
    """The ``stacklevel``, for its caller's ``warnings.warn``, of the first frame outside this
    package (the user's ``with`` line), however many of the package's frames the exit went through."""
    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_OURS):
        level, frame = level + 1, frame.f_back
    return level
