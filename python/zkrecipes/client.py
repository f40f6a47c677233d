"""The ZooKeeper client that every recipe object shares."""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any, Callable, Optional, Tuple, Type

from . import _native
from ._listeners import Listeners
from .election import LeaderElectionSupport
from .events import ConnectionState, connection_state
from .lock import ReadWriteLock, WriteLock
from .queue import DistributedQueue


class Client:
    """One ZooKeeper session (renewed by itself after expiry), shared by recipes.

    ``Client("zk1:2181,zk2:2181/chroot")`` connects and blocks until connected
    or ``connect_timeout`` passes (``ConnectionLossError``). In asyncio code use
    ``await Client.connect_async(...)``. ``close()`` ends the session: held
    locks are released and election offers withdrawn.
    """

    _native: _native.NativeClient

    def __init__(
        self,
        connect_string: str,
        *,
        session_timeout: float = 10.0,
        connect_timeout: float = 10.0,
        auth: Optional[Tuple[str, str]] = None,
        identity: Optional[str] = None,
    ) -> None:
        native = _native.NativeClient.connect(connect_string, session_timeout, connect_timeout, auth, identity)
        self._attach(native)

    @classmethod
    async def connect_async(
        cls,
        connect_string: str,
        *,
        session_timeout: float = 10.0,
        connect_timeout: float = 10.0,
        auth: Optional[Tuple[str, str]] = None,
        identity: Optional[str] = None,
    ) -> "Client":
        native = await _native.NativeClient.connect_async(
            connect_string, session_timeout, connect_timeout, auth, identity
        )
        client = cls.__new__(cls)
        client._attach(native)
        return client

    def _attach(self, native: _native.NativeClient) -> None:
        self._native = native
        self._listeners: Listeners[ConnectionState] = Listeners(native.subscribe, connection_state)

    @property
    def state(self) -> ConnectionState:
        return ConnectionState(self._native.state())

    @property
    def session_id(self) -> int:
        return self._native.session_id()

    @property
    def identity(self) -> str:
        """Written into lock and election nodes (default: the host name)."""
        return self._native.identity()

    def add_listener(
        self, fn: Callable[[ConnectionState], Any], *, loop: Optional[asyncio.AbstractEventLoop] = None
    ) -> None:
        """``fn(state)`` on every connection state change, on a library thread (or ``loop``)."""
        self._listeners.add(fn, loop)

    def remove_listener(self, fn: Callable[[ConnectionState], Any]) -> None:
        self._listeners.remove(fn)

    def write_lock(self, dir: str) -> "WriteLock":
        return WriteLock(self, dir)

    def read_write_lock(self, dir: str) -> "ReadWriteLock":
        return ReadWriteLock(self, dir)

    def queue(self, dir: str) -> "DistributedQueue":
        return DistributedQueue(self, dir)

    def leader_election(self, root: str, host_name: Optional[str] = None) -> "LeaderElectionSupport":
        return LeaderElectionSupport(self, root, host_name)

    def close(self) -> None:
        self._native.close()

    async def close_async(self) -> None:
        await self._native.close_async()

    def __enter__(self) -> "Client":
        return self

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        self.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        await self.close_async()

    def __repr__(self) -> str:
        return f"<zkrecipes.Client {self.state.value}>"

