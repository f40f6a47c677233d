"""`make demo`: Python, Node.js, Java and Kotlin processes share one election, one
queue and one lock through zkrecipes, against a real ZooKeeper, and the demo
checks the outcome itself.

    python3 demo/run.py --wheel W --npm-tarball T --jar J --kotlin-cp CP --harness H
        [--python 2 --node 2 --java 2 --kotlin 1 --jobs 200] [--prometheus [RESULTS.json]]

Midway the current leader is killed with SIGKILL; another process takes over.
Exit code 0 only if every check of the summary holds. Ctrl-C stops everything
and cleans up.

With --prometheus each worker serves its client's metrics for a real Prometheus
that scrapes them every second; at the end every query of the Grafana dashboard
is asked of it and the answers are written to RESULTS.json, for
tools/render_dashboard.py (demo/prometheus.py tells how).
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ledger import Ledger, LedgerServer  # noqa: E402
from prometheus import (ALL_PATHS, METRICS_PORT_VARIABLE, RATE_WINDOW, SCRAPE_INTERVAL_SECONDS,  # noqa: E402
                        DemoPrometheus, free_port)

DEMO = Path(__file__).resolve().parent
ROOT = DEMO.parent
LANGUAGES = {"py": "Python", "node": "Node.js", "java": "Java", "kt": "Kotlin"}
# The recipes the workers use, for the chart's notes on the panels this run leaves empty.
RECIPES_USED = ["lock", "work_queue", "election"]
COLORS = {"py": "\033[33m", "node": "\033[32m", "java": "\033[36m", "kt": "\033[35m"}
RESET = "\033[0m"


def color(name: str) -> str:
    if not sys.stdout.isatty():
        return name
    return COLORS.get(name.split("-")[0], "") + name + RESET


class Demo:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="zkrecipes-demo-"))
        self.harness: Optional[subprocess.Popen[str]] = None
        self.workers: Dict[str, subprocess.Popen[bytes]] = {}
        self.started = time.monotonic()
        # With --prometheus: the port each worker serves its metrics on, and the scraper.
        self.metrics_ports: Dict[str, int] = {}
        self.prometheus: Optional[DemoPrometheus] = None

    def log(self, message: str) -> None:
        print(f"[{time.monotonic() - self.started:6.1f}s] {message}", flush=True)

    # -- setup ---------------------------------------------------------------------------------

    def start_zookeeper(self) -> str:
        if os.environ.get("ZK_CONNECT"):
            return os.environ["ZK_CONNECT"]
        self.harness = subprocess.Popen([self.args.harness, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.harness.stdout is not None
        # The harness prints one whole line once ZooKeeper serves (or fails); never wait forever.
        ready = selectors.DefaultSelector()
        ready.register(self.harness.stdout, selectors.EVENT_READ)
        line = self.harness.stdout.readline().strip() if ready.select(timeout=180) else "nothing within 180 s"
        if not line.startswith("ZK_CONNECT="):
            raise RuntimeError(f"the harness did not start ZooKeeper: {line!r}")
        return line.split("=", 1)[1]

    def install(self) -> Tuple[List[str], List[str], List[str], List[str]]:
        """Installs each artifact the way a user would; returns the four worker commands."""
        venv = self.tmp / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-index", self.args.wheel], check=True)
        node_project = self.tmp / "node"
        node_project.mkdir()
        subprocess.run(["npm", "init", "-y"], cwd=node_project, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", self.args.npm_tarball],
                       cwd=node_project, check=True)
        shutil.copy(DEMO / "worker.js", node_project / "worker.js")
        classes = self.tmp / "classes"
        subprocess.run(["javac", "-d", str(classes), "-cp", self.args.jar, str(DEMO / "Worker.java")], check=True)
        return (
            [str(venv / "bin" / "python"), str(DEMO / "worker.py")],
            ["node", str(node_project / "worker.js")],
            ["java", "-cp", f"{self.args.jar}:{classes}", "Worker"],
            # The Kotlin JAR with its three dependencies; the worker was compiled with its tests.
            ["java", "-cp", self.args.kotlin_cp, "KotlinWorker"],
        )

    # -- run -----------------------------------------------------------------------------------

    def spawn(self, name: str, command: List[str], connect: str, root: str, ledger: str) -> None:
        logs = self.tmp / "logs"
        logs.mkdir(exist_ok=True)
        out = open(logs / f"{name}.log", "wb")
        env = dict(os.environ)
        if self.args.skip_audit_lock and name.startswith("py-"):
            env["ZKRECIPES_DEMO_SKIP_AUDIT_LOCK"] = "1"
        env.pop(METRICS_PORT_VARIABLE, None)
        if name in self.metrics_ports:
            env[METRICS_PORT_VARIABLE] = str(self.metrics_ports[name])
        self.workers[name] = subprocess.Popen(
            command + [connect, root, name, ledger, str(self.args.session_timeout)],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env,
        )

    def run(self) -> int:
        a = self.args
        connect = self.start_zookeeper()
        self.log(f"ZooKeeper at {connect}")
        commands = self.install()
        self.log("installed the wheel in a venv, the npm tarball in a fresh project, the Java and Kotlin JARs on classpaths")
        ledger = Ledger(jobs=a.jobs)
        server = LedgerServer(ledger)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        root = f"/zkrecipes-demo/{uuid.uuid4().hex[:8]}"
        planned = [(f"{lang}-{i}", command)
                   for lang, count, command in (("py", a.python, commands[0]), ("node", a.node, commands[1]),
                                                ("java", a.java, commands[2]), ("kt", a.kotlin, commands[3]))
                   for i in range(1, count + 1)]
        if a.prometheus:
            self.start_prometheus([name for name, _ in planned])
        started_at = time.time()
        for name, command in planned:
            self.spawn(name, command, connect, root, server.address)
        self.log(f"started {len(self.workers)} workers: {', '.join(color(n) for n in self.workers)}")

        killed: Optional[Tuple[str, float]] = None
        killed_at: Optional[float] = None
        failover: Optional[float] = None
        seen_events = 0
        last_progress = 0.0
        deadline = time.monotonic() + a.timeout
        while time.monotonic() < deadline:
            with ledger.lock:
                events = ledger.events[seen_events:]
                seen_events = len(ledger.events)
                leaders = list(ledger.leaders)
                done = len(ledger.applied)
                offered, holder, workers = ledger.next_offer, ledger.last_holder, dict(ledger.workers)
            for event in events:
                self.log(event)
            if killed and failover is None:
                after = [t for t, name in leaders if t > killed[1] and name != killed[0]]
                if after:
                    failover = after[0] - killed[1]
                    self.log(f"failover: a new leader {failover * 1000:.0f} ms after the SIGKILL")
            if killed is None and offered >= a.jobs // 2 and leaders:
                victim = leaders[-1][1]
                self.log(f"killing the leader {color(victim)} (pid {workers[victim]}) with SIGKILL")
                ledger.mark_dead(victim)
                os.kill(workers[victim], signal.SIGKILL)
                killed = (victim, time.monotonic())
                killed_at = time.time()
            now = time.monotonic()
            if now - last_progress >= 1.0 or done >= a.jobs:
                last_progress = now
                bar = "#" * (30 * done // a.jobs) + "." * (30 - 30 * done // a.jobs)
                leader = leaders[-1][1] if leaders else "-"
                lock = f"{color(holder[0])} (token {holder[1]})" if holder else "-"
                print(f"         leader {color(leader):<8} lock {lock:<28} queue {max(0, offered - done):>4}  "
                      f"[{bar}] {done}/{a.jobs}", flush=True)
            if done >= a.jobs:
                break
            time.sleep(0.2)

        for name, proc in self.workers.items():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.log(f"{name} did not stop by itself")
        server.shutdown()
        scraped: List[Tuple[str, bool]] = []
        if self.prometheus is not None:
            scraped = self.chart_the_dashboard(ledger, root, killed, started_at, killed_at)
        return self.summary(ledger, killed, failover, scraped)

    # -- Prometheus (--prometheus) -------------------------------------------------------------

    def start_prometheus(self, names: List[str]) -> None:
        self.metrics_ports = {name: free_port() for name in names}
        logs = self.tmp / "logs"
        logs.mkdir(exist_ok=True)
        self.prometheus = DemoPrometheus(self.tmp / "prometheus", self.metrics_ports, logs / "prometheus.log")
        self.prometheus.wait_ready()
        self.log(f"Prometheus {self.prometheus.version()} at {self.prometheus.url} scrapes every worker's /metrics "
                 "each second")

    def chart_the_dashboard(self, ledger: Ledger, root: str, killed: Optional[Tuple[str, float]],
                            started_at: float, killed_at: Optional[float]) -> List[Tuple[str, bool]]:
        """Asks the dashboard's queries over the run, writes them to the results file, and says
        whether the scrape agrees with what each worker reported itself."""
        a, prometheus = self.args, self.prometheus
        assert prometheus is not None
        ended_at = time.time()
        dashboard = Path(a.dashboard)
        panels = prometheus.chart_data(dashboard, started_at, ended_at)
        # The workers waited for a scrape after their work before reporting METRICS: the last
        # scraped count of each survivor is the count it reported.
        agree = {}
        for name in self.workers:
            if killed and name == killed[0] or name not in ledger.metrics:
                continue
            scraped = prometheus.last_value(f'zkrecipes_lock_acquisitions_total{{worker="{name}",path="{root}/lock",'
                                            'outcome="acquired"}', ended_at)
            agree[name] = scraped == ledger.metrics[name][4]
            if not agree[name]:
                self.log(f"{name}: Prometheus's last scrape counts {scraped} lock acquisitions, "
                         f"the worker {ledger.metrics[name][4]}")
        results = {
            "prometheus": {"version": prometheus.version(), "scrape_interval_seconds": SCRAPE_INTERVAL_SECONDS,
                           "variables": {"$__rate_interval": RATE_WINDOW, "$path": ALL_PATHS}},
            "dashboard": {"file": os.path.relpath(dashboard.resolve(), ROOT),
                          "title": json.loads(dashboard.read_text())["title"]},
            "run": {
                "command": "make demo",
                "jobs": a.jobs,
                "workers": {name: LANGUAGES[name.split("-")[0]] for name in self.workers},
                "recipes": RECIPES_USED,
                "root": root,
                "start": started_at,
                "end": ended_at,
                "step_seconds": SCRAPE_INTERVAL_SECONDS,
                "events": ([{"at": killed_at, "text": f"leader {killed[0]} killed (SIGKILL)"}]
                           if killed and killed_at is not None else []),
            },
            "panels": panels,
        }
        out = Path(a.prometheus)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=1) + "\n")
        charted = sum(1 for panel in panels if any(t["data"]["result"] for t in panel["targets"]))
        self.log(f"Prometheus answered the dashboard's {sum(len(p['targets']) for p in panels)} queries over "
                 f"{ended_at - started_at:.0f} s ({charted} of {len(panels)} panels have data): {out}")
        prometheus.stop()
        return [(f"Prometheus's last scrape of every surviving worker counts the lock acquisitions it reported "
                 f"({sum(agree.values())}/{len(agree)})", bool(agree) and all(agree.values()))]

    def summary(self, ledger: Ledger, killed: Optional[Tuple[str, float]], failover: Optional[float],
                scraped: List[Tuple[str, bool]]) -> int:
        a = self.args
        per_language: Dict[str, int] = {}
        for worker, n in ledger.applied_by.items():
            lang = worker.split("-")[0]
            per_language[lang] = per_language.get(lang, 0) + n
        exits = {n: p.returncode for n, p in self.workers.items()}
        survivors_ok = all(code == 0 for n, code in exits.items() if not killed or n != killed[0])
        checks = [
            (f"every job applied exactly once ({len(ledger.applied)}/{a.jobs})", ledger.applied == set(range(a.jobs))),
            (f"the account equals the number of jobs ({ledger.balance} = {a.jobs})", ledger.balance == a.jobs),
            (f"zero rejected fencing tokens ({ledger.stale})", ledger.stale == 0),
            (f"no write during an audit ({ledger.audit_violations} in {ledger.audits} audits)",
             ledger.audit_violations == 0 and ledger.audits > 0),
            ("the leader was killed and another process took over"
             + (f" in {failover * 1000:.0f} ms" if failover is not None else ""), killed is not None and failover is not None),
            ("every language applied jobs", all(per_language.get(l, 0) > 0 for l, n in
                                                (("py", a.python), ("node", a.node), ("java", a.java),
                                                 ("kt", a.kotlin)) if n > 0)),
            ("every surviving worker exited cleanly", survivors_ok),
            # Each APPLY was made holding the worker's lock once: its own metrics must say so.
            ("every surviving worker's metrics count one lock acquisition per write it made",
             all(ledger.metrics.get(n, (0,) * 6)[4] == ledger.apply_calls.get(n, 0)
                 for n in self.workers if not killed or n != killed[0])),
        ] + scraped
        print("\n== summary ==")
        print(f"jobs {a.jobs}, workers {len(self.workers)} ({a.python} Python, {a.node} Node.js, {a.java} Java, "
              f"{a.kotlin} Kotlin), "
              f"session timeout {a.session_timeout} s")
        print("applied per language: " + ", ".join(f"{k} {v}" for k, v in sorted(per_language.items())))
        print("applied per worker:   " + ", ".join(f"{k} {v}" for k, v in sorted(ledger.applied_by.items())))
        print(f"leaders in turn: {' -> '.join(name for _, name in ledger.leaders)}"
              + (f"; killed {killed[0]}" if killed else ""))
        print(f"jobs re-offered: none (the work queue redelivers); duplicate deliveries refused by the account: "
              f"{ledger.duplicates}")
        print("\nfrom each worker's own metrics (client.metrics() in its language; the lock is "
              f"{a.jobs} writes shared by {len(self.workers)} workers):")
        print(f"  {'worker':<8} {'lock wait p50 / p99 ms':>24} {'hold p50 / p99 ms':>20} {'acquired':>9} {'redelivered':>12}")
        for n in sorted(self.workers, key=lambda n: (["py", "node", "java", "kt"].index(n.split("-")[0])
                                                      if n.split("-")[0] in ("py", "node", "java", "kt") else 9, n)):
            m = ledger.metrics.get(n)
            if m is None:
                print(f"  {n:<8} {'(killed before it could report)' if killed and n == killed[0] else '(no report)'}")
                continue
            print(f"  {n:<8} {m[0]:>11.1f} / {m[1]:>8.1f} {m[2]:>9.1f} / {m[3]:>7.1f} {m[4]:>9} {m[5]:>12}")
        for text, ok in checks:
            print(f"  [{'ok' if ok else 'FAIL'}] {text}")
        ok = all(ok for _, ok in checks)
        print("demo " + ("PASSED" if ok else "FAILED") + f" in {time.monotonic() - self.started:.1f} s")
        if not ok:
            print(f"worker logs: {self.tmp / 'logs'} (kept)")
        return 0 if ok else 1

    def cleanup(self, keep_logs: bool) -> None:
        for proc in self.workers.values():
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        if self.prometheus is not None:
            self.prometheus.stop()
        if self.harness is not None:
            assert self.harness.stdin is not None
            self.harness.stdin.close()
            self.harness.wait(timeout=30)
        if not keep_logs:
            shutil.rmtree(self.tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", type=int, default=2)
    parser.add_argument("--node", type=int, default=2)
    parser.add_argument("--java", type=int, default=2)
    parser.add_argument("--kotlin", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--session-timeout", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=180.0, help="give up after this many seconds")
    parser.add_argument("--skip-audit-lock", action="store_true",
                        help="the Python workers apply jobs without the audit's write lock: the demo must fail "
                             "its 'no write during an audit' check (shows that the check can fail; audits are 50 ms "
                             "a second, so give it --jobs 800 for a few overlaps)")
    parser.add_argument("--prometheus", nargs="?", const=str(ROOT / "target" / "dashboard" / "results.json"),
                        metavar="RESULTS.json",
                        help="each worker serves its metrics to a real Prometheus; the dashboard's queries over the "
                             "run go to RESULTS.json (default target/dashboard/results.json), for "
                             "tools/render_dashboard.py")
    parser.add_argument("--dashboard", default=str(ROOT / "docs" / "grafana" / "zkrecipes-dashboard.json"),
                        help="the Grafana dashboard whose queries --prometheus asks")
    parser.add_argument("--wheel", required=True)
    parser.add_argument("--npm-tarball", required=True)
    parser.add_argument("--jar", required=True)
    parser.add_argument("--kotlin-cp", required=True, help="the Kotlin JAR, its dependencies and its test classes")
    parser.add_argument("--harness", required=True)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    demo = Demo(args)
    code = 1
    try:
        code = demo.run()
    except KeyboardInterrupt:
        print("\ninterrupted: stopping workers and ZooKeeper", flush=True)
        code = 130
    finally:
        demo.cleanup(keep_logs=code not in (0, 130))
    return code


if __name__ == "__main__":
    sys.exit(main())
