"""A lock, a semaphore, a queue, an election, a latch and barriers from Python, blocking and asyncio.

    python quickstart.py 127.0.0.1:2181
"""

from __future__ import annotations

import asyncio
import sys
from typing import List, Optional

import zkrecipes
from zkrecipes import ElectionEvent, Event, LatchEvent, LockEvent


def blocking(connect: str) -> None:
    with zkrecipes.Client(connect, session_timeout=10.0) as client:
        lock = client.write_lock("/examples/lock")
        lock.add_listener(lambda event: print("lock:", event))  # "ACQUIRED (fencing token 12)", "RELEASED"
        with lock:
            token: Optional[int] = lock.fencing_token
            print("holding the lock with fencing token", token)

        jobs = client.queue("/examples/jobs")
        jobs.offer(b"resize image 42")
        job: Optional[bytes] = jobs.take(timeout=5.0)
        print("took", job, "- left:", len(jobs))

        gpus = client.semaphore("/examples/gpus", max_leases=2)
        with gpus as lease:
            print("one of", gpus.max_leases, "leases, fencing token", lease.fencing_token)
        batch: Optional[List[zkrecipes.Lease]] = gpus.acquire_many(2, timeout=5.0)
        for held in batch or []:
            held.release()

        with client.leader_latch("/examples/latch", "worker-1") as latch:
            fencing: Optional[int] = latch.await_leadership(timeout=5.0)
            print("latch leader:", latch.leader(), "token", fencing)

        gate = client.barrier("/examples/gate")
        gate.set()
        gate.remove()
        released: bool = gate.wait(timeout=5.0)
        with client.double_barrier("/examples/round", member_count=1).entered(timeout=5.0) as barrier:
            print("released:", released, "- in the round with", barrier.members())

        seen: List[Event[ElectionEvent]] = []
        election = client.leader_election("/examples/election", "worker-1")
        election.add_listener(seen.append)  # before starting: sees every event
        with election:
            if election.await_leadership(timeout=5.0):
                print("leading; leader is", election.leader_host_name())


async def with_asyncio(connect: str) -> None:
    async with await zkrecipes.Client.connect_async(connect) as client:
        lock = client.write_lock("/examples/lock")
        events: List[Event[LockEvent]] = []
        lock.add_listener(events.append, loop=asyncio.get_running_loop())
        async with lock:
            print("async holder, token", lock.fencing_token)
        async with client.semaphore("/examples/gpus", 2) as lease:
            print("async lease, token", lease.fencing_token)
        latch_events: List[Event[LatchEvent]] = []
        async with client.leader_latch("/examples/latch") as latch:
            latch.add_listener(latch_events.append, loop=asyncio.get_running_loop())
            print("async latch token", await latch.await_leadership_async(timeout=5.0))
        queue = client.queue("/examples/jobs")
        await queue.offer_async(b"async job")
        print("async took", await queue.take_async(timeout=5.0))
        try:
            queue.element()
        except zkrecipes.NoSuchElementError as err:
            print("empty queue:", err.code)


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:2181"
    blocking(target)
    asyncio.run(with_asyncio(target))
