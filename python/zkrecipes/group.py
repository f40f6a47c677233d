"""Who is alive: a node that stays while its owner does (Curator's ``PersistentNode``) and group
membership built on it (Curator's ``GroupMember``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Union

from . import _native
from ._base import Listened, Started
from ._args import _client, _data
from .cache import NodeEvent, node_event
from .events import _Named

if TYPE_CHECKING:
    from .client import Client

Data = Union[bytes, bytearray, memoryview]


class NodeMode(_Named):
    """How a ``PersistentNode`` is created (ZooKeeper's ``CreateMode`` names)."""

    EPHEMERAL = "EPHEMERAL"
    EPHEMERAL_SEQUENTIAL = "EPHEMERAL_SEQUENTIAL"
    PERSISTENT = "PERSISTENT"
    PERSISTENT_SEQUENTIAL = "PERSISTENT_SEQUENTIAL"


def _mode(mode: Any) -> str:
    """A mode's name as the native module takes it: a ``NodeMode`` or its name in any case
    (``"ephemeral"``); the native module refuses other names."""
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a NodeMode or its name, got {type(mode).__name__}")
    return str(mode).upper()


class PersistentNode(Started):
    """A node at ``path`` that stays (Curator's ``PersistentNode``): created at ``start()`` and
    created again whenever it is deleted or its session expires, until ``close()``.

    An ephemeral node of that name held by another session is never taken over: ``start()``
    waits until it is gone (Curator's adopts it, so that two processes believe they own one
    node). A sequential node gets Curator's protected name (``_c_<uuid>-<name><sequence>``), so
    a create whose reply was lost is found again, never made twice. Missing parents are created
    as containers. ``with client.persistent_node(path) as node:`` starts and closes. A start
    interrupted by Ctrl-C or a cancelled await closes the node, so that none is left behind its
    caller's back. A node garbage collected unclosed stops being re-created (an ephemeral one
    then goes with its session).
    """

    def __init__(self, client: Client, path: str, data: Data = b"", mode: Union[NodeMode, str] = NodeMode.EPHEMERAL) -> None:
        """The node at ``path`` (for a sequential mode, the prefix of its name) with ``data``;
        nothing is sent before ``start()``. ``InvalidArgumentError`` for data over the
        server's limit or an unknown mode."""
        self._native = _native.NativePersistentNode(_client(client), path, _mode(mode), _data("data", data))

    @property
    def path(self) -> str:
        """The path it was made with (a sequential node's prefix)."""
        return self._native.path()

    @property
    def actual_path(self) -> Optional[str]:
        """The node's path once created (a sequential node's full name), ``None`` before and
        after ``close()``."""
        return self._native.actual_path()

    @property
    def data(self) -> bytes:
        """The data the node is (re-)created with."""
        return self._native.data()

    def start(self) -> str:
        """Starts keeping the node and returns its path once it exists. ``ClosedError`` once
        closed; the server's error (``NoAuthError``) if it cannot be created."""
        path: str = self._start_or_close()
        return path

    async def start_async(self) -> str:
        """``start`` without blocking the event loop; cancelling it closes the node."""
        path: str = await self._start_async_or_close()
        return path

    def set_data(self, data: Data) -> None:
        """Writes ``data`` now (if the node exists) and for every later re-create."""
        self._native.set_data(_data("data", data))

    async def set_data_async(self, data: Data) -> None:
        """``set_data`` without blocking the event loop."""
        await self._native.set_data_async(_data("data", data))

    def close(self) -> None:
        """Stops re-creating the node and deletes it, confirmed. Idempotent; a closed node
        cannot start again."""
        self._native.close()

    def __repr__(self) -> str:
        actual = self.actual_path
        return f"<PersistentNode {self.path} {'not created' if actual is None else actual}>"


class GroupMember(Started, Listened[NodeEvent]):
    """Member ``id`` of the group at ``group`` (Curator's ``GroupMember`` layout: an ephemeral
    node ``<group>/<id>`` whose data is the member's payload).

    ``start()`` joins and returns once this member is in its own view; ``members()`` is then
    every member's id with its payload, from a cache of the group (no request), this member
    always included. The member's node is a ``PersistentNode``: a member whose session expired
    joins again by itself, and a second live member with the same id waits until the first is
    gone instead of taking its node over. A member that dies leaves everybody's view when its
    session ends. ``close()`` leaves (the node deleted, confirmed); or ``with
    client.group_member(group, id) as member:``. A start interrupted by Ctrl-C or a cancelled
    await leaves. The id is a node name: an empty one, ``.``, ``..`` or one with ``/`` is
    ``InvalidArgumentError``.

    Listeners hear every membership change from now on, in order: ``CREATED`` (a member joined;
    ``event.node.name`` is its id, ``event.node.data`` its payload), ``CHANGED`` (a new
    payload), ``DELETED`` (left), ``INITIALIZED`` and the connection events, as a cache's
    listener. A listener added before ``start()`` hears every member found, this one included.
    """

    _event_of = staticmethod(node_event)

    def __init__(self, client: Client, group: str, id: str, payload: Data = b"") -> None:
        """Nothing is sent before ``start()``."""
        if not isinstance(id, str):
            raise TypeError(f"id must be a str, got {type(id).__name__}")
        self._native = _native.NativeGroupMember(_client(client), group, id, _data("payload", payload))

    @property
    def id(self) -> str:
        """This member's id (its node's name)."""
        return self._native.id()

    @property
    def group(self) -> str:
        """The group's path (its members' nodes are its children)."""
        return self._native.group()

    def start(self) -> None:
        """Joins, and loads the membership; returns once this member is in it."""
        self._start_or_close()

    async def start_async(self) -> None:
        """``start`` without blocking the event loop; cancelling it leaves."""
        await self._start_async_or_close()

    def members(self) -> Dict[str, bytes]:
        """Every member's id with its payload, sorted by id (this member included once
        started)."""
        return self._native.members()

    def set_payload(self, payload: Data) -> None:
        """A new payload, written now and kept for every re-join."""
        self._native.set_payload(_data("payload", payload))

    async def set_payload_async(self, payload: Data) -> None:
        """``set_payload`` without blocking the event loop."""
        await self._native.set_payload_async(_data("payload", payload))

    def close(self) -> None:
        """Leaves the group (the node deleted, confirmed) and stops following it. Idempotent."""
        self._native.close()

    def __repr__(self) -> str:
        return f"<GroupMember {self.id!r} of {self.group}>"
