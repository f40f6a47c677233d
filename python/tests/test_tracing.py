"""OpenTelemetry spans around the waits, read back from the real SDK's in-memory span exporter
after each test waited on a real ZooKeeper: a span per wait, named as the core names it, a child
of the caller's span, with what the wait did (path, kind, outcome, fencing token, waited time).
And with no tracer provider set, none at all: no tracer asked for, the SDK never imported."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any, Iterator, List

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import zkrecipes
from zkrecipes import WouldDeadlockError
from zkrecipes.metrics import WAIT_SPANS

from _helpers import DEADLINE, assert_ctrl_c_interrupts, until

# How long a holder keeps the lock once the waiter is queued: the waiter's span must say it
# waited at least that long.
HOLD = 0.3

NAMES = {span.call: span.name for span in WAIT_SPANS}


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    """The process's global tracer provider, an SDK one exporting to memory (a provider is set
    once per process: a later module finds this one and keeps it)."""
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    # The modules after this one wait too: their spans are refused, not kept.
    exporter.shutdown()


@pytest.fixture
def caller() -> trace.Tracer:
    """The application's own tracer, for the spans the waits are children of."""
    return trace.get_tracer("test-application")


def spans_of(exporter: InMemorySpanExporter, path: str, count: int = 1) -> List[ReadableSpan]:
    """The library's spans whose path is ``path`` (each test has its own), in the order they
    ended, once there are ``count`` of them."""

    def found() -> List[ReadableSpan]:
        return [
            s
            for s in exporter.get_finished_spans()
            if s.instrumentation_scope is not None
            and s.instrumentation_scope.name == "zkrecipes"
            and s.attributes is not None
            and s.attributes.get("path") == path
        ]

    assert until(lambda: len(found()) >= count), f"{count} spans of {path}: {found()}"
    return found()


def only_span(exporter: InMemorySpanExporter, path: str) -> ReadableSpan:
    spans = spans_of(exporter, path)
    assert len(spans) == 1, spans
    return spans[0]


def attributes(span: ReadableSpan) -> dict:
    assert span.attributes is not None
    return dict(span.attributes)


def assert_child_of(span: ReadableSpan, parent: Any) -> None:
    context = parent.get_span_context()
    assert span.parent is not None, "the wait's span has no parent"
    assert span.parent.span_id == context.span_id
    assert span.context is not None and span.context.trace_id == context.trace_id


def queued(lock: Any, contenders: int) -> None:
    """Waits until ``contenders`` nodes are in the lock's line (the waiter has queued)."""
    assert until(lambda: len(lock.participants()) >= contenders), lock.participants()


def test_the_span_names_are_the_cores():
    kinds = {span.call: span.kind for span in WAIT_SPANS}
    assert kinds == {
        "lock.acquire": "lock",
        "read_lock.acquire": "read",
        "write_lock.acquire": "write",
        "multi_lock.acquire": "multi",
        "semaphore.acquire": "lease",
        "queue.take": "item",
        "work_queue.consume": "delivery",
        "election.await_leadership": "leadership",
        "latch.await_leadership": "leadership",
        "barrier.wait": "single",
        "double_barrier.enter": "enter",
        "double_barrier.leave": "leave",
    }
    assert NAMES["lock.acquire"] == NAMES["read_lock.acquire"] == "zkrecipes.lock.acquire"
    assert all(span.name.startswith("zkrecipes.") for span in WAIT_SPANS)


def test_a_contended_acquire_is_a_child_of_the_callers_span_with_its_token_and_wait(
    make_client, exporter, caller, path
):
    holder = make_client().write_lock(path)
    lock = make_client().write_lock(path)
    assert holder.acquire(timeout=DEADLINE)
    got: List[Any] = []

    def request() -> None:
        with caller.start_as_current_span("request") as parent:
            got.append((lock.acquire(timeout=DEADLINE), lock.fencing_token, parent))
            lock.release()

    waiter = threading.Thread(target=request)
    waiter.start()
    queued(holder, 2)
    waiting_since = time.monotonic()
    time.sleep(HOLD)  # the hold itself: how long the waiter must wait
    held = time.monotonic() - waiting_since
    holder.release()
    waiter.join(DEADLINE)
    assert not waiter.is_alive()
    [(acquired, token, parent)] = got
    assert acquired is True and isinstance(token, int)

    holding, span = spans_of(exporter, path, 2)
    assert holding.parent is None and attributes(holding)["outcome"] == "acquired"
    assert span.name == "zkrecipes.lock.acquire"
    assert_child_of(span, parent)
    found = attributes(span)
    assert found["outcome"] == "acquired"
    assert found["fencing_token"] == token
    assert found["waited_ms"] >= int(held * 1000)
    assert found["kind"] == "lock"  # as the core's metrics name a plain lock's acquire
    assert span.status.status_code == StatusCode.UNSET


def test_a_timed_out_acquire_and_a_failed_try_have_no_token(make_client, exporter, path):
    holder = make_client().write_lock(path)
    lock = make_client().write_lock(path)
    assert holder.acquire(timeout=DEADLINE)
    assert lock.acquire(timeout=0.2) is False
    assert lock.acquire(blocking=False) is False
    holder.release()

    spans = spans_of(exporter, path, 3)[1:]  # the holder's first
    assert [attributes(s)["outcome"] for s in spans] == ["timeout", "timeout"]
    assert all("fencing_token" not in attributes(s) for s in spans)
    assert attributes(spans[0])["waited_ms"] >= 200
    assert all(s.status.status_code == StatusCode.UNSET for s in spans)


def test_a_cancelled_async_acquire_is_cancelled_and_no_error(make_client, exporter, caller, path):
    holder = make_client().write_lock(path)
    lock = make_client().write_lock(path)
    assert holder.acquire(timeout=DEADLINE)

    async def main() -> Any:
        with caller.start_as_current_span("request") as parent:
            task = asyncio.ensure_future(lock.acquire_async())
            deadline = time.monotonic() + DEADLINE
            while len(await holder.participants_async()) < 2:
                assert time.monotonic() < deadline, "the waiter never queued"
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return parent

    parent = asyncio.run(main())
    holder.release()
    _, span = spans_of(exporter, path, 2)  # the holder's first
    assert_child_of(span, parent)
    found = attributes(span)
    assert found["outcome"] == "cancelled"
    assert "fencing_token" not in found
    assert span.status.status_code == StatusCode.UNSET


def test_a_ctrl_c_during_a_take_is_cancelled(client, exporter, path):
    queue = client.queue(path)
    assert_ctrl_c_interrupts(lambda: queue.take(timeout=DEADLINE))
    assert attributes(only_span(exporter, path))["outcome"] == "cancelled"


def test_an_error_sets_the_status_and_records_the_exception(client, exporter, path):
    rw = client.read_write_lock(path)
    assert rw.read_lock().acquire(timeout=DEADLINE)
    with pytest.raises(WouldDeadlockError):
        rw.write_lock().acquire(timeout=DEADLINE)
    rw.read_lock().release()

    spans = spans_of(exporter, path, 2)
    read, write = spans
    assert attributes(read)["kind"] == "read" and attributes(read)["outcome"] == "acquired"
    found = attributes(write)
    assert found["kind"] == "write"
    assert found["outcome"] == "error"
    assert found["error.type"] == "WOULD_DEADLOCK"
    assert write.status.status_code == StatusCode.ERROR
    assert "WouldDeadlockError" in (write.status.description or "")
    [event] = [e for e in write.events if e.name == "exception"]
    assert event.attributes is not None and event.attributes["exception.type"].endswith("WouldDeadlockError")


def test_a_multi_lock_and_a_semaphore(make_client, exporter, path):
    client = make_client()
    dirs = [f"{path}/b", f"{path}/a"]
    multi = client.multi_lock(dirs)
    with multi:
        pass
    joined = ",".join(dirs)
    found = attributes(only_span(exporter, joined))
    assert found["kind"] == "multi" and found["outcome"] == "acquired"
    assert "fencing_token" not in found  # one per path: the core's span has none either
    # The span names the wait as the metrics do: the same path, kind and outcome.
    wait = client.metrics().histogram("zkrecipes.lock.wait.duration", path=joined, kind="multi", outcome="acquired")
    assert wait is not None and wait.count == 1

    semaphore = client.semaphore(f"{path}/s", 2)
    with semaphore as lease:
        token = lease.fencing_token
    span = only_span(exporter, f"{path}/s")
    assert span.name == NAMES["semaphore.acquire"]
    assert attributes(span)["outcome"] == "acquired" and attributes(span)["fencing_token"] == token


def test_a_take_and_an_async_take(client, exporter, caller, path):
    queue = client.queue(path)
    queue.offer(b"one")
    queue.offer(b"two")
    with caller.start_as_current_span("request") as parent:
        assert queue.take(timeout=DEADLINE) == b"one"

    async def take() -> Any:
        with caller.start_as_current_span("request") as parent:
            assert await queue.take_async(timeout=DEADLINE) == b"two"
            assert await queue.take_async(timeout=0.05) is None
            return parent

    async_parent = asyncio.run(take())
    spans = spans_of(exporter, path, 3)
    assert [s.name for s in spans] == [NAMES["queue.take"]] * 3
    assert [attributes(s)["outcome"] for s in spans] == ["taken", "taken", "timeout"]
    assert_child_of(spans[0], parent)
    assert_child_of(spans[1], async_parent)


def test_a_consume_and_an_async_consume(client, exporter, path):
    queue = client.work_queue(path)
    queue.offer(b"job 1")
    queue.offer(b"job 2")
    with queue.consume(timeout=DEADLINE) as job:
        assert job.data == b"job 1"

    async def consume() -> None:
        async with queue.consume_async() as job:
            assert job.data == b"job 2"

    asyncio.run(consume())
    spans = spans_of(exporter, path, 2)
    assert [s.name for s in spans] == [NAMES["work_queue.consume"]] * 2
    assert [attributes(s)["outcome"] for s in spans] == ["delivered", "delivered"]


def test_await_leadership_of_an_election_and_a_latch(client, exporter, path):
    with client.leader_election(f"{path}/election") as election:
        assert election.await_leadership(timeout=DEADLINE) is True
    span = only_span(exporter, f"{path}/election")
    assert span.name == NAMES["election.await_leadership"]
    assert attributes(span)["outcome"] == "leader"

    with client.leader_latch(f"{path}/latch") as latch:
        token = asyncio.run(latch.await_leadership_async(timeout=DEADLINE))
        assert token is not None and token == latch.fencing_token
    span = only_span(exporter, f"{path}/latch")
    assert span.name == NAMES["latch.await_leadership"]
    assert attributes(span)["outcome"] == "leader" and attributes(span)["fencing_token"] == token


def test_a_barrier_and_a_double_barrier(make_client, exporter, path):
    barrier = make_client().barrier(f"{path}/single")
    barrier.set()
    assert barrier.wait(timeout=0.05) is False
    barrier.remove()
    assert barrier.wait(timeout=DEADLINE) is True
    spans = spans_of(exporter, f"{path}/single", 2)
    assert [s.name for s in spans] == [NAMES["barrier.wait"]] * 2
    assert [(attributes(s)["kind"], attributes(s)["outcome"]) for s in spans] == [("single", "timeout"), ("single", "passed")]

    double = make_client().double_barrier(f"{path}/double", 1)
    with double.entered(DEADLINE):
        pass
    spans = spans_of(exporter, f"{path}/double", 2)
    assert [s.name for s in spans] == [NAMES["barrier.wait"]] * 2
    assert [(attributes(s)["kind"], attributes(s)["outcome"]) for s in spans] == [("enter", "passed"), ("leave", "passed")]


def _run(*parts: str) -> subprocess.CompletedProcess:
    """Runs the parts, one after the other, as one fresh Python program."""
    code = "\n".join(textwrap.dedent(part) for part in parts)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def _waits(zk_connect: str) -> str:
    """A wait of several kinds the package spans: a lock's acquire, a queue's take, a barrier's wait."""
    return f"""
    import uuid
    import zkrecipes
    path = f"/py/{{uuid.uuid4().hex}}"
    with zkrecipes.Client({zk_connect!r}) as client:
        with client.write_lock(path + "/lock"):
            pass
        queue = client.queue(path + "/queue")
        queue.offer(b"x")
        assert queue.take(timeout=20) == b"x"
        assert client.barrier(path + "/barrier").wait(timeout=20)
    """


def test_without_opentelemetry_a_wait_imports_nothing(zk_connect):
    done = _run(
        _waits(zk_connect),
        """
        import sys
        loaded = [m for m in sys.modules if m.split(".")[0] == "opentelemetry"]
        assert not loaded, loaded
        print("waited")
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "waited"


def test_with_the_api_but_no_provider_no_tracer_is_asked_and_no_span_made(zk_connect):
    done = _run(
        """
        import sys
        from opentelemetry import trace
        asked = []

        # Every way to a span on the API's default provider (its proxy) goes through these.
        def hook(name):
            def called(*args, **kwargs):
                asked.append(name)
                raise AssertionError(name)
            return called

        trace.ProxyTracerProvider.get_tracer = hook("get_tracer")
        trace.ProxyTracer.start_span = hook("start_span")
        trace.ProxyTracer.start_as_current_span = hook("start_as_current_span")
        trace.NonRecordingSpan.__init__ = hook("NonRecordingSpan")
        """,
        _waits(zk_connect),
        """
        assert asked == [], asked
        sdk = [m for m in sys.modules if m.startswith("opentelemetry.sdk")]
        assert not sdk, sdk
        print("waited")
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "waited"
