"""The caches from Python: events in order (with the old node of a change), a children cache of
many nodes, depth limits, listeners that call back into the cache (and close it), close while
events flow and during a start, a cancelled start that goes on loading, garbage collection, and
bad input as typed errors. The tree is changed from kazoo, another client."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from typing import List

import pytest

import zkrecipes
from zkrecipes import CacheEvent, CachedNode, NodeEvent

from _helpers import DEADLINE, HeardEvents, assert_a_start_after_the_client_closed_is_closed


def test_enum_lists_exactly_the_core_names():
    from zkrecipes import _native

    assert [e.value for e in CacheEvent] == _native.CACHE_EVENTS


def test_a_tree_cache_tells_every_change_in_order(client, kz, path):
    kz.create(path + "/a", b"1", makepath=True)
    heard = HeardEvents()
    cache = client.tree_cache(path)
    cache.add_listener(heard)
    cache.add_listener(heard)  # once only
    with cache:
        # The first load: a CREATED for every node, parents first, then INITIALIZED.
        heard.count(3)
        assert heard.names_with_paths() == [f"CREATED {path}", f"CREATED {path}/a", "INITIALIZED"]
        assert len(cache) == 2 and path + "/a" in cache and path + "/b" not in cache and 7 not in cache
        kz.create(path + "/a/b", b"2")
        kz.set(path + "/a", b"3")
        events = heard.until("the change", lambda events: len(events) >= 5)
        # A parent whose child came is no CHANGED (its data and mzxid are the same). Events of
        # different paths may come in either order; one path's come in zxid order.
        assert sorted(heard.names_with_paths()[3:]) == [f"CHANGED {path}/a", f"CREATED {path}/a/b"]
        changed = next(e for e in events[3:] if e == "CHANGED")
        assert changed.old is not None and changed.old.data == b"1" and changed.old.stat.version == 0
        assert changed.node.data == b"3" and changed.node.stat.version == 1
        assert changed.node.stat.mzxid > changed.old.stat.mzxid and changed.node.stat.czxid == changed.old.stat.czxid
        assert changed.node == cache.get(path + "/a") and cache.children(path + "/a") == ["b"]
        kz.delete(path + "/a", recursive=True)
        heard.until("the delete", lambda events: len(events) >= 7)
        assert heard.names_with_paths()[5:] == [f"DELETED {path}/a/b", f"DELETED {path}/a"], "deepest first"
        assert heard.events[-1].node.data == b"3", "a deleted node as it was"
        assert cache.snapshot() == [cache.get(path)] and cache.children() == []
    assert len(cache) == 0 and cache.get(path) is None, "a closed cache is empty"
    with pytest.raises(zkrecipes.ClosedError):
        cache.start()
    cache.close()  # idempotent


def test_a_children_cache_of_many_nodes(client, kz, path):
    n = 200
    kz.create(path, b"parent", makepath=True)
    tx = kz.transaction()
    for i in range(n):
        tx.create(f"{path}/c{i:03}", str(i).encode())
    assert all(r == f"{path}/c{i:03}" for i, r in enumerate(tx.commit()))
    heard = HeardEvents()
    cache = client.children_cache(path)
    cache.add_listener(heard)
    assert "not loaded" in repr(cache)
    cache.start()
    assert cache.is_initialized and f"{n} cached" in repr(cache)
    assert len(cache) == n and cache.get(path) is None and path not in cache, "never the parent"
    names = [f"c{i:03}" for i in range(n)]
    assert cache.children() == names and cache.children(path) == names
    snapshot = cache.snapshot()
    assert [c.name for c in snapshot] == names and all(c.data == str(i).encode() for i, c in enumerate(snapshot))
    assert isinstance(snapshot[0], CachedNode) and snapshot[0].stat.ephemeral_owner == 0
    events = heard.count(n + 1)
    assert [e.node.name for e in events[:n]] == names and events[n] == CacheEvent.INITIALIZED
    kz.delete(f"{path}/c000")
    heard.count(n + 2)
    assert len(cache) == n - 1 and heard.events[-1] == "DELETED"
    cache.close()


def test_a_node_cache_creates_nothing_and_sees_its_node_come_and_go(client, kz, path):
    heard = HeardEvents()
    with client.node_cache(path) as cache:
        cache.add_listener(heard)
        assert cache.node is None and len(cache) == 0 and kz.exists(path) is None, "nothing created"
        kz.create(path + "/child", b"c", makepath=True)  # its child is outside a node cache
        kz.set(path, b"v")
        heard.until("the node's data", lambda events: any(e.node.data == b"v" for e in events if e.node))
        assert cache.node is not None and cache.node.data == b"v" and cache.children() == []
        assert [e.node.path for e in heard.events] == [path] * len(heard.events), "only its node"
        kz.delete(path, recursive=True)
        heard.until("the delete", lambda events: events[-1] == CacheEvent.DELETED)
        assert cache.node is None


def test_max_depth_limits_a_tree_cache(client, kz, path):
    kz.create(path + "/a/b/c", makepath=True)
    with client.tree_cache(path, max_depth=1) as one, client.tree_cache(path, 0) as zero:
        assert [n.path for n in one.snapshot()] == [path, path + "/a"]
        assert [n.path for n in zero.snapshot()] == [path]
        assert one.children(path + "/a") == []


def test_a_listener_may_call_back_into_the_cache_and_close_it(client, kz, path):
    cache = client.tree_cache(path)
    seen: List[object] = []
    created, closed = threading.Event(), threading.Event()

    def listener(event: NodeEvent) -> None:
        # From its own listener: the copy, which is at least as new as the event.
        if event.node is None:
            return
        if event.node.path == path + "/x":
            created.set()
        got = cache.get(event.node.path)
        fresh = got is not None and got.stat.mzxid >= event.node.stat.mzxid
        seen.append((event.name, event.node.path, fresh, len(cache.snapshot()) >= 1))
        if event.node.data == b"close":
            cache.close()
            closed.set()

    cache.add_listener(listener)
    cache.start()
    kz.create(path + "/x", b"1", makepath=True)
    assert created.wait(DEADLINE)  # else the two changes may be read as one
    kz.set(path + "/x", b"close")
    assert closed.wait(DEADLINE)
    assert seen == [("CREATED", path, True, True), ("CREATED", path + "/x", True, True), ("CHANGED", path + "/x", True, True)]
    assert len(cache) == 0
    cache.remove_listener(listener)
    cache.remove_listener(listener)  # unknown now: ignored


def test_close_while_events_flow_and_during_a_start(client, kz, path):
    kz.create(path + "/n", b"0", makepath=True)
    heard = HeardEvents()
    cache = client.tree_cache(path)
    cache.add_listener(heard)
    cache.start()
    stop = threading.Event()

    def writes() -> None:
        i = 0
        while not stop.is_set():
            i += 1
            kz.set(path + "/n", str(i).encode())

    writer = threading.Thread(target=writes)
    writer.start()
    try:
        heard.until("a few changes", lambda events: sum(e == "CHANGED" for e in events) >= 5)
        cache.close()
        assert len(cache) == 0 and cache.snapshot() == [] and cache.get(path) is None
    finally:
        stop.set()
        writer.join(DEADLINE)
    with heard.cond:
        versions = [e.node.stat.version for e in heard.events if e == "CHANGED"]
    assert versions == sorted(set(versions)), "in order, each once, up to the close"

    # A close during a start: the start ends (closed, or loaded just before), never hangs.
    async def main() -> None:
        for _ in range(5):
            starting = client.tree_cache(path)
            task = asyncio.ensure_future(starting.start_async())
            await asyncio.sleep(0)
            starting.close()
            try:
                await asyncio.wait_for(task, DEADLINE)
            except zkrecipes.ClosedError:
                pass
            assert len(starting) == 0

    asyncio.run(main())


def test_async_with_a_loop_listener_and_a_cancelled_start(client, kz, path):
    kz.create(path + "/k", b"v", makepath=True)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        heard: asyncio.Queue = asyncio.Queue()
        cache = client.children_cache(path)
        cache.add_listener(heard.put_nowait, loop=loop)
        async with cache:
            assert (await asyncio.wait_for(heard.get(), DEADLINE)).node.name == "k"
            assert (await asyncio.wait_for(heard.get(), DEADLINE)) == "INITIALIZED"
            await loop.run_in_executor(None, kz.delete, path + "/k")
            gone = await asyncio.wait_for(heard.get(), DEADLINE)
            assert gone == CacheEvent.DELETED and gone.node.data == b"v" and str(gone) == f"DELETED {path}/k"
        # A cancelled start goes on loading: the cache is there for a later wait.
        later = client.tree_cache(path)
        task = asyncio.ensure_future(later.start_async())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await later.await_initialized_async(DEADLINE)
        assert later.is_initialized and later.get(path) is not None
        later.close()

    asyncio.run(asyncio.wait_for(main(), 60))


def test_an_unreferenced_cache_with_a_listener_is_collected(client, kz, path):
    heard = HeardEvents()
    cache = client.tree_cache(path)
    cache.add_listener(heard)
    cache.start()
    heard.until("the first load", lambda events: events == ["INITIALIZED"])
    ref = weakref.ref(cache)
    del cache
    gc.collect()
    assert ref() is None, "a listener does not keep its cache alive"
    kz.create(path, b"after", makepath=True)  # nothing to tell it, and nothing breaks
    with client.tree_cache(path) as again:
        assert again.get(path).data == b"after"
    assert heard.names_with_paths() == ["INITIALIZED"]


def test_bad_input_is_typed(client, path):
    with pytest.raises(zkrecipes.InvalidPathError):
        client.tree_cache("relative")
    with pytest.raises(zkrecipes.InvalidPathError):
        client.children_cache(path + "/")
    for depth, error in ((-1, zkrecipes.InvalidArgumentError), (2**32, zkrecipes.InvalidArgumentError), ("1", TypeError), (True, TypeError)):
        with pytest.raises(error, match="max_depth"):
            client.tree_cache(path, depth)  # type: ignore[arg-type]
    cache = client.node_cache(path)
    with pytest.raises(TypeError):
        cache.get(1)  # type: ignore[arg-type]
    with pytest.raises(zkrecipes.ZkTimeoutError):
        cache.await_initialized(0.05)  # never started
    with pytest.raises(zkrecipes.InvalidArgumentError):
        cache.await_initialized(-2)
    with pytest.raises(TypeError):
        cache.add_listener("not callable")  # type: ignore[arg-type]


def test_a_closed_client_refuses_new_caches(zk_connect, path):
    c = zkrecipes.Client(zk_connect)
    c.close()
    with pytest.raises(zkrecipes.ClosedError):
        c.tree_cache(path)


def test_a_start_after_the_client_closed_is_closed(zk_connect, path):
    assert_a_start_after_the_client_closed_is_closed(zk_connect, lambda client: client.tree_cache(path))
