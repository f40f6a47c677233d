"""Awaiting an operation whose result must not be dropped (a lock obtained, an item taken)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple, TypeVar

if TYPE_CHECKING:
    import asyncio

    from ._native import Undo

T = TypeVar("T")


async def undoable(future: "asyncio.Future[Tuple[T, Optional[Undo]]]") -> T:
    """The operation's value, or, if the awaiting task is cancelled once the value has arrived, the
    operation undone (lock released, item put back) and the cancellation raised.

    The ``Undo`` that comes with the value undoes when it is dropped unkept, so a resolution the
    loop never ran (closed first) loses nothing either; once the value is ours it is kept.

    ``asyncio.timeout`` (and ``wait_for`` from Python 3.12) cancel the caller's own task: a result
    set just before that is never seen by the caller, and would otherwise be lost.
    """
    try:
        value, undo = await future
    except BaseException:
        if future.done() and not future.cancelled() and future.exception() is None:
            _, undo = future.result()
            if undo is not None:
                undo()
        raise
    if undo is not None:
        undo.keep()
    return value
