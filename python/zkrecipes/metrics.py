"""A client's metrics: ``Client.metrics()`` answers a ``MetricsSnapshot``.

The snapshot, its points and histograms are the library's own objects (its Rust core's), so
the lookups, the merge of histograms and the quantile estimate are the ones every zkrecipes
language answers with. Every metric (name, instrument, unit, attributes, meaning) is one of the
library's catalog (``zkrecipes::metrics::CATALOG`` in Rust); each point carries its own.

- ``snapshot.counter(name, **attributes)``: a counter summed over the series whose attributes
  include those given (``outcome="timeout"``); ``.gauge(...)`` the same for an up/down counter
  (how many wait or hold now); ``.histogram(...)`` a duration histogram merged over them, or
  ``None``. A name not in the catalog, of another instrument, or an attribute the metric does
  not have raises ``InvalidArgumentError``; an attribute value that is not a ``str``,
  ``TypeError``.
- ``snapshot.points``: every series, a ``MetricPoint`` with ``name``, ``instrument``
  (``"counter"``, ``"up_down_counter"``, ``"histogram"``), ``unit``, ``description``,
  ``attributes`` (a dict), ``value`` (an int, ``None`` for a histogram) and ``histogram``
  (a ``HistogramPoint``, or ``None``).
- ``HistogramPoint``: ``count``, ``sum``, ``min``, ``max`` (seconds), ``bounds`` and ``counts``
  (its buckets, not cumulative) and ``quantile(q)`` for ``q`` from 0 to 1.
- ``snapshot.to_prometheus()``: the Prometheus text exposition format.
- ``CATALOG``: every metric the library records, a ``Metric`` (``name``, ``instrument``,
  ``unit``, ``description``, ``attributes``) each; ``BUCKETS``: the upper bounds, in seconds, of
  every duration histogram's buckets. ``zkrecipes.opentelemetry`` makes its instruments from them.
- ``WAIT_SPANS``: every wait that gets an OpenTelemetry span once the application set a tracer
  provider, a ``WaitSpan`` (``call``, span ``name``, ``success`` outcome, span ``kind``) each:
  ``WaitSpan("read_lock.acquire", "zkrecipes.lock.acquire", "acquired", "read")``, …
"""

from __future__ import annotations

from typing import NamedTuple, Tuple

from . import _native
from ._native import HistogramPoint, MetricPoint, MetricsSnapshot
from ._spans import WaitSpan


class Metric(NamedTuple):
    """One metric of the library's catalog."""

    #: ``"zkrecipes.lock.acquisitions"``, ``"zkrecipes.lock.wait.duration"``, …
    name: str
    #: ``"counter"``, ``"up_down_counter"`` or ``"histogram"``.
    instrument: str
    #: UCUM, as OpenTelemetry writes it: ``"s"``, or a count's ``"{acquisition}"``.
    unit: str
    description: str
    #: The attribute names a point may have (``path`` is left out with ``metric_paths=False``).
    attributes: Tuple[str, ...]


#: Every metric, in the order snapshots list them (the core's catalog, not a copy of it).
CATALOG: Tuple[Metric, ...] = tuple(
    Metric(name, instrument, unit, description, tuple(attributes))
    for name, instrument, unit, description, attributes in _native.METRIC_CATALOG
)

#: The upper bounds, in seconds, of every duration histogram's buckets (the last bucket is
#: everything above them).
BUCKETS: Tuple[float, ...] = tuple(_native.HISTOGRAM_BUCKETS)

#: Every wait with a span, as the core names them (the spans the package makes, and the core's
#: own `tracing` spans' ``otel.name``).
WAIT_SPANS: Tuple[WaitSpan, ...] = tuple(WaitSpan(*row) for row in _native.WAIT_SPANS)

__all__ = ["BUCKETS", "CATALOG", "HistogramPoint", "Metric", "MetricPoint", "MetricsSnapshot", "WAIT_SPANS", "WaitSpan"]
