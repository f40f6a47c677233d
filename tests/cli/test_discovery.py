"""`zkrecipes register`, `discover` (with --watch and --prometheus-sd, read by a real
Prometheus) and `status` on Curator's service registry, against a real ZooKeeper."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import urllib.request
import uuid
from pathlib import Path

import pytest

from _cli_helpers import eventually

ROOT = Path(__file__).resolve().parents[2]
CLI = os.environ.get("ZKRECIPES_CLI", str(ROOT / "target/debug/zkrecipes"))
USAGE, DATA = 64, 65
# CMD for a registration kept until the test writes a line to it.
WAIT_FOR_A_LINE = [sys.executable, "-c", "import sys; print('up', flush=True); sys.stdin.readline()"]


def base_path() -> str:
    return f"/cli-services/{uuid.uuid4().hex[:8]}"


def run(*args: str, timeout: float = 60):
    return subprocess.run([CLI, *args], capture_output=True, timeout=timeout)


def register(base: str, name: str, id: str, port: int, *extra: str) -> subprocess.Popen:
    """A registrant whose CMD says `up` once registered and ends at a line on its stdin."""
    proc = subprocess.Popen([CLI, "register", name, "--base", base, "--id", id, "--address", "127.0.0.1",
                             "--port", str(port), *extra, "--", *WAIT_FOR_A_LINE],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert read_line(proc) == "up", proc.stderr.read() if proc.poll() is not None else ""
    return proc


def read_line(proc: subprocess.Popen, timeout: float = 30) -> str:
    """A line of proc's output within `timeout`, else a failure (proc killed)."""
    got: list = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not got:
        proc.kill()
        raise AssertionError(f"no line from {proc.args!r} within {timeout}s")
    return got[0].decode().rstrip("\n")


def finish(proc: subprocess.Popen) -> int:
    proc.stdin.write(b"done\n")
    proc.stdin.flush()
    return proc.wait(timeout=30)


def test_a_registered_instance_is_discovered_and_shown_by_status_until_its_command_ends():
    base = base_path()
    web = register(base, "api", "web-1", 9000, "--payload", '{"zone":"eu-1"}')
    try:
        assert run("discover", "--base", base).stdout == b"api\n"
        listed = run("discover", "api", "--base", base)
        assert listed.stdout == b'web-1 127.0.0.1:9000 {"zone":"eu-1"}\n', listed
        stored = json.loads(run("discover", "api", "--base", base, "--json").stdout)
        # Curator's JSON, as the registry holds it.
        assert list(stored) == ["name", "id", "address", "port", "sslPort", "payload",
                                "registrationTimeUTC", "serviceType", "uriSpec"]
        assert (stored["id"], stored["port"], stored["payload"], stored["serviceType"]) == \
            ("web-1", 9000, {"zone": "eu-1"}, "DYNAMIC")
        at_base = json.loads(run("status", base, "--json").stdout)
        assert at_base["services"] == [{"name": "api", "instances": 1}], at_base
        at_service = json.loads(run("status", f"{base}/api", "--json").stdout)
        (node,) = at_service["nodes"]
        assert (node["role"], node["name"], node["data"], node["session_state"], node["orphan"]) == \
            ("instance", "web-1", "127.0.0.1:9000", "alive", None), node
        text = run("status", f"{base}/api").stdout.decode()
        assert f"{base}/api: service, 1 instance" in text, text
        # Another registrant of the same id is refused at once, naming the live session.
        taken = run("register", "api", "--base", base, "--id", "web-1", "--address", "h", "--port", "1",
                    "--", "true")
        assert taken.returncode == USAGE and b"is registered by session" in taken.stderr, taken
    finally:
        assert finish(web) == 0
    assert run("discover", "api", "--base", base).stdout == b"", "unregistered when CMD ended"


@pytest.mark.parametrize("args, status, said", [
    (["--port", "70000"], USAGE, b"port is a port"),
    (["--port", "1", "--payload", "{not json"], DATA, b"the payload is not JSON"),
    (["--port", "1", "--type", "ephemeral"], USAGE, b"a service type is"),
    (["--port", "1", "--uri-spec", "{scheme"], USAGE, b"not closed"),
    (["--port", "1", "--id", "a/b"], USAGE, b"an instance id is a node name"),
])
def test_bad_registrations_are_refused_and_register_nothing(args, status, said):
    base = base_path()
    done = run("register", "api", "--base", base, "--address", "h", *args, "--", "true")
    assert done.returncode == status and said in done.stderr, done
    assert run("discover", "--base", base).stdout == b""


def test_discover_watch_prints_the_instances_then_every_change():
    base = base_path()
    first = register(base, "api", "a", 1)
    watch = subprocess.Popen([CLI, "discover", "api", "--base", base, "--watch", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        added = json.loads(read_line(watch))
        assert (added["event"], added["instance"]["id"]) == ("ADDED", "a")
        assert json.loads(read_line(watch)) == {"event": "INITIALIZED"}
        second = register(base, "api", "b", 2, "--spring")
        added = json.loads(read_line(watch))
        assert (added["event"], added["instance"]["id"]) == ("ADDED", "b")
        assert added["instance"]["payload"]["@class"] == \
            "org.springframework.cloud.zookeeper.discovery.ZookeeperInstance"
        # A registrant killed outright: its instance goes with its session.
        second.kill()
        second.wait(timeout=30)
        removed = json.loads(read_line(watch, timeout=60))
        assert (removed["event"], removed["instance"]["id"]) == ("REMOVED", "b")
    finally:
        watch.terminate()
        assert watch.wait(timeout=30) == 0
        finish(first)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="make setup-test installs prometheus")
def test_a_real_prometheus_finds_the_registered_instances_through_file_sd(tmp_path: Path):
    base, targets = base_path(), tmp_path / "zk-targets.json"
    prometheus_port = free_port()
    first = register(base, "api", "a", 9101)
    disabled_later = register(base, "web", "w", 9102, "--ssl-port", "9443")
    writer = subprocess.Popen([CLI, "discover", "--base", base, "--prometheus-sd", str(targets)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    config = tmp_path / "prometheus.yml"
    config.write_text(f"scrape_configs:\n  - job_name: zk\n    file_sd_configs:\n"
                      f"      - files: ['{targets}']\n")
    prometheus = None
    try:
        assert read_line(writer) == f"wrote 2 targets to {targets}"
        assert {g["labels"]["instance_id"]: g["targets"] for g in json.loads(targets.read_text())} == \
            {"a": ["127.0.0.1:9101"], "w": ["127.0.0.1:9102"]}
        prometheus = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
             f"--web.listen-address=127.0.0.1:{prometheus_port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def discovered():
            url = f"http://127.0.0.1:{prometheus_port}/api/v1/targets"
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    active = json.load(answer)["data"]["activeTargets"]
            except OSError:
                return None
            return sorted((t["labels"]["service"], t["labels"]["instance_id"], t["scrapeUrl"]) for t in active)

        assert eventually("Prometheus reads the file", discovered, timeout=120) == [
            ("api", "a", "http://127.0.0.1:9101/metrics"),
            ("web", "w", "http://127.0.0.1:9102/metrics"),
        ]
        # A change is written again, and Prometheus follows it.
        finish(disabled_later)
        assert read_line(writer) == f"wrote 1 targets to {targets}"
        eventually("Prometheus drops the unregistered instance",
                   lambda: discovered() == [("api", "a", "http://127.0.0.1:9101/metrics")], timeout=120)
    finally:
        if prometheus:
            prometheus.terminate()
            prometheus.wait(timeout=30)
        writer.terminate()
        assert writer.wait(timeout=30) == 0
        finish(first)
    unwritable = run("discover", "--base", base, "--prometheus-sd", str(tmp_path / "no" / "such" / "dir.json"))
    assert unwritable.returncode == 73 and b"writing" in unwritable.stderr, unwritable


def test_a_registration_the_server_refuses_again_stops_cmd_with_79():
    """The service's node loses its CREATE grant, then an operator deletes the instance: the
    registration cannot be made again, so CMD is stopped as on a lost lock (79)."""
    from kazoo.client import KazooClient
    from kazoo.security import make_acl

    base = base_path()
    admin = KazooClient(hosts=os.environ["ZK_CONNECT"], auth_data=[("digest", "admin:secret")])
    admin.start(timeout=30)
    try:
        admin.ensure_path(f"{base}/api")
        proc = register(base, "api", "web-1", 9000)
        locked = [make_acl("auth", "", all=True), make_acl("world", "anyone", read=True)]
        admin.set_acls(f"{base}/api", locked)
        admin.delete(f"{base}/api/web-1")
        try:
            status = proc.wait(timeout=30)
        finally:
            proc.kill()
        stderr = proc.stderr.read()
        assert status == 79 and b"can no longer be registered" in stderr and b"NO_AUTH" in stderr, (status, stderr)
        assert admin.get_children(f"{base}/api") == [], "nothing left behind"
    finally:
        admin.stop()
        admin.close()
