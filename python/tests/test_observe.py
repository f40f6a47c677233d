"""Logs through the standard ``logging`` module and numbers through ``Client.metrics()``, read the
way a user reads them (a handler of one's own, a snapshot), and checked against what each test
did to a real ZooKeeper."""

from __future__ import annotations

import asyncio
import io
import logging
import subprocess
import sys
import textwrap
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, List, Optional

import pytest

import zkrecipes
from zkrecipes import Client, Sasl, Tls, WriteLock

from _helpers import DEADLINE, nack_twice_then_ack, until


class Captured(logging.Handler):
    """A handler that keeps every record it is handed and wakes whoever waits for one."""

    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)
        self.records: List[logging.LogRecord] = []
        self.cond = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self.cond:
            self.records.append(record)
            self.cond.notify_all()

    def until(self, what: str, matches: Callable[[logging.LogRecord], bool]) -> logging.LogRecord:
        """The first record ``matches`` accepts; fails after DEADLINE seconds."""
        with self.cond:
            found: List[logging.LogRecord] = []

            def ready() -> bool:
                found[:] = [r for r in self.records if matches(r)]
                return bool(found)

            assert self.cond.wait_for(ready, DEADLINE), f"{what} not logged within {DEADLINE} s: {self.summary()}"
            return found[0]

    def delivered(self) -> List[logging.LogRecord]:
        """Every record, once the library has handed over all it had made."""
        assert zkrecipes.flush_logs(DEADLINE), "the library's log records are delivered"
        with self.cond:
            return list(self.records)

    def summary(self) -> List[str]:
        return [f"{r.levelname} {r.name} {r.getMessage()}" for r in self.records]


@contextmanager
def captured(logger_name: str, level: int) -> Iterator[Captured]:
    """A handler on ``logger_name`` at ``level``, told to the library as a user would."""
    logger = logging.getLogger(logger_name)
    handler = Captured()
    old_level = logger.level
    logger.setLevel(level)
    logger.addHandler(handler)
    zkrecipes.refresh_log_levels()
    try:
        yield handler
    finally:
        # What this test made is not left for the next one's handlers.
        zkrecipes.flush_logs(DEADLINE)
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        zkrecipes.refresh_log_levels()


def fields_of(record: logging.LogRecord) -> dict:
    fields = getattr(record, "zkrecipes", None)
    assert isinstance(fields, dict), f"a zkrecipes record carries its fields: {record.__dict__}"
    return fields


def contended_acquire(holder: WriteLock, waiter: WriteLock) -> int:
    """``waiter`` acquires while ``holder`` holds (queued behind it), then releases: its token."""
    assert holder.acquire(timeout=DEADLINE)
    got: List[Optional[int]] = []

    def acquire() -> None:
        # A lock belongs to the thread that took it: taken and released here.
        if waiter.acquire(timeout=DEADLINE):
            got.append(waiter.fencing_token)
            waiter.release()
        else:
            got.append(None)

    thread = threading.Thread(target=acquire)
    thread.start()
    assert until(lambda: len(holder.participants()) == 2), "the waiter queues behind the holder"
    holder.release()
    thread.join(DEADLINE)
    assert len(got) == 1 and got[0] is not None, f"the queued acquire got the lock: {got}"
    return got[0]


def test_lock_acquisitions_timeouts_waits_and_holds_are_counted_and_logged(make_client, path):
    with captured("zkrecipes.lock", logging.INFO) as records:
        holder_client = make_client()
        waiter_client = make_client()
        holder = holder_client.write_lock(path)
        lock = waiter_client.write_lock(path)
        token = None
        for i in range(100):
            if i % 10 == 0:
                # Held by the other client: this one times out.
                assert holder.acquire(timeout=DEADLINE)
                assert lock.acquire(timeout=0.05) is False
                holder.release()
            elif i == 55:
                token = contended_acquire(holder, lock)
            else:
                assert lock.acquire(timeout=DEADLINE)
                lock.release()

        seen = waiter_client.metrics()
        assert seen.counter("zkrecipes.lock.acquisitions", path=path, outcome="timeout") == 10
        assert seen.counter("zkrecipes.lock.acquisitions", path=path, outcome="acquired") == 90
        assert seen.counter("zkrecipes.lock.acquisitions", outcome="timeout") == 10
        assert seen.gauge("zkrecipes.lock.waiters", path=path) == 0
        assert seen.gauge("zkrecipes.lock.holders", path=path) == 0
        waits = seen.histogram("zkrecipes.lock.wait.duration", path=path)
        assert waits is not None and waits.count == 100
        assert sum(waits.counts) == 100 and len(waits.counts) == len(waits.bounds) + 1
        timeouts = seen.histogram("zkrecipes.lock.wait.duration", path=path, outcome="timeout")
        assert timeouts is not None and timeouts.count == 10
        assert timeouts.min >= 0.05, f"a timed-out wait lasts its timeout: {timeouts}"
        median = waits.quantile(0.5)
        assert median is not None and waits.min <= median <= waits.max
        assert waits.quantile(1.0) == waits.max
        holds = seen.histogram("zkrecipes.lock.hold.duration", path=path)
        assert holds is not None and holds.count == 90
        assert seen.histogram("zkrecipes.lock.wait.duration", path=path, outcome="cancelled") is None
        assert holder_client.metrics().counter("zkrecipes.lock.acquisitions", path=path, outcome="acquired") == 11

        # The queued acquire is told at INFO, with its fencing token and its wait.
        acquired = records.until(
            "the contended acquire",
            lambda r: r.levelno == logging.INFO and getattr(r, "outcome", None) == "acquired",
        )
        assert acquired.name == "zkrecipes.lock"
        assert acquired.fencing_token == token  # type: ignore[attr-defined]
        assert acquired.path == path  # type: ignore[attr-defined]
        assert fields_of(acquired)["fencing_token"] == token
        # The library's integer fields are ints (by name, in every record), the others text.
        assert isinstance(fields_of(acquired)["waited_ms"], int) and fields_of(acquired)["kind"] == "lock"
        assert path in acquired.getMessage()
        delivered = records.delivered()
        mine = [r for r in delivered if fields_of(r).get("path") == path]
        assert len([r for r in mine if getattr(r, "outcome", None) == "timeout"]) == 10
        assert all(r.levelno >= logging.INFO for r in delivered), records.summary()

        # The Prometheus text has the counter, with the point's attributes as labels.
        [point] = [
            p for p in seen.points
            if p.name == "zkrecipes.lock.acquisitions" and p.attributes.get("outcome") == "acquired"
        ]
        assert point.instrument == "counter" and point.value == 90 and point.histogram is None
        assert point.unit.startswith("{") and point.description
        labels = ",".join(f'{name}="{value}"' for name, value in point.attributes.items())
        text = seen.to_prometheus()
        assert f"zkrecipes_lock_acquisitions_total{{{labels}}} 90" in text.splitlines()
        assert any(line.startswith("# TYPE zkrecipes_lock_acquisitions") and line.endswith(" counter") for line in text.splitlines())
        [wait_point] = [p for p in seen.points if p.name == "zkrecipes.lock.wait.duration" and p.attributes.get("outcome") == "timeout"]
        assert wait_point.instrument == "histogram" and wait_point.value is None and wait_point.unit == "s"
        assert wait_point.histogram is not None and wait_point.histogram.count == 10


def test_a_level_nobody_shows_is_never_made(make_client, path):
    lock_logger = logging.getLogger("zkrecipes.lock")
    with captured("zkrecipes.lock", logging.WARNING) as records:
        holder_client, waiter_client = make_client(), make_client()
        holder, lock = holder_client.write_lock(path), waiter_client.write_lock(path)
        contended_acquire(holder, lock)
        assert lock.acquire(timeout=DEADLINE)
        lock.release()
        assert [r for r in records.delivered() if r.levelno < logging.WARNING] == []

        # More verbose in Python only: the library still makes nothing below WARNING until told.
        lock_logger.setLevel(logging.DEBUG)
        contended_acquire(holder, lock)
        assert records.delivered() == []

        zkrecipes.refresh_log_levels()
        token = contended_acquire(holder, lock)
        records.until(
            "the contended acquire once told",
            lambda r: r.levelno == logging.INFO and getattr(r, "fencing_token", None) == token,
        )
        assert lock.acquire(timeout=DEADLINE)
        lock.release()
        records.until("an uncontended acquire at DEBUG", lambda r: r.levelno == logging.DEBUG)


def test_metric_paths_off_leaves_paths_out(make_client, zk_connect, path):
    with_paths = make_client()
    without = make_client(metric_paths=False)
    for client in (with_paths, without):
        with client.write_lock(path):
            pass
    assert with_paths.metrics().counter("zkrecipes.lock.acquisitions", path=path, outcome="acquired") == 1
    seen = without.metrics()
    assert seen.counter("zkrecipes.lock.acquisitions", outcome="acquired") == 1
    assert seen.counter("zkrecipes.lock.acquisitions", path=path) == 0
    assert seen.points and all("path" not in p.attributes for p in seen.points)
    assert f'path="{path}"' not in seen.to_prometheus()
    assert any(p.attributes.get("path") == path for p in with_paths.metrics().points)

    async def connected_without_paths() -> Client:
        return await Client.connect_async(zk_connect, metric_paths=False)

    also_without = asyncio.run(connected_without_paths())
    try:
        with also_without.write_lock(path):
            pass
        assert also_without.metrics().counter("zkrecipes.lock.acquisitions", outcome="acquired") == 1
        assert all("path" not in p.attributes for p in also_without.metrics().points)
    finally:
        also_without.close()


def test_a_session_state_change_is_counted_and_logged(make_client):
    with captured("zkrecipes.session", logging.INFO) as records:
        client = make_client()
        assert client.metrics().counter("zkrecipes.session.state_changes", to="connected") == 1
        session = format(client.session_id & (2**64 - 1), "#x")
        connected = records.until(
            "the session's CONNECTED", lambda r: getattr(r, "session", None) == session and getattr(r, "state", None) == "CONNECTED"
        )
        assert connected.levelno == logging.INFO and session in connected.getMessage()
        # Delivered on the library's thread, named as the OS names it (not Python's "Dummy-N").
        assert connected.threadName == "zkrecipes-log"
        client.close()
        records.until("the session's CLOSED", lambda r: getattr(r, "state", None) == "CLOSED")
        assert client.metrics().counter("zkrecipes.session.state_changes", to="closed") == 1


def test_a_job_nacked_twice_then_acked_counts_two_redeliveries(make_client, path):
    with captured("zkrecipes.work_queue", logging.INFO) as records:
        client = make_client()
        work = client.work_queue(path)
        nack_twice_then_ack(work)
        seen = client.metrics()
        assert seen.counter("zkrecipes.work_queue.redeliveries") == 2
        assert seen.counter("zkrecipes.work_queue.deliveries", path=path) == 3
        assert seen.counter("zkrecipes.work_queue.settled", path=path, outcome="nack") == 2
        assert seen.counter("zkrecipes.work_queue.settled", path=path, outcome="ack") == 1
        assert seen.gauge("zkrecipes.work_queue.in_flight", path=path) == 0
        again = [r for r in records.delivered() if getattr(r, "path", None) == path and r.levelno == logging.INFO]
        assert [getattr(r, "delivery_count", None) for r in again] == [2, 3], records.summary()
        work.close()


def _formatted(records: List[logging.LogRecord]) -> List[str]:
    everything = logging.Formatter("%(levelname)s %(name)s %(message)s %(zkrecipes)s")
    return [everything.format(r) for r in records]


def test_no_digest_credential_in_any_record(make_client, path):
    secret = f"s3cret-{uuid.uuid4().hex}"
    with captured("zkrecipes", zkrecipes.TRACE) as records:
        client = make_client(auth=("digest", f"alice:{secret}"))
        with client.write_lock(path + "/lock"):
            pass
        client.queue(path + "/queue").offer(b"job")
        client.close()
        delivered = records.delivered()
    assert any(r.name == "zkrecipes.request" and r.levelno == logging.DEBUG for r in delivered)
    packets = [r for r in delivered if r.name == "zkrecipes.zookeeper" and r.levelno == zkrecipes.TRACE]
    assert packets and packets[0].levelname == "TRACE"
    leaked = [line for line in _formatted(delivered) if secret in line]
    assert leaked == []


def test_no_sasl_password_in_any_record(secure, path):
    with captured("zkrecipes", zkrecipes.TRACE) as records:
        tls = Tls(ca=str(secure["certs"] / "ca.pem"))
        with Client(secure["tls"], tls=tls, sasl=Sasl.digest_md5("alice", "alice-secret")) as client:
            assert "sasl:alice" in client.authenticated_as
            with client.write_lock(path):
                pass
        delivered = records.delivered()
    assert any(r.name == "zkrecipes.session" for r in delivered)
    assert [line for line in _formatted(delivered) if "alice-secret" in line] == []


def test_a_raising_handler_does_not_stop_delivery(make_client, monkeypatch):
    unraisable: List[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    # A handler's failure as logging's own handlers have it (handleError, silent here).
    monkeypatch.setattr(logging, "raiseExceptions", False)
    closed_stream = io.StringIO()
    closed_stream.close()

    class Raising(logging.Handler):
        """A handler whose ``emit`` lets its exception out of logging (no handleError)."""

        def emit(self, record: logging.LogRecord) -> None:
            raise RuntimeError("a broken handler")

    logger = logging.getLogger("zkrecipes.session")
    with captured("zkrecipes.session", logging.INFO) as records:
        failing = [logging.StreamHandler(closed_stream), Raising()]
        for handler in failing:
            logger.addHandler(handler)
        try:
            client = make_client()
            client.close()
            records.until("the CLOSED after a broken handler", lambda r: getattr(r, "state", None) == "CLOSED")
            delivered = records.delivered()
        finally:
            for handler in failing:
                logger.removeHandler(handler)
    assert [r.state for r in delivered][:1] == ["CONNECTED"]  # type: ignore[attr-defined]
    # Each record's exception went to sys.unraisablehook, and the next record came all the same.
    assert len(unraisable) == len(delivered) >= 2
    assert all("a broken handler" in str(getattr(u, "exc_value")) for u in unraisable)


def test_events_a_stalled_handler_could_not_take_are_counted_and_told(make_client, path):
    """The library keeps 10,000 events for a host that does not keep up, then drops and says so."""
    resume = threading.Event()
    stalled: List[bool] = []

    class Stalling(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if not stalled:
                stalled.append(True)
                # Until the requests are made (the `finally` resumes it): a stall bounded by
                # DEADLINE ended before 10,500 requests did on a loaded machine, and nothing was
                # dropped. The bound only keeps a broken test from hanging forever.
                resume.wait(600)

    stalling = Stalling()
    logger = logging.getLogger("zkrecipes")
    with captured("zkrecipes", logging.DEBUG) as records:
        logger.addHandler(stalling)
        try:
            client = make_client()
            queue = client.queue(path)
            assert until(lambda: bool(stalled)), "the handler stalls"
            # Each request is one event of zkrecipes.request (and packets below DEBUG, not made).
            for _ in range(10_500):
                len(queue)
        finally:
            resume.set()
            logger.removeHandler(stalling)
        told = records.until("the dropped events", lambda r: getattr(r, "dropped", 0) > 0)
    assert told.levelno == logging.WARNING and told.name == "zkrecipes"
    assert told.dropped >= 500 and fields_of(told) == {"dropped": told.dropped}  # type: ignore[attr-defined]
    assert f"{told.dropped} zkrecipes log events were dropped" in told.getMessage()  # type: ignore[attr-defined]


def test_bad_lookups_are_clear_errors(client, path):
    with client.write_lock(path):
        pass
    seen = client.metrics()
    with pytest.raises(zkrecipes.InvalidArgumentError, match="no metric is named"):
        seen.counter("zkrecipes.lock.acquisiton")
    with pytest.raises(zkrecipes.InvalidArgumentError, match='no attribute "outcom"'):
        seen.counter("zkrecipes.lock.acquisitions", outcom="timeout")
    with pytest.raises(zkrecipes.InvalidArgumentError, match="is an up_down_counter metric"):
        seen.counter("zkrecipes.lock.waiters")
    with pytest.raises(TypeError, match="outcome must be a str"):
        seen.counter("zkrecipes.lock.acquisitions", outcome=1)  # type: ignore[arg-type]
    assert seen.counter("zkrecipes.lock.acquisitions", path=path, outcome="acquired") == 1
    assert seen.histogram("zkrecipes.lock.wait.duration", path=path, outcome="cancelled") is None
    waits = seen.histogram("zkrecipes.lock.wait.duration", path=path)
    assert waits is not None and waits.count == 1
    for wrong in (99, -0.5, float("nan")):
        with pytest.raises(zkrecipes.InvalidArgumentError, match=r"within \[0, 1\]"):
            waits.quantile(wrong)
    with pytest.raises(zkrecipes.InvalidArgumentError, match="timeout must be in"):
        zkrecipes.flush_logs(-1)
    with pytest.raises(TypeError, match="metric_paths"):
        Client("127.0.0.1:1", metric_paths="no")  # type: ignore[arg-type]


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True, timeout=120
    )


def test_without_configuration_only_warnings_show(zk_connect, path):
    """Python's default: no handler anywhere, so ``logging.lastResort`` prints WARNING and above
    to stderr; a lock lost is a warning, every other event here is below it."""
    child = _run(
        """
        import logging, sys, threading
        import kazoo.client
        import zkrecipes

        connect, path = sys.argv[1:3]
        logging.getLogger("kazoo").setLevel(logging.CRITICAL)  # only another library's logs
        with zkrecipes.Client(connect) as client:
            with client.write_lock(path + "/quiet"):
                pass
            lock = client.write_lock(path + "/lost")
            lost = threading.Event()
            lock.add_listener(lambda event: event.kind == zkrecipes.LockEvent.LOST and lost.set())
            assert lock.acquire(timeout=20)
            other = kazoo.client.KazooClient(hosts=connect)
            other.start(20)
            for node in other.get_children(path + "/lost"):
                other.delete(f"{path}/lost/{node}")
            other.stop()
            other.close()
            assert lost.wait(20), "the lock is lost"
            try:
                lock.release()
            except zkrecipes.NoNodeError:
                pass
        print(client.metrics().counter("zkrecipes.lock.lost", path=path + "/lost"))
        """,
        zk_connect,
        path,
    )
    assert (child.returncode, child.stdout.strip()) == (0, "1"), child.stderr
    [warning] = child.stderr.splitlines()
    assert warning.startswith(f"lock {path}/lost: LOST after holding") and "deleted by somebody else" in warning


@pytest.mark.parametrize("blocker", ["handler", "listener"])
def test_a_handler_or_listener_that_blocks_for_good_does_not_keep_the_process_from_exiting(zk_connect, path, blocker):
    """Interpreter exit waits a moment for the library's call in progress, not for ever (a
    review saw a process with a stuck handler never exit)."""
    child = _run(
        """
        import logging, sys, threading
        import zkrecipes

        connect, path, blocker = sys.argv[1:4]
        stuck = threading.Event()

        def block_for_good(*_):
            stuck.set()
            threading.Event().wait()

        class Stuck(logging.Handler):
            # Not in emit(): logging.shutdown at exit waits for the lock a handler holds there,
            # with or without zkrecipes.
            def handle(self, record):
                block_for_good()

        client = zkrecipes.Client(connect)
        lock = client.write_lock(path)
        if blocker == "handler":
            logging.getLogger("zkrecipes.lock").addHandler(Stuck())
            logging.getLogger("zkrecipes.lock").setLevel(logging.DEBUG)
            zkrecipes.refresh_log_levels()
        else:
            lock.add_listener(block_for_good)
        with lock:
            pass
        assert stuck.wait(20), "the handler was called"
        client.close()
        print("main done", flush=True)
        """,
        zk_connect,
        path,
        blocker,
    )
    assert (child.returncode, child.stdout.strip()) == (0, "main done"), child.stderr


def test_the_api_is_typed_for_mypy_strict(tmp_path: Path):
    user = tmp_path / "user.py"
    user.write_text(
        textwrap.dedent(
            """
            import logging
            from typing import Dict, List, Optional, Tuple

            import zkrecipes

            def report(client: zkrecipes.Client) -> str:
                seen: zkrecipes.MetricsSnapshot = client.metrics()
                timeouts: int = seen.counter("zkrecipes.lock.acquisitions", outcome="timeout")
                waiting: int = seen.gauge("zkrecipes.lock.waiters", path="/locks/a")
                waits: Optional[zkrecipes.HistogramPoint] = seen.histogram("zkrecipes.lock.wait.duration")
                p99: Optional[float] = waits.quantile(0.99) if waits is not None else None
                points: List[zkrecipes.MetricPoint] = seen.points
                attributes: Dict[str, str] = points[0].attributes
                value: Optional[int] = points[0].value
                bounds: List[float] = waits.bounds if waits else []
                logging.getLogger("zkrecipes.lock").setLevel(zkrecipes.TRACE)
                zkrecipes.refresh_log_levels()
                flushed: bool = zkrecipes.flush_logs(2.0)
                names: Tuple[str, ...] = zkrecipes.LOGGERS
                return f"{timeouts} {waiting} {p99} {attributes} {value} {bounds} {flushed} {names}" + seen.to_prometheus()

            def connect() -> zkrecipes.Client:
                return zkrecipes.Client("127.0.0.1:2181", metric_paths=False)
            """
        )
    )
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(user)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
