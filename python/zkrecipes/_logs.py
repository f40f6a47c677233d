"""The library's events as records of the standard ``logging`` module.

Every event goes to the logger the core names (``zkrecipes.lock``, ``zkrecipes.session``,
``zkrecipes.zookeeper`` for the session crate's packets, …: ``zkrecipes.LOGGERS``), at its level,
with its structured fields as attributes of the record (``record.path``,
``record.fencing_token``), and all of them in the dict ``record.zkrecipes``: the library's
integer fields (``fencing_token``, every ``…_ms`` and ``…_count``) as ``int``, the others as
``str``. A field named like an attribute every record has (``name``, ``process``) is only in the
dict.

An event is made only if Python would show it: the core knows each logger's effective level,
told at import, at every ``Client(...)`` and by ``refresh_log_levels()``. Records are delivered
on a thread of the library's ("zkrecipes-log"), never on the caller's: a handler may block or
call the library.
"""

from __future__ import annotations

import logging
import threading
from typing import Dict, List, Tuple, Union

from . import _native

#: A level below ``DEBUG`` (5): the ZooKeeper session's packets (``zkrecipes.zookeeper``). Named
#: ``"TRACE"`` in ``logging`` unless something already named that number.
TRACE: int = _native.TRACE

#: The logger of every kind of event, children of ``"zkrecipes"``.
LOGGERS: Tuple[str, ...] = tuple(_native.LOGGERS)

# A record's own attributes (`name`, `msg`, `process`, …) are never overwritten by a field of
# the same name; the field stays in `record.zkrecipes`.
_OWN = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "zkrecipes"}

# The parent of every logger of the library's.
_ROOT = logging.getLogger("zkrecipes")

# The name of the library's delivery thread, as the OS and Python's records (`%(threadName)s`) show it.
_DELIVERY_THREAD = "zkrecipes-log"


def _name_delivery_thread() -> None:
    """Names the calling thread, the library's delivery thread, as the OS does: Python sees a
    thread it did not start as ``Dummy-N`` otherwise."""
    thread = threading.current_thread()
    if thread.name != _DELIVERY_THREAD:
        thread.name = _DELIVERY_THREAD


def refresh_log_levels() -> None:
    """Tells the library the level of each ``zkrecipes.*`` logger now.

    Call it after changing such a logger's level (or ``logging.disable``) while clients run:
    the library asks at import and at every ``Client(...)``, and does not make events that
    ``logging`` would not show then (so a level nobody shows costs nothing). Until it is called,
    a level made more verbose shows nothing more, and a level made less verbose only hides.
    """
    _native._refresh_log_levels()


def flush_logs(timeout: float = 5.0) -> bool:
    """Waits until every event emitted before the call has reached ``logging``'s handlers, up to
    ``timeout`` seconds; ``False`` if some had not then. At interpreter exit the library waits
    a second for them by itself."""
    return _native._flush_logs(timeout)


def _deliver(name: str, level: int, message: str, fields: List[Tuple[str, Union[int, str]]], dropped: int) -> None:
    """Called by the library's delivery thread with each event."""
    _name_delivery_thread()
    # `dropped`: told before this record by the core's own warning on the logger "zkrecipes".
    logger = logging.getLogger(name)
    if not logger.isEnabledFor(level):
        return
    record = logger.makeRecord(name, level, "(unknown file)", 0, message, (), None)
    values: Dict[str, Union[int, str]] = dict(fields)
    for field, value in values.items():
        if field not in _OWN and field not in record.__dict__:
            setattr(record, field, value)
    record.zkrecipes = values
    logger.handle(record)


def _install() -> None:
    """At import: names TRACE, forwards the events here, tells the library Python's levels."""
    if logging.getLevelName(TRACE) == f"Level {TRACE}":
        logging.addLevelName(TRACE, "TRACE")
    _native._forward_logs(_deliver)
    refresh_log_levels()
