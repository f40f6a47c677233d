"""`make bench`: zkrecipes against Apache's recipes, Curator and kazoo on one ZooKeeper.

Every contestant is a program that sets up, prints READY, waits for a line, runs
the measured part and prints one JSON line. Between READY and the result the
runner reads the server's `mntr` counters, so "requests per operation" is what
the server received for the measured part only. Results go to bench/results.json,
bench/results.md and bench/results.png.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
OUT = BENCH


def mntr(port: int) -> Dict[str, str]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"mntr")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return dict(line.split("\t", 1) for line in data.decode().splitlines() if "\t" in line)


# The JVM contestants' System.Logger (JUL) at WARNING, as a production application configures it.
JUL_WARNINGS = f"-Djava.util.logging.config.file={BENCH / 'contestants' / 'logging.properties'}"


class Runner:
    def __init__(self, args: argparse.Namespace, connect: str, mntr_port: Optional[int] = None,
                 env: Optional[Dict[str, str]] = None, jvm_options: Optional[List[str]] = None,
                 suffix: str = "") -> None:
        self.args = args
        self.connect = connect
        # Four-letter words go to a plain port: the TLS port of a server is read through its plain one.
        self.port = mntr_port or int(connect.split(":")[1])
        self.env = {**os.environ, **(env or {})}
        self.suffix = suffix
        self.results: List[dict] = []
        # Every run that errored or gave no figure: `--strict` (the smoke run of `make test`) fails on any.
        self.failures: List[str] = []
        env = self.args
        work = ROOT / "target" / "bench"
        self.contestants = {
            "zkrecipes-rust": [self.args.rust_bench],
            # Section 13: the Rust contestant with metrics and events at info, and with neither.
            "zkrecipes-rust-observed": ["env", "ZKRECIPES_BENCH_OBSERVE=on", self.args.rust_bench],
            "zkrecipes-rust-unobserved": ["env", "ZKRECIPES_BENCH_OBSERVE=off", self.args.rust_bench],
            "zkrecipes-python": [str(work / "venv" / "bin" / "python"), str(BENCH / "contestants" / "zkrecipes_py.py")],
            "zkrecipes-node": ["node", "--expose-gc", str(work / "node" / "zkrecipes_node.js")],
            "zkrecipes-java": ["java", JUL_WARNINGS, "-cp", f"{env.jar}:{work / 'java-zkrecipes'}", "ZkrecipesJava"],
            "zkrecipes-kotlin": ["java", JUL_WARNINGS, "-cp", env.kotlin_cp, "ZkrecipesKotlin"],
            "apache": ["java", "-cp", f"{work / 'java-apache'}:{env.apache_cp}", "ApacheJava"],
            "curator": ["java", *(jvm_options or []), "-cp", f"{work / 'java-curator'}:{env.curator_cp}", "CuratorJava"],
            "kazoo": [str(work / "venv" / "bin" / "python"), str(BENCH / "contestants" / "kazoo_py.py")],
        }

    def run(self, contestant: str, workload: str, *params: int) -> Optional[dict]:
        cmd = self.contestants[contestant] + [workload, self.connect] + [str(p) for p in params]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                cwd=str(BENCH / "contestants"), env=self.env)
        assert proc.stdin and proc.stdout
        # A contestant that never gets ready must not hang the run either.
        watchdog = threading.Timer(self.args.limit, proc.kill)
        watchdog.start()
        line = proc.stdout.readline().strip()
        watchdog.cancel()
        if line != "READY":
            proc.kill()
            return self.failed(contestant, workload, f"did not get ready ({line!r})")
        # Packets the server received, and its fsyncs (one per flushed batch of
        # transactions: `zk_cnt_fsynctime` counts the timings it records).
        before = mntr(self.port)
        proc.stdin.write("GO\n")
        proc.stdin.flush()
        # A contestant that hangs (a stranded waiter) must not hang the whole run.
        watchdog = threading.Timer(self.args.limit, proc.kill)
        watchdog.start()
        out = proc.stdout.readline().strip()
        watchdog.cancel()
        after = mntr(self.port)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = None
        if not out.startswith("{"):
            return self.failed(contestant, workload, f"failed ({out!r})")
        result = json.loads(out)
        if code != 0:
            return self.failed(contestant, workload, f"exited with {code} after its figures")
        if not result.get("ops") or not result.get("seconds"):
            return self.failed(contestant, workload, f"gave no figure ({out!r})")
        def per_op(key: str) -> float:
            return (int(after.get(key, 0)) - int(before.get(key, 0))) / result["ops"]
        result.update(contestant=contestant + self.suffix, workload=workload, params=list(params),
                      requests_per_op=per_op("zk_packets_received"), fsyncs_per_op=per_op("zk_cnt_fsynctime"))
        result["throughput"] = result["ops"] / result["seconds"]
        # The server's mean fsync over the run (`zk_sum_fsynctime` is in milliseconds).
        fsyncs = int(after.get("zk_cnt_fsynctime", 0)) - int(before.get("zk_cnt_fsynctime", 0))
        if fsyncs > 0:
            result["fsync_mean_ms"] = (float(after.get("zk_sum_fsynctime", 0))
                                       - float(before.get("zk_sum_fsynctime", 0))) / fsyncs
        self.results.append(result)
        shown = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in result.items()
                 if k in ("median_ms", "p99_ms", "throughput", "requests_per_op", "seconds", "final", "cold_ms",
                          "heap_bytes_per_node", "rss_bytes_per_node", "handoff_median_ms", "release_median_ms",
                          "overtaken_max")}
        print(f"  {contestant + self.suffix:<17} {workload:<10} {str(list(params)):<12} {shown}", flush=True)
        return result

    def each(self, contestants: List[str], workload: str, *params: int) -> None:
        """`run` of every contestant in turn."""
        for c in contestants:
            self.run(c, workload, *params)

    def steady(self, contestant: str, workload: str, *params: int) -> Optional[dict]:
        """The run of median throughput among three (one in a smoke run), for the rows that
        issue targets compare: single runs of one workload moved by 2x between two `make bench`
        runs on this VM (the server's fsync time drifts), more than the margins they are judged
        by. The other runs stay in results.json marked as repeats; the kept one lists all three."""
        runs = [x for x in (self.run(contestant, workload, *params) for _ in range(1 if self.args.quick else 3)) if x]
        if not runs:
            return None
        kept = sorted(runs, key=lambda x: x["throughput"])[len(runs) // 2]
        for x in runs:
            if x is not kept:
                x["round"] = "repeat"
        kept["repeats"] = [x["throughput"] for x in runs]
        if all("overtaken_max" in x for x in runs):
            # The order bound is reported at its worst over the runs, not the kept one's.
            kept["overtaken_runs"] = [x["overtaken_max"] for x in runs]
        return kept

    def interleaved(self, contestant: str, cycles: int, bursts: int, base: str = "zkrecipes-rust",
                    round_name: str = "overhead") -> Optional[dict]:
        """Section 7: `contestant` and the Rust contestant, both started, connected and warmed up,
        run the uncontended cycle in turns, `bursts` bursts each of `cycles // bursts` cycles (who
        goes first alternates), so that both see the same drift of the server's fsync time. Its
        result gets `rust_ms`, the Rust median over the same span, and `burst_ratios`; the Rust
        result is kept just before it (as `--report-only` pairs them)."""
        procs: Dict[str, subprocess.Popen] = {}
        results: Dict[str, dict] = {}
        try:
            for c in (base, contestant):
                cmd = self.contestants[c] + ["cycle", self.connect, str(cycles)]
                proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        cwd=str(BENCH / "contestants"), env=self.env)
                procs[c] = proc
                if self.line_of(proc) != "READY":
                    return self.failed(c, "cycle", "did not get ready (interleaved)")

            def burst(c: str) -> Optional[float]:
                proc = procs[c]
                assert proc.stdin
                proc.stdin.write(f"RUN {cycles // bursts}\n")
                proc.stdin.flush()
                answer = self.line_of(proc).split()
                return float(answer[1]) if answer[:1] == ["OK"] else None

            ratios = []
            for i in range(bursts):
                order = (base, contestant) if i % 2 == 0 else (contestant, base)
                ms = {c: burst(c) for c in order}
                if None in ms.values():
                    return self.failed(contestant, "cycle", f"a burst failed (interleaved, burst {i})")
                ratios.append(ms[contestant] / ms[base])
            for c, proc in procs.items():
                assert proc.stdin
                proc.stdin.write("END\n")
                proc.stdin.flush()
                out = self.line_of(proc)
                if not out.startswith("{"):
                    return self.failed(c, "cycle", f"failed ({out!r}, interleaved)")
                results[c] = json.loads(out)
        finally:
            for proc in procs.values():
                # After a failure the other contestant still waits for a line: the end of its
                # input ends it now, not after a minute (found by an adversarial review).
                try:
                    if proc.stdin:
                        proc.stdin.close()
                except OSError:
                    pass
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        rust, other = results[base], results[contestant]
        for c, x in ((base, rust), (contestant, other)):
            x.update(contestant=c + self.suffix, workload="cycle", params=[cycles], round=round_name,
                     throughput=x["ops"] / x["seconds"])
            self.results.append(x)
        other.update(rust_ms=rust["median_ms"], burst_ratios=ratios)
        print(f"  {contestant:<17} interleaved with {base}: {other['median_ms']:.3f} vs {rust['median_ms']:.3f} ms "
              f"= {other['median_ms'] / rust['median_ms']:.2f}x (bursts: median {statistics.median(ratios):.2f})",
              flush=True)
        return other

    def line_of(self, proc: subprocess.Popen) -> str:
        """The contestant's next line, or "" once `--limit` seconds passed (then it is killed)."""
        assert proc.stdout
        watchdog = threading.Timer(self.args.limit, proc.kill)
        watchdog.start()
        line = proc.stdout.readline().strip()
        watchdog.cancel()
        return line

    def failed(self, contestant: str, workload: str, why: str) -> None:
        print(f"  {contestant} {workload}: {why}", flush=True)
        self.failures.append(f"{contestant} {workload}: {why}")
        return None


def prepare(args: argparse.Namespace) -> None:
    """Installs every contestant the way its users would."""
    work = ROOT / "target" / "bench"
    work.mkdir(parents=True, exist_ok=True)
    venv = work / "venv"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--force-reinstall", "--no-deps", args.wheel], check=True)
    # The chart needs matplotlib; a smoke run (--quick) draws none and spares its install.
    chart = [] if args.quick else ["matplotlib"]
    subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "kazoo==2.10.0", *chart], check=True)
    node = work / "node"
    node.mkdir(exist_ok=True)
    if not (node / "package.json").exists():
        subprocess.run(["npm", "init", "-y"], cwd=node, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", args.npm_tarball], cwd=node, check=True)
    (node / "zkrecipes_node.js").write_text((BENCH / "contestants" / "zkrecipes_node.js").read_text())
    support = BENCH / "contestants" / "BenchSupport.java"
    for name, cp, source in (("java-zkrecipes", args.jar, "ZkrecipesJava.java"),
                             ("java-apache", args.apache_cp, "ApacheJava.java"),
                             ("java-curator", args.curator_cp, "CuratorJava.java")):
        subprocess.run(["javac", "-nowarn", "-d", str(work / name), "-cp", cp, str(support),
                        str(BENCH / "contestants" / source)], check=True)


# Who runs which workloads: every library with the recipe, those with a try-lock and a read/write
# lock (not Apache's), and those with Curator's semaphore, latch, atomic long and cache layouts.
PEERS = ["zkrecipes-rust", "apache", "curator", "kazoo"]
NOT_APACHE = ["zkrecipes-rust", "curator", "kazoo"]
CURATOR_LAYOUTS = ["zkrecipes-rust", "curator"]
SCALE_LANGUAGES = ["zkrecipes-rust", "zkrecipes-python", "kazoo", "zkrecipes-node", "zkrecipes-java"]
HERD_CONTESTANTS = ["zkrecipes-rust", "zkrecipes-python", "kazoo", "zkrecipes-java", "curator"]


# What section 12's memory figures measure, for the console and results.md.
CACHE_MEMORY = ("growth per node cached, from before the first cache of the process started to once it is "
                "loaded and held. heap: the bytes live on the heap (zkrecipes-rust: allocated and not freed, "
                "counted by the bench's allocator; curator: the JVM's heap used after System.gc(); kazoo: "
                "tracemalloc, of a second cache loaded alone). rss: the process's resident memory (kazoo after "
                "gc.collect(), curator after System.gc()), what the runtime keeps of it included")


def median_of(results: List[dict], key: str) -> float:
    return statistics.median(r[key] for r in results)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--connect", required=True)
    parser.add_argument("--wheel", required=True)
    parser.add_argument("--npm-tarball", required=True)
    parser.add_argument("--jar", required=True)
    parser.add_argument("--kotlin-cp", required=True, help="the Kotlin JAR, its dependencies and its test classes")
    parser.add_argument("--apache-cp", required=True)
    parser.add_argument("--curator-cp", required=True)
    parser.add_argument("--rust-bench", default=str(ROOT / "target" / "release" / "zkrecipes-bench"),
                        help="the zkrecipes-bench binary (a release build)")
    parser.add_argument("--quick", action="store_true", help="smaller counts (a smoke run)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when any contestant errors or gives no figure (the smoke run of make test)")
    parser.add_argument("--limit", type=float, default=150.0, help="seconds a measured run may take")
    parser.add_argument("--sections", default="1,2,3,4,5,6,7,8,9,10,11,12,13,14", help="which sections to run, e.g. 8")
    parser.add_argument("--secure-plain", help="section 10: the plain port of the TLS server (tests/with-secure-zk)")
    parser.add_argument("--secure-tls", help="section 10: its TLS port (localhost:PORT)")
    parser.add_argument("--secure-certs", help="section 10: the directory of its ca.pem")
    parser.add_argument("--out-dir", default=str(BENCH), help="where results.{md,png,json} go")
    args = parser.parse_args()
    global OUT
    OUT = Path(args.out_dir)
    OUT.mkdir(parents=True, exist_ok=True)
    prepare(args)
    # Every contestant runs this many unmeasured cycles first (ZKRECIPES_BENCH_WARMUP), the same
    # number in every language: with 50, the JVM contestants were measured while their JIT was
    # still compiling (Kotlin's coroutine machinery most of all: 2.4x Rust's median, 1.1x after
    # 1,000). After 1,000, Kotlin's calling thread still spent 1.6x the CPU per cycle it spends
    # after 3,000 (perf stat, 2,000 measured cycles): part of its code was not compiled yet.
    # A smoke run only checks that the workloads work.
    os.environ["ZKRECIPES_BENCH_WARMUP"] = "50" if args.quick else "3000"
    r = Runner(args, args.connect)
    cycles = 300 if args.quick else 2000
    # --quick keeps every workload of every contestant, each with counts just big enough to run.
    # (one size in a smoke run: the growth with N needs figures, not a smoke run).
    sizes = [400] if args.quick else [1000, 5000, 10000]

    want = {int(x) for x in args.sections.split(",")}
    if not args.quick:
        # The server's JVM warms up on whatever runs first: give it a throwaway run.
        print("\nwarm-up (not reported)", flush=True)
        r.each(["zkrecipes-rust", "curator"], "cycle", cycles)
        r.results.clear()
    if 1 in want:
        print("\n1. uncontended acquire + release", flush=True)
        r.each(PEERS, "cycle", cycles)
    overhead: Dict[str, List[dict]] = {}
    if 7 in want:
        # The server's fsync time drifts by tens of percent over seconds on a VM, more than the
        # overhead measured. Runs of one contestant after the other, even a binding's between two
        # Rust runs, put seconds of process start and warm-up between what is compared: single
        # rounds ranged from 0.47x to 1.52x, and a median of nine still moved by 0.1 between runs.
        # So both processes are started and warmed up first, and then take turns in bursts of
        # tens of milliseconds; a pair of processes gives one ratio, of their medians. Two Rust
        # processes measured so gave 0.96-1.04 over five pairs.
        pairs, bursts = (1, 4) if args.quick else (7, 30)
        print(f"\n7. binding overhead (workload 1; {pairs} pair(s) of processes, each binding and Rust "
              f"taking turns in {bursts} bursts each)", flush=True)
        for _ in range(pairs):
            for c in ["zkrecipes-python", "zkrecipes-node", "zkrecipes-java", "zkrecipes-kotlin"]:
                res = r.interleaved(c, cycles // 2 if not args.quick else 40, bursts)
                if res:
                    overhead.setdefault(c, []).append(res)
                    overhead.setdefault("zkrecipes-rust", []).append(r.results[-2])
    if 2 in want:
        print("\n2. try-acquire on a lock held by another client", flush=True)
        r.each(NOT_APACHE, "try", 1000 if not args.quick else 200)
    if 3 in want:
        print("\n3. contended: 8 clients x 200 acquisitions", flush=True)
        for c in PEERS:
            # Apache's contestant gives up on stranded waiters after the seconds given
            # (a minute for figures; a smoke run only needs to see it run).
            patience = [3 if args.quick else 60] if c == "apache" else []
            # The target compares zkrecipes with Curator: both are the median of three runs.
            run = r.steady if c in ("zkrecipes-rust", "curator") else r.run
            run(c, "contended", 200 if not args.quick else 50, *patience)
    if 4 in want:
        print("\n4. read-heavy read/write lock: 8 readers + 1 writer", flush=True)
        r.each(NOT_APACHE, "rw", 200 if not args.quick else 50)
    if 5 in want:
        print("\n5. queue drain (offering is set-up)", flush=True)
        for n in sizes:
            for c in PEERS:
                # One consumer against four is a target: both zkrecipes drains of N = 10,000 are
                # the median of three runs.
                run = r.steady if c == "zkrecipes-rust" and n == sizes[-1] else r.run
                run(c, "queue", n)
        for c in NOT_APACHE:
            run = r.steady if c == "zkrecipes-rust" else r.run
            run(c, "queue", sizes[-1], 4)
        # Batched takes (poll_many of 100): one claim transaction per batch.
        r.run("zkrecipes-rust", "queue", sizes[-1], 1, 100)
    if 6 in want:
        print("\n6. election: leader stop() -> next leader elected", flush=True)
        r.each(PEERS, "election", 20 if not args.quick else 5)
    if 11 in want:
        print("\n11. semaphore acquire + release (one lease of 3); leader latch hand-over", flush=True)
        r.each(CURATOR_LAYOUTS, "semaphore", cycles)
        r.each(CURATOR_LAYOUTS, "latch", 20 if not args.quick else 5)
    if 12 in want:
        # A smoke run (--quick): 4 x 25 increments, a 10 x 100 tree loaded once, 20 changes.
        increments = 25 if args.quick else 1000
        parents, children, rounds = (10, 100, 1) if args.quick else (100, 100, 5)
        print(f"\n12. shared state: atomic long (4 clients x {increments} increments); tree cache of "
              f"{parents} x {children} nodes: initial load ({rounds} round(s)), memory per node, "
              "setData -> CHANGED", flush=True)
        r.each(CURATOR_LAYOUTS, "atomic", increments, 4)
        r.each(NOT_APACHE, "cache", parents, children, rounds)
        print(f"  memory per node: {CACHE_MEMORY}", flush=True)
        r.each(CURATOR_LAYOUTS, "cacheevents", 20 if args.quick else 200, parents, children)

    if 9 in want:
        print("\n9. at-least-once work queue (claim, then acknowledge)", flush=True)
        n = sizes[-1]
        r.run("zkrecipes-rust", "offerall", n)
        for consumers, prefetch in [(1, 1), (1, 64), (4, 64)]:
            r.run("zkrecipes-rust", "workqueue", n, consumers, prefetch)
        # Jobs that take 2 ms each (one in hand per consumer): what more consumers buy.
        for consumers in [1, 4]:
            r.run("zkrecipes-rust", "workqueue", n // 5, consumers, 64, 2)
        for consumers in [1, 4]:
            r.run("kazoo", "workqueue", n // 5, consumers)
        if not any(x["workload"] == "queue" and x["contestant"] == "apache" for x in r.results):
            r.run("apache", "queue", n)
    if 10 in want and not args.secure_tls:
        print("\n10. over TLS: skipped (no --secure-tls; `make bench` starts the secured servers)", flush=True)
    if 10 in want and args.secure_tls:
        print("\n10. over TLS against plain, on one server (Netty, plain and TLS ports)", flush=True)
        ca = str(Path(args.secure_certs) / "ca.pem")
        plain_port = int(args.secure_plain.split(":")[1])
        curator_tls = ["-Dzookeeper.client.secure=true",
                       "-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
                       f"-Dzookeeper.ssl.trustStore.location={ca}", "-Dzookeeper.ssl.trustStore.type=PEM"]
        plain = Runner(args, args.secure_plain, suffix="@plain")
        tls = Runner(args, args.secure_tls, mntr_port=plain_port, env={"ZKRECIPES_BENCH_TLS_CA": ca},
                     jvm_options=curator_tls, suffix="@tls")
        curator_plain = Runner(args, args.secure_plain, suffix="@plain")
        # Alternating rounds, each row the median of five: one drain of 1,000 items lasts a
        # third of a second, and the server's fsync time moved one round's ratio by up to 2x.
        for _ in range(1 if args.quick else 5):
            for runner in (plain, tls):
                runner.run("zkrecipes-rust", "cycle", cycles // 2)
                # The smoke run (--quick) checks that TLS works for us and Curator; the rest is for figures.
                if not args.quick:
                    runner.run("zkrecipes-rust", "queue", sizes[0])
        for runner in (plain, tls):
            runner.run("zkrecipes-rust", "connect", 20 if args.quick else 200)
        if not args.quick:
            curator_plain.run("curator", "cycle", cycles // 2)
        tls.run("curator", "cycle", cycles // 2)
        for runner in (plain, tls, curator_plain):
            r.results.extend(runner.results)
            r.failures.extend(runner.failures)
    if 14 in want:
        print("\n14. service discovery (Curator's registry): register + unregister; queryForInstances of 20 "
              "instances; an update -> another client's service cache holds it", flush=True)
        # A smoke run (--quick) only checks that the workloads work: 30 of each.
        discovery_ops = 30 if args.quick else cycles
        r.each(CURATOR_LAYOUTS, "register", discovery_ops)
        r.each(CURATOR_LAYOUTS, "discover", discovery_ops, 20)
        r.each(CURATOR_LAYOUTS, "servicecache", 20 if args.quick else 200)
    if 13 in want:
        # The same Rust contestant with metrics recorded and events forwarded at info, against
        # neither, taking turns as section 7's pairs do; and the queue drain, alternating.
        print("\n13. observability overhead: metrics on and events at info, against both off", flush=True)
        pairs, bursts = (1, 4) if args.quick else (5, 30)
        for _ in range(pairs):
            r.interleaved("zkrecipes-rust-observed", cycles // 2 if not args.quick else 40, bursts,
                          base="zkrecipes-rust-unobserved", round_name="observability")
        for _ in range(1 if args.quick else 3):
            for c in ("zkrecipes-rust-unobserved", "zkrecipes-rust-observed"):
                x = r.run(c, "queue", sizes[-1])
                if x:
                    x["round"] = "observability"
    if 8 in want:
        print("\n8. scale: lock objects made and dropped, locks held at once, waiters, deep queue", flush=True)
        objects = 2000 if args.quick else 100000
        held = 100 if args.quick else 10000
        # Node gives memory back only after idling: 8 s of it for figures, 1 s for a smoke run.
        node_idle = [1 if args.quick else 8]
        for c in SCALE_LANGUAGES:
            r.run(c, "objects", objects, *(node_idle if c == "zkrecipes-node" else []))
        for c in ["zkrecipes-node", "zkrecipes-java"]:
            r.run(c, "baseline", objects, *(node_idle if c == "zkrecipes-node" else []))
        r.each(SCALE_LANGUAGES + ["curator"], "held", held)
        for w in ([50] if args.quick else [50, 200, 1000]):
            r.each(HERD_CONTESTANTS, "herd", w)
        r.each(["zkrecipes-rust", "kazoo"], "size", 10000 if args.quick else 100000)

    (OUT / "results.json").write_text(json.dumps(r.results, indent=1))
    write_markdown(r.results, overhead, sizes)
    # matplotlib lives in the bench virtualenv, not necessarily beside this interpreter.
    if not args.quick:
        subprocess.run([str(ROOT / "target" / "bench" / "venv" / "bin" / "python"), __file__, "--chart-only",
                        str(OUT)], check=False)
    print(f"\nwrote {OUT / 'results.md'}{'' if args.quick else ', results.png'} and results.json")
    if r.failures:
        print(f"\n{len(r.failures)} run(s) failed:", *r.failures, sep="\n  ", file=sys.stderr)
        return 1 if args.strict else 0
    return 0


def find(results: List[dict], contestant: str, workload: str, params: Optional[list] = None) -> Optional[dict]:
    for x in results:
        if x["contestant"] == contestant and x["workload"] == workload and x.get("round") not in ("overhead", "repeat") \
                and (params is None or x["params"] == params):
            return x
    return None


def runs_of(x: dict) -> str:
    """A kept median's three runs, as a table cell's note."""
    return f" (median of {', '.join(f'{v:.0f}' for v in x['repeats'])})" if len(x.get("repeats", [])) > 1 else ""


def fmt(v: Optional[float], digits: int = 2) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def vs_rust(results: List[dict], workload: str, contestants: List[str], cells: Callable[[str, dict], str],
            key: str = "median_ms") -> List[str]:
    """A table row per contestant that ran `workload`: `cells(contestant, its result)`, then its
    `key` as a multiple of zkrecipes-rust's (the last column, "vs zkrecipes")."""
    base = find(results, "zkrecipes-rust", workload)
    rows = []
    for c in contestants:
        x = find(results, c, workload)
        if x:
            ratio = x[key] / base[key] if base else None
            rows.append(f"| {cells(c, x)} | {fmt(ratio)}× |")
    return rows


def observability_markdown(results: List[dict]) -> List[str]:
    """Section 13: the cost of metrics and events at info (target: at most 3% slower)."""
    runs = [x for x in results if x.get("round") == "observability"]
    if not runs:
        return []
    lines = ["", "## 13. Observability overhead", "",
             "The Rust contestant with every metric recorded and events forwarded at info (formatted as a "
             "log line each), against the same with neither. Cycle: both processes take turns in bursts, as "
             "in section 7; drain: runs alternate. Target: at most 3% slower.", "",
             "| workload | runs | off | on | on / off |", "|---|---|---|---|---|"]
    observed = [x for x in runs if x["contestant"].startswith("zkrecipes-rust-observed") and x["workload"] == "cycle"]
    if observed:
        ratios = [x["median_ms"] / x["rust_ms"] for x in observed]
        lines.append(f"| uncontended cycle (median ms) | {len(observed)} pairs | "
                     f"{statistics.median(x['rust_ms'] for x in observed):.3f} | "
                     f"{statistics.median(x['median_ms'] for x in observed):.3f} | {statistics.median(ratios):.3f} |")
    drains = {c: [x["seconds"] for x in runs if x["workload"] == "queue" and x["contestant"].startswith(c)]
              for c in ("zkrecipes-rust-unobserved", "zkrecipes-rust-observed")}
    off, on = drains["zkrecipes-rust-unobserved"], drains["zkrecipes-rust-observed"]
    if off and on:
        lines.append(f"| queue drain of {runs[-1]['params'][0]:,} (median s) | {len(on)} each | {statistics.median(off):.3f} | "
                     f"{statistics.median(on):.3f} | {statistics.median(on) / statistics.median(off):.3f} |")
    return lines


def write_markdown(results: List[dict], overhead: Dict[str, List[dict]], sizes: List[int]) -> None:
    lines = ["# Benchmark results", "",
             f"One ZooKeeper 3.9 standalone server on loopback (the harness), {time.strftime('%Y-%m-%d')}; "
             "requests per operation from the server's `mntr` `zk_packets_received` over the measured part. "
             "Reproduce with `make bench`.", ""]
    lines += ["## 1. Uncontended acquire + release", "",
              "| contestant | median ms | p99 ms | cycles/s | requests/cycle | median vs zkrecipes |", "|---|---|---|---|---|---|"]
    lines += vs_rust(results, "cycle", PEERS, lambda c, x: f"{c} | {fmt(x['median_ms'], 3)} | {fmt(x['p99_ms'], 3)} | "
                     f"{x['throughput']:.0f} | {x['requests_per_op']:.2f}")
    lines += observability_markdown(results)
    lines += ["", "## 7. Binding overhead (workload 1)", "",
              "Each binding's process and a Rust contestant's, both started and warmed up, run the uncontended "
              "cycle in turns, in bursts of tens of milliseconds (the server's fsync time drifts more over the "
              "seconds between two runs than the bindings differ); a pair of processes gives the ratio of its "
              "two medians, and the table shows the median over the pairs.", "",
              "| binding | pairs | median ms | ratio to Rust (median over pairs) | ratios of the pairs |",
              "|---|---|---|---|---|"]
    if "zkrecipes-rust" in overhead:
        rust = overhead["zkrecipes-rust"]
        # Its median is over the Rust processes of every pair; each binding's ratio is to its own partner's.
        lines.append(f"| rust (every pair) | {len(rust)} | {median_of(rust, 'median_ms'):.3f} | 1.00 | – |")
        for c, runs in overhead.items():
            if c == "zkrecipes-rust":
                continue
            ratios = [x["median_ms"] / x["rust_ms"] for x in runs]
            lines.append(f"| {c.split('-')[1]} | {len(runs)} | {median_of(runs, 'median_ms'):.3f} | "
                         f"{statistics.median(ratios):.2f} | {', '.join(f'{q:.2f}' for q in ratios)} |")
    lines += ["", "## 2. Try-acquire on a held lock", "", "| contestant | median ms | requests/try |", "|---|---|---|"]
    for c in NOT_APACHE:
        x = find(results, c, "try")
        if x:
            lines.append(f"| {c} | {fmt(x['median_ms'], 3)} | {x['requests_per_op']:.2f} |")
    lines.append("| apache | – | – (Apache's `WriteLock` has no try-lock: `lock()` leaves a waiting node) |")
    lines += ["", "## 3. Contended: 8 clients × 200 acquisitions", "",
              "| contestant | hand-offs/s | requests/acquisition | fairness (last/first client to finish) |", "|---|---|---|---|"]
    for c in PEERS:
        x = find(results, c, "contended")
        if x:
            finish = [f for f in x.get("finish_s", []) if f > 0]
            fairness = max(finish) / min(finish) if finish else None
            stranded = f" ({x['stranded']} waiter(s) stranded)" if x.get("stranded") else ""
            lines.append(f"| {c}{stranded} | {x['throughput']:.0f}{runs_of(x)} | {x['requests_per_op']:.2f} | {fmt(fairness)} |")
    x = find(results, "zkrecipes-rust", "contended")
    if x and "handoff_median_ms" in x:
        lines += ["", "Where a zkrecipes hand-off's time goes (median over the hand-offs; server counters over the run):", "",
                  "| hand-off: release called → next acquire returns | the release's delete round trip | "
                  "after it: notification + the waiter's confirming read | server fsyncs per acquisition | "
                  "server's mean fsync | requests per acquisition |", "|---|---|---|---|---|---|",
                  f"| {x['handoff_median_ms']:.3f} ms | {x['release_median_ms']:.3f} ms | "
                  f"{x['handoff_median_ms'] - x['release_median_ms']:.3f} ms | {x['fsyncs_per_op']:.2f} | "
                  f"{x.get('fsync_mean_ms', 0):.3f} ms | {x['requests_per_op']:.2f} |"]
    lines += ["", "## 4. Read-heavy read/write lock: 8 readers + 1 writer", "",
              "| contestant | lock ops/s | reads | writer median ms | writer p99 ms |", "|---|---|---|---|---|"]
    for c in NOT_APACHE:
        x = find(results, c, "rw")
        if x:
            lines.append(f"| {c} | {x['throughput']:.0f} | {x['reads']} | {fmt(x['writer']['median_ms'], 3)} | "
                         f"{fmt(x['writer']['p99_ms'], 3)} |")
    lines += ["", "## 5. Queue drain", "", "| contestant | consumers | N | items/s | requests/item | ms/item |",
              "|---|---|---|---|---|---|"]
    for c in PEERS:
        for n in sizes:
            x = find(results, c, "queue", [n])
            if x:
                lines.append(f"| {c} | 1 | {n} | {x['throughput']:.0f}{runs_of(x)} | {x['requests_per_op']:.2f} | "
                             f"{1000 * x['seconds'] / n:.3f} |")
        x = find(results, c, "queue", [sizes[-1], 4])
        if x:
            lines.append(f"| {c} | 4 | {sizes[-1]} | {x['throughput']:.0f}{runs_of(x)} | {x['requests_per_op']:.2f} | "
                         f"{1000 * x['seconds'] / sizes[-1]:.3f} |")
        x = find(results, c, "queue", [sizes[-1], 1, 100])
        if x:
            lines.append(f"| {c}, `poll_many(100)` | 1 | {sizes[-1]} | {x['throughput']:.0f} | "
                         f"{x['requests_per_op']:.2f} | {1000 * x['seconds'] / sizes[-1]:.3f} |")
    x = find(results, "zkrecipes-rust", "queue", [sizes[-1], 4])
    if x and "overtaken_max" in x:
        runs = x.get("overtaken_runs", [x["overtaken_max"]])
        each = f" (worst of {len(runs)} runs: {', '.join(map(str, runs))})" if len(runs) > 1 else ""
        lines += ["", f"Order with 4 consumers (zkrecipes): the most later items delivered before any one item was "
                      f"{max(runs)}{each}; README's bound in practice is (CLAIM_WINDOW − 1) × consumers = 12."]
    lines += ["", "Growth of the drain time from N = %d to N = %d (linear = %.0f×):" % (sizes[0], sizes[-1], sizes[-1] / sizes[0]), ""]
    for c in PEERS:
        small, big = find(results, c, "queue", [sizes[0]]), find(results, c, "queue", [sizes[-1]])
        if small and big:
            lines.append(f"- {c}: {big['seconds'] / small['seconds']:.1f}×")
    rust_big, apache_big = find(results, "zkrecipes-rust", "queue", [sizes[-1]]), find(results, "apache", "queue", [sizes[-1]])
    if rust_big and apache_big:
        lines += ["", f"zkrecipes drains N = {sizes[-1]} {apache_big['seconds'] / rust_big['seconds']:.1f}× faster than Apache's `DistributedQueue`."]
    lines += ["", "## 6. Election: leader `stop()` → next leader elected", "", "| contestant | median ms | p99 ms |", "|---|---|---|"]
    for c in PEERS:
        x = find(results, c, "election")
        if x:
            lines.append(f"| {c} | {fmt(x['median_ms'], 3)} | {fmt(x['p99_ms'], 3)} |")
    lines += ["", "## 11. Semaphore and leader latch (Curator's layouts, both libraries on one path interoperate)", "",
              "| workload | contestant | median ms | p99 ms | requests/op | median vs zkrecipes |", "|---|---|---|---|---|---|"]
    for workload, what in [("semaphore", "semaphore acquire + release (1 lease of 3)"),
                           ("latch", "latch hand-over: leader close() → next leader")]:
        lines += vs_rust(results, workload, CURATOR_LAYOUTS, lambda c, x: f"{what} | {c} | {fmt(x['median_ms'], 3)} | "
                         f"{fmt(x['p99_ms'], 3)} | {x['requests_per_op']:.2f}")
    lines += ["", "## 14. Service discovery (Curator's registry and JSON; both libraries on one base path "
              "interoperate)", "",
              "| workload | contestant | median ms | p99 ms | requests/op | median vs zkrecipes |", "|---|---|---|---|---|---|"]
    for workload, what in [("register", "register + unregister (one DYNAMIC instance)"),
                           ("discover", "queryForInstances, 20 instances"),
                           ("servicecache", "update → another client's service cache holds it")]:
        lines += vs_rust(results, workload, CURATOR_LAYOUTS, lambda c, x: f"{what} | {c} | {fmt(x['median_ms'], 3)} | "
                         f"{fmt(x['p99_ms'], 3)} | {x['requests_per_op']:.2f}")
    lines += ["", "## 12. Shared state: atomic long and tree cache (Curator's layouts; kazoo's `TreeCache` for the load)", "",
              "Atomic long: 4 clients, one session each, increment one counter at once; a version conflict is "
              "retried at once until the write applies (Curator's `DistributedAtomicLong` in optimistic mode, "
              "`RetryNTimes(100000, 0)`). Checked: the returned values are exactly 1..N and the final value N.", "",
              "| contestant | clients × increments | increments/s | median ms | p99 ms | requests/increment | final value | "
              "increments/s vs zkrecipes |", "|---|---|---|---|---|---|---|---|"]
    lines += vs_rust(results, "atomic", CURATOR_LAYOUTS, lambda c, x: f"{c} | {x['clients']} × {x['ops'] // x['clients']} | "
                     f"{x['throughput']:.0f} | {fmt(x['median_ms'], 3)} | {fmt(x['p99_ms'], 3)} | "
                     f"{x['requests_per_op']:.2f} | {x['final']}", key="throughput")
    lines += ["", "Tree cache, initial load: from building the cache (`Cache::tree`, `CuratorCache.build`, "
              "`TreeCache`) to loaded (`start()` returned, `initialized()`, `INITIALIZED`), on a tree of P × C "
              "leaves under P parents (data ≤ 10 bytes; nodes counts the root and the parents). The median is over "
              "the rounds after one cold load; requests per node over the rounds.", "",
              "| contestant | nodes | rounds | median ms | rounds ms | cold load ms | requests/node | median vs zkrecipes |",
              "|---|---|---|---|---|---|---|---|"]
    lines += vs_rust(results, "cache", NOT_APACHE, lambda c, x: f"{c} | {x['nodes']} | {x['rounds']} | "
                     f"{fmt(x['median_ms'], 1)} | {', '.join(f'{v:.0f}' for v in x['rounds_ms'])} | "
                     f"{x['cold_ms']:.0f} | {x['requests_per_op']:.2f}")
    lines += ["", f"Memory per cached node: {CACHE_MEMORY}.", "",
              "| contestant | nodes | heap bytes per node | RSS bytes per node |", "|---|---|---|---|"]
    for c in NOT_APACHE:
        x = find(results, c, "cache")
        if x:
            lines.append(f"| {c} | {x['nodes']} | {x['heap_bytes_per_node']:.0f} | {x['rss_bytes_per_node']:.0f} |")
    lines += ["", "Event latency: from another client's (session's) `setData` of a leaf to the tree cache's CHANGED "
              "event of that leaf with the new data, one change after another, each on a different leaf.", "",
              "| contestant | nodes cached | changes | median ms | p99 ms | requests/change | median vs zkrecipes |",
              "|---|---|---|---|---|---|---|"]
    lines += vs_rust(results, "cacheevents", CURATOR_LAYOUTS, lambda c, x: f"{c} | {x['nodes']} | {x['ops']} | "
                     f"{fmt(x['median_ms'], 3)} | {fmt(x['p99_ms'], 3)} | {x['requests_per_op']:.2f}")
    lines += ["", "## 9. At-least-once work queue", "",
              "Drain of N items: claim (prefetch P per transaction), then acknowledge (acks of one consumer "
              "in flight at once are committed together). kazoo's `LockingQueue`: get + consume per item. "
              "Apache's `DistributedQueue` (section 5) deletes on take, no acknowledgement.", "",
              "| contestant | consumers | prefetch | work per job | N | items/s | requests/item | fsyncs/item | vs Apache |",
              "|---|---|---|---|---|---|---|---|---|"]
    apache = find(results, "apache", "queue", [sizes[-1]])
    for x in [x for x in results if x["workload"] == "workqueue"]:
        consumers = x["params"][1]
        prefetch = x["params"][2] if len(x["params"]) > 2 else "–"
        work = f"{x['params'][3]} ms" if len(x["params"]) > 3 else "–"
        ratio = f"{x['throughput'] / apache['throughput']:.1f}×" if apache else "–"
        lines.append(f"| {x['contestant']} | {consumers} | {prefetch} | {work} | {x['ops']} | "
                     f"{x['throughput']:.0f} | {x['requests_per_op']:.2f} | {x.get('fsyncs_per_op', 0):.3f} | {ratio} |")
    if apache:
        lines += ["", f"Apache's `DistributedQueue` in this run: {apache['throughput']:.0f} items/s, "
                      f"{apache['requests_per_op']:.2f} requests and {apache.get('fsyncs_per_op', 0):.3f} fsyncs per item."]
    x = find(results, "zkrecipes-rust", "offerall")
    if x:
        lines += ["", f"`offer_all` in calls of 1,000 items: {x['throughput']:.0f} items/s, "
                      f"{x['requests_per_op']:.3f} requests and {x.get('fsyncs_per_op', 0):.3f} fsyncs per item."]
    tls_rows = []

    def rounds(contestant: str, workload: str, key: str) -> Optional[float]:
        runs = [x for x in results if x["contestant"] == contestant and x["workload"] == workload]
        return median_of(runs, key) if runs else None

    for workload, label, key in [("cycle", "lock cycle (median ms)", "median_ms"), ("queue", "queue drain (items/s)", "throughput"),
                                 ("connect", "connect + handshake (median ms)", "median_ms")]:
        plain, tls = rounds("zkrecipes-rust@plain", workload, key), rounds("zkrecipes-rust@tls", workload, key)
        if plain and tls:
            ratio = tls / plain if key == "median_ms" else plain / tls
            tls_rows.append(f"| zkrecipes-rust | {label} | {fmt(plain, 3)} | {fmt(tls, 3)} | {ratio:.2f}× |")
    plain, tls = find(results, "curator@plain", "cycle"), find(results, "curator@tls", "cycle")
    if plain and tls:
        tls_rows.append(f"| curator | lock cycle (median ms) | {fmt(plain['median_ms'], 3)} | {fmt(tls['median_ms'], 3)} | "
                        f"{tls['median_ms'] / plain['median_ms']:.2f}× |")
    if tls_rows:
        lines += ["", "## 10. Over TLS against plain (one Netty server, its plain and TLS ports)", "",
                  "Cost of TLS as a ratio, ≥ 1 is slower (lock cycle and queue drain: the medians of five alternating rounds; "
                  "connect includes the handshake and, on secured sessions, one `whoami`). The secured server runs with "
                  "`forceSync=no`: the disk's fsync time is the same on both ports and drowned the difference.", "",
                  "| contestant | workload | plain | TLS | TLS cost |", "|---|---|---|---|---|", *tls_rows]
    lines += ["", "## 8. Scale: memory per lock, per waiter; a deep queue", "",
              "Resident memory (RSS) of the contestant's process, measured inside it. *Per idle object*: growth per "
              "lock object made (no acquire); *retained*: what stays after dropping them all and collecting "
              "garbage (Node.js: after V8's idle heap shrinking, 8 s); *runtime alone*: the same for as many plain "
              "objects of the language, what the runtime itself keeps after such a burst.", "",
              "| contestant | objects | bytes per idle object | retained after drop + GC (MB) | runtime alone (MB) |",
              "|---|---|---|---|---|"]
    for c in SCALE_LANGUAGES:
        x = find(results, c, "objects")
        base = find(results, c, "baseline")
        alone = f"{base['retained_mb']:.1f}" if base else "–"
        if x:
            lines.append(f"| {c} | {x['ops']} | {x['bytes_per_object']:.0f} | {x['retained_mb']:.1f} | {alone} |")
    lines += ["", "*Per held lock*: growth per lock made, acquired and held at once by one client.", "",
              "| contestant | locks held | bytes per held lock (object + hold) | requests per acquisition |",
              "|---|---|---|---|"]
    for c in SCALE_LANGUAGES + ["curator"]:
        x = find(results, c, "held")
        if x:
            lines.append(f"| {c} | {x['ops']} | {x['bytes_per_held_lock']:.0f} | {x['requests_per_op']:.2f} |")
    lines += ["", "W waiters (threads; tasks in Rust) queued on one lock over 10 clients, then the chain of hand-offs:", "",
              "| contestant | W | bytes per waiter | process RSS while waiting (MB) | requests per hand-off |",
              "|---|---|---|---|---|"]
    for c in HERD_CONTESTANTS:
        for x in [x for x in results if x["contestant"] == c and x["workload"] == "herd"]:
            rss = f"{x['rss_mb']:.0f}" if "rss_mb" in x else "–"
            lines.append(f"| {c} | {x['ops']} | {x['bytes_per_waiter']:.0f} | {rss} | {x['requests_per_op']:.2f} |")
    lines += ["", "`size()` of a queue with a deep backlog (kazoo: `len(Queue)`):", "",
              "| contestant | backlog | median ms | p99 ms | requests per call |", "|---|---|---|---|---|"]
    for c in ["zkrecipes-rust", "kazoo"]:
        x = find(results, c, "size")
        if x:
            lines.append(f"| {c} | {x['backlog']} | {fmt(x['median_ms'], 3)} | {fmt(x['p99_ms'], 3)} | "
                         f"{x['requests_per_op']:.2f} |")
    (OUT / "results.md").write_text("\n".join(lines) + "\n")


def write_chart(results: List[dict]) -> None:
    sizes = sorted({x["params"][0] for x in results if x["workload"] == "queue" and len(x["params"]) == 1})
    try:
        import matplotlib  # type: ignore
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # type: ignore
    except ImportError:
        print("matplotlib missing: no chart", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    cyc = [(c, find(results, c, "cycle")) for c in PEERS]
    cyc = [(c, x) for c, x in cyc if x]
    axes[0].bar([c for c, _ in cyc], [x["median_ms"] for _, x in cyc], color=["#2a7", "#888", "#57a", "#c84"][:len(cyc)])
    axes[0].set_title("uncontended acquire+release: median ms")
    for i, (_, x) in enumerate(cyc):
        axes[0].text(i, x["median_ms"], f"{x['requests_per_op']:.1f} req", ha="center", va="bottom")
    for c in PEERS:
        pts = [(n, find(results, c, "queue", [n])) for n in sizes]
        pts = [(n, x["seconds"]) for n, x in pts if x]
        if pts:
            axes[1].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=c)
    axes[1].set_title("queue drain time (s) vs N, 1 consumer")
    axes[1].set_xlabel("N")
    axes[1].legend()
    el = [(c, find(results, c, "election")) for c in PEERS]
    el = [(c, x) for c, x in el if x]
    axes[2].bar([c for c, _ in el], [x["median_ms"] for _, x in el], color="#57a")
    axes[2].set_title("election hand-over: median ms")
    fig.tight_layout()
    fig.savefig(OUT / "results.png", dpi=90)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--report-only"]:
        # results.md again from results.json (after a change of the report itself).
        OUT = Path(sys.argv[2])
        saved = json.loads((OUT / "results.json").read_text())
        paired: Dict[str, List[dict]] = {}
        rounds_run = [x for x in saved if x.get("round") == "overhead"]  # section 13's are "observability"
        for i, x in enumerate(rounds_run):
            if x["contestant"] != "zkrecipes-rust" and "rust_ms" in x:
                paired.setdefault(x["contestant"], []).append(x)
                paired.setdefault("zkrecipes-rust", []).append(rounds_run[i - 1])
        write_markdown(saved, paired, sorted({x["params"][0] for x in saved if x["workload"] == "queue" and len(x["params"]) == 1}))
        sys.exit(0)
    if sys.argv[1:2] == ["--chart-only"]:
        OUT = Path(sys.argv[2])
        write_chart(json.loads((OUT / "results.json").read_text()))
        sys.exit(0)
    sys.exit(main())
