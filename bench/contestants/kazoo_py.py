"""kazoo's recipes (Lock, ReadLock/WriteLock, Queue, Election) on the same workloads."""

import os
import sys
import threading
import time

from kazoo.client import KazooClient
from common import held, herd, objects, ready, result, timed

workload, connect = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
root = f"/bench/kazoo-{os.getpid()}"


def client() -> KazooClient:
    c = KazooClient(hosts=connect)
    c.start()
    return c


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
    zk = client()
    lock = zk.Lock(f"{root}/cycle", "bench")
    for _ in range(50):
        lock.acquire()
        lock.release()

    def cycle() -> None:
        lock.acquire()
        lock.release()

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

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
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
    taken = [0]
    lock = threading.Lock()
    ready()
    started = time.perf_counter()

    def drain(queue) -> None:
        while queue.get() is not None:
            with lock:
                taken[0] += 1

    threads = [threading.Thread(target=drain, args=(qq,)) for qq in queues]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert taken[0] == n, taken
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
    taken = [0]
    lock = threading.Lock()
    ready()
    started = time.perf_counter()

    def drain(queue) -> None:
        while queue.get(timeout=0.2) is not None:
            assert queue.consume()
            with lock:
                taken[0] += 1

    threads = [threading.Thread(target=drain, args=(qq,)) for qq in queues]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert taken[0] == n, taken
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
else:
    raise SystemExit(f"unknown workload {workload}")
