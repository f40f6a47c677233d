"""The leader latch from Python: hand-over with increasing fencing tokens and events, with/async
with, a leader whose node an operator deletes, listeners that call back (close included),
cancellation and Ctrl-C, and bad input."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import zkrecipes
from zkrecipes import LatchEvent, LatchParticipant

from _helpers import assert_ctrl_c_interrupts, until


def test_enum_lists_exactly_the_core_names():
    from zkrecipes import _native

    assert [e.value for e in LatchEvent] == _native.LATCH_EVENTS


def test_two_participants_hand_over_with_increasing_tokens(make_client, path):
    a = make_client(session_timeout=10.0).leader_latch(path, "a")
    b = zkrecipes.LeaderLatch(make_client(session_timeout=10.0), path, "b")
    events: list = []
    got_both = threading.Event()

    def on_a(event: zkrecipes.Event) -> None:
        events.append(event)
        if len(events) == 2:
            got_both.set()

    a.add_listener(on_a)
    assert not a.is_started and a.fencing_token is None
    a.start()
    first = a.await_leadership(5)
    assert first is not None and a.has_leadership() and a.fencing_token == first
    assert a.node_path is not None and a.node_path.startswith(f"{path}/_c_") and "-latch-" in a.node_path
    b.start()
    assert b.is_started and b.await_leadership(0) is None and b.await_leadership(0.2) is None
    assert not b.has_leadership() and b.fencing_token is None and b.node_path is None
    assert b.leader() == LatchParticipant("a", a.node_path.rsplit("/", 1)[1], True)
    assert [(p.id, p.is_leader) for p in b.participants()] == [("a", True), ("b", False)]
    a.close()
    second = b.await_leadership(10)
    assert second is not None and second > first
    assert got_both.wait(10)
    assert events == [LatchEvent.IS_LEADER, LatchEvent.NOT_LEADER]
    assert events[0].fencing_token == first and events[1].reason is None
    assert a.is_closed and not a.is_started and not a.has_leadership()
    assert [p.id for p in b.participants()] == ["b"]
    b.close()
    assert b.participants() == [] and b.leader() is None


def test_with_closes_and_a_closed_latch_refuses(client, path):
    with client.leader_latch(path) as latch:
        assert latch.id == client.identity
        assert latch.await_leadership(5) is not None
        latch.close()
        latch.close()  # twice is harmless
    latch.close()  # and once more after the block
    assert latch.is_closed and latch.participants() == []
    with pytest.raises(zkrecipes.ClosedError):
        latch.start()
    with pytest.raises(zkrecipes.ClosedError):
        latch.await_leadership(0)
    fresh = client.leader_latch(path)
    with pytest.raises(zkrecipes.InvalidArgumentError):
        fresh.await_leadership(1)  # never started
    fresh.close()  # closing a latch never started is harmless, and final
    with pytest.raises(zkrecipes.ClosedError):
        fresh.start()


def test_bad_input_is_typed(client, path):
    latch = client.leader_latch(path, "x")
    latch.start()
    for bad in (float("nan"), -2, -0.5):
        with pytest.raises(zkrecipes.InvalidArgumentError):
            latch.await_leadership(bad)
    assert latch.await_leadership(-1) is not None  # -1 is forever, as threading's
    with pytest.raises(TypeError):
        latch.await_leadership("3")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        client.leader_latch(path, 42)  # type: ignore[arg-type]
    with pytest.raises(zkrecipes.InvalidPathError):
        client.leader_latch("relative")
    with pytest.raises(zkrecipes.InvalidArgumentError):
        client.leader_latch(path, "x" * (2 * 1024 * 1024))
    latch.close()


def test_a_deleted_leader_node_is_not_leader_then_leads_again(client, kz, path):
    latch = client.leader_latch(path, "only")
    seen: list = []
    called_back: list = []
    again = threading.Event()

    def listener(event: zkrecipes.Event) -> None:
        seen.append(event)
        # A listener may call back into the latch.
        called_back.append([p.id for p in latch.participants()])
        if len(seen) == 3:
            again.set()

    latch.add_listener(listener)
    latch.start()
    first = latch.await_leadership(5)
    assert first is not None and latch.node_path is not None
    kz.delete(latch.node_path)  # an operator deletes the leader's node
    assert again.wait(20)
    assert [e.kind for e in seen] == [LatchEvent.IS_LEADER, LatchEvent.NOT_LEADER, LatchEvent.IS_LEADER]
    assert isinstance(seen[1].reason, zkrecipes.ZkError)
    assert seen[2].fencing_token is not None and seen[2].fencing_token > first
    assert latch.await_leadership(0) == seen[2].fencing_token
    assert all(ids == ["only"] or ids == [] for ids in called_back), called_back
    latch.remove_listener(listener)  # its NOT_LEADER would look after the client closed
    latch.close()


def test_a_listener_may_close_the_latch(make_client, path):
    leader = make_client().leader_latch(path, "leader")
    other = make_client().leader_latch(path, "other")
    closed = threading.Event()

    def step_down(event: zkrecipes.Event) -> None:
        if event.kind is LatchEvent.IS_LEADER:
            leader.close()
            closed.set()

    leader.add_listener(step_down)
    leader.start()
    assert closed.wait(10) and leader.is_closed
    other.start()
    assert other.await_leadership(10) is not None
    other.close()


def test_async_with_and_a_cancelled_start_closes(client, path):
    async def main() -> None:
        async with client.leader_latch(path, "first") as first:
            assert await first.await_leadership_async(5) is not None
            assert [p.id for p in await first.participants_async()] == ["first"]
            assert (await first.leader_async()) == first.leader()
            second = client.leader_latch(path, "second")
            await second.start_async()
            waiting = asyncio.ensure_future(second.await_leadership_async())
            await asyncio.sleep(0.1)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            assert second.is_started, "a cancelled await leaves the latch started"
            await second.close_async()
        assert first.is_closed and await first.participants_async() == []

        starting = client.leader_latch(path, "starting")
        task = asyncio.ensure_future(starting.start_async())
        await asyncio.sleep(0)  # the start is under way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # A cancelled start leaves no node in line behind its caller's back.
        deadline = time.monotonic() + 10
        while not (starting.is_closed and await starting.participants_async() == []):
            assert time.monotonic() < deadline, await starting.participants_async()
            await asyncio.sleep(0.02)

    asyncio.run(asyncio.wait_for(main(), 60))


def test_ctrl_c_interrupts_await_leadership(make_client, path):
    leader = make_client().leader_latch(path, "leader")
    waiter = make_client().leader_latch(path, "waiter")
    leader.start()
    waiter.start()
    assert_ctrl_c_interrupts(waiter.await_leadership)
    assert waiter.is_started and not waiter.has_leadership()
    leader.close()
    assert waiter.await_leadership(10) is not None
    waiter.close()


def test_two_threads_on_one_latch(client, path):
    latch = client.leader_latch(path, "shared")
    tokens: list = []

    def worker() -> None:
        latch.start()  # the second start is a no-op
        tokens.append(latch.await_leadership(10))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(tokens) == 2 and tokens[0] is not None and tokens[0] == tokens[1]
    assert len(latch.participants()) == 1
    latch.close()


def test_closing_the_client_closes_the_latch(zk_connect, path):
    client = zkrecipes.Client(zk_connect)
    latch = client.leader_latch(path)
    latch.start()
    assert latch.await_leadership(5) is not None
    client.close()
    assert until(lambda: latch.is_closed) and not latch.has_leadership()
    with pytest.raises(zkrecipes.ClosedError):
        latch.start()
