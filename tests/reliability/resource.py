"""The protected resource of the reliability suite, and its bookkeeping.

Workers of every language report over a line protocol on 127.0.0.1:

    HELLO <name> <pid>                  BEGIN|WRITE|END <name> <token>  -> OK | STALE
    LOST <name>                         OFFERED <item> | OFFER_LOST <item>
    GOT <item> <name>                   ELECTED <name> | UNELECTED <name>
    STOP? -> YES | NO                   DONE <name>

A write is refused when its fencing token is lower than the highest one the
resource has seen: that is how a storage service defends itself against a lock
holder that was paused past its session and no longer holds the lock.
"""

from __future__ import annotations

import socketserver
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple


@dataclass
class Section:
    name: str
    token: int
    begin: float
    end: Optional[float] = None
    refused: int = 0
    # WRITE lines received (every worker sends BEGIN, three WRITEs, END).
    writes: int = 0


@dataclass
class Resource:
    pids: Dict[str, int] = field(default_factory=dict)
    highest: int = 0
    sections: List[Section] = field(default_factory=list)
    open: Dict[str, Section] = field(default_factory=dict)
    lost: Dict[str, int] = field(default_factory=dict)
    offered: List[str] = field(default_factory=list)
    offer_lost: List[str] = field(default_factory=list)
    got: List[Tuple[str, str]] = field(default_factory=list)
    leadership: List[Tuple[float, str, int]] = field(default_factory=list)
    done: Set[str] = field(default_factory=set)
    stop: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, line: str) -> str:
        words = line.split()
        if not words:
            return "ERR"
        cmd, args, now = words[0], words[1:], time.monotonic()
        with self.lock:
            if cmd == "HELLO":
                self.pids[args[0]] = int(args[1])
            elif cmd in ("BEGIN", "WRITE", "END"):
                name, token = args[0], int(args[1])
                if cmd == "BEGIN":
                    self.open[name] = Section(name, token, now)
                    self.sections.append(self.open[name])
                section = self.open.get(name)
                stale = token < self.highest
                self.highest = max(self.highest, token)
                if section is not None:
                    if cmd == "WRITE":
                        section.writes += 1
                    if stale:
                        section.refused += 1
                    if cmd == "END":
                        section.end = now
                        del self.open[name]
                return "STALE" if stale else "OK"
            elif cmd == "LOST":
                self.lost[args[0]] = self.lost.get(args[0], 0) + 1
            elif cmd == "OFFERED":
                self.offered.append(args[0])
            elif cmd == "OFFER_LOST":
                self.offer_lost.append(args[0])
            elif cmd == "GOT":
                self.got.append((args[0], args[1]))
            elif cmd == "ELECTED":
                self.leadership.append((now, args[0], +1))
            elif cmd == "UNELECTED":
                self.leadership.append((now, args[0], -1))
            elif cmd == "STOP?":
                return "YES" if self.stop else "NO"
            elif cmd == "DONE":
                self.done.add(args[0])
            else:
                return f"ERR {cmd}"
        return "OK"

    # -- what the suite checks ------------------------------------------------------------------

    def holder(self) -> Optional[str]:
        """A worker inside an accepted critical section right now."""
        with self.lock:
            for name, section in self.open.items():
                if section.refused == 0:
                    return name
        return None

    def lock_verdict(self) -> Tuple[int, int, int]:
        """(accepted sections, sections with refused writes, overlaps between accepted sections)."""
        with self.lock:
            finished = [s for s in self.sections if s.end is not None]
            accepted = sorted((s for s in finished if s.refused == 0), key=lambda s: s.begin)
            overlaps = sum(1 for a, b in zip(accepted, accepted[1:]) if b.begin < a.end)  # type: ignore[operator]
            return len(accepted), sum(1 for s in self.sections if s.refused), overlaps

    def max_concurrent_leaders(self, cut: Dict[str, float], until: float = float("inf")) -> int:
        """Most leaders at one instant among live sessions, before `until`: a term ends when the
        worker said so, or when the suite paused or killed its process (`cut`), whichever is
        first. After `until` (the suite told every worker to stop) leadership is handed on from
        one stopping worker to the next, and a stopper's report can reach the suite after its
        successor's: that hand-over says nothing of the recipe."""
        terms: List[Tuple[float, float]] = []
        with self.lock:
            start: Dict[str, float] = {}
            for t, name, delta in sorted(self.leadership):
                if delta > 0:
                    start.setdefault(name, t)
                elif name in start:
                    began = start.pop(name)
                    end = min(t, cut[name]) if name in cut and began <= cut[name] else t
                    terms.append((began, end))
            for name, t in start.items():
                terms.append((t, cut.get(name, float("inf"))))
        terms = [(a, min(b, until)) for a, b in terms if a < until]
        events = sorted([(a, 1) for a, _ in terms] + [(b, -1) for _, b in terms], key=lambda e: (e[0], e[1]))
        worst = current = 0
        for _, delta in events:
            current += delta
            worst = max(worst, current)
        return worst


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        resource: Resource = self.server.resource  # type: ignore[attr-defined]
        for raw in self.rfile:
            self.wfile.write((resource.handle(raw.decode().strip()) + "\n").encode())
            self.wfile.flush()


class ResourceServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, resource: Resource) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.resource = resource
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def address(self) -> str:
        return "%s:%d" % self.server_address[:2]
