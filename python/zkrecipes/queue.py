"""A FIFO queue of ``qn-`` nodes, shared with Apache's ``DistributedQueue`` and Curator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Union

from . import _native
from ._args import _client, _count, _timeout
from ._base import Closing
from ._spans import traced, traced_async, wait_span
from ._undoable import undoable

if TYPE_CHECKING:
    from .client import Client

Payload = Union[bytes, bytearray, memoryview]

_TAKE = wait_span("queue.take")


def _bytes(data: Any) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"queue items are bytes, got {type(data).__name__}")


class DistributedQueue(Closing):
    """FIFO; each item goes to exactly one consumer.

    An ``offer`` that raises ``ConnectionLossError`` may or may not have enqueued the item.
    Payloads larger than ``max_payload`` raise ``InvalidArgumentError`` before anything is sent.
    """

    def __init__(self, client: Client, dir: str) -> None:
        """A queue on ``dir`` of ``client``; the directory is created on first use."""
        self._native = _native.NativeQueue(_client(client), dir)
        self._dir = dir

    @property
    def max_payload(self) -> int:
        """The largest item, in bytes, that ``offer`` accepts (what the server allows, minus the path)."""
        return self._native.max_payload()

    def offer(self, data: Payload) -> str:
        """Appends ``data``; returns the item's node path."""
        return self._native.offer(_bytes(data))

    def peek(self) -> Optional[bytes]:
        """The head item, or ``None`` when the queue is empty; nothing is removed."""
        return self._native.peek()

    def poll(self) -> Optional[bytes]:
        """Removes and returns the head item, or ``None`` when the queue is empty."""
        return self._native.poll()

    def element(self) -> bytes:
        """The head item; ``NoSuchElementError`` when empty."""
        return self._native.element()

    def remove(self) -> bytes:
        """Removes the head item; ``NoSuchElementError`` when empty."""
        return self._native.remove()

    def take(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """Waits for an item: ``None`` if ``timeout`` seconds pass first (``None`` or ``-1``: wait as long as it takes)."""
        seconds = _timeout(timeout)
        return traced(_TAKE, self._path, lambda: self._native.take(seconds))

    def poll_many(self, max: int) -> List[bytes]:
        """Removes up to ``max`` items (1 to 1000) from the head, in queue order, in one
        transaction (one write for the batch); ``[]`` when the queue is empty."""
        return self._native.poll_many(_count("max", max))

    def take_many(self, max: int, timeout: Optional[float] = None) -> List[bytes]:
        """Waits for an item as ``take`` does, then removes up to ``max`` as ``poll_many``
        does; ``[]`` if ``timeout`` seconds pass first."""
        most, seconds = _count("max", max), _timeout(timeout)
        return traced(_TAKE, self._path, lambda: self._native.take_many(most, seconds))

    def size(self) -> int:
        """The number of items: the directory's child count, one request at any depth.

        A child that is not an item (written into the directory by another program) is counted too.
        """
        return self._native.size()

    def __len__(self) -> int:
        """The number of items (``size()``)."""
        return self.size()

    async def offer_async(self, data: Payload) -> str:
        """``offer`` without blocking the event loop."""
        return await self._native.offer_async(_bytes(data))

    async def peek_async(self) -> Optional[bytes]:
        """``peek`` without blocking the event loop."""
        return await self._native.peek_async()

    async def poll_async(self) -> Optional[bytes]:
        """``poll`` without blocking the event loop."""
        return await undoable(self._native.poll_async())

    async def element_async(self) -> bytes:
        """``element`` without blocking the event loop."""
        return await self._native.element_async()

    async def remove_async(self) -> bytes:
        """``remove`` without blocking the event loop."""
        return await undoable(self._native.remove_async())

    async def take_async(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """``take`` without blocking the event loop; cancelling it gives a taken item back."""
        seconds = _timeout(timeout)
        return await traced_async(_TAKE, self._path, lambda: undoable(self._native.take_async(seconds)))

    async def poll_many_async(self, max: int) -> List[bytes]:
        """``poll_many`` without blocking the event loop; cancelling it gives the batch back."""
        return await undoable(self._native.poll_many_async(_count("max", max)))

    async def take_many_async(self, max: int, timeout: Optional[float] = None) -> List[bytes]:
        """``take_many`` without blocking the event loop; cancelling it gives the batch back."""
        most, seconds = _count("max", max), _timeout(timeout)
        return await traced_async(_TAKE, self._path, lambda: undoable(self._native.take_many_async(most, seconds)))

    async def size_async(self) -> int:
        """``size`` without blocking the event loop."""
        return await self._native.size_async()

    def _path(self) -> str:
        """The ``path`` of its takes' spans."""
        return self._dir

    def close(self) -> None:
        """Deletes this consumer's claim marker (also done when the object is collected); the
        queue stays usable."""
        self._native.close()
