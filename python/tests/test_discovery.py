"""Service discovery from Python: instances registered, queried, updated and unregistered with
Curator's JSON; a cache's events and a listener that calls back into it; providers' strategies
and down instances; asyncio twins and cancelled registrations that leave nothing once closed;
Spring's payload; and bad input as typed errors."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest

import zkrecipes
from zkrecipes import ProviderStrategy, ServiceInstance, ServiceType

from _helpers import Heard, until


def test_instances_register_query_update_and_unregister(make_client, path):
    client = make_client()
    with client.service_discovery(path) as registry:
        assert registry.query_for_names() == [] and registry.query_for_instances("api") == []
        a = registry.register(ServiceInstance("api", address="10.0.0.5", port=8080, payload={"zone": "eu-1"},
                                              uri_spec="{scheme}://{address}:{port}"))
        assert a.id and a.registration_time_utc, "the core gives the id and the time"
        assert a.uri() == "http://10.0.0.5:8080"
        b = registry.register(ServiceInstance("api", id="b", address="h", ssl_port=443, service_type="static"))
        assert registry.query_for_names() == ["api"]
        found = registry.query_for_instances("api")
        assert sorted(i.id for i in found) == sorted([a.id, "b"])
        assert registry.query_for_instance("api", a.id) == a
        assert registry.query_for_instance("api", "b").service_type == ServiceType.STATIC
        # What the registry holds is Curator's JSON.
        stored = json.loads(a.to_json())
        assert list(stored) == ["name", "id", "address", "port", "sslPort", "payload", "registrationTimeUTC",
                                "serviceType", "uriSpec"]
        moved = dataclasses.replace(a, port=9090, enabled=False)
        registry.update(moved)
        assert registry.query_for_instance("api", a.id) == moved
        assert {i.id for i in registry.registered()} == {a.id, "b"}
        registry.unregister(b)
        assert registry.query_for_instance("api", "b") is None
        with pytest.raises(zkrecipes.NoNodeError):
            registry.update(b)
    with make_client().service_discovery(path) as other:
        assert other.query_for_instances("api") == [], "close unregistered every instance"


def test_fields_of_another_writer_are_kept_through_an_update(make_client, path):
    newer = ('{"name":"api","id":"n","address":"h","port":1,"sslPort":null,"payload":null,'
             '"registrationTimeUTC":7,"serviceType":"DYNAMIC","uriSpec":null,"weight":3}')
    instance = ServiceInstance.from_json(newer)
    assert instance.extra == {"weight": 3}
    with make_client().service_discovery(path) as registry:
        registry.register(instance)
        assert registry.query_for_instance("api", "n").to_json() == newer.encode()


def test_a_cache_hears_instances_come_change_and_go_and_a_listener_may_call_back(make_client, path):
    registry = make_client().service_discovery(path)
    cache = registry.service_cache("api")
    heard = Heard()

    def listener(event):
        # A listener may call the library, its own cache included.
        heard((event.kind.value, event.instance.id if event.instance else None, len(cache.instances())))

    cache.add_listener(listener)
    with cache:
        a = registry.register(ServiceInstance("api", id="a", address="h", port=1))
        heard.until("ADDED a", lambda events: ("ADDED", "a", 1) in events)
        registry.update(dataclasses.replace(a, port=2))
        heard.until("CHANGED a", lambda events: events[-1][:2] == ("CHANGED", "a"))
        assert cache.instances()[0].port == 2
        registry.unregister(a)
        heard.until("REMOVED a", lambda events: events[-1] == ("REMOVED", "a", 0))
    registry.close()


@pytest.mark.parametrize("strategy", list(ProviderStrategy))
def test_providers_choose_enabled_live_instances(make_client, path, strategy):
    with make_client().service_discovery(path) as registry:
        for id in "abc":
            registry.register(ServiceInstance("api", id=id, address="h", port=1))
        registry.register(ServiceInstance("api", id="off", address="h", port=1, enabled=False))
        with registry.service_provider("api", strategy, down_timeout=60, down_errors=2) as provider:
            assert provider.strategy == strategy and len(provider.get_all_instances()) == 4
            chosen = [provider.get_instance().id for _ in range(30)]
            assert "off" not in chosen
            if strategy == ProviderStrategy.ROUND_ROBIN:
                assert sorted(chosen[:3]) == ["a", "b", "c"]
            if strategy == ProviderStrategy.STICKY:
                assert len(set(chosen)) == 1
            b = registry.query_for_instance("api", "b")
            provider.note_error(b)
            provider.note_error(b)
            assert all(provider.get_instance().id != "b" for _ in range(30)), "b is down"


def test_registrations_cancelled_anywhere_leave_no_node_once_closed(make_client, path):
    client = make_client()

    async def main():
        for round in range(60):
            registry = client.service_discovery(path)
            task = asyncio.ensure_future(
                registry.register_async(ServiceInstance("api", id=f"i{round}", address="h", port=1)))
            await asyncio.sleep(round * 0.0005)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await registry.close_async()

    asyncio.run(main())
    with client.service_discovery(path) as registry:
        assert registry.query_for_instances("api") == []


def test_a_registration_is_made_again_after_somebody_deletes_it_and_listeners_hear_it(make_client, path, make_kz):
    kazoo = make_kz()
    registry = make_client().service_discovery(path)
    heard = Heard()
    registry.add_listener(heard)
    a = registry.register(ServiceInstance("api", id="a", address="h", port=1))
    kazoo.delete(f"{path}/api/a")
    event = heard.until("REREGISTERED", lambda events: len(events) >= 1)[0]
    assert (event.kind, event.service, event.id, event.reason) == (
        zkrecipes.DiscoveryEventKind.REREGISTERED, "api", "a", None)
    assert until(lambda: registry.query_for_instance("api", "a") == a)
    registry.close()


def test_springs_payload_names_its_class():
    payload = zkrecipes.spring_payload("app-1", "app")
    assert payload == {"@class": zkrecipes.SPRING_PAYLOAD_CLASS, "id": "app-1", "name": "app",
                       "metadata": {"instance_status": "UP"}}
    assert json.loads(ServiceInstance("app", id="x", payload=payload).to_json())["payload"] == payload


def test_bad_input_is_a_typed_error_and_registers_nothing(make_client, path):
    with make_client().service_discovery(path) as registry:
        for bad, said in [
            (ServiceInstance("a/b", id="i"), "a service name is a node name"),
            (ServiceInstance("api", id=""), "an instance id is a node name"),
            (ServiceInstance("api", port=70000), "port is a port"),
            (ServiceInstance("api", service_type="ephemeral"), "a service type is"),
            (ServiceInstance("api", uri_spec="{open"), "not closed"),
        ]:
            with pytest.raises(zkrecipes.InvalidArgumentError, match=said):
                registry.register(bad)
        with pytest.raises(zkrecipes.InvalidArgumentError, match="a provider strategy"):
            registry.service_provider("api", "fastest")
        with pytest.raises(zkrecipes.InvalidArgumentError, match="error_threshold"):
            registry.service_provider("api", down_errors=0)
        with pytest.raises(TypeError):
            registry.register("api")  # type: ignore[arg-type]
        # A port beyond 64 bits is the core's to refuse, naming it; a bool is no port, nor a
        # str a bool (Python would take True for 1, and "no" for True).
        with pytest.raises(zkrecipes.InvalidArgumentError, match="port is a port, 0 to 65535, got 1180591620717411303424"):
            registry.register(ServiceInstance("api", port=2**70))
        for wrong in (ServiceInstance("api", port=True), ServiceInstance("api", ssl_port=1.5),  # type: ignore[arg-type]
                      ServiceInstance("api", enabled="no")):  # type: ignore[arg-type]
            with pytest.raises(TypeError):
                registry.register(wrong)
        with pytest.raises(zkrecipes.InvalidArgumentError, match="the instance's own field"):
            registry.register(ServiceInstance("api", extra={"enabled": False}))
        with pytest.raises(zkrecipes.InvalidArgumentError, match="not a service instance"):
            ServiceInstance.from_json(b"[]")
        assert registry.query_for_names() == []


def test_an_instance_hashes_by_its_key_and_a_cache_awaits_without_blocking(make_client, path):
    with_dict = ServiceInstance("api", id="i", payload={"zone": "eu-1"}, extra={"weight": 1})
    assert hash(with_dict) == hash(dataclasses.replace(with_dict, payload={"zone": "us-1"}))
    assert len({with_dict, dataclasses.replace(with_dict)}) == 1

    async def main() -> None:
        with make_client().service_discovery(path) as registry:
            cache = registry.service_cache("api")
            with pytest.raises(zkrecipes.ZkTimeoutError):
                await cache.await_initialized_async(0.05)
            await cache.start_async()
            await cache.await_initialized_async(10)
            cache.close()

    asyncio.run(main())


def test_an_async_listener_runs_on_its_loop(make_client, path):
    async def main() -> None:
        loop = asyncio.get_running_loop()
        heard: asyncio.Queue = asyncio.Queue()

        async def listener(event: zkrecipes.ServiceCacheEvent) -> None:
            await heard.put(event.kind)

        with make_client().service_discovery(path) as registry:
            cache = registry.service_cache("api")
            with pytest.raises(TypeError, match="needs the loop"):
                cache.add_listener(listener)
            cache.add_listener(listener, loop=loop)
            await cache.start_async()
            assert await asyncio.wait_for(heard.get(), 10) == zkrecipes.ServiceCacheEventKind.INITIALIZED
            await registry.register_async(ServiceInstance("api", id="a", port=1))
            assert await asyncio.wait_for(heard.get(), 10) == zkrecipes.ServiceCacheEventKind.ADDED
            cache.close()

    asyncio.run(main())
