"""The counting semaphore from Python: leases with fencing tokens, the count across clients,
with/async with, timeouts and cancellation that leave nothing, and bad input."""

from __future__ import annotations

import asyncio
import threading

import pytest

import zkrecipes


def lease_count(client: zkrecipes.Client, path: str) -> int:
    return len(client.semaphore(path, 1).lease_nodes())


def test_leases_count_across_clients_and_release_lets_a_waiter_in(zk_connect, client, path):
    other = zkrecipes.Client(zk_connect, session_timeout=10.0)
    try:
        ours, theirs = client.semaphore(path, 2), other.semaphore(path, 2)
        first = ours.acquire()
        second = theirs.acquire(timeout=5)
        assert first and second and first.fencing_token < second.fencing_token
        assert first.node_path.startswith(f"{path}/leases/_c_") and "-lease-" in first.node_path
        assert ours.acquire(blocking=False) is None
        assert theirs.acquire(timeout=0.2) is None
        assert lease_count(client, path) == 2, "a refused acquire leaves nothing"
        got: list = []
        waiter = threading.Thread(target=lambda: got.append(ours.acquire(timeout=20)))
        waiter.start()
        second.release()
        waiter.join(30)
        assert got and got[0] is not None and got[0].is_held
        assert ours.held == 2
        ours.release()  # the oldest lease of this object: `first`
        assert not first.is_held and got[0].is_held
        with pytest.raises(zkrecipes.NotOwnerError):
            first.release()
        got[0].release()
        with pytest.raises(zkrecipes.NotOwnerError):
            ours.release()
        assert lease_count(client, path) == 0
    finally:
        other.close()


def test_with_blocks_release_their_own_lease_across_threads(client, path):
    sem = client.semaphore(path, 2)
    inside = threading.Barrier(2)
    seen: list = []

    def worker() -> None:
        with sem as lease:
            inside.wait(20)
            # The other thread's block may end first: this lease is still ours.
            seen.append(lease.is_held)
            inside.wait(20)
        seen.append(lease.is_held)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert seen.count(True) == 2 and seen.count(False) == 2
    assert sem.held == 0


def test_a_block_that_released_its_lease_leaves_without_a_second_release(client, path):
    sem = client.semaphore(path, 1)
    with sem.acquire(timeout=10) as lease:
        lease.release()
    with sem as lease:
        lease.release()

    async def released_inside() -> None:
        async with sem as lease:
            await lease.release_async()

    asyncio.run(released_inside())
    assert sem.held == 0 and lease_count(client, path) == 0
    with pytest.raises(zkrecipes.errors.NotOwnerError):
        lease.release()  # a second release outside any block is still refused


def test_acquire_many_is_all_or_none_and_bad_input_is_typed(client, path):
    sem = client.semaphore(path, 3)
    one = sem.acquire()
    assert sem.acquire_many(3, blocking=False) is None
    two = sem.acquire_many(2, timeout=5)
    assert two is not None and len(two) == 2 and sem.held == 3
    for bad in (0, 4, -1):
        with pytest.raises(zkrecipes.InvalidArgumentError):
            sem.acquire_many(bad)
    with pytest.raises(TypeError):
        sem.acquire_many(1.5)  # type: ignore[arg-type]
    for bad in (0, -2, 2**40):
        with pytest.raises(zkrecipes.InvalidArgumentError):
            client.semaphore(path, bad)
    with pytest.raises(TypeError):
        client.semaphore(path, "2")  # type: ignore[arg-type]
    with pytest.raises(zkrecipes.InvalidPathError):
        client.semaphore("no-slash", 1)
    with pytest.raises(zkrecipes.InvalidArgumentError):
        sem.acquire(blocking=False, timeout=1)
    sem.release_all()
    assert sem.held == 0 and not one.is_held and lease_count(client, path) == 0


def test_async_with_cancel_and_timeout_leave_nothing(client, path):
    sem = client.semaphore(path, 1)

    async def main() -> None:
        async with sem as lease:
            assert lease.is_held
            assert await sem.acquire_async(timeout=0.1) is None
            waiting = asyncio.ensure_future(sem.acquire_async())
            while len(await sem.lease_nodes_async()) < 2:
                await asyncio.sleep(0.01)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
        # The cancelled attempt withdrew its node; the block released its lease.
        while await sem.lease_nodes_async():
            await asyncio.sleep(0.01)
        lease = await sem.acquire_async(timeout=5)
        assert lease is not None
        await lease.release_async()

    asyncio.run(asyncio.wait_for(main(), 60))
    assert sem.held == 0


def test_listener_sees_a_deleted_lease_lost_and_may_call_back(client, kz, path):
    sem = client.semaphore(path, 2)
    events: list = []
    lost = threading.Event()

    def listener(event: zkrecipes.Event) -> None:
        events.append(str(event.kind))
        if event.kind == zkrecipes.LockEvent.LOST:
            # Calling back into the library from a listener is allowed.
            events.append(sem.held)
            lost.set()

    sem.add_listener(listener)
    lease = sem.acquire()
    # An operator deletes the lease node.
    kz.delete(lease.node_path)
    assert lost.wait(20)
    assert events[:1] == ["ACQUIRED"] and events[-2:] == ["LOST", 0]
    assert not lease.is_held
    with pytest.raises(zkrecipes.NoNodeError):
        lease.release()
