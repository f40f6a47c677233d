"""Shared by the Python contestants: the READY/GO barrier and the JSON result line."""

import json
import os
import sys
import threading
import time


def warmup() -> int:
    """Unmeasured cycles before the measured ones (set by run.py, the same in every language)."""
    return int(os.environ.get("ZKRECIPES_BENCH_WARMUP", "1000"))


def cycle_of(lock):
    """The uncontended cycle of `lock` (acquire, then release), run `warmup()` times here."""

    def cycle() -> None:
        lock.acquire()
        lock.release()

    for _ in range(warmup()):
        cycle()
    return cycle


def in_threads(work, items) -> None:
    """`work(item)` for every item, each on a thread of its own, all at once; returns once all are done."""
    threads = [threading.Thread(target=work, args=(item,)) for item in items]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def drain(queues, take) -> int:
    """How many items one thread per queue took, each calling `take(queue)` until it is false."""
    taken = [0]
    lock = threading.Lock()

    def work(queue) -> None:
        while take(queue):
            with lock:
                taken[0] += 1

    in_threads(work, queues)
    return taken[0]


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


def bursts(n: int, op) -> None:
    """After READY: `GO`, n timed calls of `op`; or bursts `RUN k`, each answered
    `OK <its median ms>`, until `END` (run.py interleaves two contestants' bursts)."""
    print("READY", flush=True)
    samples = []
    for line in sys.stdin:
        words = line.split()
        runs = words[:1] == ["RUN"]
        count = int(words[1]) if runs else 0 if words[:1] == ["END"] else n
        burst = []
        for _ in range(count):
            t = time.perf_counter()
            op()
            burst.append(time.perf_counter() - t)
        samples += burst
        if not runs:
            break
        burst.sort()
        print(f"OK {burst[len(burst) // 2] * 1000 if burst else 0:.4f}", flush=True)
    result(len(samples), sum(samples), samples)


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


def held(n: int, make) -> None:
    """Scale workload: RSS growth per lock made by `make(i)`, acquired and held at once."""
    import gc

    ready()
    started = time.perf_counter()
    gc.collect()
    before = rss()
    locks = []
    for i in range(n):
        lock = make(i)
        lock.acquire()
        locks.append(lock)
    grown = rss()
    result(n, time.perf_counter() - started, bytes_per_held_lock=(grown - before) / n)
    for lock in locks:
        lock.release()


def herd(n: int, holder, make) -> None:
    """Scale workload: n threads queued on the lock `holder` holds (`make(i)`: waiter i's lock
    object, over 10 clients). RSS per waiter while they wait, then the chain of hand-offs."""
    import gc

    holder.acquire()
    gc.collect()
    before = rss()
    started_waiting = threading.Semaphore(0)

    def wait(lock) -> None:
        started_waiting.release()
        lock.acquire()
        lock.release()

    threads = [threading.Thread(target=wait, args=(make(i),), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for _ in range(n):
        started_waiting.acquire()
    time.sleep(2.0)  # every waiter's node created and watched
    waiting = rss()
    ready()
    started = time.perf_counter()
    holder.release()
    for t in threads:
        t.join()
    result(n, time.perf_counter() - started, bytes_per_waiter=(waiting - before) / n, rss_mb=waiting / 1e6)
