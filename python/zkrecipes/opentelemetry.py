"""A client's metrics as OpenTelemetry instruments: ``zkrecipes.opentelemetry.instrument(client)``.

Needs the OpenTelemetry API (``pip install zkrecipes[opentelemetry]``) and, to see any number, an
SDK ``MeterProvider`` with a reader or exporter of one's choice (``opentelemetry-sdk``; for a
Prometheus scrape, ``opentelemetry-exporter-prometheus``). ``import zkrecipes`` never imports
OpenTelemetry; this module does.

``instrument(client, meter_provider=None)`` makes one instrument per metric of the library's
catalog (``zkrecipes.metrics.CATALOG``) on the meter ``zkrecipes`` of ``meter_provider`` (the
global one by default): counters as counters, "how many now" as up/down counters, durations as
histograms in seconds with the library's bucket bounds (``zkrecipes.metrics.BUCKETS``, given as
advice where the installed API takes it). Names, units, descriptions and attributes are the
catalog's (``zkrecipes.lock.acquisitions{path, kind, outcome}``). The counters and up/down
counters start from what the client had recorded before (a histogram's past values are gone);
from then on every recording is added or recorded as it happens.

Recordings reach the instruments on a thread of the library's ("zkrecipes-log", the one that
delivers log records), in order, never on the thread that made them: a slow meter never slows a
recipe. ``Instrumentation.flush()`` waits until every earlier recording has arrived. A meter that
raises loses that one recording (the exception goes to ``sys.unraisablehook``). Several clients
instrumented on one meter provider add to the same series.

``Instrumentation.close()`` (or leaving ``with instrument(client):``) stops: what the client
recorded before still arrives, nothing after. Closing the client closes it too: nothing new is
recorded then, but what the close itself ends (a hold's end, told a moment after ``close()``
returns) still arrives, as long as the client exists. The library keeps the feed as long as the
client: ``instrument(client)`` works without keeping what it returns.
"""

from __future__ import annotations

import inspect
from types import TracebackType
from typing import Any, Callable, Dict, Optional, Type, Union

try:
    from opentelemetry import metrics as _otel
except ImportError as _missing:
    raise ImportError(
        "zkrecipes.opentelemetry needs the OpenTelemetry API (the package opentelemetry-api): "
        "pip install zkrecipes[opentelemetry]"
    ) from _missing

from . import _native
from ._logs import _name_delivery_thread
from .client import Client
from .metrics import BUCKETS, CATALOG, Metric, MetricsSnapshot

__all__ = ["Instrumentation", "instrument", "recordings_dropped"]

# The meter's name: the instrumentation scope every point of the library's is in.
METER_NAME = "zkrecipes"

# What one recording does to its instrument: `counter.add(value, attributes)` or
# `histogram.record(seconds, attributes)`.
_Record = Callable[[Union[int, float], Dict[str, str]], None]


class Instrumentation:
    """A client's recordings going to OpenTelemetry instruments, until ``close()``."""

    __slots__ = ("_feed",)

    def __init__(self, feed: _native.MetricsFeed) -> None:
        self._feed = feed

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has stopped the feed, or the client has closed (its close's last
        consequences may still arrive then)."""
        return not self._feed.is_live

    def flush(self, timeout: float = 5.0) -> bool:
        """Waits until every recording made before the call (by any instrumented client) has
        reached its instruments, up to ``timeout`` seconds; ``False`` if some had not then."""
        return _native._flush_recordings(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Stops: what the client recorded before reaches the instruments (waiting up to
        ``timeout`` seconds for them), nothing after this returns. Closing twice is harmless."""
        self._feed.close(timeout)

    def __enter__(self) -> Instrumentation:
        return self

    def __exit__(
        self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<zkrecipes.opentelemetry.Instrumentation {'closed' if self.closed else 'open'}>"


def instrument(client: Client, meter_provider: Optional[_otel.MeterProvider] = None) -> Instrumentation:
    """Feeds ``client``'s metrics to OpenTelemetry instruments on the meter ``zkrecipes`` of
    ``meter_provider`` (by default the global one, ``opentelemetry.metrics.get_meter_provider()``),
    until the returned ``Instrumentation`` or the client is closed. ``TypeError`` for anything
    but a ``Client`` and a ``MeterProvider``."""
    if not isinstance(client, Client):
        raise TypeError(f"instrument() takes a zkrecipes.Client, got {type(client).__name__}")
    if meter_provider is None:
        meter_provider = _otel.get_meter_provider()
    elif not isinstance(meter_provider, _otel.MeterProvider):
        raise TypeError(
            f"meter_provider must be an opentelemetry.metrics.MeterProvider, got {type(meter_provider).__name__}"
        )
    meter = meter_provider.get_meter(METER_NAME, _native.__version__)
    records: Dict[str, _Record] = {metric.name: _instrument(meter, metric) for metric in CATALOG}

    # Only the instruments: the library holds this function as long as the client lives, so it
    # must not hold the client (a cycle through native code, which the collector cannot see).
    def deliver(name: str, attributes: Dict[str, str], value: Union[int, float]) -> None:
        _name_delivery_thread()
        records[name](value, attributes)

    feed = client._native.forward_recordings(deliver)
    _start_from(records, feed.initial)
    return Instrumentation(feed)


def recordings_dropped() -> int:
    """Recordings refused since the process started because the instruments did not keep up
    (the library keeps 10,000 waiting): the instruments' numbers are short by these."""
    return _native._recordings_dropped()


def _instrument(meter: _otel.Meter, metric: Metric) -> _Record:
    """The OpenTelemetry instrument of one catalog metric, as the function a recording calls."""
    if metric.instrument == "counter":
        return meter.create_counter(metric.name, unit=metric.unit, description=metric.description).add
    if metric.instrument == "up_down_counter":
        return meter.create_up_down_counter(metric.name, unit=metric.unit, description=metric.description).add
    if metric.instrument == "histogram":
        advice: Dict[str, Any] = {}
        if _takes_bucket_advice(meter):
            advice["explicit_bucket_boundaries_advisory"] = list(BUCKETS)
        return meter.create_histogram(metric.name, unit=metric.unit, description=metric.description, **advice).record
    # A kind of instrument this package does not know: the core's catalog is newer than it.
    raise RuntimeError(f"zkrecipes: the metric {metric.name} is a {metric.instrument}, unknown to this adapter")


def _takes_bucket_advice(meter: _otel.Meter) -> bool:
    """Whether the installed API's histograms take bucket bounds (opentelemetry-api 1.23 and later)."""
    try:
        return "explicit_bucket_boundaries_advisory" in inspect.signature(meter.create_histogram).parameters
    except (TypeError, ValueError):
        return False


def _start_from(records: Dict[str, _Record], initial: MetricsSnapshot) -> None:
    """Adds what the client had recorded before the feed started to the counters and up/down
    counters, one series each (zeros included, so each series shows); a histogram's past values
    are gone."""
    for point in initial.points:
        if point.value is not None:
            records[point.name](point.value, point.attributes)
