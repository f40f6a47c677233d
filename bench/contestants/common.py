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


def objects(n: int, make) -> None:
    """Scale workload: RSS growth per object made by `make(i)`, and what stays after dropping them."""
    import gc

    ready()
    started = time.perf_counter()
    gc.collect()
    before = rss()
    made = [make(i) for i in range(n)]
    peak = rss()
    del made
    gc.collect()
    after = rss()
    result(n, time.perf_counter() - started, bytes_per_object=(peak - before) / n,
           retained_mb=(after - before) / 1e6)


def held(locks) -> None:
    """Scale workload: RSS growth per lock acquired and held at once (`acquire()`/`release()`)."""
    import gc

    ready()
    started = time.perf_counter()
    gc.collect()
    before = rss()
    for lock in locks:
        lock.acquire()
    grown = rss()
    result(len(locks), time.perf_counter() - started, bytes_per_held_lock=(grown - before) / len(locks))
    for lock in locks:
        lock.release()
