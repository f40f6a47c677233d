"""What several test modules share: listeners that wait for what they hear, waits with a
deadline (for a state, for a child's line), and the scenarios of a Ctrl-C, a released waiter, a
start after the client closed and an ``asyncio.timeout`` that cancels the caller's own task.

Fixtures live in conftest.py; this is for plain functions and classes, which test modules
import (conftest.py puts this folder on ``sys.path``)."""

from __future__ import annotations

import _thread
import asyncio
import random
import subprocess
import threading
import time
from typing import Any, Awaitable, Callable, List, Optional

import pytest

from zkrecipes import Client, ClosedError, NodeEvent, VersionedCount, WorkQueue

# How long a test waits for something it expects; only a failure takes this long.
DEADLINE = 20.0


class Heard:
    """A listener that keeps what it hears and wakes whoever waits for something."""

    def __init__(self) -> None:
        self.heard: List[Any] = []
        self.cond = threading.Condition()

    def __call__(self, what: Any) -> None:
        with self.cond:
            self.heard.append(what)
            self.cond.notify_all()

    def until(self, what: str, ready: Callable[[List[Any]], bool]) -> List[Any]:
        """What was heard once ``ready`` says so; fails after DEADLINE seconds."""
        with self.cond:
            heard_in_time = self.cond.wait_for(lambda: ready(self.heard), DEADLINE)
            assert heard_in_time, f"{what} not within {DEADLINE} s: {self.heard}"
            return list(self.heard)

    def heard_within(self, ready: Callable[[List[Any]], bool], seconds: float) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: ready(self.heard), seconds)


class HeardEvents(Heard):
    """A cache's or a group's listener: the node events it hears, in order."""

    @property
    def events(self) -> List[NodeEvent]:
        return self.heard

    def count(self, n: int) -> List[NodeEvent]:
        return self.until(f"{n} events", lambda events: len(events) >= n)

    def names_with_paths(self) -> List[str]:
        """Each event as its name and its node's path, e.g. ``CREATED /py/x/a``."""
        with self.cond:
            return [f"{e.name} {e.node.path if e.node else ''}".strip() for e in self.events]

    def names_with_node_names(self) -> List[str]:
        """Each event as its name and its node's last path segment, e.g. ``CREATED a``."""
        with self.cond:
            return [f"{e.name} {e.node.name if e.node else ''}".strip() for e in self.events]


class HeardCounts(Heard):
    """A shared count's listener: the versioned counts it hears, in order."""

    @property
    def values(self) -> List[VersionedCount]:
        return self.heard

    def until_value(self, value: int) -> VersionedCount:
        """The first count heard with ``value``; fails after DEADLINE seconds."""
        heard = self.until(f"the value {value}", lambda values: any(v.value == value for v in values))
        return next(v for v in heard if v.value == value)

    def value_within(self, value: int, seconds: float) -> bool:
        return self.heard_within(lambda values: any(v.value == value for v in values), seconds)


def nack_twice_then_ack(work: WorkQueue) -> None:
    """The metrics tests' job: offered, nacked twice, acked at its third delivery."""
    work.offer(b"resize image 42")
    for expected_count in (1, 2, 3):
        job = work.consume(timeout=DEADLINE)
        assert job is not None and job.delivery_count == expected_count
        if expected_count < 3:
            job.nack()
        else:
            job.ack()


def until(what: Callable[[], bool], seconds: float = DEADLINE) -> bool:
    """Polls ``what`` (a state on the server or of an object, not an event) up to a deadline."""
    deadline = time.monotonic() + seconds
    while not what():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def line_of(child: "subprocess.Popen[str]", seconds: float = 10.0) -> str:
    """The child's next line; a child that says nothing fails the test instead of hanging it."""
    line: List[str] = []
    reader = threading.Thread(target=lambda: line.append(child.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(seconds)
    if not line:
        child.kill()
        pytest.fail(f"the child printed no line within {seconds} s")
    return line[0].strip()


def assert_ctrl_c_interrupts(blocking_call: Callable[[], object], after: float = 0.3) -> None:
    """A Ctrl-C ``after`` seconds into ``blocking_call`` raises KeyboardInterrupt out of it, promptly."""
    timer = threading.Timer(after, _thread.interrupt_main)
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            blocking_call()
    finally:
        # A call that returned early must not leave a Ctrl-C on its way to whatever runs next.
        timer.cancel()
    assert time.monotonic() - started < 5, "the Ctrl-C was noticed late"


def assert_release_frees_a_waiter(wait: Callable[[float], Optional[bool]], release: Callable[[], object]) -> None:
    """A thread blocked in ``wait(timeout)`` returns True once ``release()`` has run."""
    released: List[Optional[bool]] = []
    waiter = threading.Thread(target=lambda: released.append(wait(20)))
    waiter.start()
    release()
    waiter.join(30)
    assert released == [True]


def assert_a_start_after_the_client_closed_is_closed(zk_connect: str, recipe_of: Callable[[Client], Any]) -> None:
    """A recipe made before its client closed refuses ``start_async`` after, with a ClosedError."""
    client = Client(zk_connect)
    recipe = recipe_of(client)
    client.close()

    async def main() -> None:
        with pytest.raises(ClosedError):
            await asyncio.wait_for(recipe.start_async(), 15.0)

    asyncio.run(main())


needs_asyncio_timeout = pytest.mark.skipif(not hasattr(asyncio, "timeout"), reason="asyncio.timeout is Python 3.11+")


async def cancelled_by_timeouts(
    rounds: int, rng: random.Random, call: Callable[[], Awaitable[Any]], then: Callable[[Any], Awaitable[None]]
) -> int:
    """Awaits ``call()`` ``rounds`` times, each under an ``asyncio.timeout`` of 0 to 3 ms (which cancels
    the caller's own task), and ``then`` with the result of each that finished in time. Returns how
    many the timeouts cancelled."""
    cancelled = 0
    for _ in range(rounds):
        try:
            async with asyncio.timeout(rng.uniform(0, 0.003)):  # type: ignore[attr-defined]
                result = await call()
        except TimeoutError:
            cancelled += 1
            continue
        await then(result)
    return cancelled
