"""Service discovery on Curator's registry (``curator-x-discovery``, which Spring Cloud Zookeeper
uses): register instances, query them, keep them in a cache, and choose one to call."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _native
from ._base import Closing, Listened, Started
from ._args import _client, _timeout
from .events import _Named, _OfKind

if TYPE_CHECKING:
    from .client import Client
    from .errors import ZkError

#: Spring Cloud Zookeeper's payload class: its ``DiscoveryClient`` reads only payloads that name it.
SPRING_PAYLOAD_CLASS: str = _native.SPRING_PAYLOAD_CLASS


class ServiceType(_Named):
    """How an instance's node lives (Curator's ``ServiceType``)."""

    DYNAMIC = "DYNAMIC"
    STATIC = "STATIC"
    PERMANENT = "PERMANENT"
    DYNAMIC_SEQUENTIAL = "DYNAMIC_SEQUENTIAL"


class ProviderStrategy(_Named):
    """How a ``ServiceProvider`` chooses among the instances it may choose."""

    ROUND_ROBIN = "ROUND_ROBIN"
    RANDOM = "RANDOM"
    STICKY = "STICKY"


# What the native module passes and takes: the instance's fields, its payload and another
# writer's fields as JSON text.
_Row = Tuple[str, Optional[str], Optional[str], Optional[int], Optional[int], Optional[str], Optional[int],
             Optional[str], Optional[str], Optional[bool], Optional[str]]


@dataclass(frozen=True)
class ServiceInstance:
    """One instance of a service, as Curator's ``ServiceInstance`` (its JSON, byte for byte).

    ``id`` and ``registration_time_utc`` are given when ``None``: a random UUID and now, by
    ``ServiceDiscovery.register``, which returns the instance as registered. ``payload`` is any
    JSON value (``dict``, ``list``, ``str``, numbers, ``None``); ``spring_payload`` makes Spring
    Cloud Zookeeper's. ``uri_spec`` is a Curator URI template (``"{scheme}://{address}:{port}"``)
    and ``uri()`` fills it. ``extra`` keeps the fields of another writer (a newer Curator), so
    that an update writes them back. Change an instance with ``dataclasses.replace``."""

    name: str
    address: Optional[str] = None
    port: Optional[int] = None
    ssl_port: Optional[int] = None
    payload: Any = None
    id: Optional[str] = None
    service_type: Union[ServiceType, str] = ServiceType.DYNAMIC
    uri_spec: Optional[str] = None
    enabled: bool = True
    registration_time_utc: Optional[int] = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def uri(self) -> Optional[str]:
        """The URI its ``uri_spec`` makes (Curator's ``buildUriSpec``), ``None`` without one."""
        uri: Optional[str] = _native._instance_uri(self._row())
        return uri

    def to_json(self) -> bytes:
        """The JSON the registry holds for it, as Curator writes it."""
        return bytes(_native._instance_to_json(self._row()))

    @staticmethod
    def from_json(data: Union[bytes, str]) -> ServiceInstance:
        """The instance a registrant's JSON describes; ``InvalidArgumentError`` saying what is
        wrong for one that is no instance."""
        raw = data.encode() if isinstance(data, str) else bytes(data)
        return _instance(_native._instance_from_json(raw))

    def __hash__(self) -> int:
        # By its key: the payload and the extra fields may be dicts, which do not hash.
        return hash((self.name, self.id))

    def _row(self) -> _Row:
        if not isinstance(self.name, str):
            raise TypeError(f"name must be a str, got {type(self.name).__name__}")
        for what, number in (("port", self.port), ("ssl_port", self.ssl_port),
                             ("registration_time_utc", self.registration_time_utc)):
            # A bool is an int to Python, and True would be port 1.
            if number is not None and (isinstance(number, bool) or not isinstance(number, int)):
                raise TypeError(f"{what} must be an int, got {type(number).__name__}")
        if not isinstance(self.enabled, bool):
            raise TypeError(f"enabled must be a bool, got {type(self.enabled).__name__}")
        return (self.name, self.id, self.address, self.port, self.ssl_port, json.dumps(self.payload),
                self.registration_time_utc, str(self.service_type).upper(), self.uri_spec, self.enabled,
                json.dumps(dict(self.extra)))


def spring_payload(id: str, name: str, metadata: Optional[Mapping[str, str]] = None) -> Dict[str, Any]:
    """Spring Cloud Zookeeper's payload (its ``ZookeeperInstance``): with it an instance is read
    by Spring's ``DiscoveryClient``, which fails a whole service for one payload without its
    ``@class``. ``metadata`` defaults to ``{"instance_status": "UP"}``."""
    shown = dict(metadata) if metadata is not None else {"instance_status": "UP"}
    payload: Dict[str, Any] = json.loads(_native._spring_payload(id, name, json.dumps(shown)))
    return payload


def _instance(row: _Row) -> ServiceInstance:
    name, id, address, port, ssl_port, payload, time, kind, uri_spec, enabled, extra = row
    return ServiceInstance(name=name, address=address, port=port, ssl_port=ssl_port,
                           payload=json.loads(payload) if payload is not None else None, id=id,
                           service_type=ServiceType(kind) if kind else ServiceType.DYNAMIC, uri_spec=uri_spec,
                           enabled=bool(enabled), registration_time_utc=time,
                           extra=json.loads(extra) if extra else {})


class DiscoveryEventKind(_Named):
    """What happens to a registration without a call."""

    #: Its node was made again after it was gone (a new session, or somebody deleted it).
    REREGISTERED = "REREGISTERED"
    #: It is no longer kept: the server refused its node (``NoAuthError``).
    REGISTRATION_STOPPED = "REGISTRATION_STOPPED"


@dataclass(frozen=True, eq=False)
class DiscoveryEvent(_OfKind):
    """What a ``ServiceDiscovery`` listener receives: the kind, the service, the instance's id,
    and the error of a ``REGISTRATION_STOPPED``."""

    kind: DiscoveryEventKind
    service: str
    id: str
    reason: Optional[ZkError] = None


def _discovery_event(name: str, service: str, id: str, reason: Optional[ZkError]) -> DiscoveryEvent:
    return DiscoveryEvent(DiscoveryEventKind(name), service, id, reason)


class ServiceCacheEventKind(_Named):
    """A service cache's events: its instances' changes, then the cache's own."""

    ADDED = "ADDED"
    CHANGED = "CHANGED"
    REMOVED = "REMOVED"
    INITIALIZED = "INITIALIZED"
    SUSPENDED = "SUSPENDED"
    RECONNECTED = "RECONNECTED"
    LOST = "LOST"


@dataclass(frozen=True, eq=False)
class ServiceCacheEvent(_OfKind):
    """What a ``ServiceCache`` listener receives: ``instance`` as it is now (``ADDED``,
    ``CHANGED``) or was (``REMOVED``), ``old`` before a ``CHANGED``."""

    kind: ServiceCacheEventKind
    instance: Optional[ServiceInstance] = None
    old: Optional[ServiceInstance] = None


def _cache_event(name: str, now: Optional[_Row], old: Optional[_Row]) -> ServiceCacheEvent:
    return ServiceCacheEvent(ServiceCacheEventKind(name), _instance(now) if now else None,
                             _instance(old) if old else None)


class ServiceDiscovery(Closing, Listened[DiscoveryEvent]):
    """Curator's service registry at ``base_path`` (Spring Cloud Zookeeper's default is
    ``/services``): instances at ``<base>/<name>/<id>``, each its JSON as Curator 5.9 writes it.

    ``register`` returns once the instance's node exists. A DYNAMIC instance (the default) is an
    ephemeral node kept for as long as this object is open: registered again by itself under
    every new session (listeners hear ``REREGISTERED``), never taken from another live session
    (``NodeExistsError`` naming it; Curator deletes the other's node). ``update`` writes an
    instance this object registered; ``unregister`` deletes one; ``close`` deletes them all and
    closes the caches and providers made here (or ``with client.service_discovery() as
    registry:``). A registration whose caller is interrupted goes on, and ``close`` removes it.
    Queries read the registry now; an instance whose JSON is no instance is left out of
    ``query_for_instances`` (Spring's reader fails them all for one)."""

    _event_of = staticmethod(_discovery_event)

    def __init__(self, client: Client, base_path: str = "/services") -> None:
        """Nothing is sent before the first call."""
        self._native = _native.NativeServiceDiscovery(_client(client), base_path)

    @property
    def base_path(self) -> str:
        """The registry's base path (its services are the children)."""
        return self._native.base_path()

    def register(self, instance: ServiceInstance) -> ServiceInstance:
        """Registers ``instance`` (again: an update) and returns it as registered, its id and time given."""
        return _instance(self._native.register(_row(instance)))

    async def register_async(self, instance: ServiceInstance) -> ServiceInstance:
        """``register`` without blocking the event loop."""
        return _instance(await self._native.register_async(_row(instance)))

    def update(self, instance: ServiceInstance) -> None:
        """Writes an instance this object registered; ``NoNodeError`` for another."""
        self._native.update(_row(instance))

    async def update_async(self, instance: ServiceInstance) -> None:
        """``update`` without blocking the event loop."""
        await self._native.update_async(_row(instance))

    def unregister(self, instance: ServiceInstance) -> None:
        """Deletes the instance's node, confirmed; nothing to do for one this object did not register."""
        self._native.unregister(*_key(instance))

    async def unregister_async(self, instance: ServiceInstance) -> None:
        """``unregister`` without blocking the event loop."""
        await self._native.unregister_async(*_key(instance))

    def registered(self) -> List[ServiceInstance]:
        """The instances this object keeps registered, as last written."""
        return [_instance(row) for row in self._native.registered()]

    def query_for_names(self) -> List[str]:
        """Every service's name, sorted."""
        return self._native.query_for_names()

    async def query_for_names_async(self) -> List[str]:
        """``query_for_names`` without blocking the event loop."""
        return await self._native.query_for_names_async()

    def query_for_instances(self, name: str) -> List[ServiceInstance]:
        """Every instance of service ``name``, sorted by id, read now."""
        return [_instance(row) for row in self._native.query_for_instances(name)]

    async def query_for_instances_async(self, name: str) -> List[ServiceInstance]:
        """``query_for_instances`` without blocking the event loop."""
        return [_instance(row) for row in await self._native.query_for_instances_async(name)]

    def query_for_instance(self, name: str, id: str) -> Optional[ServiceInstance]:
        """Service ``name``'s instance ``id``, ``None`` if there is none."""
        row = self._native.query_for_instance(name, id)
        return _instance(row) if row is not None else None

    async def query_for_instance_async(self, name: str, id: str) -> Optional[ServiceInstance]:
        """``query_for_instance`` without blocking the event loop."""
        row = await self._native.query_for_instance_async(name, id)
        return _instance(row) if row is not None else None

    def service_cache(self, name: str) -> ServiceCache:
        """A ``ServiceCache`` of service ``name`` (start it, or ``with``)."""
        return ServiceCache(self._native.service_cache(name))

    def service_provider(self, name: str, strategy: Union[ProviderStrategy, str] = ProviderStrategy.ROUND_ROBIN,
                         down_timeout: Optional[float] = None, down_errors: Optional[int] = None) -> ServiceProvider:
        """A ``ServiceProvider`` of service ``name`` (start it, or ``with``): ``down_errors``
        ``note_error`` calls within ``down_timeout`` seconds take an instance down for that long
        (Curator's defaults: 2 within 30 s)."""
        timeout = _timeout(down_timeout)
        return ServiceProvider(self._native.service_provider(
            name, str(strategy), None if timeout is None else timeout * 1000.0, down_errors))

    def close(self) -> None:
        """Unregisters every instance (each delete confirmed) and closes the caches made here. Idempotent."""
        self._native.close()

    async def close_async(self) -> None:
        """``close`` without blocking the event loop."""
        await self._native.close_async()

    def __repr__(self) -> str:
        return f"<ServiceDiscovery {self.base_path}>"


def _row(instance: Any) -> _Row:
    if not isinstance(instance, ServiceInstance):
        raise TypeError(f"instance must be a ServiceInstance, got {type(instance).__name__}")
    return instance._row()


def _key(instance: Any) -> Tuple[str, str]:
    row = _row(instance)
    if row[1] is None:
        raise TypeError("the instance has no id: unregister the instance register() returned")
    return row[0], row[1]


class ServiceCache(Started, Listened[ServiceCacheEvent]):
    """A service's instances kept in memory (Curator's ``ServiceCache``), on one watch.

    ``start()`` returns once the instances are loaded; ``instances()`` answers from memory, one
    consistent copy (never a torn read). After a disconnect or a new session the service is read
    again and listeners hear exactly the difference. An instance whose JSON is no instance is
    left out. Nothing is created: a service nobody registered yet is empty until it appears.
    Listeners hear ``ADDED``, ``CHANGED`` (with ``old``), ``REMOVED``, ``INITIALIZED`` and the
    connection events, in order."""

    _event_of = staticmethod(_cache_event)

    def __init__(self, native: _native.NativeServiceCache) -> None:
        """Made by ``ServiceDiscovery.service_cache``."""
        self._native = native

    @property
    def name(self) -> str:
        """The service's name."""
        return self._native.name()

    def start(self) -> None:
        """Starts following the service; returns once its instances are loaded."""
        self._start_or_close()

    async def start_async(self) -> None:
        """``start`` without blocking the event loop."""
        await self._start_async_or_close()

    def await_initialized(self, timeout: Optional[float] = None) -> None:
        """Waits until the first load is in; ``TimeoutError`` after ``timeout`` seconds."""
        self._native.await_initialized(_timeout(timeout))

    async def await_initialized_async(self, timeout: Optional[float] = None) -> None:
        """``await_initialized`` without blocking the event loop."""
        await self._native.await_initialized_async(_timeout(timeout))

    def instances(self) -> List[ServiceInstance]:
        """Every instance now, from memory."""
        return [_instance(row) for row in self._native.instances()]

    def close(self) -> None:
        """Stops following. Idempotent."""
        self._native.close()

    async def close_async(self) -> None:
        """``close`` (which never waits for the server here)."""
        self.close()

    def __repr__(self) -> str:
        return f"<ServiceCache {self.name}>"


class ServiceProvider(Started):
    """Chooses an instance of a service to call (Curator's ``ServiceProvider``), from a cache of
    it: an enabled instance not taken down by its errors (``note_error``), by its strategy."""

    def __init__(self, native: _native.NativeServiceProvider) -> None:
        """Made by ``ServiceDiscovery.service_provider``."""
        self._native = native

    @property
    def strategy(self) -> ProviderStrategy:
        """How it chooses."""
        return ProviderStrategy(self._native.strategy())

    def start(self) -> None:
        """Starts its cache; returns once the instances are loaded."""
        self._start_or_close()

    async def start_async(self) -> None:
        """``start`` without blocking the event loop."""
        await self._start_async_or_close()

    def get_instance(self) -> Optional[ServiceInstance]:
        """The instance to call, ``None`` when none may be chosen."""
        row = self._native.get_instance()
        return _instance(row) if row is not None else None

    def get_all_instances(self) -> List[ServiceInstance]:
        """Every instance, disabled and down ones included."""
        return [_instance(row) for row in self._native.get_all_instances()]

    def note_error(self, instance: ServiceInstance) -> None:
        """A call to ``instance`` failed: counted toward taking it down."""
        self._native.note_error(_row(instance))

    def close(self) -> None:
        """Stops its cache. Idempotent."""
        self._native.close()

    async def close_async(self) -> None:
        """``close`` (which never waits for the server here)."""
        self.close()

    def __repr__(self) -> str:
        return f"<ServiceProvider {self.strategy}>"


__all__ = ["DiscoveryEvent", "DiscoveryEventKind", "ProviderStrategy", "SPRING_PAYLOAD_CLASS", "ServiceCache",
           "ServiceCacheEvent", "ServiceCacheEventKind", "ServiceDiscovery", "ServiceInstance", "ServiceProvider",
           "ServiceType", "spring_payload"]
