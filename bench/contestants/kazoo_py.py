"""kazoo's recipes (Lock, ReadLock/WriteLock, Queue, Election, TreeCache) on the same workloads."""

import gc
import os
import sys
import threading
import time

from kazoo.client import KazooClient
from common import cycle_of, drain, held, herd, in_threads, objects, ready, result, rss, timed

workload, connect = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
root = f"/bench/kazoo-{os.getpid()}"


def client() -> KazooClient:
    c = KazooClient(hosts=connect)
    c.start()
    return c


def build_tree(zk: KazooClient, tree: str, parents: int, children: int) -> int:
    """Section 12's tree, as the Rust contestant builds it: one transaction per parent."""
    zk.ensure_path(tree)
    for p in range(parents):
        t = zk.transaction()
        parent = f"{tree}/p-{p:03d}"
        t.create(parent, f"parent-{p:03d}".encode())
        for c in range(children):
            t.create(f"{parent}/c-{c:03d}", f"data-{p * children + c:05d}".encode())
        assert not [r for r in t.commit() if isinstance(r, Exception)]
    return 1 + parents + parents * children


def tree_cache(zk: KazooClient, path: str):
    """A TreeCache of the subtree, returned once its listener heard INITIALIZED."""
    from kazoo.recipe.cache import TreeCache, TreeEvent

    cache = TreeCache(zk, path)
    initialized = threading.Event()
    cache.listen(lambda event: event.event_type == TreeEvent.INITIALIZED and initialized.set())
    cache.start()
    initialized.wait()
    return cache


def cached(cache, path: str) -> int:
    return 1 + sum(cached(cache, f"{path}/{c}") for c in cache.get_children(path, ()))


if workload == "objects":
    c = client()
    objects(n, lambda i: c.Lock(f"{root}/objects/l-{i}"))
    c.stop()
elif workload == "held":
    c = client()
    held(n, lambda i: c.Lock(f"{root}/held/l-{i}"))
    c.stop()
elif workload == "herd":
    clients = [client() for _ in range(10)]
    herd(n, clients[0].Lock(f"{root}/herd"), lambda i: clients[i % 10].Lock(f"{root}/herd"))
elif workload == "size":
    c = client()
    q = c.Queue(f"{root}/deep")
    for start in range(0, n, 1000):
        for r in [c.create_async(f"{root}/deep/entry-", b"item", sequence=True, makepath=True)
                  for _ in range(min(1000, n - start))]:
            r.get()
    ready()
    samples = []
    started = time.perf_counter()
    for _ in range(50):
        t = time.perf_counter()
        assert len(q) == n
        samples.append(time.perf_counter() - t)
    result(50, time.perf_counter() - started, samples, backlog=n)
elif workload == "cycle":
    cycle = cycle_of(client().Lock(f"{root}/cycle", "bench"))
    ready()
    timed(n, cycle)
elif workload == "try":
    holder, zk = client(), client()
    holder.Lock(f"{root}/try", "holder").acquire()
    lock = zk.Lock(f"{root}/try", "bench")

    def attempt() -> None:
        assert not lock.acquire(blocking=False)

    ready()
    timed(n, attempt)
elif workload == "contended":
    locks = [client().Lock(f"{root}/contended", f"c{i}") for i in range(8)]
    finish = [0.0] * 8
    ready()
    started = time.perf_counter()

    def work(i: int) -> None:
        for _ in range(n):
            with locks[i]:
                pass
        finish[i] = time.perf_counter() - started

    in_threads(work, range(8))
    result(8 * n, time.perf_counter() - started, finish_s=finish)
elif workload == "rw":
    readers = [client().ReadLock(f"{root}/rw", f"r{i}") for i in range(8)]
    writer = client().WriteLock(f"{root}/rw", "w")
    stop = threading.Event()
    reads = [0]
    ready()
    started = time.perf_counter()

    def read(lock) -> None:
        while not stop.is_set():
            with lock:
                reads[0] += 1

    threads = [threading.Thread(target=read, args=(r,)) for r in readers]
    for t in threads:
        t.start()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        with writer:
            pass
        samples.append(time.perf_counter() - t0)
    stop.set()
    for t in threads:
        t.join()
    samples.sort()
    result(reads[0] + n, time.perf_counter() - started, None, reads=reads[0], writes=n,
           writer={"median_ms": samples[len(samples) // 2] * 1000, "p99_ms": samples[len(samples) * 99 // 100] * 1000})
elif workload == "queue":
    consumers = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    path = f"{root}/queue-{n}-{consumers}"
    producer = client()
    q = producer.Queue(path)
    t0 = time.perf_counter()
    for i in range(n):
        q.put(f"item-{i}".encode())
    offer_seconds = time.perf_counter() - t0
    queues = [client().Queue(path) for _ in range(consumers)]
    ready()
    started = time.perf_counter()
    taken = drain(queues, lambda queue: queue.get() is not None)
    assert taken == n, taken
    result(n, time.perf_counter() - started, offer_seconds=offer_seconds)
elif workload == "workqueue":
    # kazoo's LockingQueue: get (claim), then consume (delete) per item.
    consumers = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    path = f"{root}/work-{n}-{consumers}"
    producer = client()
    values = [f"item-{i}".encode() for i in range(n)]
    for start in range(0, n, 1000):
        producer.LockingQueue(path).put_all(values[start:start + 1000])
    queues = [client().LockingQueue(path) for _ in range(consumers)]
    ready()
    started = time.perf_counter()

    def take(queue) -> bool:
        if queue.get(timeout=0.2) is None:
            return False
        assert queue.consume()
        return True

    taken = drain(queues, take)
    assert taken == n, taken
    result(n, time.perf_counter() - started)
elif workload == "election":
    a, b = client(), client()
    samples = []
    ready()
    started = time.perf_counter()
    for r in range(n):
        path = f"{root}/election-{r}"
        elected_a, elected_b, release_a = threading.Event(), threading.Event(), threading.Event()

        def lead_a() -> None:
            elected_a.set()
            release_a.wait()

        ea, eb = a.Election(path, "a"), b.Election(path, "b")
        ta = threading.Thread(target=ea.run, args=(lead_a,))
        ta.start()
        elected_a.wait()
        tb = threading.Thread(target=eb.run, args=(elected_b.set,))
        tb.start()
        time.sleep(0.05)
        t0 = time.perf_counter()
        release_a.set()
        elected_b.wait()
        samples.append(time.perf_counter() - t0)
        ta.join()
        tb.join()
    result(n, time.perf_counter() - started, samples)
elif workload == "cache":
    # 12b. TreeCache initial load of an n x children tree: RSS per node of the process's first
    # cache (held, after gc.collect()), live heap per node of a second one (tracemalloc), then
    # `rounds` loads until INITIALIZED.
    children = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    zk = client()
    tree = f"{root}/tree"
    nodes = build_tree(zk, tree, n, children)
    gc.collect()
    before = rss()
    t0 = time.perf_counter()
    first = tree_cache(zk, tree)
    cold = time.perf_counter() - t0
    gc.collect()
    grown = rss()
    assert cached(first, tree) == nodes, (cached(first, tree), nodes)
    first.close()
    # Live Python heap of a second cache, traced alone (tracemalloc slows it and costs memory of
    # its own: neither is in the figures above).
    del first
    gc.collect()
    import tracemalloc
    tracemalloc.start()
    traced = tree_cache(zk, tree)
    gc.collect()
    heap = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    traced.close()
    del traced
    gc.collect()
    ready()
    samples = []
    started = time.perf_counter()
    for _ in range(rounds):
        t0 = time.perf_counter()
        cache = tree_cache(zk, tree)
        samples.append(time.perf_counter() - t0)
        assert cached(cache, tree) == nodes
        cache.close()
    result(rounds * nodes, time.perf_counter() - started, samples, nodes=nodes, rounds=rounds,
           rounds_ms=[round(x * 1000, 1) for x in samples], cold_ms=cold * 1000,
           heap_bytes_per_node=heap / nodes, rss_bytes_per_node=(grown - before) / nodes)
else:
    raise SystemExit(f"unknown workload {workload}")
