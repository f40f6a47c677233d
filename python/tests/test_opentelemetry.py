"""``zkrecipes.opentelemetry``: a client's metrics read back from the real OpenTelemetry SDK (and its
Prometheus exporter) after each test did something to a real ZooKeeper, and checked against what
it did and against the client's own snapshot."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import textwrap
from typing import Dict, Iterator, List, Tuple

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import zkrecipes
from zkrecipes import Client
from zkrecipes.metrics import BUCKETS, CATALOG
from zkrecipes.opentelemetry import Instrumentation, instrument

from _helpers import DEADLINE, nack_twice_then_ack, until

ACQUISITIONS = "zkrecipes.lock.acquisitions"
WAITS = "zkrecipes.lock.wait.duration"


class Sdk:
    """An SDK meter provider with an in-memory reader, read as a dashboard would."""

    def __init__(self) -> None:
        self.reader = InMemoryMetricReader()
        self.provider = MeterProvider(metric_readers=[self.reader])

    def metrics(self) -> Dict[str, Tuple[object, List[object]]]:
        """Every metric of the ``zkrecipes`` meter: name to (the SDK's metric, its data points)."""
        found: Dict[str, Tuple[object, List[object]]] = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                assert scope.scope.name == "zkrecipes" and scope.scope.version == zkrecipes.__version__
                for metric in scope.metrics:
                    found[metric.name] = (metric, list(metric.data.data_points))
        return found

    def points(self, name: str, **attributes: str) -> List[object]:
        """The data points of ``name`` whose attributes include ``attributes``."""
        _, points = self.metrics().get(name, (None, []))
        return [p for p in points if all(p.attributes.get(k) == v for k, v in attributes.items())]  # type: ignore[attr-defined]

    def total(self, name: str, **attributes: str) -> int:
        """A counter or up/down counter summed over the matching points."""
        return sum(p.value for p in self.points(name, **attributes))  # type: ignore[attr-defined]

    def sums(self) -> Dict[Tuple[str, Tuple[Tuple[str, str], ...]], int]:
        """Every counter and up/down counter point, by name and attributes."""
        return {
            (name, tuple(sorted(p.attributes.items()))): p.value  # type: ignore[attr-defined]
            for name, (_, points) in self.metrics().items()
            for p in points
            if hasattr(p, "value")
        }


@pytest.fixture
def sdk() -> Iterator[Sdk]:
    made = Sdk()
    yield made
    made.provider.shutdown()


def test_100_acquisitions_10_timed_out_reach_the_sdk(make_client, sdk, path):
    holder_client, waiter_client = make_client(), make_client()
    holder, lock = holder_client.write_lock(path), waiter_client.write_lock(path)
    with instrument(waiter_client, sdk.provider) as otel:
        for i in range(100):
            if i % 10 == 0:
                # Held by the other client: this one times out.
                assert holder.acquire(timeout=DEADLINE)
                assert lock.acquire(timeout=0.05) is False
                holder.release()
            else:
                assert lock.acquire(timeout=DEADLINE)
                lock.release()
        assert otel.flush(DEADLINE), "the recordings reach the meter"

        assert sdk.total(ACQUISITIONS, path=path, outcome="timeout") == 10
        assert sdk.total(ACQUISITIONS, path=path, outcome="acquired") == 90
        # Only the instrumented client: the holder's 10 acquisitions are not there.
        assert sdk.total(ACQUISITIONS) == 100
        assert sdk.total("zkrecipes.lock.holders", path=path) == 0 and sdk.points("zkrecipes.lock.holders", path=path)
        assert sdk.total("zkrecipes.lock.waiters", path=path) == 0

        waits = sdk.points(WAITS, path=path)
        assert sum(p.count for p in waits) == 100  # type: ignore[attr-defined]
        assert all(list(p.explicit_bounds) == list(BUCKETS) for p in waits)  # type: ignore[attr-defined]
        timeouts = sdk.points(WAITS, path=path, outcome="timeout")
        assert sum(p.count for p in timeouts) == 10 and min(p.min for p in timeouts) >= 0.05  # type: ignore[attr-defined]
        # The same durations as the client's own histogram, bucket by bucket.
        own = waiter_client.metrics().histogram(WAITS, path=path)
        assert own is not None and own.bounds == list(BUCKETS)
        buckets = [sum(column) for column in zip(*(p.bucket_counts for p in waits))]  # type: ignore[attr-defined]
        assert buckets == own.counts
        assert sum(p.sum for p in waits) == pytest.approx(own.sum)  # type: ignore[attr-defined]

        # Names, units and descriptions are the catalog's.
        catalog = {metric.name: metric for metric in CATALOG}
        for name, (metric, _) in sdk.metrics().items():
            assert (metric.unit, metric.description) == (catalog[name].unit, catalog[name].description)  # type: ignore[attr-defined]
        assert sdk.metrics()[WAITS][0].unit == "s"  # type: ignore[attr-defined]
        assert sdk.metrics()[ACQUISITIONS][0].unit == "{acquisition}"  # type: ignore[attr-defined]
        assert set(sdk.metrics()) <= set(catalog) and {WAITS, ACQUISITIONS, "zkrecipes.requests"} <= set(sdk.metrics())


def test_counters_start_from_what_came_before(make_client, sdk, path):
    client = make_client()
    lock = client.write_lock(path)
    for _ in range(3):
        with lock:
            pass
    held = client.write_lock(path + "/held")
    assert held.acquire(timeout=DEADLINE)

    otel = instrument(client, sdk.provider)
    # Seeded at once from the client's counts; a histogram's past values are gone.
    assert sdk.total(ACQUISITIONS, path=path, outcome="acquired") == 3
    assert sdk.total("zkrecipes.lock.holders", path=path + "/held") == 1
    assert sdk.total("zkrecipes.lock.holders", path=path) == 0
    assert sdk.points(WAITS, path=path) == []

    held.release()
    for _ in range(2):
        with lock:
            pass
    assert otel.flush(DEADLINE)
    assert sdk.total(ACQUISITIONS, path=path, outcome="acquired") == 5
    assert sdk.total("zkrecipes.lock.holders", path=path + "/held") == 0
    assert sum(p.count for p in sdk.points(WAITS, path=path)) == 2  # type: ignore[attr-defined]
    otel.close()


def test_after_close_nothing_more_arrives(make_client, sdk, path):
    client = make_client()
    lock = client.write_lock(path)
    otel = instrument(client, sdk.provider)
    with lock:
        pass
    otel.close()  # no flush first: what came before still arrives
    assert otel.closed
    assert sdk.total(ACQUISITIONS, path=path) == 1
    assert sum(p.count for p in sdk.points(WAITS, path=path)) == 1  # type: ignore[attr-defined]
    before = sdk.sums()

    for _ in range(5):
        with lock:
            pass
    assert client.metrics().counter(ACQUISITIONS, path=path) == 6
    assert otel.flush(DEADLINE)
    assert sdk.sums() == before
    assert sum(p.count for p in sdk.points(WAITS, path=path)) == 1  # type: ignore[attr-defined]
    otel.close()  # twice is harmless
    with pytest.raises(zkrecipes.InvalidArgumentError, match="timeout must be in"):
        otel.flush(-1)


def test_closing_the_client_closes_it_and_its_last_recordings_arrive(make_client, sdk, path):
    client = make_client()
    instrument(client, sdk.provider)  # not kept: the library keeps the feed as long as the client
    gc.collect()
    kept = Sdk()
    otel = instrument(client, kept.provider)
    held = client.write_lock(path)
    assert held.acquire(timeout=DEADLINE)
    client.close()
    assert otel.closed
    assert otel.flush(DEADLINE)
    kept.provider.shutdown()
    # What the client recorded while closing arrived: the session's close, and the end of the
    # hold the close ended (told by the lock's monitor, a moment after close() returned).
    assert sdk.total("zkrecipes.session.state_changes", to="closed") == 1

    def hold_ended() -> bool:
        holds = sdk.points("zkrecipes.lock.hold.duration", path=path)
        return sdk.total("zkrecipes.lock.holders", path=path) == 0 and sum(p.count for p in holds) == 1  # type: ignore[attr-defined]

    assert until(lambda: otel.flush(DEADLINE) and hold_ended()), "the hold's end arrives after the close"

    # A client closed before is instrumented with its final counts, and closed at once.
    late = Sdk()
    try:
        too_late = instrument(client, late.provider)
        assert too_late.closed
        assert late.total(ACQUISITIONS, path=path, outcome="acquired") == 1
        assert late.total("zkrecipes.session.state_changes", to="closed") == 1
    finally:
        late.provider.shutdown()


def test_closing_an_asyncio_client_closes_it(zk_connect, sdk, path):
    async def main() -> Instrumentation:
        client = await Client.connect_async(zk_connect)
        otel = instrument(client, sdk.provider)
        async with client.write_lock(path):
            pass
        await client.close_async()
        return otel

    otel = asyncio.run(main())
    assert otel.closed
    assert otel.flush(DEADLINE)
    assert sdk.total(ACQUISITIONS, path=path, outcome="acquired") == 1
    assert sdk.total("zkrecipes.session.state_changes", to="closed") == 1


def test_a_job_nacked_twice_then_acked_counts_two_redeliveries(make_client, sdk, path):
    client = make_client()
    with instrument(client, sdk.provider) as otel:
        work = client.work_queue(path)
        nack_twice_then_ack(work)
        assert otel.flush(DEADLINE)
        assert sdk.total("zkrecipes.work_queue.redeliveries", path=path) == 2
        assert sdk.total("zkrecipes.work_queue.deliveries", path=path) == 3
        assert sdk.total("zkrecipes.work_queue.settled", path=path, outcome="nack") == 2
        assert sdk.total("zkrecipes.work_queue.settled", path=path, outcome="ack") == 1
        assert sdk.total("zkrecipes.work_queue.in_flight", path=path) == 0
        process = sdk.points("zkrecipes.work_queue.process.duration", path=path)
        assert sum(p.count for p in process) == 3  # type: ignore[attr-defined]
        work.close()


def test_prometheus_through_the_exporter(make_client, path):
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry()
    provider = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    try:
        client = make_client()
        with instrument(client, provider) as otel:
            for _ in range(3):
                with client.write_lock(path):
                    pass
            assert otel.flush(DEADLINE)
        text = generate_latest(registry).decode()
        [acquired] = [
            line for line in text.splitlines()
            if line.startswith("zkrecipes_lock_acquisitions_total{") and f'path="{path}"' in line
        ]
        assert 'outcome="acquired"' in acquired and 'kind="lock"' in acquired
        assert float(acquired.rsplit(" ", 1)[1]) == 3.0
        assert "# TYPE zkrecipes_lock_acquisitions_total counter" in text
        # The duration histogram, in seconds, with the library's buckets.
        wait_buckets = [
            line for line in text.splitlines()
            if line.startswith("zkrecipes_lock_wait_duration_seconds_bucket{") and f'path="{path}"' in line
        ]
        assert len(wait_buckets) == len(BUCKETS) + 1, text
        assert any('le="+Inf"' in line and line.endswith(" 3.0") for line in wait_buckets)
    finally:
        provider.shutdown()


def test_bad_arguments_are_clear_errors(client, sdk):
    with pytest.raises(TypeError, match="takes a zkrecipes.Client, got str"):
        instrument("127.0.0.1:2181", sdk.provider)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be an opentelemetry.metrics.MeterProvider, got object"):
        instrument(client, object())  # type: ignore[arg-type]
    otel = instrument(client, sdk.provider)
    with pytest.raises(zkrecipes.InvalidArgumentError, match="timeout must be in"):
        otel.close(timeout=float("nan"))
    assert not otel.closed, "a refused close leaves it open"
    otel.close()
    assert otel.closed and "closed" in repr(otel)


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def test_importing_zkrecipes_does_not_import_opentelemetry():
    done = _run(
        """
        import sys
        import zkrecipes
        assert not [m for m in sys.modules if m.split(".")[0] == "opentelemetry"], sorted(sys.modules)
        """
    )
    assert done.returncode == 0, done.stderr


def test_without_the_api_the_import_names_the_extra():
    done = _run(
        """
        import sys
        sys.modules["opentelemetry"] = None  # as if opentelemetry-api were not installed
        try:
            import zkrecipes.opentelemetry
        except ImportError as err:
            print(err)
        else:
            raise SystemExit("imported without the API")
        """
    )
    assert done.returncode == 0, done.stderr
    assert "pip install zkrecipes[opentelemetry]" in done.stdout
