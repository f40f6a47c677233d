"""Runs against the *installed* wheel and a real ZooKeeper.

The server is `ZK_CONNECT` when set, otherwise one started by the project's
harness binary (`zk-harness serve`, path in `ZK_HARNESS`)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Callable, Iterator

import pytest

import zkrecipes

REPO = Path(__file__).resolve().parents[2]

# `--import-mode=importlib` leaves sys.path alone, so without this the test modules could not
# import the helpers that stand beside them (_helpers.py).
HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def pytest_configure(config: pytest.Config) -> None:
    installed = Path(zkrecipes.__file__).resolve()
    if REPO / "python" in installed.parents:
        raise RuntimeError(f"tests must run against the installed wheel, not {installed}")


@pytest.fixture(scope="session")
def zk_connect() -> Iterator[str]:
    if os.environ.get("ZK_CONNECT"):
        yield os.environ["ZK_CONNECT"]
        return
    harness = os.environ.get("ZK_HARNESS", str(REPO / "target" / "debug" / "zk-harness"))
    proc = subprocess.Popen([harness, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    # ZooKeeper is a JVM: slow to start on a loaded machine, but a harness
    # that never answers must fail the run, not hang it.
    got: list = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(180)
    if not got:
        proc.kill()
        pytest.fail("zk-harness serve printed no ZK_CONNECT within 180 s")
    line = got[0].strip()
    assert line.startswith("ZK_CONNECT="), line
    try:
        yield line.split("=", 1)[1]
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


@pytest.fixture(scope="session")
def secure() -> Iterator[dict]:
    """Secured servers of `zk-harness serve --secure`: `tls` (client certificate optional, SASL
    DIGEST-MD5 users alice and bob), `strict` (client certificate and SASL required), `plain`
    (the plain port of the first), `certs` (the certificate directory), `krb5` (a server that
    requires Kerberos) with `krb5_config`, `krb5_keytab` and `krb5_principal`, and another client's
    `krb5_second_keytab` and `krb5_second_principal`."""
    if os.environ.get("ZK_TLS_CONNECT"):
        # Started by tests/with-secure-zk (`make test` starts one set for every suite).
        yield {
            "tls": os.environ["ZK_TLS_CONNECT"],
            "strict": os.environ["ZK_TLS_STRICT_CONNECT"],
            "plain": os.environ["ZK_SECURE_PLAIN_CONNECT"],
            "certs": Path(os.environ["ZK_CERTS"]),
            "krb5": os.environ["ZK_KRB5_CONNECT"],
            "krb5_config": os.environ["ZK_KRB5_CONFIG"],
            "krb5_keytab": os.environ["ZK_KRB5_KEYTAB"],
            "krb5_principal": os.environ["ZK_KRB5_PRINCIPAL"],
            "krb5_second_keytab": os.environ["ZK_KRB5_SECOND_KEYTAB"],
            "krb5_second_principal": os.environ["ZK_KRB5_SECOND_PRINCIPAL"],
        }
        return
    harness = os.environ.get("ZK_HARNESS", str(REPO / "target" / "debug" / "zk-harness"))
    proc = subprocess.Popen([harness, "serve", "--secure"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    lines: list = []

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line.strip())
            if line.startswith("ZK_CONNECT="):
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(240)
    if not lines or not lines[-1].startswith("ZK_CONNECT="):
        proc.kill()
        pytest.fail(f"zk-harness serve --secure printed no ZK_CONNECT within 240 s: {lines}")
    found = dict(line.split("=", 1) for line in lines)
    try:
        yield {
            "tls": found["ZK_TLS_CONNECT"],
            "strict": found["ZK_TLS_STRICT_CONNECT"],
            "plain": found["ZK_CONNECT"],
            "certs": Path(found["ZK_CERTS"]),
            "krb5": found["ZK_KRB5_CONNECT"],
            "krb5_config": found["ZK_KRB5_CONFIG"],
            "krb5_keytab": found["ZK_KRB5_KEYTAB"],
            "krb5_principal": found["ZK_KRB5_PRINCIPAL"],
            "krb5_second_keytab": found["ZK_KRB5_SECOND_KEYTAB"],
            "krb5_second_principal": found["ZK_KRB5_SECOND_PRINCIPAL"],
        }
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


# A test that hangs fails instead of hanging the suite: the net the CLI's suite spreads, loaded
# from its file under a name of its own (both suites' files are named conftest.py).
_spec = importlib.util.spec_from_file_location("zkrecipes_hang_net", REPO / "tests" / "cli" / "conftest.py")
assert _spec is not None and _spec.loader is not None
_hang_net = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_hang_net)
a_hang_fails_the_test = _hang_net.a_hang_fails_the_test


@pytest.fixture
def path() -> str:
    return f"/py/{uuid.uuid4().hex}"


@pytest.fixture
def client(zk_connect: str) -> Iterator[zkrecipes.Client]:
    c = zkrecipes.Client(zk_connect, session_timeout=10.0)
    yield c
    c.close()


@pytest.fixture
def make_client(zk_connect: str) -> Iterator[object]:
    made = []

    def make(**kwargs: object) -> zkrecipes.Client:
        c = zkrecipes.Client(zk_connect, **kwargs)  # type: ignore[arg-type]
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def make_kz(zk_connect: str) -> Iterator[Callable[..., object]]:
    """kazoo clients (another library on the same server), started; stopped and closed after the test."""
    # Imported, not skipped when missing: the suite installs kazoo, and a skip would hide its absence.
    import kazoo.client as kazoo_client
    made = []

    def make(**kwargs: object) -> object:
        kz = kazoo_client.KazooClient(hosts=zk_connect, **kwargs)
        kz.start(20)
        made.append(kz)
        return kz

    yield make
    for kz in made:
        kz.stop()
        kz.close()


@pytest.fixture
def kz(make_kz: Callable[..., object]) -> object:
    return make_kz()


PYTHON = sys.executable
