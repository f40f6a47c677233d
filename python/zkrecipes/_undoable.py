"""Awaiting an operation whose result must not be dropped (a lock obtained, an item taken)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Tuple, TypeVar

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

Undo = Optional[Callable[[], None]]


async def undoable(future: "asyncio.Future[Tuple[T, Undo]]") -> T:
    """The operation's value, or, if the awaiting task is cancelled once the value has arrived, the
    operation undone (lock released, item put back) and the cancellation raised.

    ``asyncio.timeout`` (and ``wait_for`` from Python 3.12) cancel the caller's own task: a result
    set just before that is never seen by the caller, and would otherwise be lost.
    """
    try:
        value, _ = await future
    except BaseException:
        if future.done() and not future.cancelled() and future.exception() is None:
            _, undo = future.result()
            if undo is not None:
                undo()
        raise
    return value
