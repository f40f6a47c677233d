"""The counters from Python: atomic longs exact under threads of several clients, wrapping and
compare-and-set; shared counts seeded once, followed by listeners (which may call back into
the count), try_set races, close and use after close, cancelled awaits, and bad input and bad
nodes as typed errors."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from pathlib import Path
from typing import Callable, List

import pytest

import zkrecipes
from zkrecipes import Updated, VersionedCount

from _helpers import DEADLINE, HeardCounts


def wait_for(what: str, ready: Callable[[], bool], cond: threading.Condition) -> None:
    """Until ``ready()``, woken by ``cond``; fails after DEADLINE seconds."""
    with cond:
        assert cond.wait_for(ready, DEADLINE), f"{what}: not within {DEADLINE} s"


def test_increments_from_threads_of_two_clients_end_exact(make_client, path):
    counters = [make_client().atomic_long(path), make_client().atomic_long(path)]
    assert counters[0].get() == 0, "a missing node reads as 0"
    posts: List[int] = []
    lock = threading.Lock()

    def work(counter: zkrecipes.DistributedAtomicLong) -> None:
        for _ in range(10):
            updated = counter.increment()
            assert updated.post_value == updated.pre_value + 1
            with lock:
                posts.append(updated.post_value)

    # Two threads on each object, each object on its own client.
    threads = [threading.Thread(target=work, args=(c,)) for c in counters for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    assert counters[1].get() == 40
    assert sorted(posts) == list(range(1, 41)), "every increment saw its own value: none lost, none twice"


def test_atomic_long_updates_wrap_and_compare(client, path):
    counter = client.atomic_long(path)
    assert counter.decrement() == Updated(0, -1)
    assert counter.add(5) == Updated(-1, 4)
    assert counter.compare_and_set(3, 100) is False and counter.get() == 4
    assert counter.compare_and_set(4, 100) is True and counter.get() == 100
    counter.force_set(2**63 - 1)
    assert counter.increment() == Updated(2**63 - 1, -(2**63)), "wraps as Java's long"
    assert counter.path == path and path in repr(counter)
    assert zkrecipes.DistributedAtomicLong(client, path).get() == -(2**63)

    async def main() -> None:
        await counter.force_set_async(1)
        assert await counter.increment_async() == Updated(1, 2)
        assert await counter.decrement_async() == Updated(2, 1)
        assert await counter.add_async(-10) == Updated(1, -9)
        assert await counter.compare_and_set_async(-9, 7) is True
        assert await counter.compare_and_set_async(-9, 8) is False
        assert await counter.get_async() == 7

    asyncio.run(asyncio.wait_for(main(), DEADLINE))


def test_bad_input_and_bad_nodes_are_typed(client, path):
    with pytest.raises(zkrecipes.InvalidPathError):
        client.atomic_long("no-slash")
    with pytest.raises(zkrecipes.InvalidPathError):
        client.shared_count("/trailing/")
    counter = client.atomic_long(path + "/long")
    for wrong in ("1", 1.0, True, None):
        with pytest.raises(TypeError):
            counter.add(wrong)  # type: ignore[arg-type]
    # The core decides the widths, with the same code and message in every language.
    with pytest.raises(zkrecipes.InvalidArgumentError, match="delta must be a 64-bit integer"):
        counter.add(2**63)
    with pytest.raises(zkrecipes.InvalidArgumentError, match="seed must be a 32-bit integer"):
        client.shared_count(path, seed=2**31)
    count = client.shared_count(path + "/count")
    with pytest.raises(zkrecipes.InvalidArgumentError, match="not started"):
        count.get()
    assert "not started" in repr(count)
    with pytest.raises(zkrecipes.InvalidArgumentError, match="value must be a 32-bit integer"):
        count.set(-(2**31) - 1)
    with pytest.raises(zkrecipes.InvalidArgumentError, match="expected.version"):
        count.try_set(zkrecipes.VersionedCount(0, 2**31), 1)
    with pytest.raises(TypeError, match="VersionedCount"):
        count.try_set((0, 0), 1)  # type: ignore[arg-type]
    # A count's 4 bytes are no atomic long, an atomic long's 8 no count: each names the length.
    count.set(5)
    with pytest.raises(zkrecipes.InvalidArgumentError, match="this one 4"):
        client.atomic_long(path + "/count").get()
    with pytest.raises(zkrecipes.InvalidArgumentError, match="this one 4"):
        client.atomic_long(path + "/count").increment()
    counter.force_set(1)
    with pytest.raises(zkrecipes.InvalidArgumentError, match="this one 8"):
        client.shared_count(path + "/long").start()
    with pytest.raises(zkrecipes.InvalidArgumentError, match="this one 8"):
        client.shared_count(path + "/long").read()


def test_a_count_is_seeded_once_and_try_set_races_answer_false(make_client, path):
    ours = make_client().shared_count(path, seed=7)
    assert ours.read() == 7, "read before anything exists: the seed, nothing created"
    with ours, zkrecipes.SharedCount(make_client(), path, 100) as theirs:
        assert ours.count == 7 and theirs.get() == 7, "the second seed never overwrites"
        assert ours.versioned() == VersionedCount(7, 0)
        heard = HeardCounts()
        ours.add_listener(heard)
        # Both read the same version; the first write over it wins, the other is told.
        mine, yours = ours.versioned(), theirs.versioned()
        assert theirs.try_set(yours, 8) is True
        assert ours.try_set(mine, 9) is False
        assert ours.count == 8, "a lost try_set refreshes the count"
        assert ours.try_set(ours.versioned(), 9) is True and ours.count == 9
        assert heard.until_value(9).version == 2
        assert ours.add(-4) == VersionedCount(5, 3)
        theirs.set(-(2**31))
        assert theirs.add(-1).value == 2**31 - 1, "wraps as Java's int"
        assert heard.until_value(2**31 - 1) == VersionedCount(2**31 - 1, 5)
        assert f"{2**31 - 1} (version 5)" in repr(ours)
        values = [v.value for v in heard.values]
        assert values == sorted(set(values), key=values.index), "in order, each once"


def test_a_listener_hears_another_client_and_may_call_back(make_client, path):
    writer = make_client().shared_count(path)
    count = make_client().shared_count(path)
    seen: List[object] = []
    cond = threading.Condition()

    def listener(v: VersionedCount) -> None:
        # Back into the count from its listener: the cache, then a write of its own.
        with cond:
            seen.append((v.value, count.get(), count.versioned().value))
            cond.notify_all()
        if v.value == 1:
            count.set(2)

    count.add_listener(listener)
    count.add_listener(listener)  # once only
    count.start()
    wait_for("the first read", lambda: len(seen) >= 1, cond)
    writer.set(1)
    wait_for("the listener's own write", lambda: any(s[0] == 2 for s in seen), cond)
    assert seen[:3] == [(0, 0, 0), (1, 1, 1), (2, 2, 2)], seen
    assert writer.read() == 2
    count.remove_listener(listener)
    count.remove_listener(listener)  # unknown now: ignored
    count.close()


def test_two_threads_on_one_count_and_close_with_adds_in_flight(client, path):
    count = client.shared_count(path)
    count.start()
    ran = threading.Event()
    errors: List[BaseException] = []

    done: List[int] = []

    def adds() -> None:
        try:
            for i in range(15):
                count.add(1)
                done.append(1)
                if i == 2:
                    ran.set()
        except BaseException as err:
            errors.append(err)
            ran.set()

    threads = [threading.Thread(target=adds) for _ in range(2)]
    for t in threads:
        t.start()
    assert ran.wait(DEADLINE)
    count.close()  # while the adds go on: one in flight finishes, a later one is refused
    count.close()
    for t in threads:
        t.join(DEADLINE)
    assert all(isinstance(err, zkrecipes.ClosedError) for err in errors), errors
    # Closed for good (as Curator's): nothing lost, nothing counted that did not return.
    with pytest.raises(zkrecipes.ClosedError):
        count.read()
    assert client.shared_count(path).read() == len(done)
    for call in (lambda: count.set(40), count.start, lambda: count.count):
        with pytest.raises(zkrecipes.ClosedError):
            call()


def test_use_after_the_client_closed(zk_connect, path):
    client = zkrecipes.Client(zk_connect)
    count = client.shared_count(path)
    count.start()
    counter = client.atomic_long(path + "l")
    client.close()
    for call in (lambda: count.set(1), lambda: count.add(1), count.read, counter.get, counter.increment):
        with pytest.raises(zkrecipes.ClosedError):
            call()
    assert count.count == 0, "the cache keeps its last value"
    with pytest.raises(zkrecipes.ClosedError):
        client.shared_count(path)
    with pytest.raises(zkrecipes.ClosedError):
        client.atomic_long(path)


def test_async_forms_and_cancelled_updates(client, path):
    counter = client.atomic_long(path + "l")
    count = client.shared_count(path + "c", seed=3)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        heard: asyncio.Queue = asyncio.Queue()
        count.add_listener(heard.put_nowait, loop=loop)
        async with count:
            assert (await asyncio.wait_for(heard.get(), DEADLINE)) == VersionedCount(3, 0)
            await count.set_async(4)
            assert await count.try_set_async(count.versioned(), 5) is True
            assert await count.try_set_async(VersionedCount(4, 1), 6) is False
            assert await count.add_async(2) == VersionedCount(7, 3)
            assert await count.read_async() == 7
            got = [(await asyncio.wait_for(heard.get(), DEADLINE)).value for _ in range(3)]
            assert got == [4, 5, 7]
        # Cancelled (a timeout, a task cancelled): each increment applied or not, never twice,
        # and the counter goes on exactly.
        for _ in range(10):
            try:
                await asyncio.wait_for(counter.increment_async(), 0.001)
            except asyncio.TimeoutError:
                pass
        task = asyncio.ensure_future(counter.add_async(1000))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        before = await counter.get_async()
        assert 0 <= before <= 10 or 1000 <= before <= 1010
        assert await counter.increment_async() == Updated(before, before + 1)

    asyncio.run(asyncio.wait_for(main(), 60))


# A deleted node is watched for its creation (an exists watch), so the count follows it again.
def test_a_deleted_and_recreated_node_is_followed_again(make_client, zk_connect, path):
    count = make_client().shared_count(path, seed=1)
    heard = HeardCounts()
    count.add_listener(heard)
    count.start()
    harness = os.environ.get("ZK_HARNESS", str(Path(__file__).resolve().parents[2] / "target" / "debug" / "zk-harness"))
    subprocess.run([harness, "rm", zk_connect, path], check=True, timeout=30)
    make_client().shared_count(path).set(5)  # creates the node again
    assert heard.value_within(5, 15.0), f"the recreated node's value: {heard.values}"

