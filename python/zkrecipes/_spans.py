"""An OpenTelemetry span around each wait of the library (a lock's or a semaphore's acquire, a
queue's take, a work queue's consume, an election's or a latch's await of leadership, a
barrier's wait, a double barrier's enter and leave), made here in Python so that its parent is
the caller's current span: a slow request shows where it waited.

Off unless the application set a tracer provider. A wait first looks whether
``opentelemetry.trace`` is in ``sys.modules`` (an application without OpenTelemetry pays that
one dict lookup), then whether the API's global provider is still its default proxy (nothing
set: no tracer asked for, no span made). This module never imports OpenTelemetry itself.

The spans' names come from the core (``_native.WAIT_SPANS``), as do the words of a wait that got
what it waited for (``acquired``, ``taken``, ``delivered``, ``leader``, ``passed``). A span carries
``path``, ``kind`` (as the core names it: ``lock``, ``read``, ``multi``, ``single``, ``enter``,
``lease``, …), ``outcome``, ``fencing_token`` when the wait got one, and ``waited_ms``; an exception that went
to the caller sets its status to ERROR and is recorded on it.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Awaitable, Callable, Dict, NamedTuple, Optional, Tuple, TypeVar

from . import _native
from .errors import ZkError, ZkInterruptedError

T = TypeVar("T")

# The instrumentation scope of every span of the library's, as the meter's is for its metrics.
TRACER_NAME = "zkrecipes"
_TRACE_MODULE = "opentelemetry.trace"


class WaitSpan(NamedTuple):
    """One wait as the core names it."""

    #: The recipe call that waits, ``"lock.acquire"``.
    call: str
    #: The span's name, ``"zkrecipes.lock.acquire"``.
    name: str
    #: The outcome of a wait that got what it waited for, ``"acquired"``.
    success: str
    #: The span's ``kind`` attribute, ``"read"``, ``"multi"``, ``"lease"``.
    kind: str


_WAIT_SPANS: Dict[str, WaitSpan] = {row[0]: WaitSpan(*row) for row in _native.WAIT_SPANS}


def wait_span(call: str) -> WaitSpan:
    """The span of the recipe call ``call``: looked up when a recipe module is imported, so a call
    the core does not list fails the import, not a wait."""
    return _WAIT_SPANS[call]


# The tracer of the provider last found set, with that provider: a provider is set once, so
# after the first traced wait each one costs the lookup of the provider and one comparison.
_known: Tuple[Any, Any] = (None, None)


def _tracer() -> Any:
    """The library's tracer on the application's global tracer provider, ``None`` while none
    is set (or OpenTelemetry was never imported)."""
    global _known
    trace = sys.modules.get(_TRACE_MODULE)
    if trace is None:
        return None
    # Still being imported by another thread: nothing can have been set yet.
    get_provider = getattr(trace, "get_tracer_provider", None)
    if get_provider is None:
        return None
    provider = get_provider()
    known, tracer = _known
    if provider is known:
        return tracer
    if isinstance(provider, trace.ProxyTracerProvider):
        return None
    tracer = provider.get_tracer(TRACER_NAME, _native.__version__)
    _known = (provider, tracer)
    return tracer


def _token_itself(answer: Any) -> Optional[int]:
    """A lock's or a latch's answer is its fencing token; a bool (a barrier, an election) is not."""
    return answer if type(answer) is int else None


def _timed_out(answer: Any) -> bool:
    """What every wait answers when its deadline passed, or its try found nothing: ``None``,
    ``False``, or an empty batch."""
    return answer is None or answer is False or (isinstance(answer, list) and not answer)


class _Waiting:
    """One wait's span, from its start until the answer."""

    __slots__ = ("_span", "_success", "_started")

    def __init__(self, tracer: Any, span: WaitSpan, path: str) -> None:
        self._span = tracer.start_span(span.name, attributes={"path": path, "kind": span.kind})
        self._success = span.success
        self._started = time.monotonic_ns()

    def answered(self, answer: Any, token_of: Callable[[Any], Optional[int]]) -> None:
        if _timed_out(answer):
            self._end("timeout")
            return
        token = token_of(answer)
        if token is not None:
            self._span.set_attribute("fencing_token", token)
        self._end(self._success)

    def failed(self, exc: BaseException) -> None:
        # Ctrl-C, an asyncio cancel (BaseExceptions both) or the core's INTERRUPTED: the caller
        # stopped waiting, which is no error of the wait's.
        if not isinstance(exc, Exception) or isinstance(exc, ZkInterruptedError):
            self._end("cancelled")
            return
        trace = sys.modules[_TRACE_MODULE]
        # OpenTelemetry's `error.type`: the library's cross-language code, else the class.
        self._span.set_attribute("error.type", exc.code if isinstance(exc, ZkError) else type(exc).__qualname__)
        self._span.record_exception(exc)
        self._span.set_status(trace.Status(trace.StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
        self._end("error")

    def _end(self, outcome: str) -> None:
        self._span.set_attribute("outcome", outcome)
        self._span.set_attribute("waited_ms", (time.monotonic_ns() - self._started) // 1_000_000)
        self._span.end()


def traced(
    span: WaitSpan,
    path: Callable[[], str],
    wait: Callable[[], T],
    token_of: Callable[[Any], Optional[int]] = _token_itself,
) -> T:
    """``wait()``'s answer, inside a span named ``span`` when a tracer provider is set.

    ``path()`` names what is waited for (asked only when a span is made); ``token_of(answer)``
    finds the fencing token in an answer that got it (by default an ``int`` answer is one).
    ``None``, ``False`` or an empty list is a wait that timed out."""
    tracer = _tracer()
    if tracer is None:
        return wait()
    waiting = _Waiting(tracer, span, path())
    try:
        answer = wait()
    except BaseException as exc:
        waiting.failed(exc)
        raise
    waiting.answered(answer, token_of)
    return answer


async def traced_async(
    span: WaitSpan,
    path: Callable[[], str],
    wait: Callable[[], Awaitable[T]],
    token_of: Callable[[Any], Optional[int]] = _token_itself,
) -> T:
    """``traced`` for an awaited wait: the span starts when the awaiting task calls, in its
    context, and ends with the answer (a cancelled task: ``cancelled``)."""
    tracer = _tracer()
    if tracer is None:
        return await wait()
    waiting = _Waiting(tracer, span, path())
    try:
        answer = await wait()
    except BaseException as exc:
        waiting.failed(exc)
        raise
    waiting.answered(answer, token_of)
    return answer
