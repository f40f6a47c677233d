"""The protected resource of the demo: an account that checks fencing tokens.

Workers talk to it over a line protocol on 127.0.0.1 (one request, one reply):

    HELLO <worker> <pid>            -> OK
    LEADER <worker>                 -> OK           (the worker just became leader)
    NEXT <queue size>               -> <n> | -1      (job to offer now; -1: nothing right now)
    OFFERED <n>                     -> OK
    TAKEN <job> <worker>            -> OK
    APPLY <job> <token> <worker>    -> OK | STALE | DUP
    AUDIT <worker> / AUDITED <worker> -> OK <balance> / OK   (an audit is open in between)

An audit of a worker that the demo kills stays open in its books only until the kill: its read
lock ends with its session, so a later write is no write during an audit.
    DONE?                           -> YES | NO

APPLY is what a real storage service would do with a fencing token: it refuses
a token lower than the highest it has accepted (a stale holder), and applies
each job once (a job re-offered by a new leader after a crash is a duplicate).

Nothing is re-offered: the jobs live in an at-least-once work queue, so a job
whose worker died before acknowledging it is delivered again to another worker
(a job applied but not acknowledged comes back too, and the account refuses it
as a duplicate).
"""

from __future__ import annotations

import socketserver
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple


@dataclass
class Ledger:
    jobs: int
    balance: int = 0
    highest_token: int = 0
    next_offer: int = 0
    applied: Set[int] = field(default_factory=set)
    applied_by: Dict[str, int] = field(default_factory=dict)
    stale: int = 0
    duplicates: int = 0
    audits: int = 0
    audit_violations: int = 0
    # Open audits per worker (a killed worker's are closed by `mark_dead`).
    auditing: Dict[str, int] = field(default_factory=dict)
    offered: Set[int] = field(default_factory=set)
    taken: Dict[int, str] = field(default_factory=dict)
    dead: Set[str] = field(default_factory=set)
    last_offer_at: float = 0.0
    leaders: List[Tuple[float, str]] = field(default_factory=list)
    workers: Dict[str, int] = field(default_factory=dict)
    events: List[str] = field(default_factory=list)
    last_holder: Optional[Tuple[str, int]] = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, line: str) -> str:
        parts = line.split()
        if not parts:
            return "ERR empty"
        cmd, args = parts[0], parts[1:]
        with self.lock:
            if cmd == "HELLO":
                self.workers[args[0]] = int(args[1])
                return "OK"
            if cmd == "LEADER":
                self.leaders.append((time.monotonic(), args[0]))
                self.events.append(f"{args[0]} is the leader")
                return "OK"
            if cmd == "NEXT":
                return str(self._next(int(args[0]) if args else -1))
            if cmd == "OFFERED":
                n = int(args[0])
                self.offered.add(n)
                self.next_offer = max(self.next_offer, n + 1)
                self.last_offer_at = time.monotonic()
                return "OK"
            if cmd == "TAKEN":
                self.taken[int(args[0])] = args[1]
                return "OK"
            if cmd == "APPLY":
                job, token, worker = int(args[0]), int(args[1]), args[2]
                if token < self.highest_token:
                    self.stale += 1
                    self.events.append(f"{worker} REJECTED: stale token {token} < {self.highest_token}")
                    return "STALE"
                self.highest_token = token
                self.last_holder = (worker, token)
                if job in self.applied:
                    self.duplicates += 1
                    return "DUP"
                if any(self.auditing.values()):
                    self.audit_violations += 1
                self.applied.add(job)
                self.balance += 1
                self.applied_by[worker] = self.applied_by.get(worker, 0) + 1
                return "OK"
            if cmd == "AUDIT":
                self.audits += 1
                if args[0] not in self.dead:  # a request still in flight when the demo killed it
                    self.auditing[args[0]] = self.auditing.get(args[0], 0) + 1
                return f"OK {self.balance}"
            if cmd == "AUDITED":
                if self.auditing.get(args[0], 0) > 0:
                    self.auditing[args[0]] -= 1
                return "OK"
            if cmd == "DONE?":
                return "YES" if len(self.applied) >= self.jobs else "NO"
            return f"ERR unknown command {cmd}"


    def _next(self, queue_size: int) -> int:
        # No re-offers: the work queue delivers a dead worker's jobs again by itself.
        if self.next_offer < self.jobs:
            return self.next_offer
        return -1

    def mark_dead(self, worker: str) -> None:
        with self.lock:
            self.dead.add(worker)
            # Killed between AUDIT and AUDITED: the audit ends with its session, not with a call.
            self.auditing.pop(worker, None)


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        ledger: Ledger = self.server.ledger  # type: ignore[attr-defined]
        for raw in self.rfile:
            reply = ledger.handle(raw.decode().strip())
            self.wfile.write((reply + "\n").encode())
            self.wfile.flush()


class LedgerServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, ledger: Ledger) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.ledger = ledger

    @property
    def address(self) -> str:
        host, port = self.server_address[:2]
        return f"{host}:{port}"
