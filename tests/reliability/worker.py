"""Reliability worker (Python). Usage: worker.py <connect> <resource> <name> <role> <count> <session_s> <root>

Roles: lock (count critical sections), produce (count items), consume, work-produce,
work-consume (the at-least-once WorkQueue), elect.
Reports to the resource server over a line protocol (see resource.py)."""

import socket
import sys
import threading
import time

import zkrecipes

connect, resource, name, role, count, session_s, root = sys.argv[1:8]
host, port = resource.split(":")
sock = socket.create_connection((host, int(port)))
reader = sock.makefile("r")
mutex = threading.Lock()


def ask(line: str) -> str:
    with mutex:
        sock.sendall((line + "\n").encode())
        return reader.readline().strip()


def until_stopped(take):
    """What `take()` returns, again and again until the resource server says stop; a take that
    fails (a ZkError: the connection dropped) is tried again 0.1 s later."""
    while ask("STOP?") == "NO":
        try:
            yield take()
        except zkrecipes.ZkError:
            time.sleep(0.1)


import os

ask(f"HELLO {name} {os.getpid()}")
client = zkrecipes.Client(connect, session_timeout=float(session_s), connect_timeout=30.0, identity=name)

if role == "lock":
    lock = client.write_lock(f"{root}/lock")
    lock.add_listener(lambda e: ask(f"LOST {name}") if e.kind is zkrecipes.LockEvent.LOST else None)
    done = 0
    while done < int(count) and ask("STOP?") == "NO":
        try:
            if not lock.acquire(timeout=30):
                continue
        except zkrecipes.ZkError:
            time.sleep(0.1)
            continue
        token = lock.fencing_token
        ask(f"BEGIN {name} {token}")
        for _ in range(3):
            ask(f"WRITE {name} {token}")
            time.sleep(0.005)
        ask(f"END {name} {token}")
        try:
            lock.release()
        except zkrecipes.ZkError:
            pass
        done += 1
elif role == "produce":
    q = client.queue(f"{root}/queue")
    for i in range(int(count)):
        item = f"{name}-{i}"
        try:
            q.offer(item.encode())
            ask(f"OFFERED {item}")
        except zkrecipes.ZkError:
            ask(f"OFFER_LOST {item}")
elif role == "consume":
    q = client.queue(f"{root}/queue")
    for item in until_stopped(lambda: q.take(timeout=0.5)):
        if item is not None:
            ask(f"GOT {item.decode()} {name}")
elif role == "work-produce":
    q = client.work_queue(f"{root}/work")
    for i in range(0, int(count), 10):
        items = [f"{name}-{j}" for j in range(i, min(i + 10, int(count)))]
        try:
            q.offer_all([x.encode() for x in items])
            outcome = "OFFERED"
        except zkrecipes.ZkError:
            outcome = "OFFER_LOST"
        for x in items:
            ask(f"{outcome} {x}")
elif role == "work-consume":
    # At least once: report the job, then acknowledge it.
    q = client.work_queue(f"{root}/work", prefetch=4)
    for job in until_stopped(lambda: q.consume(timeout=0.5)):
        if job is None:
            continue
        ask(f"GOT {job.data.decode()} {name}")
        time.sleep(0.02)  # the work: a kill lands while jobs are in hand
        try:
            job.ack()
        except zkrecipes.ZkError:
            pass
elif role == "elect":
    election = client.leader_election(f"{root}/election", name)

    def on_event(e: zkrecipes.Event[zkrecipes.ElectionEvent]) -> None:
        if e.kind is zkrecipes.ElectionEvent.ELECTED_COMPLETE:
            ask(f"ELECTED {name}")
        elif e.kind in (zkrecipes.ElectionEvent.FAILED, zkrecipes.ElectionEvent.STOP_START):
            ask(f"UNELECTED {name}")

    election.add_listener(on_event)
    election.start()
    while ask("STOP?") == "NO":
        time.sleep(0.2)
    election.stop()
ask(f"DONE {name}")
client.close()
