from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import zkrecipes
from zkrecipes import LockEvent

from _helpers import cancelled_by_timeouts, line_of, needs_asyncio_timeout


def test_acquire_release_context_manager_and_fencing(client, path):
    lock = client.write_lock(path)
    assert lock.fencing_token is None and not lock.is_held
    with lock:
        token = lock.fencing_token
        assert isinstance(token, int) and token > 0
        assert lock.is_held and lock.is_held_by_current_thread()
        assert [p.identity for p in lock.participants()] == [client.identity]
    assert not lock.is_held
    assert lock.acquire() is True
    assert lock.fencing_token > token
    lock.release()


def test_reentrant_per_thread_like_rlock(client, path):
    lock = zkrecipes.WriteLock(client, path)
    assert lock.acquire()
    assert lock.acquire()
    assert lock.hold_count == 2
    other = []
    t = threading.Thread(target=lambda: other.append(lock.acquire(blocking=False)))
    t.start()
    t.join()
    assert other == [False], "another thread must not re-enter"
    with pytest.raises(zkrecipes.NotOwnerError):
        errs = []

        def release_elsewhere() -> None:
            try:
                lock.release()
            except zkrecipes.NotOwnerError as e:
                errs.append(e)

        t = threading.Thread(target=release_elsewhere)
        t.start()
        t.join()
        raise errs[0]
    lock.release()
    lock.release()
    with pytest.raises(RuntimeError):
        lock.release()


def test_threads_contending_never_overlap_and_tokens_increase(make_client, path):
    inside = threading.Lock()
    tokens = []
    errors = []

    def worker() -> None:
        lock = make_client().write_lock(path)
        for _ in range(5):
            with lock:
                if not inside.acquire(blocking=False):
                    errors.append("overlap")
                tokens.append(lock.fencing_token)
                time.sleep(0.002)
                inside.release()

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(tokens) == 30
    assert tokens == sorted(tokens) and len(set(tokens)) == 30


def test_gil_is_released_while_waiting(make_client, path):
    holder = make_client().write_lock(path)
    waiter = make_client().write_lock(path)
    holder.acquire()
    ticks = []
    stop = threading.Event()

    def ticker() -> None:
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.01)

    t = threading.Thread(target=ticker)
    t.start()
    before = len(ticks)
    assert waiter.acquire(timeout=0.5) is False
    during = len(ticks) - before
    stop.set()
    t.join()
    # About 50 ticks fit in the wait; a wait that held the GIL would let none
    # through (at most the one already under way). 5 leaves room for a
    # loaded machine without letting a held GIL pass.
    assert during >= 5, f"another Python thread must run while one waits ({during} ticks)"
    holder.release()


def test_timeout_and_try_leave_nothing_behind(make_client, path):
    holder = make_client().write_lock(path)
    other = make_client().write_lock(path)
    holder.acquire()
    started = time.monotonic()
    assert other.acquire(timeout=0.3) is False
    # Not before the timeout; and not much after it (10x its 0.3 s, for a loaded machine).
    assert 0.3 <= time.monotonic() - started < 3
    assert other.acquire(blocking=False) is False
    time.sleep(0.3)  # a chance for a late node of the given-up attempts to appear, which it must not
    assert len(holder.participants()) == 1
    holder.release()


def test_listeners_get_events_and_a_raising_listener_does_not_break(client, path):
    lock = client.write_lock(path)
    seen = []
    unraisable = []
    old_hook = sys.unraisablehook
    sys.unraisablehook = lambda u: unraisable.append(u)
    try:
        def bad(event: zkrecipes.Event[LockEvent]) -> None:
            raise ValueError("listener bug")

        lock.add_listener(bad)
        lock.add_listener(seen.append)
        with lock:
            pass
        deadline = time.monotonic() + 5
        while len(seen) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [e.kind for e in seen] == [LockEvent.ACQUIRED, LockEvent.RELEASED]
        assert any(isinstance(u.exc_value, ValueError) for u in unraisable)
        with lock:
            pass
        deadline = time.monotonic() + 5
        while len(seen) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [e.kind for e in seen[2:]] == [LockEvent.ACQUIRED, LockEvent.RELEASED], "the recipe goes on after a listener raised"
    finally:
        sys.unraisablehook = old_hook


def test_asyncio_tasks_contend_and_listeners_run_on_the_loop(zk_connect, path):
    async def main() -> None:
        client = await zkrecipes.Client.connect_async(zk_connect)
        lock = client.write_lock(path)
        loop = asyncio.get_running_loop()
        events = []
        lock.add_listener(lambda e: events.append((e, threading.get_ident())), loop=loop)
        inside = []
        overlaps = []

        async def worker() -> None:
            for _ in range(3):
                async with lock:
                    if inside:
                        overlaps.append(1)
                    inside.append(1)
                    await asyncio.sleep(0.005)
                    inside.pop()

        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.005)

        t = asyncio.ensure_future(ticker())
        await asyncio.gather(*(worker() for _ in range(4)))
        t.cancel()
        assert overlaps == []
        assert ticks > 10, "the event loop must keep running"
        # Listener events arrive on the loop after the calls that caused them:
        # wait for all 24 (ACQUIRED and RELEASED of 12 holds), not a fixed time.
        deadline = time.monotonic() + 10
        while len(events) < 24 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert len(events) == 24 and all(tid == threading.get_ident() for _, tid in events)
        await client.close_async()

    asyncio.run(main())


def test_cancelling_an_awaiting_task_withdraws_its_node(make_client, zk_connect, path):
    holder = make_client().write_lock(path)
    holder.acquire()

    async def main() -> None:
        client = await zkrecipes.Client.connect_async(zk_connect)
        lock = client.write_lock(path)
        task = asyncio.ensure_future(lock.acquire_async())
        deadline = time.monotonic() + 10
        while len(holder.participants()) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert len(holder.participants()) == 2
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        deadline = time.monotonic() + 10
        while len(holder.participants()) > 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        assert len(holder.participants()) == 1
        await client.close_async()

    asyncio.run(main())
    holder.release()


CHILD = textwrap.dedent(
    """
    import signal, sys, time, zkrecipes
    # A shell that starts a job in the background has it ignore SIGINT, and
    # Python then installs no KeyboardInterrupt handler: ask for Python's own,
    # as an interactive program has it.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    client = zkrecipes.Client(sys.argv[1], session_timeout=float(sys.argv[3]))
    lock = client.write_lock(sys.argv[2])
    if sys.argv[4] == "hold":
        lock.acquire()
        print("HELD", flush=True)
        time.sleep(600)
    else:
        print("WAITING", flush=True)
        try:
            lock.acquire()
        except KeyboardInterrupt:
            print("INTERRUPTED", flush=True)
            time.sleep(600)
    """
)


def test_sigkilled_holder_releases_to_a_waiter_within_session_timeout(client, zk_connect, path):
    child = subprocess.Popen([sys.executable, "-c", CHILD, zk_connect, path, "2", "hold"], stdout=subprocess.PIPE, text=True)
    assert line_of(child) == "HELD"
    lock = client.write_lock(path)
    assert lock.acquire(blocking=False) is False
    child.send_signal(signal.SIGKILL)
    child.wait()
    # The lock passes once the server expires the dead holder's 2 s session
    # (2 to 3 s on an idle machine); the acquire's own timeout is the bound,
    # with room for a loaded machine.
    assert lock.acquire(timeout=20) is True, "the dead holder's session never released the lock"
    lock.release()


def test_ctrl_c_interrupts_a_wait_and_withdraws_the_node(client, zk_connect, path):
    lock = client.write_lock(path)
    lock.acquire()
    child = subprocess.Popen([sys.executable, "-c", CHILD, zk_connect, path, "10", "wait"], stdout=subprocess.PIPE, text=True)
    assert line_of(child) == "WAITING"
    deadline = time.monotonic() + 10
    while len(lock.participants()) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(lock.participants()) == 2
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    assert line_of(child) == "INTERRUPTED"
    # The wait looks at Python's signal handlers every 50 ms: idle, the line
    # comes within about 0.1 s. 5 s still tells that from a wait Ctrl-C
    # cannot break (which line_of's 10 s would catch anyway).
    assert time.monotonic() - sent < 5
    deadline = time.monotonic() + 5
    while len(lock.participants()) > 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(lock.participants()) == 1, "the interrupted waiter's node must be gone while it still runs"
    child.kill()
    child.wait()
    lock.release()


def test_read_write_lock_share_downgrade_and_upgrade(make_client, path):
    a, b = make_client(), make_client()
    rw_a = a.read_write_lock(path)
    rw_b = zkrecipes.ReadWriteLock(b, path)
    with rw_a.read_lock():
        assert rw_b.read_lock().acquire(blocking=False) is True
        rw_b.read_lock().release()
        assert rw_b.write_lock().acquire(blocking=False) is False
        with pytest.raises(zkrecipes.WouldDeadlockError):
            rw_a.write_lock().acquire()
    with rw_a.write_lock():
        with rw_a.read_lock():
            # A downgrade reads on the write hold's node: no new node that a queued writer could precede.
            assert [p.is_reader for p in rw_a.read_lock().participants()] == [False]
        assert rw_a.write_lock().is_held_by_current_thread()
    assert rw_b.write_lock().acquire(blocking=False) is True
    rw_b.write_lock().release()


# --- issue 11: races a new user hits first -------------------------------------------------


def test_timed_acquire_answers_false_and_never_raises(client, path, zk_connect):
    """Defect 2: acquire(timeout=0 / 1e-6 / 0.001 / 0.005) raised TIMEOUT instead of answering."""
    lock = client.write_lock(path)
    for timeout in (0, 1e-6, 0.001, 0.005):
        got = lock.acquire(timeout=timeout)
        if got:
            lock.release()
        assert lock.participants() == [], f"timeout {timeout} left a node"
    assert lock.acquire(timeout=0) is True, "timeout=0 is a try: a free lock is taken"
    lock.release()
    with zkrecipes.Client(zk_connect) as other:
        held = other.write_lock(path)
        assert held.acquire()
        for timeout in (0, 1e-6, 0.001, 0.005):
            assert lock.acquire(timeout=timeout) is False
            assert len(lock.participants()) == 1, f"timeout {timeout} left its node behind"
        rw = zkrecipes.ReadWriteLock(client, path + "-rw")
        writer = zkrecipes.ReadWriteLock(other, path + "-rw").write_lock()
        assert writer.acquire()
        for timeout in (0, 1e-6, 0.001, 0.005):
            assert rw.read_lock().acquire(timeout=timeout) is False
        writer.release()
        held.release()


def test_nonblocking_acquire_with_a_timeout_is_a_value_error(client, path):
    lock = client.write_lock(path)
    with pytest.raises(ValueError):
        lock.acquire(blocking=False, timeout=1)
    assert lock.acquire(blocking=False, timeout=-1) is True
    lock.release()


def test_tiny_timeouts_beside_blocking_threads_never_jam_a_shared_lock(client, path):
    """Defect 1: one WriteLock shared by 3 threads with sub-millisecond timeouts and 2 blocking
    threads jammed for every process (late nodes of abandoned attempts blocked the line)."""
    lock = client.write_lock(path)
    stop = threading.Event()
    cycles = [0]
    errors: list = []

    def timed() -> None:
        timeouts = (0.0001, 0.0003, 0.0006, 0.001, 0.002)
        n = 0
        try:
            while not stop.is_set():
                if lock.acquire(timeout=timeouts[n % len(timeouts)]):
                    lock.release()
                n += 1
        except Exception as e:  # noqa: BLE001 - any exception is the defect
            errors.append(e)

    def blocking() -> None:
        try:
            while not stop.is_set():
                with lock:
                    cycles[0] += 1
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=timed) for _ in range(3)] + [threading.Thread(target=blocking) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        last = 0
        for second in range(6):
            time.sleep(1)
            assert cycles[0] > last, f"blocking threads stalled in second {second}"
            last = cycles[0]
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=15)
    assert not any(t.is_alive() for t in threads), "a thread is stuck"
    assert errors == []
    assert lock.participants() == []


def test_cancelled_acquire_async_never_leaves_a_hold(client, path):
    """Adversarial review: a task cancelled right as its acquire succeeded kept the lock."""
    lock = client.write_lock(path)

    async def attempt() -> None:
        if await lock.acquire_async():
            await lock.release_async()

    async def main() -> None:
        for i in range(40):
            task = asyncio.ensure_future(attempt())
            await asyncio.sleep((i % 15) / 5000)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            for _ in range(200):
                if not lock.is_held:
                    break
                await asyncio.sleep(0.01)
            assert not lock.is_held, f"round {i} left a hold"

    asyncio.run(main())
    # An attempt given up is withdrawn in the background: promptly, not before `is_held` turns false.
    deadline = time.monotonic() + 5
    while lock.participants() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert lock.participants() == []


def test_an_exception_in_the_block_is_never_replaced_by_the_release(make_client, path):
    # Issue 16: when the release on the way out failed too (here: the client was
    # closed inside the block), the user saw only that and lost their own error.
    c = make_client()
    lock = c.write_lock(path)
    with pytest.raises(ValueError, match="the block's own error") as raised:
        with pytest.warns(RuntimeWarning, match="releasing .* failed too"):
            with lock:
                c.close()
                raise ValueError("the block's own error")
    if sys.version_info >= (3, 11):
        assert any("failed too" in note for note in raised.value.__notes__)


async def _async_block_fails(c, lock) -> None:  # type: ignore[no-untyped-def]
    async with lock:
        c.close()
        raise KeyError("async block")


def test_an_exception_in_an_async_block_is_never_replaced_by_the_release(make_client, path):
    c = make_client()
    lock = c.write_lock(path)
    with pytest.raises(KeyError, match="async block"):
        with pytest.warns(RuntimeWarning, match="failed too"):
            asyncio.run(_async_block_fails(c, lock))


def test_a_failed_release_after_a_clean_block_still_raises(make_client, path):
    c = make_client()
    lock = c.write_lock(path)
    with pytest.raises(zkrecipes.ClosedError):
        with lock:
            c.close()


def test_errors_from_the_native_module_chain_to_the_exception_being_handled(client, path):
    """As a ``raise`` in Python would: the ``ValueError`` stays visible as ``__context__``."""
    lock = client.write_lock(path)
    try:
        try:
            raise ValueError("the caller's own error")
        except ValueError:
            lock.release()
    except zkrecipes.NotOwnerError as err:
        assert isinstance(err.__context__, ValueError)
    else:
        raise AssertionError("release without a hold must raise NotOwnerError")
    # Outside an except block there is nothing to chain to.
    with pytest.raises(zkrecipes.NotOwnerError) as raised:
        lock.release()
    assert raised.value.__context__ is None


def test_a_recipe_made_on_a_closed_client_fails_at_once(zk_connect):
    client = zkrecipes.Client(zk_connect)
    client.close()
    for make in (client.write_lock, client.read_write_lock, client.queue, client.leader_election):
        with pytest.raises(zkrecipes.ClosedError):
            make("/x")


def test_event_names_print_as_in_every_language():
    assert str(zkrecipes.LockEvent.ACQUIRED) == "ACQUIRED"
    assert f"{zkrecipes.ConnectionState.CONNECTED}" == "CONNECTED"
    assert str(zkrecipes.Event(zkrecipes.ElectionEvent.START)) == "START"


def test_an_event_equals_its_kind():
    acquired = zkrecipes.Event(zkrecipes.LockEvent.ACQUIRED, 5)
    assert acquired == zkrecipes.LockEvent.ACQUIRED and acquired != zkrecipes.LockEvent.LOST
    assert acquired in {zkrecipes.LockEvent.ACQUIRED} and acquired == "ACQUIRED"
    assert acquired == zkrecipes.Event(zkrecipes.LockEvent.ACQUIRED, 5)
    assert acquired != zkrecipes.Event(zkrecipes.LockEvent.ACQUIRED, 6)


def test_a_sync_program_pays_for_neither_asyncio_nor_per_object_dicts(zk_connect, path):
    # Issue 17: importing asyncio cost a sync program 11 MB; a lock object per request or
    # per entity must stay small (no __dict__, no listener registry until the first listener).
    program = textwrap.dedent(
        f"""
        import sys
        import zkrecipes
        assert "asyncio" not in sys.modules, "zkrecipes imported asyncio"
        with zkrecipes.Client({zk_connect!r}) as c:
            lock = c.write_lock({path!r})
            assert not hasattr(lock, "__dict__")
            with lock:
                assert lock.is_held
            seen = []
            lock.add_listener(seen.append)
            with lock:
                pass
            lock.remove_listener(seen.append)
            assert "asyncio" not in sys.modules, "using a lock imported asyncio"
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


@needs_asyncio_timeout
def test_a_lock_obtained_as_the_callers_own_task_is_cancelled_is_released(zk_connect, path):
    """Adversarial review: ``asyncio.timeout`` cancels the caller's own task; a hold obtained just
    before that was never seen by the caller and stayed for good (about 1 cancel in 17)."""

    async def main() -> None:
        client = await zkrecipes.Client.connect_async(zk_connect)
        lock = client.write_lock(path)

        async def release(_: object) -> None:
            await lock.release_async()

        try:
            cancelled = await cancelled_by_timeouts(300, random.Random(4), lock.acquire_async, release)
            assert cancelled > 30, cancelled
            deadline = time.monotonic() + 5
            while (lock.is_held or await lock.participants_async()) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            assert not lock.is_held
            assert await lock.participants_async() == []
        finally:
            await client.close_async()

    asyncio.run(main())


def test_a_multi_lock_is_reentrant_per_thread_and_a_cancelled_task_gives_back_what_it_took(make_client, path):
    a, b = f"{path}/a", f"{path}/b"
    client, other = make_client(), make_client()
    locks = client.multi_lock([b, a])
    assert locks.dirs == [b, a] and locks.fencing_tokens is None
    with locks:
        with locks:
            assert locks.hold_count == 2
            tokens = locks.fencing_tokens
            assert len(tokens) == 2 and tokens[1] < tokens[0], "taken in path order: a, then b"
        seen = []
        t = threading.Thread(target=lambda: seen.append(locks.acquire(blocking=False)))
        t.start()
        t.join()
        assert seen == [False], "another thread is another owner"
    assert not locks.is_held
    with pytest.raises(TypeError):
        client.multi_lock(a)
    with pytest.raises(zkrecipes.InvalidArgumentError):
        client.multi_lock([])

    single_b = other.write_lock(b)
    assert single_b.acquire()

    async def main() -> None:
        task = asyncio.ensure_future(locks.acquire_async())
        # Queued on b means a is taken (looked at for at most 20 s).
        deadline = time.monotonic() + 20
        while len(await single_b.participants_async()) < 2:
            assert time.monotonic() < deadline, "the multi-lock never queued on b"
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert other.write_lock(a).acquire(timeout=20), "a was given back after the cancel"
