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
"""

from ._native import HistogramPoint, MetricPoint, MetricsSnapshot

__all__ = ["HistogramPoint", "MetricPoint", "MetricsSnapshot"]
