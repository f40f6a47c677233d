"""TLS, SASL DIGEST-MD5 and ACL policies against the harness's secured servers."""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, Tuple

import pytest

import zkrecipes
from zkrecipes import Acl, Sasl, Tls


def tls(secure: dict, **kwargs: object) -> Tls:
    return Tls(ca=str(secure["certs"] / "ca.pem"), **kwargs)  # type: ignore[arg-type]


def mutual(secure: dict) -> Tls:
    certs = secure["certs"]
    return Tls(ca=certs / "ca.pem", cert=certs / "client.pem", key=certs / "client-key.pem")


ALICE = Sasl.digest_md5("alice", "alice-secret")
BOB = Sasl.digest_md5("bob", "bob-secret")


def test_lock_and_queue_over_tls_with_sasl(secure, path):
    with zkrecipes.Client(secure["tls"], tls=tls(secure), sasl=ALICE) as client:
        assert client.is_tls
        assert "sasl:alice" in client.authenticated_as
        with client.write_lock(path + "/lock") as lock:
            assert lock.fencing_token > 0
        queue = client.queue(path + "/queue")
        queue.offer(b"over tls")
        assert queue.poll() == b"over tls"


def test_pem_given_as_bytes_and_mutual_tls_identity(secure):
    ca = (secure["certs"] / "ca.pem").read_bytes()
    with zkrecipes.Client(f"tcp+tls://{secure['tls']}", tls=Tls(ca=ca)) as client:
        assert client.session_id != 0
    with zkrecipes.Client(secure["tls"], tls=mutual(secure)) as client:
        assert any(who.startswith("x509:") and "CN=zkclient" in who for who in client.authenticated_as)


def test_strict_server_needs_certificate_and_sasl(secure):
    with zkrecipes.Client(secure["strict"], tls=mutual(secure), sasl=ALICE) as client:
        assert client.whoami()
    started = time.monotonic()
    with pytest.raises(zkrecipes.TlsRefusedError, match="requires a client certificate"):
        zkrecipes.Client(secure["strict"], tls=tls(secure), sasl=ALICE, connect_timeout=8)
    assert time.monotonic() - started < 8, "a refusal is final, not retried until the timeout"


def test_failures_are_clear(secure):
    certs = secure["certs"]
    with pytest.raises(zkrecipes.TlsRefusedError, match="unknown CA"):
        zkrecipes.Client(secure["tls"], tls=Tls(ca=certs / "other-ca.pem"), connect_timeout=8)
    port = secure["tls"].rsplit(":", 1)[1]
    with pytest.raises(zkrecipes.TlsRefusedError, match="hostname mismatch"):
        zkrecipes.Client(f"127.0.0.1:{port}", tls=tls(secure), connect_timeout=8)
    with zkrecipes.Client(f"127.0.0.1:{port}", tls=tls(secure, verify_hostname=False)) as unverified:
        assert unverified.is_tls
    with pytest.raises(zkrecipes.TlsRefusedError, match="speaks TLS"):
        zkrecipes.Client(secure["tls"], connect_timeout=8)
    with pytest.raises(zkrecipes.AuthFailedError) as refused:
        zkrecipes.Client(secure["tls"], tls=tls(secure), sasl=Sasl.digest_md5("alice", "wrong-one"), connect_timeout=8)
    assert "wrong-one" not in str(refused.value)
    with pytest.raises(zkrecipes.InvalidArgumentError, match="missing.pem"):
        zkrecipes.Client(secure["tls"], tls=Tls(ca=certs / "missing.pem"))
    with pytest.raises(zkrecipes.InvalidArgumentError, match="both or neither"):
        zkrecipes.Client(secure["tls"], tls=Tls(ca=certs / "ca.pem", cert=certs / "client.pem"))
    with pytest.raises(TypeError):
        zkrecipes.Client(secure["tls"], tls="ca.pem")  # type: ignore[arg-type]
    with pytest.raises(zkrecipes.InvalidArgumentError, match="unknown ACL policy"):
        zkrecipes.Client(secure["tls"], tls=tls(secure), acl="everyone")
    with pytest.raises(zkrecipes.InvalidArgumentError, match="unknown SASL mechanism"):
        zkrecipes.Client(secure["tls"], tls=tls(secure), sasl=Sasl("PLAIN", "a", "b"))


def test_password_never_shows():
    assert "alice-secret" not in repr(ALICE)


def test_a_sasl_password_is_never_pickled():
    import copy
    import pickle

    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(ALICE)
    # copy keeps it in memory only; Kerberos options have no secret and pickle.
    assert copy.deepcopy(ALICE)._password == ALICE._password
    kerberos = pickle.loads(pickle.dumps(Sasl.gssapi(host="zk1")))
    assert (kerberos.mechanism, kerberos.service, kerberos.host) == ("GSSAPI", "zookeeper", "zk1")


def test_bad_security_values_get_messages_that_say_what_to_write(secure, path):
    with pytest.raises(zkrecipes.InvalidArgumentError, match="tls ca is empty"):
        zkrecipes.Client(secure["tls"], tls=Tls(ca=""))
    with pytest.raises(TypeError, match="a list of zkrecipes.Acl, got int"):
        zkrecipes.Client(secure["tls"], tls=tls(secure), acl=5)  # type: ignore[arg-type]
    # A password given to GSSAPI was dropped without a word; Kerberos logs in with the ticket cache.
    with pytest.raises(zkrecipes.InvalidArgumentError, match="ticket cache"):
        zkrecipes.Client(secure["tls"], tls=tls(secure), sasl=Sasl("GSSAPI", None, b"pw"))
    with pytest.raises(zkrecipes.InvalidArgumentError, match=r"999 are out of range: a bitmask from 1 \(read\) to 31"):
        zkrecipes.Client(secure["tls"], tls=tls(secure), acl=[Acl(999, "world", "anyone")])
    # One Acl (not in a list) is a list of one.
    with zkrecipes.Client(secure["tls"], tls=tls(secure), sasl=ALICE, acl=Acl("all", "sasl", "alice")) as client:
        with zkrecipes.WriteLock(client, path):
            pass


def test_creator_acl_keeps_bob_out_and_world_read_lets_him_read(secure, path):
    with zkrecipes.Client(secure["tls"], tls=tls(secure), sasl=ALICE, acl="creator-world-read") as alice:
        for item in (b"alice's", b"item-1", b"item-2"):
            alice.queue(path).offer(item)
        with zkrecipes.Client(secure["tls"], tls=tls(secure), sasl=BOB) as bob:
            theirs = bob.queue(path)
            assert theirs.peek() == b"alice's"
            with pytest.raises(zkrecipes.NoAuthError, match="sasl:bob"):
                theirs.poll()
            # Issue 47: the refused take took nothing; the same object still peeks the head.
            assert theirs.peek() == b"alice's"
            assert len(theirs) == 3
        assert alice.queue(path).poll() == b"alice's"


def test_explicit_acl_list(secure, path):
    acl = [Acl("all", "sasl", "alice"), Acl(1, "sasl", "bob")]
    with zkrecipes.Client(secure["tls"], tls=tls(secure), sasl=ALICE, acl=acl) as alice:
        alice.queue(path).offer(b"x")
        with zkrecipes.Client(secure["tls"], tls=tls(secure)) as anonymous:
            with pytest.raises(zkrecipes.NoAuthError, match="no identity"):
                anonymous.queue(path).peek()


def test_kazoo_over_tls_with_digest_md5_holds_off_our_lock(secure, path):
    """kazoo's Lock orders only its own `__lock__` nodes, so it cannot see ours: the interop
    that holds is one way, ours waiting behind kazoo's holder on one TLS+SASL server."""
    from kazoo.client import KazooClient

    certs = secure["certs"]
    kazoo = KazooClient(
        hosts=secure["tls"],
        use_ssl=True,
        ca=str(certs / "ca.pem"),
        certfile=str(certs / "client.pem"),
        keyfile=str(certs / "client-key.pem"),
        sasl_options={"mechanism": "DIGEST-MD5", "username": "bob", "password": "bob-secret"},
    )
    kazoo.start(timeout=20)
    try:
        with zkrecipes.Client(secure["tls"], tls=tls(secure), sasl=ALICE, acl="open") as client:
            ours = client.write_lock(path)
            theirs = kazoo.Lock(path, "kazoo")
            tokens = []
            for _ in range(3):
                assert theirs.acquire(timeout=10)
                assert not ours.acquire(blocking=False), "we got in while kazoo held the lock"
                theirs.release()
                with ours:
                    tokens.append(ours.fencing_token)
            assert tokens == sorted(tokens) and len(set(tokens)) == 3
    finally:
        kazoo.stop()
        kazoo.close()


def test_kerberos_with_a_client_keytab_and_without_a_ticket(secure, path, tmp_path, monkeypatch):
    monkeypatch.setenv("KRB5_CONFIG", secure["krb5_config"])
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'cache'}")
    monkeypatch.setenv("KRB5_CLIENT_KTNAME", secure["krb5_keytab"])
    with zkrecipes.Client(secure["krb5"], sasl=Sasl.gssapi()) as client:
        assert client.authenticated_as == ["sasl:client"]
        client.queue(path).offer(b"kerberos")
        assert client.queue(path).poll() == b"kerberos"
    monkeypatch.delenv("KRB5_CLIENT_KTNAME")
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'empty'}")
    with pytest.raises(zkrecipes.AuthFailedError, match="kinit"):
        zkrecipes.Client(secure["krb5"], sasl=Sasl.gssapi())


def test_two_clients_of_one_process_are_two_kerberos_principals(secure, path, tmp_path, monkeypatch):
    # No credentials in the environment: each client logs in from its own keytab only.
    monkeypatch.setenv("KRB5_CONFIG", secure["krb5_config"])
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'none'}")
    monkeypatch.delenv("KRB5_CLIENT_KTNAME", raising=False)
    first = Sasl.gssapi(principal=secure["krb5_principal"], keytab=Path(secure["krb5_keytab"]))
    second = Sasl.gssapi(principal=secure["krb5_second_principal"], keytab=secure["krb5_second_keytab"])
    assert "principal=" in repr(second) and "reporter" in repr(second)
    with zkrecipes.Client(secure["krb5"], sasl=first, acl="creator") as client, \
            zkrecipes.Client(secure["krb5"], sasl=second) as reporter:
        assert client.authenticated_as == ["sasl:client"]
        assert reporter.authenticated_as == ["sasl:reporter"]
        client.queue(path).offer(b"for client only")
        with pytest.raises(zkrecipes.NoAuthError):
            reporter.queue(path).poll()
    assert not (tmp_path / "none").exists(), "the user's ticket cache was written"
    with pytest.raises(zkrecipes.AuthFailedError, match="reporter"):
        zkrecipes.Client(secure["krb5"], sasl=Sasl.gssapi(principal=secure["krb5_second_principal"]))
    with pytest.raises(zkrecipes.InvalidArgumentError, match="no-such.keytab"):
        zkrecipes.Client(secure["krb5"], sasl=Sasl.gssapi(keytab=tmp_path / "no-such.keytab"))
    with pytest.raises(TypeError, match="keytab"):
        Sasl.gssapi(keytab=42)  # type: ignore[arg-type]
    kept = pickle.loads(pickle.dumps(second))
    assert (kept.principal, kept.keytab) == (second.principal, second.keytab)


def test_pem_text_in_a_str_and_bad_types(secure):
    certs = secure["certs"]
    key = (certs / "client-key.pem").read_text()
    with zkrecipes.Client(secure["tls"], tls=Tls(ca=(certs / "ca.pem").read_text(), cert=certs / "client.pem", key=key)) as c:
        assert any(who.startswith("x509:") for who in c.authenticated_as)
    assert "PRIVATE KEY" not in repr(Tls(ca=certs / "ca.pem", cert=certs / "client.pem", key=key))
    with pytest.raises(zkrecipes.InvalidArgumentError) as mismatched:
        zkrecipes.Client(secure["tls"], tls=Tls(ca=certs / "ca.pem", cert=certs / "client.pem",
                                                key=(certs / "client2-key.pem").read_text()))
    assert "does not belong" in str(mismatched.value) and "PRIVATE KEY" not in str(mismatched.value)
    damaged = key.replace("-----BEGIN", "----BEGIN")
    with pytest.raises(zkrecipes.InvalidArgumentError) as broken:
        zkrecipes.Client(secure["tls"], tls=Tls(ca=certs / "ca.pem", cert=certs / "client.pem", key=damaged))
    assert "PRIVATE KEY" not in str(broken.value) and "MIG" not in str(broken.value), broken.value
    assert "PRIVATE" not in repr(Tls(ca=certs / "ca.pem", cert=certs / "client.pem", key=damaged))
    with pytest.raises(TypeError):
        Sasl.digest_md5("alice", 123)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Sasl.digest_md5(None, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Tls(ca=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        zkrecipes.Client(secure["tls"], tls=tls(secure), sasl=ALICE, acl=[{"perms": "r"}])  # type: ignore[list-item]
    with pytest.raises(zkrecipes.InvalidArgumentError, match="need credentials"):
        zkrecipes.Client(secure["tls"], tls=tls(secure), acl="creator")
    with pytest.raises(zkrecipes.InvalidArgumentError, match="tcp://"):
        zkrecipes.Client("tcp://" + secure["tls"], tls=tls(secure))


@contextlib.contextmanager
def fault_proxy(server: str) -> Iterator[Tuple[str, Callable[[str], None]]]:
    """`zk-harness proxy` before `server`: the connect string through it (by the certificate's
    host name: TLS runs end to end through the proxy) and a function that sends it a command."""
    proc = subprocess.Popen([os.environ["ZK_HARNESS"], "proxy", server.replace("localhost", "127.0.0.1")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line.strip()) for line in proc.stdout], daemon=True).start()  # type: ignore[union-attr]

    def send(command: str) -> None:
        proc.stdin.write(command + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        assert lines.get(timeout=30) == "OK"

    try:
        connect = lines.get(timeout=30)
        assert connect.startswith("ZK_CONNECT="), connect
        yield connect.split("=", 1)[1].replace("127.0.0.1", "localhost"), send
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=30)


def test_a_refused_new_session_after_lost_is_reported(secure, tmp_path):
    certs = secure["certs"]
    cert, key = tmp_path / "client.pem", tmp_path / "client-key.pem"
    shutil.copy(certs / "client.pem", cert)
    shutil.copy(certs / "client-key.pem", key)
    with fault_proxy(secure["strict"]) as (connect, proxy):
        identity = Tls(ca=certs / "ca.pem", cert=cert, key=key)
        with zkrecipes.Client(connect, tls=identity, sasl=ALICE, session_timeout=2) as client:
            states: "queue.Queue[zkrecipes.ConnectionState]" = queue.Queue()
            client.add_listener(states.put)
            assert client.session_error is None
            # The certificate file is re-read when it changes: the next session presents this one.
            shutil.copy(certs / "client-expired.pem", cert)
            shutil.copy(certs / "client-expired-key.pem", key)
            proxy("hole on")
            while states.get(timeout=30) != zkrecipes.ConnectionState.LOST:
                pass
            proxy("hole off")
            deadline = time.monotonic() + 30
            while client.session_error is None:
                assert time.monotonic() < deadline, "no refusal reported within 30 s"
                time.sleep(0.05)
            err = client.session_error
            assert isinstance(err, zkrecipes.ZkError), err
            assert "refused our client certificate" in str(err), err
            assert client.state != zkrecipes.ConnectionState.RECONNECTED
