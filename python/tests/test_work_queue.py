"""The at-least-once WorkQueue from Python: with/async with, redelivery after a SIGKILL,
dead letters, batches, and kazoo's LockingQueue on the same nodes both ways."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import zkrecipes

from _helpers import line_of


def blocked_in(thread: threading.Thread, function: str, seconds: float = 10.0) -> None:
    """Returns once `thread` runs inside zkrecipes' `function` (there it waits in the
    native call, without the GIL); fails after `seconds`. The native call is made by `function`
    itself or by a lambda of its file that the wait's span helper calls (`_spans.traced`)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        frame = sys._current_frames().get(thread.ident or -1)
        if frame is not None and "zkrecipes" in frame.f_code.co_filename:
            if frame.f_code.co_name == function:
                return
            caller = frame.f_back.f_back if frame.f_code.co_name == "<lambda>" and frame.f_back else None
            if caller is not None and caller.f_code.co_name == function and caller.f_code.co_filename == frame.f_code.co_filename:
                return
        time.sleep(0.005)
    pytest.fail(f"{thread.name} did not get into {function}() within {seconds} s")


def test_with_acks_on_success_and_gives_back_on_exception(client, path):
    q = client.work_queue(path)
    q.offer(b"late", priority=900)
    q.offer_all([b"a", b"b"])
    q.offer(b"urgent", priority=1)
    assert len(q) == 4
    with q.consume() as job:
        assert (job.data, job.priority, job.delivery_count) == (b"urgent", 1, 1)
    with pytest.raises(RuntimeError):
        with q.consume() as job:
            assert job.data == b"a"
            raise RuntimeError("worker failed")
    with q.consume() as job:
        assert (job.data, job.delivery_count) == (b"a", 2), "given back at its place"
    for expected in (b"b", b"late"):
        job = q.consume(1)
        assert job is not None and job.data == expected
        job.ack()
    assert q.consume(timeout=0.1) is None
    job = client.work_queue(path).consume(0)
    assert job is None
    with pytest.raises(ValueError):
        q.offer(b"x", priority=1000)
    with pytest.raises(TypeError):
        q.offer("text")  # type: ignore[arg-type]


def test_ack_twice_is_a_clear_error(client, path):
    q = client.work_queue(path)
    q.offer(b"x")
    job = q.consume(1)
    assert job is not None
    job.ack()
    with pytest.raises(zkrecipes.InvalidArgumentError):
        job.ack()
    assert len(q) == 0


def test_async_with_and_cancellation_give_back(zk_connect, path):
    async def main() -> None:
        async with zkrecipes.Client(zk_connect) as c:
            q = c.work_queue(path)
            await q.offer_async(b"one")
            async with q.consume_async() as job:
                assert job.data == b"one"
            assert await q.consume_async(0.1) is None
            # A task cancelled while it waits leaves nothing claimed. (The pause
            # makes it likely that the consume is under way when cancelled; what
            # is asserted below holds either way.)
            waiting = asyncio.create_task(q.consume_async())
            await asyncio.sleep(0.1)
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            await q.offer_async(b"two")
            job = await q.consume_async(2)
            assert job is not None and job.data == b"two" and job.delivery_count == 1, job
            with pytest.raises(KeyError):
                async with job:
                    raise KeyError("x")
            again = await q.consume_async(2)
            assert again is not None and again.data == b"two" and again.delivery_count == 2
            await again.ack_async()
            assert await q.size_async() == 0

    asyncio.run(main())


def test_close_ends_the_queue_object_but_not_the_jobs_in_hand(client, path):
    q = client.work_queue(path, prefetch=4)
    q.offer_all([b"a", b"b", b"c"])
    held = q.consume(1)
    assert held is not None and held.data == b"a"
    waiter = client.work_queue(path + "-idle")
    outcome: list = []

    def wait() -> None:
        try:
            outcome.append(waiter.consume())
        except zkrecipes.ClosedError as e:
            outcome.append(e)

    t = threading.Thread(target=wait)
    t.start()
    # Closed while the thread waits inside consume(), not before it got there.
    blocked_in(t, "consume")
    waiter.close()
    t.join(5)
    assert not t.is_alive() and isinstance(outcome[0], zkrecipes.ClosedError), outcome
    with q:
        pass
    q.close()
    for call in (lambda: q.consume(1), lambda: q.offer(b"d"), lambda: len(q)):
        with pytest.raises(zkrecipes.ClosedError):
            call()
    held.ack()
    other = client.work_queue(path)
    assert len(other) == 2
    job = other.consume(1)
    assert job is not None and job.data == b"b"
    job.ack()


def test_one_work_queue_object_shared_by_threads_delivers_each_job_once(client, path):
    from concurrent.futures import ThreadPoolExecutor

    q = client.work_queue(path, prefetch=8)
    q.offer_all([str(i).encode() for i in range(400)])

    def work(_: int) -> list:
        got = []
        while (job := q.consume(0.3)) is not None:
            with job:
                got.append(int(job.data))
        return got

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    everything = sorted(i for got in results for i in got)
    assert everything == list(range(400)), "each job acknowledged once, none lost"
    assert len(q) == 0


def test_a_sigkilled_worker_gives_every_held_job_back(zk_connect, path, client):
    q = client.work_queue(path)
    q.offer_all([b"%d" % i for i in range(10)])
    worker = textwrap.dedent(
        f"""
        import sys, time, zkrecipes
        c = zkrecipes.Client({zk_connect!r}, session_timeout=2.0)
        q = c.work_queue({path!r}, prefetch=4)
        held = [q.consume(5) for _ in range(3)]
        print(",".join(j.data.decode() for j in held), flush=True)
        time.sleep(60)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", worker], stdout=subprocess.PIPE, text=True)
    held = line_of(proc, 30).split(",")
    assert held == ["0", "1", "2"]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    seen = []
    deadline = time.monotonic() + 20
    while len(seen) < 10 and time.monotonic() < deadline:
        job = q.consume(timeout=1)
        if job is not None:
            with job:
                seen.append(job.data.decode())
    assert sorted(seen, key=int) == [str(i) for i in range(10)], "every job once, none lost"
    assert len(q) == 0


def test_a_poison_job_moves_to_the_dead_letters(client, path):
    q = client.work_queue(path, max_deliveries=2)
    q.offer(b"poison")
    for _ in range(2):
        with pytest.raises(ValueError):
            with q.consume(1) as job:
                raise ValueError(job.data)
    assert q.consume(0.2) is None
    assert len(q) == 0
    assert q.dead_letter_path == path + "/dead"


def test_kazoo_locking_queue_shares_the_jobs_both_ways(client, kz, path):
    theirs = kz.LockingQueue(path)
    ours = client.work_queue(path)
    theirs.put(b"from-kazoo", priority=50)
    ours.offer(b"from-us", priority=10)
    # One order for both: priority first.
    assert theirs.get(timeout=2) == b"from-us"
    with ours.consume(2) as job:
        assert job.data == b"from-kazoo"
    # kazoo holds "from-us" (its claim node): we do not deliver it.
    assert ours.consume(0.2) is None
    assert theirs.release()
    with ours.consume(2) as job:
        assert job.data == b"from-us"
    # What we claim, kazoo does not get.
    ours.offer(b"claimed")
    held = ours.consume(2)
    assert held is not None
    assert theirs.get(timeout=0.3) is None
    held.nack()
    assert theirs.get(timeout=2) == b"claimed"
    assert theirs.consume()
    assert len(ours) == 0


def test_prefetch_and_max_deliveries_out_of_range_are_the_cores_invalid_argument(client, path):
    for bad in ({"prefetch": 0}, {"prefetch": 1001}, {"max_deliveries": 0}, {"max_deliveries": -2}):
        with pytest.raises(zkrecipes.InvalidArgumentError, match=r"got (0|1001|-2)"):
            client.work_queue(path, **bad)
    with pytest.raises(TypeError):
        client.work_queue(path, prefetch=1.5)
