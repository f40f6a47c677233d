"""Reliability suite: mutual exclusion and no lost work under real faults, on a
3-node ensemble, with workers in Python, Node.js, Java and Rust.

    python3 tests/reliability/run.py --profile short|soak --harness H --python P --node-project N --jar J --rust-worker R

Faults: a TCP proxy between every client and the servers (connection drops,
black holes), kill -9 / restart of the ZooKeeper leader and of a follower, loss
of quorum, SIGSTOP of a lock holder past its session timeout, SIGKILL of a
holder and of the elected leader. Prints the numbers of every check; exits 1 if
one fails.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from resource import Resource, ResourceServer  # noqa: E402

HERE = Path(__file__).resolve().parent
SESSION_S = 4


class Line:
    """A helper process driven over stdin/stdout (ensemble, proxy)."""

    def __init__(self, cmd: List[str]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        # An ensemble's three JVMs elect a leader first: up to the harness's own 90 s per member.
        first = self.line(timeout=300)
        if not first.startswith("ZK_CONNECT="):
            raise RuntimeError(f"{cmd[1]} did not start: {first!r}")
        self.connect = first.split("=", 1)[1]
        self.lock = threading.Lock()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put("<ended>")

    def line(self, timeout: float) -> str:
        """The helper's next line; one that says nothing fails the suite instead of hanging it."""
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError(f"the harness said nothing within {timeout} s") from None

    def ask(self, line: str) -> str:
        with self.lock:
            assert self.proc.stdin
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            # A restarted member waits up to 90 s to serve.
            return self.line(timeout=180)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


class Suite:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.started = time.monotonic()
        self.ensemble = Line([args.harness, "serve", "--ensemble"])
        self.proxy = Line([args.harness, "proxy", self.ensemble.connect])
        self.rows: List[Tuple[str, str, bool]] = []
        self.procs: Dict[str, subprocess.Popen] = {}

    def log(self, message: str) -> None:
        print(f"[{time.monotonic() - self.started:7.1f}s] {message}", flush=True)

    def check(self, scenario: str, what: str, ok: bool) -> None:
        self.rows.append((scenario, what, ok))
        self.log(f"{'ok  ' if ok else 'FAIL'} {scenario}: {what}")

    def command(self, lang: str) -> List[str]:
        a = self.args
        if lang == "py":
            return [a.python, str(HERE / "worker.py")]
        if lang == "node":
            return ["node", str(HERE / "worker.js")]
        if lang == "java":
            return ["java", "-cp", f"{a.jar}:{a.java_classes}", "Worker"]
        return [a.rust_worker]

    def spawn(self, name: str, role: str, count: int, root: str, resource: str) -> None:
        lang = name.split("-")[0]
        env = dict(os.environ, NODE_PATH=str(Path(self.args.node_project) / "node_modules"))
        self.procs[name] = subprocess.Popen(
            self.command(lang) + [self.proxy.connect, resource, name, role, str(count), str(SESSION_S), root],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_workers(self, names: List[str], timeout: float) -> List[str]:
        deadline = time.monotonic() + timeout
        stuck = []
        for name in names:
            try:
                self.procs[name].wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                stuck.append(name)
        return stuck

    def zk_leader(self) -> int:
        return int(self.ensemble.ask("leader"))

    def orphans(self, root: str) -> List[str]:
        out = subprocess.run([self.args.harness, "ephemerals", self.ensemble.connect, root],
                             capture_output=True, text=True, timeout=60)
        return [line for line in out.stdout.splitlines() if line.strip()]

    def children(self, path: str) -> int:
        """How many children `path` has on the ensemble now (0 when it does not exist)."""
        out = subprocess.run([self.args.harness, "children", self.ensemble.connect, path],
                             capture_output=True, text=True, timeout=60, check=True)
        return int(out.stdout.strip())

    def no_orphans(self, scenario: str, root: str) -> None:
        # Every worker has exited: the sessions of killed ones end once the server expires them
        # (the session timeout, after the server noticed), so what is left then is an orphan.
        deadline = time.monotonic() + 3 * SESSION_S + 30
        left = self.orphans(root)
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = self.orphans(root)
        self.check(scenario, f"no recipe node of a dead session remains ({len(left)} ephemeral nodes)", not left)

    def drained(self, paths: List[str], timeout: float) -> bool:
        """Waits until every one of `paths` has no children left on the server."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(self.children(p) == 0 for p in paths):
                return True
            time.sleep(0.2)
        return False

    def pause_holder(self, res: Resource) -> Optional[str]:
        """SIGSTOPs a worker that is inside an accepted critical section, and stays so once stopped.
        One line of the worker may be on its way at the stop (each worker waits for the reply to
        one line before it sends the next), so "inside" means at least two lines still to come.
        A holder seen an instant before the signal may have ended its section meanwhile: that one
        is continued and another is chosen. (Up to 200 looks: a clean-clone run on a loaded
        machine missed every one of 50, each holder stopped just after its section's last line.)"""
        for _ in range(200):
            holder = self.early_holder(res)
            if not holder:
                return None
            pid = res.pids[holder]
            os.kill(pid, signal.SIGSTOP)
            while process_state(pid) not in ("T", "t", None):
                time.sleep(0.001)
            # Inside with two lines or more still to come: a worker stopped just after it wrote a
            # line (received after this look) still writes once more after its resume, so the
            # refusal of its stale token is always seen (with the END in flight at the stop, CI
            # saw "0 of its sections refused").
            with res.lock:
                section = res.open.get(holder)
                inside = section is not None and section.refused == 0 and section.writes < 3
            if inside:
                return holder
            os.kill(pid, signal.SIGCONT)
        return None

    # -- scenarios -----------------------------------------------------------------------------

    def setup(self) -> Tuple[str, Resource, ResourceServer]:
        """A scenario's own root, and the resource its workers report to."""
        res = Resource()
        return f"/reliability/{uuid.uuid4().hex[:8]}", res, ResourceServer(res)

    def finish(self, scenario: str, root: str, server: ResourceServer) -> None:
        self.no_orphans(scenario, root)
        server.shutdown()

    def spawn_queue_workers(self, per_lang: int, items: int, produce: str, consume: str, root: str,
                            resource: str) -> Tuple[List[str], List[str]]:
        """`per_lang` producers of `items` each and as many consumers in every language, the
        consumers first: (producers, consumers)."""
        langs = ("py", "node", "java", "rust")
        producers = [f"{lang}-p{i}" for lang in langs for i in range(1, per_lang + 1)]
        consumers = [f"{lang}-c{i}" for lang in langs for i in range(1, per_lang + 1)]
        for name in consumers:
            self.spawn(name, consume, 0, root, resource)
        for name in producers:
            self.spawn(name, produce, items, root, resource)
        return producers, consumers

    def drain(self, scenario: str, what: str, paths: List[str], res: Resource, producers: List[str],
              consumers: List[str]) -> List[str]:
        """Waits for the producers, checks that `paths` drained on the server (`what`), then stops
        the consumers and waits for them; the producers that got stuck."""
        stuck = self.wait_workers(producers, timeout=self.args.timeout)
        self.check(scenario, what, self.drained(paths, timeout=120))
        with res.lock:
            res.stop = True
        self.wait_workers(consumers, timeout=30)
        return stuck

    def locks_under_faults(self, per_lang: int, sections: int) -> None:
        """Workers take the lock until told to stop; faults run meanwhile; afterwards every
        surviving worker must still get the lock (no stranded waiter)."""
        scenario = "locks"
        root, res, server = self.setup()
        names = [f"{lang}-{i}" for lang in ("py", "node", "java", "rust") for i in range(1, per_lang + 1)]
        for name in names:
            self.spawn(name, "lock", sections, root, server.address)
        self.log(f"{scenario}: {len(names)} workers taking the lock until the faults are over")
        paused = killed = None
        time.sleep(3)
        self.log("fault: drop every client connection")
        self.proxy.ask("drop")
        time.sleep(2)
        leader = self.zk_leader()
        self.log(f"fault: kill -9 the ZooKeeper leader (member {leader})")
        self.ensemble.ask(f"kill {leader}")
        time.sleep(4)
        self.ensemble.ask(f"start {leader}")
        follower = (self.zk_leader() + 1) % 3
        self.log(f"fault: kill -9 a follower (member {follower}), then restart it")
        self.ensemble.ask(f"kill {follower}")
        time.sleep(3)
        self.ensemble.ask(f"start {follower}")
        holder = self.pause_holder(res)
        self.check(scenario, f"a worker inside its critical section was paused (holder: {holder})", holder is not None)
        pause_window = (0.0, 0.0)
        if holder:
            self.log(f"fault: SIGSTOP the lock holder {holder} past its session timeout, until another takes over")
            paused = holder
            began = time.monotonic()
            # Paused until its session is gone and another worker got in (the event, not a fixed
            # time: expiry plus the hand-over takes ~5 s idle and longer on a loaded machine).
            deadline = began + 6 * SESSION_S
            while time.monotonic() < deadline:
                with res.lock:
                    if any(s.name != holder and s.begin > began for s in res.sections):
                        break
                time.sleep(0.05)
            pause_window = (began, time.monotonic() + 0.001)
            os.kill(res.pids[holder], signal.SIGCONT)
        lost_quorum = [m for m in range(3) if m != self.zk_leader()][:2]
        self.log(f"fault: lose quorum (kill members {lost_quorum}) for 3 s")
        for m in lost_quorum:
            self.ensemble.ask(f"kill {m}")
        time.sleep(3)
        for m in lost_quorum:
            self.ensemble.ask(f"start {m}")
        victim = self.wait_holder(res, exclude={paused})
        self.check(scenario, f"a lock holder to SIGKILL showed up (holder: {victim})", victim is not None)
        if victim:
            self.log(f"fault: SIGKILL the lock holder {victim}")
            killed = victim
            os.kill(res.pids[victim], signal.SIGKILL)
        self.log("fault: black-hole all traffic for 1 s")
        self.proxy.ask("hole on")
        time.sleep(1)
        self.proxy.ask("hole off")
        survivors = [n for n in names if n != killed]
        faults_over = time.monotonic()
        progress_deadline = faults_over + 60
        while time.monotonic() < progress_deadline:
            with res.lock:
                since = {s.name for s in res.sections if s.begin > faults_over and s.end is not None and not s.refused}
            if all(n in since for n in survivors):
                break
            time.sleep(0.2)
        stranded = [n for n in survivors if n not in since]
        with res.lock:
            res.stop = True
        stuck = self.wait_workers(survivors, timeout=60)
        accepted, refused, overlaps = res.lock_verdict()
        self.log(f"{scenario}: accepted {accepted}, rejected {refused}, overlaps {overlaps}, "
                 f"LOST events {dict(res.lost)}")
        self.check(scenario, f"no two accepted critical sections overlap ({overlaps} overlaps in {accepted} accepted)",
                   overlaps == 0 and accepted > 0)
        self.check(scenario, f"after the faults every surviving worker got the lock again (stranded: {stranded})",
                   not stranded)
        self.check(scenario, f"every surviving worker stopped cleanly (stuck: {stuck})", not stuck)
        if paused:
            lost = res.lost.get(paused, 0)
            self.check(scenario, f"the holder paused past its session got LOST ({lost} event(s), expected >= 1)", lost >= 1)
            with res.lock:
                taken_over = sum(1 for s in res.sections if s.name != paused and pause_window[0] < s.begin < pause_window[1])
                stale = sum(1 for s in res.sections if s.name == paused and s.refused)
            # Three other workers contend all along: one takes over during a pause past the session,
            # and the paused one, stopped inside its section, writes again once continued.
            self.check(scenario, f"another worker took over during the pause ({taken_over} sections), and the paused "
                                 f"holder's later writes were refused by its token ({stale} of its sections refused)",
                       taken_over >= 1 and stale >= 1)
        for name in stuck:
            self.procs[name].kill()
        if killed:
            self.procs[killed].wait()
        self.finish(scenario, root, server)

    def early_holder(self, res: Resource) -> Optional[str]:
        """A live worker early in an accepted section (fewer than three writes). Not just any open
        section: one a worker never ended (it lost the lock inside it) stays open, and looking at
        that one 200 times over missed every real holder (make test: "paused (holder: None)")."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with res.lock:
                early = [name for name, s in res.open.items() if s.refused == 0 and s.writes < 3]
            for name in early:
                if self.procs[name].poll() is None:
                    return name
            time.sleep(0.001)
        return None

    def wait_holder(self, res: Resource, exclude: Optional[set] = None) -> Optional[str]:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            holder = res.holder()
            if holder and holder not in (exclude or set()) and self.procs[holder].poll() is None:
                return holder
            time.sleep(0.01)
        return None

    def queue_under_drops(self, per_lang: int, items: int) -> None:
        scenario = "queue"
        root, res, server = self.setup()
        producers, consumers = self.spawn_queue_workers(per_lang, items, "produce", "consume", root, server.address)
        self.log(f"{scenario}: {len(producers)} producers x {items} items, {len(consumers)} consumers")
        for _ in range(3):
            time.sleep(1)
            self.log("fault: drop every client connection")
            self.proxy.ask("drop")
        self.log("fault: 40 ms of latency on every packet for 2 s")
        self.proxy.ask("latency 40")
        time.sleep(2)
        self.proxy.ask("latency 0")
        victim = consumers[0]
        self.log(f"fault: SIGKILL the consumer {victim} in the middle of its work")
        os.kill(res.pids[victim], signal.SIGKILL)
        consumers = consumers[1:]
        # Drained when the server's queue is empty; a consumer that took the last items reports
        # them before it exits, and the verdict waits for every consumer to exit.
        stuck = self.drain(scenario, "the queue drained on the server", [f"{root}/queue"], res, producers, consumers)
        got: Dict[str, int] = {}
        for item, _ in res.got:
            got[item] = got.get(item, 0) + 1
        offered, ambiguous = set(res.offered), set(res.offer_lost)
        lost = [i for i in offered if got.get(i, 0) == 0]
        duplicated = [i for i, n in got.items() if n > 1]
        unknown = [i for i in got if i not in offered and i not in ambiguous]
        # The consumer killed between taking an item and reporting it takes that item with it:
        # a queue without acknowledgements delivers at most once to a consumer that dies.
        self.procs[victim].wait()
        ambiguous_delivered = sum(1 for i in ambiguous if got.get(i, 0) == 1)
        self.log(f"{scenario}: offered {len(offered)}, offers that failed with a connection error "
                 f"{len(ambiguous)} (delivered anyway: {ambiguous_delivered}), consumed {len(res.got)}, "
                 f"lost {len(lost)}, duplicated {len(duplicated)}")
        self.check(scenario, f"every acknowledged item consumed exactly once, but for at most the one in the "
                             f"killed consumer's hands (lost {len(lost)}, duplicated {len(duplicated)}, unknown "
                             f"{len(unknown)})", len(lost) <= 1 and not duplicated and not unknown)
        self.check(scenario, f"producers finished (stuck: {stuck})", not stuck)
        self.finish(scenario, root, server)

    def work_queue_under_kills(self, per_lang: int, items: int) -> None:
        """The at-least-once WorkQueue: a consumer SIGKILLed while it holds jobs gives them all back."""
        scenario = "work"
        root, res, server = self.setup()
        producers, consumers = self.spawn_queue_workers(per_lang, items, "work-produce", "work-consume", root,
                                                        server.address)
        self.log(f"{scenario}: {len(producers)} producers x {items} jobs, {len(consumers)} consumers (prefetch 4)")
        self.log("fault: drop every client connection")
        self.proxy.ask("drop")
        # Kill a consumer (of any language: a different one each run) once it has
        # reported jobs; it holds more, prefetched.
        victim = random.choice(consumers)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with res.lock:
                if sum(1 for _, who in res.got if who == victim) >= 3:
                    break
            time.sleep(0.01)
        self.log(f"fault: SIGKILL the consumer {victim} while it holds jobs")
        os.kill(res.pids[victim], signal.SIGKILL)
        consumers = [c for c in consumers if c != victim]
        # Drained when no job is left on the server: every one acknowledged (the killed consumer's
        # claims go with its session, and its jobs to the others).
        stuck = self.drain(scenario, "the work queue drained on the server (every job acknowledged)",
                           [f"{root}/work/entries", f"{root}/work/taken"], res, producers, consumers)
        self.procs[victim].wait()
        got: Dict[str, int] = {}
        victims: set = set()
        for item, who in res.got:
            got[item] = got.get(item, 0) + 1
            if who == victim:
                victims.add(item)
        offered = set(res.offered)
        lost = [i for i in offered if got.get(i, 0) == 0]
        # Delivered twice only if the first consumer died before acknowledging it.
        duplicated = [i for i, n in got.items() if n > 1 and (n > 2 or i not in victims)]
        redelivered = [i for i, n in got.items() if n == 2 and i in victims]
        self.log(f"{scenario}: offered {len(offered)}, delivered {len(got)}, lost {len(lost)}, "
                 f"redelivered after the kill {len(redelivered)}, duplicated otherwise {len(duplicated)}")
        self.check(scenario, f"no job lost when a consumer is killed (lost {len(lost)}); only the killed "
                             f"consumer's jobs delivered twice (others: {len(duplicated)})",
                   not lost and not duplicated)
        self.check(scenario, f"producers finished (stuck: {stuck})", not stuck)
        self.finish(scenario, root, server)

    def election_under_kills(self) -> None:
        scenario = "election"
        root, res, server = self.setup()
        names = ["py-e", "node-e", "java-e", "rust-e"]
        for name in names:
            self.spawn(name, "elect", 0, root, server.address)
        cut: Dict[str, float] = {}
        leader = self.wait_leader(res, cut)
        failovers = []
        for fault in ("SIGKILL", "SIGSTOP"):
            if not leader:
                break
            self.log(f"fault: {fault} the elected leader {leader}")
            cut[leader] = time.monotonic()
            os.kill(res.pids[leader], signal.SIGKILL if fault == "SIGKILL" else signal.SIGSTOP)
            at = time.monotonic()
            previous = leader
            leader = self.wait_leader(res, cut, timeout=3 * SESSION_S)
            if leader:
                failovers.append(time.monotonic() - at)
            if fault == "SIGSTOP":
                time.sleep(1)
                os.kill(res.pids[previous], signal.SIGCONT)
        self.log(f"{scenario}: failover after the leader's process stopped: "
                 + ", ".join(f"{f * 1000:.0f} ms" for f in failovers))
        # The figure itself is a benchmark's (it was about 2 s with a 4 s session on an idle machine);
        # here only that a leader comes within a bound a loaded machine keeps.
        self.check(scenario, f"a new leader within 3 session timeouts each time ({len(failovers)}/2)",
                   len(failovers) == 2 and all(f <= 3 * SESSION_S for f in failovers))
        time.sleep(2)
        with res.lock:
            res.stop = True
            stopped_at = time.monotonic()
        stuck = self.wait_workers([n for n in names if n != list(cut)[0]], timeout=30)
        most = res.max_concurrent_leaders(cut, until=stopped_at)
        self.check(scenario, f"at most one leader at any instant among live sessions (max {most})", most <= 1)
        self.check(scenario, f"the resumed ex-leader and the others stopped cleanly (stuck: {stuck})", not stuck)
        self.finish(scenario, root, server)

    def wait_leader(self, res: Resource, cut: Dict[str, float], timeout: float = 30) -> Optional[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with res.lock:
                current: Dict[str, int] = {}
                for _, name, delta in res.leadership:
                    current[name] = current.get(name, 0) + delta
            leaders = [n for n, v in current.items() if v > 0 and n not in cut]
            if leaders:
                return leaders[0]
            time.sleep(0.01)
        return None

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGCONT)
                    proc.kill()
                except ProcessLookupError:
                    pass
        self.proxy.close()
        self.ensemble.close()


def process_state(pid: int) -> Optional[str]:
    """The state letter of /proc/PID/stat (`T` once a SIGSTOP took effect), None once gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--profile", choices=["short", "soak"], default="short")
    p.add_argument("--harness", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--node-project", required=True)
    p.add_argument("--jar", required=True)
    p.add_argument("--java-classes", required=True)
    p.add_argument("--rust-worker", required=True)
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--minutes", type=float, default=30, help="soak duration")
    p.add_argument("--scenarios", default="locks,queue,work,election", help="which to run, e.g. work")
    args = p.parse_args()
    want = set(args.scenarios.split(","))
    suite = Suite(args)
    try:
        rounds = 0
        soak_until = time.monotonic() + args.minutes * 60
        while True:
            rounds += 1
            big = args.profile == "soak"
            if "locks" in want:
                suite.locks_under_faults(per_lang=2 if big else 1, sections=1_000_000)
            if "queue" in want:
                suite.queue_under_drops(per_lang=2 if big else 1, items=400 if big else 100)
            if "work" in want:
                suite.work_queue_under_kills(per_lang=2 if big else 1, items=400 if big else 100)
            if "election" in want:
                suite.election_under_kills()
            if args.profile == "short" or time.monotonic() > soak_until:
                break
            suite.log(f"soak: round {rounds} done, {max(0, soak_until - time.monotonic()) / 60:.1f} min left")
    finally:
        suite.close()
    print("\n== reliability summary ==")
    for scenario, what, ok in suite.rows:
        print(f"  [{'ok' if ok else 'FAIL'}] {scenario:<9} {what}")
    failed = [r for r in suite.rows if not r[2]]
    print(f"{len(suite.rows) - len(failed)}/{len(suite.rows)} checks passed in {time.monotonic() - suite.started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
