"""Persistent nodes and group members from Python: two members see each other join, change
their payload and leave; a listener that calls back into its member; a node re-created after
another client deletes it, never taking over another session's ephemeral node; sequential
nodes under Curator's protected name; cancelled starts that leave nothing behind; and bad
input as typed errors."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import List

import pytest
from kazoo.exceptions import NoNodeError

import zkrecipes
from zkrecipes import CacheEvent, NodeEvent, NodeMode

from _helpers import (
    DEADLINE,
    HeardEvents,
    assert_a_start_after_the_client_closed_is_closed,
    assert_ctrl_c_interrupts,
    until,
)


def test_two_members_see_each_other_join_change_and_leave(make_client, path):
    a = make_client().group_member(path, "a", b"pa")
    heard = HeardEvents()
    a.add_listener(heard)
    with a:
        assert a.members() == {"a": b"pa"} and a.id == "a" and a.group == path
        heard.until("our own join", lambda events: len(events) >= 2)
        assert heard.names_with_node_names() == ["INITIALIZED", "CREATED a"], "a listener before start hears its own join"
        with make_client().group_member(path, "b", b"pb") as b:
            assert b.members() == {"a": b"pa", "b": b"pb"}
            # Three events: "CREATED a" is a CREATED too (waiting for the last to be one let this
            # go on before b's join reached a's view, under load in make test).
            heard.until("b's join", lambda events: len(events) >= 3)
            assert a.members() == {"a": b"pa", "b": b"pb"}
            b.set_payload(b"pb2")
            changed = heard.until("b's payload", lambda events: events[-1] == "CHANGED")[-1]
            assert changed.node.name == "b" and changed.node.data == b"pb2" and changed.old.data == b"pb"
            assert a.members()["b"] == b"pb2"
        left = heard.until("b's leave", lambda events: events[-1] == "DELETED")[-1]
        assert left.node.name == "b" and a.members() == {"a": b"pa"}
        a.set_payload(bytearray(b"new"))
        assert a.members()["a"] in (b"pa", b"new")
        heard.until("our own payload", lambda events: events[-1] == "CHANGED")
        assert a.members() == {"a": b"new"}
    assert heard.names_with_node_names() == ["INITIALIZED", "CREATED a", "CREATED b", "CHANGED b", "DELETED b", "CHANGED a"]
    assert a.members() == {}, "closed: out of the group, and no view of it"
    a.close()  # idempotent


def test_a_listener_may_call_back_into_its_member(make_client, path):
    member = make_client().group_member(path, "me")
    seen: List[object] = []
    joined, done = threading.Event(), threading.Event()

    def listener(event: NodeEvent) -> None:
        if event.node is None:
            return
        seen.append((event.name, event.node.name, sorted(member.members())))
        if event.node.name == "other" and event.kind is CacheEvent.CREATED:
            joined.set()
        if event.node.name == "other" and event.kind is CacheEvent.DELETED:
            member.set_payload(b"from the listener")
            done.set()

    member.add_listener(listener)
    member.start()
    with make_client().group_member(path, "other"):
        # The other member stays until this one has seen it: a join and a leave that both come
        # before this member's view reads again are coalesced away (failed under load).
        assert joined.wait(DEADLINE)
    assert done.wait(DEADLINE)
    # The listener's own set_payload is heard next (CHANGED me), maybe before this line runs.
    assert seen[:3] == [("CREATED", "me", ["me"]), ("CREATED", "other", ["me", "other"]), ("DELETED", "other", ["me"])]
    member.remove_listener(listener)
    member.close()


def test_a_bad_member_is_a_typed_error(client, path):
    for bad in ("", ".", "..", "a/b"):
        with pytest.raises(zkrecipes.InvalidArgumentError, match="member id"):
            client.group_member(path, bad)
    with pytest.raises(TypeError):
        client.group_member(path, 7)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="payload"):
        client.group_member(path, "x", "text")  # type: ignore[arg-type]
    with pytest.raises(zkrecipes.InvalidPathError):
        client.group_member("relative", "x")
    with pytest.raises(zkrecipes.InvalidArgumentError):
        client.group_member(path, "x", b"x" * (2 * 1024 * 1024))


def test_a_persistent_node_is_created_again_after_another_client_deletes_it(client, kz, path):
    watcher = client.node_cache(path + "/node")
    heard = HeardEvents()
    watcher.add_listener(heard)
    watcher.start()
    with client.persistent_node(path + "/node", b"mine") as node:
        assert node.actual_path == path + "/node" and node.data == b"mine"
        data, stat = kz.get(path + "/node")
        assert data == b"mine" and stat.ephemeralOwner == client.session_id
        # The cache has read the node before it goes: a cache whose first read comes after the
        # delete and the new create sees one node, as every cache coalesces (failed under load).
        heard.until("the node", lambda events: [e.name for e in events] == ["INITIALIZED", "CREATED"])
        kz.delete(path + "/node")
        heard.until("the node again", lambda events: [e.name for e in events] == ["INITIALIZED", "CREATED", "DELETED", "CREATED"])
        assert kz.get(path + "/node")[0] == b"mine"
        node.set_data(b"new")
        heard.until("the new data", lambda events: events[-1] == "CHANGED")
        assert heard.events[-1].node.data == b"new" and node.data == b"new"
    assert node.actual_path is None and kz.exists(path + "/node") is None, "a close deletes it"
    with pytest.raises(zkrecipes.ClosedError):
        node.start()
    node.close()  # idempotent
    watcher.close()


def test_another_sessions_ephemeral_node_is_waited_for_never_taken_over(client, kz, path):
    kz.create(path, b"theirs", ephemeral=True, makepath=True)

    async def main() -> None:
        node = client.persistent_node(path, b"ours")
        starting = asyncio.ensure_future(node.start_async())
        done, _ = await asyncio.wait({starting}, timeout=0.3)
        assert not done, "the start waits while another session holds the node"
        assert node.actual_path is None and kz.get(path)[0] == b"theirs"
        await asyncio.get_running_loop().run_in_executor(None, kz.delete, path)
        assert await asyncio.wait_for(starting, DEADLINE) == path
        assert kz.get(path)[0] == b"ours"
        await node.close_async()

        # A cancelled start closes the node: none is made behind its caller's back.
        kz.create(path, b"theirs", ephemeral=True)
        cancelled = client.persistent_node(path, b"cancelled")
        task = asyncio.ensure_future(cancelled.start_async())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(zkrecipes.ClosedError):
            await asyncio.wait_for(cancelled.start_async(), DEADLINE)

    asyncio.run(asyncio.wait_for(main(), 60))


def test_ctrl_c_interrupts_a_waiting_start_and_closes_the_node(client, kz, path):
    kz.create(path, b"theirs", ephemeral=True, makepath=True)
    node = client.persistent_node(path, b"ours")
    assert_ctrl_c_interrupts(node.start)
    assert until(lambda: _closed(node)), "interrupted: closed, so never made later"
    kz.delete(path)


def _closed(node: zkrecipes.PersistentNode) -> bool:
    try:
        asyncio.run(asyncio.wait_for(node.start_async(), 0.5))
    except zkrecipes.ClosedError:
        return True
    except asyncio.TimeoutError:
        return False
    return False


def test_sequential_and_persistent_modes(client, kz, path):
    with client.persistent_node(path + "/seq-", b"s", mode=NodeMode.EPHEMERAL_SEQUENTIAL) as seq:
        actual = seq.start()  # started already: the same node
        assert actual == seq.actual_path
        assert re.fullmatch(re.escape(path) + r"/_c_[0-9a-f-]{36}-seq-\d{10}", actual), actual
        assert kz.get(actual)[1].ephemeralOwner == client.session_id
    with client.persistent_node(path + "/p", b"p", "persistent") as persistent:
        assert kz.get(persistent.actual_path)[1].ephemeralOwner == 0
        assert "/p" in repr(persistent)
    # Both nodes' parent is a container: once both are deleted the server may
    # reap it too (found failing in a clean-clone run).
    assert children_or_none(kz, path) in ([], None), "closed: both deleted"


def test_async_with_and_a_cancelled_member_start(client, path):
    async def main() -> None:
        async with client.group_member(path, "async", b"x") as member:
            assert member.members() == {"async": b"x"}
            await member.set_payload_async(b"y")
            async with client.persistent_node(path + "-node") as node:
                await node.set_data_async(b"z")
                assert node.data == b"z"
        assert member.members() == {}
        starting = client.group_member(path, "cancelled")
        task = asyncio.ensure_future(starting.start_async())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The cancelled start left: no member of that id stays behind.
        with client.group_member(path, "watcher") as watcher:
            assert await asyncio.get_running_loop().run_in_executor(
                None, until, lambda: "cancelled" not in watcher.members()
            )

    asyncio.run(asyncio.wait_for(main(), 60))


def test_bad_persistent_nodes_are_typed(client, path):
    with pytest.raises(zkrecipes.InvalidArgumentError, match="mode"):
        client.persistent_node(path, mode="forever")
    with pytest.raises(TypeError, match="mode"):
        client.persistent_node(path, mode=1)  # type: ignore[arg-type]
    with pytest.raises(zkrecipes.InvalidPathError, match="root"):
        client.persistent_node("/")
    with pytest.raises(zkrecipes.InvalidPathError):
        client.persistent_node("relative")
    with pytest.raises(TypeError, match="data"):
        client.persistent_node(path, "text")  # type: ignore[arg-type]
    with pytest.raises(zkrecipes.InvalidArgumentError):
        client.persistent_node(path, b"x" * (2 * 1024 * 1024))
    node = client.persistent_node(path)
    with pytest.raises(zkrecipes.InvalidArgumentError):
        node.set_data(b"x" * (2 * 1024 * 1024))
    assert str(NodeMode.PERSISTENT) == "PERSISTENT" and "not created" in repr(node)


def test_a_start_after_the_client_closed_is_closed(zk_connect, path):
    assert_a_start_after_the_client_closed_is_closed(zk_connect, lambda client: client.persistent_node(path))


def children_or_none(kz, path: str):
    """The children of `path`, or None once the node is gone."""
    try:
        return kz.get_children(path)
    except NoNodeError:
        return None
