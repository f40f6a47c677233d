"""The barrier and the double barrier from Python: waiters released by a removal, members that
enter and leave together across clients, timeouts, cancellation and Ctrl-C that withdraw the
member, the `entered()` block, and bad input."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import zkrecipes

from _helpers import assert_ctrl_c_interrupts, assert_release_frees_a_waiter


def test_barrier_releases_its_waiters(make_client, path):
    barrier = make_client().barrier(path)
    theirs = zkrecipes.Barrier(make_client(), path)
    assert barrier.wait(0) is True, "a barrier that is down holds nobody"
    barrier.set()
    barrier.set()  # up stays up
    assert barrier.is_set() and theirs.is_set()
    assert theirs.wait(0) is False and theirs.wait(0.2) is False
    assert_release_frees_a_waiter(theirs.wait, barrier.remove)
    barrier.remove()  # down stays down
    assert not barrier.is_set()


def test_barrier_async_and_bad_input(client, path):
    barrier = client.barrier(path)

    async def main() -> None:
        await barrier.set_async()
        assert await barrier.is_set_async()
        assert await barrier.wait_async(0.1) is False
        waiting = asyncio.ensure_future(barrier.wait_async())
        await asyncio.sleep(0.05)
        await barrier.remove_async()
        assert await asyncio.wait_for(waiting, 10) is True
        assert not await barrier.is_set_async()

    asyncio.run(asyncio.wait_for(main(), 60))
    for bad in (float("nan"), -2):
        with pytest.raises(zkrecipes.InvalidArgumentError):
            barrier.wait(bad)
    with pytest.raises(TypeError):
        barrier.wait("1")  # type: ignore[arg-type]
    with pytest.raises(zkrecipes.InvalidPathError):
        client.barrier("no-slash")


def test_ctrl_c_interrupts_a_barrier_wait(client, path):
    barrier = client.barrier(path)
    barrier.set()
    assert_ctrl_c_interrupts(barrier.wait)
    barrier.remove()


def test_members_enter_and_leave_together(make_client, path):
    members = [make_client().double_barrier(path, 3) for _ in range(3)]
    entered: list = []
    left: list = []
    ready_inside: list = []

    def member(barrier: zkrecipes.DoubleBarrier) -> None:
        entered.append(barrier.enter(20))
        ready_inside.append(barrier.is_ready())
        left.append(barrier.leave(20))

    threads = [threading.Thread(target=member, args=(b,)) for b in members[:2]]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while len(members[2].members()) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert entered == [], "two of three members are not let in"
    assert not members[2].is_ready()
    member(members[2])
    for t in threads:
        t.join(30)
    assert entered == [True] * 3 and left == [True] * 3 and ready_inside == [True] * 3
    assert members[0].members() == [] and not members[0].is_ready()
    node = members[0].node_path
    assert node.startswith(f"{path}/") and node.rsplit("/", 1)[1] != "ready"
    assert members[0].member_count == 3


def test_a_timed_out_enter_withdraws(client, path):
    barrier = client.double_barrier(path, 2)
    assert barrier.enter(0) is False
    assert barrier.enter(0.2) is False
    assert barrier.members() == [], "a member that timed out is withdrawn"
    with pytest.raises(zkrecipes.ZkTimeoutError) as info:
        with barrier.entered(0.2):
            pytest.fail("the block runs only with the quorum in")
    assert "fewer than 2 members" in str(info.value)
    assert barrier.members() == []


def test_entered_runs_the_block_with_the_quorum_in(make_client, path):
    one = make_client().double_barrier(path, 2)
    two = make_client().double_barrier(path, 2)
    inside: list = []

    def other() -> None:
        with two.entered(20, leave_timeout=20) as b:
            inside.append(b.is_ready())

    t = threading.Thread(target=other)
    t.start()
    with one.entered(20):
        inside.append(one.is_ready())
    t.join(30)
    assert inside == [True, True]
    assert one.members() == []

    async def main() -> None:
        async def member(b: zkrecipes.DoubleBarrier) -> bool:
            async with b.entered(20) as entered:
                return await entered.is_ready_async()

        assert await asyncio.gather(member(one), member(two)) == [True, True]
        assert await one.members_async() == []

    asyncio.run(asyncio.wait_for(main(), 60))


def test_a_cancelled_enter_withdraws_the_member(client, path):
    barrier = client.double_barrier(path, 2)

    async def main() -> None:
        entering = asyncio.ensure_future(barrier.enter_async())
        deadline = time.monotonic() + 10
        while await barrier.members_async() == []:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        entering.cancel()
        with pytest.raises(asyncio.CancelledError):
            await entering
        while await barrier.members_async() != []:
            assert time.monotonic() < deadline, "the cancelled member's node is still there"
            await asyncio.sleep(0.02)
        assert await barrier.enter_async(0.1) is False
        assert await barrier.leave_async(0) is True

    asyncio.run(asyncio.wait_for(main(), 60))


def test_ctrl_c_interrupts_an_enter_and_withdraws_the_member(client, path):
    barrier = client.double_barrier(path, 2)
    looker = client.double_barrier(path, 2)
    assert_ctrl_c_interrupts(barrier.enter, after=0.5)
    deadline = time.monotonic() + 10
    while looker.members():
        assert time.monotonic() < deadline, "the interrupted member's node is still there"
        time.sleep(0.02)


def test_bad_member_counts_and_timeouts(client, path):
    for bad in (0, -1, 2**31, 2**40):
        with pytest.raises(zkrecipes.InvalidArgumentError) as info:
            client.double_barrier(path, bad)
        assert "member_count" in str(info.value) and str(bad) in str(info.value)
    for huge in (2**70, -(2**70)):  # beyond 64 bits: the core's range, not an OverflowError
        with pytest.raises(zkrecipes.InvalidArgumentError, match="between 1 and 2147483647"):
            client.double_barrier(path, huge)
        with pytest.raises(zkrecipes.InvalidArgumentError):
            client.semaphore(path, huge)
    for wrong in ("3", 1.5, True, None):
        with pytest.raises(TypeError):
            client.double_barrier(path, wrong)  # type: ignore[arg-type]
    with pytest.raises(zkrecipes.InvalidPathError):
        client.double_barrier("/trailing/", 2)
    barrier = client.double_barrier(path, 2**31 - 1)
    for bad in (float("nan"), -3):
        with pytest.raises(zkrecipes.InvalidArgumentError):
            barrier.enter(bad)
        with pytest.raises(zkrecipes.InvalidArgumentError):
            barrier.leave(bad)
    assert barrier.members() == []
