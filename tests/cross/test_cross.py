"""Python, Node.js, Java and Kotlin on the same lock, queue and election.

Runs in the test virtualenv (the installed wheel); the Node agent runs from the
test project that installed the npm tarball, the Java agent with the JAR on a
plain classpath, the Kotlin agent with the Kotlin JAR and its three dependencies
(kotlin-stdlib, kotlinx-coroutines, JNA) on a plain classpath. Paths come from
ZK_CONNECT, NODE_PROJECT, ZKRECIPES_JAR and ZKRECIPES_KOTLIN_CP.
"""

from __future__ import annotations

import itertools
import os
import queue
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import List

import pytest

import zkrecipes

from agents import HERE, LANGS, Agent

ZK = os.environ["ZK_CONNECT"]


@pytest.fixture(scope="module")
def agents():
    started = {lang: Agent(lang) for lang in LANGS}
    yield started
    for agent in started.values():
        agent.close()


def path(name: str) -> str:
    return f"/cross/{name}-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("holder,waiter", list(itertools.permutations(LANGS, 2)))
def test_holder_excludes_the_other_languages(agents, holder, waiter):
    d = path("lock")
    first = agents[holder].ask(f"lock {d}")
    assert first.startswith("HELD ")
    assert agents[waiter].ask(f"trylock {d}") == "BUSY"
    agents[waiter].send(f"lock {d}")
    assert agents[waiter].maybe_reply(0.7) is None, f"{waiter} got the lock while {holder} held it"
    assert agents[holder].ask(f"unlock {d}") == "OK"
    second = agents[waiter].reply()
    assert second.startswith("HELD ")
    assert int(second.split()[1]) > int(first.split()[1]), "fencing tokens increase across languages"
    assert agents[waiter].ask(f"unlock {d}") == "OK"


def test_fencing_tokens_strictly_increase_across_all_languages(agents):
    d = path("tokens")
    tokens = []
    for lang in LANGS * 3:
        tokens.append(int(agents[lang].ask(f"lock {d}").split()[1]))
        assert agents[lang].ask(f"unlock {d}") == "OK"
    assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens)


def test_queue_items_cross_languages_fifo_and_byte_exact(agents):
    with zkrecipes.Client(ZK) as c:
        for producer, consumer in itertools.permutations(LANGS, 2):
            d = path(f"q-{producer}-{consumer}")
            # The limit is the core's, the same in every language ("1 MB minus overhead").
            biggest = bytes([0xA5]) * c.queue(d).max_payload
            payloads: List[bytes] = [b"", bytes(range(256)), b"\xff\xfe\x00\x80 not utf-8 \xc3\x28",
                                     "ünïcödé".encode(), biggest]
            for p in payloads:
                assert agents[producer].ask(f"offer {d} {p.hex() or '-'}") == "OK"
            for p in payloads:
                got = agents[consumer].ask(f"poll {d}")
                assert got == f"ITEM {p.hex() or '-'}", f"{producer} -> {consumer}: {got[:60]}"
            assert agents[consumer].ask(f"poll {d}") == "EMPTY"


def test_one_leader_among_languages_and_hand_over(agents):
    root = path("election")
    for lang in LANGS:
        assert agents[lang].ask(f"elect {root} host-{lang}") == "STARTED"
    remaining = list(LANGS)
    while remaining:
        deadline = time.monotonic() + 10
        while True:
            leaders = [lang for lang in remaining if agents[lang].ask("leader?") == "YES"]
            if len(leaders) == 1 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert len(leaders) == 1, f"exactly one leader among {remaining}: {leaders}"
        assert agents[leaders[0]].ask("stop") == "STOPPED"
        remaining.remove(leaders[0])


def test_secured_contention_across_languages_curator_and_kazoo(tmp_path):
    """On one server requiring TLS client certificates and SASL: our lock from every language,
    Curator's InterProcessMutex over TLS and kazoo with use_ssl and DIGEST-MD5, one holder at a
    time, every contender acquires, fencing tokens strictly increase."""
    certs = Path(os.environ["ZK_CERTS"])
    strict = os.environ["ZK_TLS_STRICT_CONNECT"]
    secure = {"ZKRECIPES_AGENT_CA": str(certs / "ca.pem"), "ZKRECIPES_AGENT_CERT": str(certs / "client.pem"),
              "ZKRECIPES_AGENT_KEY": str(certs / "client-key.pem"), "ZKRECIPES_AGENT_USER": "alice",
              "ZKRECIPES_AGENT_PASSWORD": "alice-secret"}
    ours = {lang: Agent(lang, strict, secure) for lang in LANGS}
    d = path("secure")
    try:
        # Curator over TLS holds first (ZooKeeper's Java client: zookeeper.client.secure, Netty, JAAS Client).
        jaas = tmp_path / "jaas.conf"
        jaas.write_text('Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n'
                        '  username="bob"\n  password="bob-secret";\n};\n')
        curator_cp = subprocess.run([os.environ["ZK_HARNESS"], "curator-cp"], capture_output=True, text=True,
                                    timeout=300, check=True).stdout.strip()
        curator = subprocess.Popen(
            ["java", "-Dzookeeper.client.secure=true",
             "-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
             f"-Dzookeeper.ssl.trustStore.location={certs / 'ca.pem'}", "-Dzookeeper.ssl.trustStore.type=PEM",
             f"-Dzookeeper.ssl.keyStore.location={certs / 'client-bundle.pem'}", "-Dzookeeper.ssl.keyStore.type=PEM",
             f"-Djava.security.auth.login.config={jaas}",
             "-cp", curator_cp, str(HERE.parent / "interop" / "CuratorDriver.java"), "mutex", strict, d, "2000"],
            stdout=subprocess.PIPE, text=True)
        lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x.strip()) for x in curator.stdout], daemon=True).start()  # type: ignore[union-attr]
        assert lines.get(timeout=60) == "WAITING"
        assert lines.get(timeout=60) == "ACQUIRED"
        for lang in LANGS:
            assert ours[lang].ask(f"trylock {d}") == "BUSY", f"{lang} got in while Curator held the lock"
        assert lines.get(timeout=60) == "RELEASED"
        assert curator.wait(timeout=60) == 0
        # kazoo over TLS with DIGEST-MD5 holds: every language waits (kazoo cannot see our nodes,
        # so only this direction is judged).
        from kazoo.client import KazooClient

        kazoo = KazooClient(hosts=strict, use_ssl=True, ca=str(certs / "ca.pem"), certfile=str(certs / "client.pem"),
                            keyfile=str(certs / "client-key.pem"),
                            sasl_options={"mechanism": "DIGEST-MD5", "username": "bob", "password": "bob-secret"})
        kazoo.start(timeout=30)
        try:
            from kazoo.exceptions import NoNodeError

            # Curator left the lock's directory an empty container, which the server reaps
            # (every 500 ms here); kazoo checks its path once per Lock object and does not retry a
            # create whose parent went in between (CI saw NoNodeError): a fresh Lock retries.
            for attempt in range(5):
                theirs = kazoo.Lock(d, "kazoo")
                try:
                    assert theirs.acquire(timeout=30)
                    break
                except NoNodeError:
                    assert attempt < 4, "kazoo's lock directory was reaped five times over"
            for lang in LANGS:
                assert ours[lang].ask(f"trylock {d}") == "BUSY", f"{lang} got in while kazoo held the lock"
            theirs.release()
        finally:
            kazoo.stop()
            kazoo.close()
        # Ours, one language after another, twice round: tokens strictly increase.
        tokens = []
        for lang in LANGS * 2:
            held = ours[lang].ask(f"lock {d}")
            tokens.append(int(held.split()[1]))
            others = [o for o in LANGS if o != lang]
            assert ours[others[0]].ask(f"trylock {d}") == "BUSY"
            assert ours[lang].ask(f"unlock {d}") == "OK"
        assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens), tokens
    finally:
        for agent in ours.values():
            agent.close()
