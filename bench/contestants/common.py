"""Shared by the Python contestants: the READY/GO barrier and the JSON result line."""

import json
import os
import sys
import time


def ready() -> None:
    print("READY", flush=True)
    sys.stdin.readline()


def result(ops: int, seconds: float, samples=None, **extra) -> None:
    out = {"ops": ops, "seconds": seconds}
    if samples:
        samples = sorted(samples)
        out["median_ms"] = samples[len(samples) // 2] * 1000
        out["p99_ms"] = samples[min(len(samples) * 99 // 100, len(samples) - 1)] * 1000
    out.update(extra)
    print(json.dumps(out), flush=True)


def timed(n: int, op) -> None:
    samples = []
    started = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        op()
        samples.append(time.perf_counter() - t)
    result(n, time.perf_counter() - started, samples)


def rss() -> int:
    """Resident memory of this process in bytes (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
