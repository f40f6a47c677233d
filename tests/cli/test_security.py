"""The CLI's security flags against the harness's secured servers (tests/with-secure-zk):
what works, and the message and exit status of each failure."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = os.environ.get("ZKRECIPES_CLI", str(ROOT / "target/debug/zkrecipes"))
TLS = os.environ["ZK_TLS_CONNECT"]
STRICT = os.environ["ZK_TLS_STRICT_CONNECT"]
KRB5 = os.environ["ZK_KRB5_CONNECT"]
CERTS = Path(os.environ["ZK_CERTS"])
USAGE, UNAVAILABLE, NO_PERMISSION, TLS_CONFIG = 64, 69, 77, 78


def run(*args: str, env=None, timeout: float = 60, input: bytes | None = None):
    # A clean credential environment: the user's own ZKRECIPES_AUTH or ticket must not leak in.
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ZKRECIPES_AUTH", "KRB5"))}
    return subprocess.run([CLI, *args], capture_output=True, timeout=timeout, input=input, env={**base, **(env or {})})


def tls(*more: str) -> list:
    return ["--tls-ca", str(CERTS / "ca.pem"), *more]


def mutual() -> list:
    return tls("--tls-cert", str(CERTS / "client.pem"), "--tls-key", str(CERTS / "client-key.pem"))


@pytest.fixture
def alice(tmp_path: Path) -> list:
    auth = tmp_path / "alice.auth"
    auth.write_text("alice:alice-secret\n")
    return ["--sasl", "digest", "--auth-file", str(auth)]


def path(name: str) -> str:
    return f"/cli-security/{name}-{uuid.uuid4().hex}"


def test_lock_over_tls_with_sasl_and_status_names_the_session(alice):
    lock = path("lock")
    done = run("--connect", STRICT, *mutual(), *alice, "lock", lock, "--", "sh", "-c", "echo token=$ZKRECIPES_FENCING_TOKEN")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith("token=")
    shown = run("--connect", STRICT, *mutual(), *alice, "status", lock)
    assert shown.returncode == 0, shown.stderr
    assert "session: TLS, authenticated as sasl:alice, x509:" in shown.stdout.decode()
    as_json = json.loads(run("--connect", STRICT, *mutual(), *alice, "--json", "status", lock).stdout)
    assert as_json["session"]["tls"] is True and "sasl:alice" in as_json["session"]["authenticated_as"]


def test_the_password_is_read_from_the_environment_too():
    done = run("--connect", TLS, *tls(), "--sasl", "digest", "status", "/cli-security", env={"ZKRECIPES_AUTH": "bob:bob-secret"})
    assert done.returncode == 0, done.stderr
    assert "sasl:bob" in done.stdout.decode()


def test_creator_acl_keeps_another_user_out(alice, tmp_path):
    queue = path("queue")
    offered = run("--connect", TLS, *tls(), *alice, "--acl", "creator", "queue", "offer", queue, "secret job")
    assert offered.returncode == 0, offered.stderr
    bob = tmp_path / "bob.auth"
    bob.write_text("bob:bob-secret")
    taken = run("--connect", TLS, *tls(), "--sasl", "digest", "--auth-file", str(bob), "queue", "take", queue, "--timeout", "0")
    assert taken.returncode == NO_PERMISSION, taken
    assert "sasl:bob" in taken.stderr.decode() and queue in taken.stderr.decode()


@pytest.mark.parametrize(
    "args, status, message",
    [
        (["--connect", TLS, "--tls-ca", str(CERTS / "other-ca.pem")], TLS_CONFIG, "unknown CA"),
        (["--connect", "127.0.0.1:" + TLS.rsplit(":", 1)[1], *tls()], TLS_CONFIG, "hostname mismatch"),
        (["--connect", TLS], TLS_CONFIG, "speaks TLS"),
        (["--connect", "localhost:" + os.environ["ZK_SECURE_PLAIN_CONNECT"].rsplit(":", 1)[1], *tls()], TLS_CONFIG, "does not speak TLS"),
        (["--connect", STRICT, *tls()], TLS_CONFIG, "requires a client certificate"),
        (["--connect", STRICT, *tls("--tls-cert", str(CERTS / "client-expired.pem"), "--tls-key", str(CERTS / "client-expired-key.pem"))],
         TLS_CONFIG, "refused our client certificate"),
        (["--connect", STRICT, *mutual()], NO_PERMISSION, "requires SASL"),
        (["--connect", TLS, "--tls-ca", "/nonexistent/ca.pem"], USAGE, "/nonexistent/ca.pem"),
        (["--connect", TLS, "--tls-ca", str(CERTS / "client-key.pem")], USAGE, "client-key.pem"),
        (["--connect", TLS, *tls(), "--acl", "sasl:alice:rwx"], USAGE, "bad permission"),
        (["--connect", TLS, *tls(), "--acl", "world:anyone:999"], USAGE, "1 (read) to 31"),
        (["--connect", TLS, *tls(), "--sasl", "plain"], USAGE, "unknown SASL mechanism"),
        (["--connect", TLS, *tls(), "--sasl", "digest"], USAGE, "--auth-file"),
    ],
)
def test_failures_are_clear_and_final(args, status, message):
    started = time.monotonic()
    done = run(*args, "--connect-timeout", "8s", "status", "/cli-security")
    assert done.returncode == status, done
    assert message in done.stderr.decode(), done.stderr
    assert time.monotonic() - started < 8, "a refusal is final, not retried until the connect timeout"


def test_a_tls_refusal_names_the_server_once():
    done = run("--connect", TLS, "--tls-ca", str(CERTS / "other-ca.pem"), "--connect-timeout", "8s", "status", "/cli-security")
    assert done.returncode == TLS_CONFIG, done
    first_line = done.stderr.decode().splitlines()[0]
    assert first_line.count(TLS.rsplit(":", 1)[1]) == 1, first_line


def test_an_empty_auth_variable_is_no_credentials():
    done = run("--connect", TLS, *tls(), "--sasl", "digest", "status", "/cli-security", env={"ZKRECIPES_AUTH": ""})
    assert done.returncode == USAGE, done
    assert "--auth-file" in done.stderr.decode(), done.stderr


def test_wrong_password_is_auth_failed_and_never_shown(tmp_path):
    auth = tmp_path / "wrong.auth"
    auth.write_text("alice:not-her-password")
    done = run("--connect", TLS, *tls(), "--sasl", "digest", "--auth-file", str(auth), "status", "/cli-security")
    assert done.returncode == NO_PERMISSION, done
    assert "AUTH_FAILED" in done.stderr.decode() and "not-her-password" not in done.stderr.decode()


def test_kerberos_with_a_client_keytab_and_without_a_ticket(tmp_path):
    krb5 = {"KRB5_CONFIG": os.environ["ZK_KRB5_CONFIG"], "KRB5CCNAME": f"FILE:{tmp_path / 'cache'}"}
    done = run("--connect", KRB5, "--sasl", "gssapi", "status", "/cli-security", env={**krb5, "KRB5_CLIENT_KTNAME": os.environ["ZK_KRB5_KEYTAB"]})
    assert done.returncode == 0, done.stderr
    assert "authenticated as sasl:client" in done.stdout.decode()
    # A cache of its own: the keytab run above stored its ticket in the first one.
    missing = run("--connect", KRB5, "--sasl", "gssapi", "status", "/cli-security",
                  env={**krb5, "KRB5CCNAME": f"FILE:{tmp_path / 'empty-cache'}"})
    assert missing.returncode == NO_PERMISSION, missing
    assert "kinit" in missing.stderr.decode() and "KRB5CCNAME" in missing.stderr.decode()


def test_kerberos_as_a_principal_of_its_own_from_its_keytab(tmp_path):
    # No credentials in the environment: only the flags can log in.
    krb5 = {"KRB5_CONFIG": os.environ["ZK_KRB5_CONFIG"], "KRB5CCNAME": f"FILE:{tmp_path / 'none'}", "KRB5_CLIENT_KTNAME": str(tmp_path / "no.keytab")}
    second = ["--sasl-principal", os.environ["ZK_KRB5_SECOND_PRINCIPAL"], "--sasl-keytab", os.environ["ZK_KRB5_SECOND_KEYTAB"]]
    done = run("--connect", KRB5, "--sasl", "gssapi", *second, "status", "/cli-security", env=krb5)
    assert done.returncode == 0, done.stderr
    assert "authenticated as sasl:reporter" in done.stdout.decode()
    assert not (tmp_path / "none").exists(), "the user's ticket cache was written"
    # A principal its keytab does not hold: refused at once, naming both.
    wrong = ["--sasl-principal", os.environ["ZK_KRB5_PRINCIPAL"], "--sasl-keytab", os.environ["ZK_KRB5_SECOND_KEYTAB"]]
    started = time.monotonic()
    refused = run("--connect", KRB5, "--sasl", "gssapi", *wrong, "--connect-timeout", "8s", "status", "/cli-security", env=krb5)
    assert refused.returncode == NO_PERMISSION, refused
    message = refused.stderr.decode()
    assert os.environ["ZK_KRB5_PRINCIPAL"] in message and os.environ["ZK_KRB5_SECOND_KEYTAB"] in message, message
    assert time.monotonic() - started < 8
    digest_with_keytab = run("--connect", TLS, *tls(), "--sasl", "digest", *second, "status", "/cli-security",
                             env={"ZKRECIPES_AUTH": "alice:alice-secret"})
    assert digest_with_keytab.returncode == USAGE and "GSSAPI's" in digest_with_keytab.stderr.decode(), digest_with_keytab


def test_kerberos_options_without_the_mechanism_are_refused():
    # They ran without any credentials (open ACLs, no warning) before (an adversarial review).
    second = ["--sasl-principal", os.environ["ZK_KRB5_SECOND_PRINCIPAL"], "--sasl-keytab", os.environ["ZK_KRB5_SECOND_KEYTAB"]]
    done = run("--connect", KRB5, *second, "status", "/cli-security")
    assert done.returncode == USAGE, done
    assert "--sasl gssapi" in done.stderr.decode(), done.stderr


def test_a_kdc_that_never_answers_is_bounded_by_the_connect_timeout(tmp_path):
    # A KDC that takes the connection and says nothing: Kerberos alone waited 25 s for it.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    conf = tmp_path / "krb5.conf"
    conf.write_text(re.sub(r"kdc = 127\.0\.0\.1:\d+", f"kdc = 127.0.0.1:{silent.getsockname()[1]}", open(os.environ["ZK_KRB5_CONFIG"]).read()))
    krb5 = {"KRB5_CONFIG": str(conf), "KRB5CCNAME": f"FILE:{tmp_path / 'none'}"}
    second = ["--sasl-principal", os.environ["ZK_KRB5_SECOND_PRINCIPAL"], "--sasl-keytab", os.environ["ZK_KRB5_SECOND_KEYTAB"]]
    started = time.monotonic()
    try:
        done = run("--connect", KRB5, "--sasl", "gssapi", *second, "--connect-timeout", "3s", "status", "/cli-security", env=krb5)
    finally:
        silent.close()
    assert done.returncode == UNAVAILABLE, done
    assert "KDC" in done.stderr.decode(), done.stderr
    assert time.monotonic() - started < 15, "the connect timeout (3 s) bounds the Kerberos exchange"


def test_without_the_kerberos_library_gssapi_names_it():
    done = run("--connect", KRB5, "--sasl", "gssapi", "status", "/cli-security",
               env={"ZKRECIPES_GSSAPI_LIBRARY": "/nonexistent/libgssapi_krb5.so.2"})
    assert done.returncode == NO_PERMISSION, done
    assert "/nonexistent/libgssapi_krb5.so.2" in done.stderr.decode()


def test_cmd_never_sees_the_credentials_and_one_line_is_required(tmp_path):
    lock = path("env")
    done = run("--connect", TLS, *tls(), "--sasl", "digest", "lock", lock, "--", "sh", "-c", "env",
               env={"ZKRECIPES_AUTH": "alice:alice-secret"})
    assert done.returncode == 0, done.stderr
    assert b"alice-secret" not in done.stdout, "CMD got the credentials"
    two = tmp_path / "two.auth"
    two.write_text("alice:alice-secret\nbob:bob-secret\n")
    done = run("--connect", TLS, *tls(), "--sasl", "digest", "--auth-file", str(two), "status", "/cli-security")
    assert done.returncode == 65 and b"one line" in done.stderr, done


def test_status_of_an_empty_path_on_a_secured_session_keeps_its_headline(alice):
    done = run("--connect", TLS, *tls(), *alice, "status", path("empty"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0].startswith("session: TLS, authenticated as sasl:alice"), lines
    assert len(lines) == 2 and any(s in lines[1] for s in ("no such node", "no recipe nodes", "no children")), lines


def test_x509_identities_in_acl_entries(tmp_path):
    queue = path("x509")
    acl = "x509:O=zkrecipes,CN=zkclient:rwcda"
    done = run("--connect", TLS, *mutual(), "--acl", acl, "queue", "offer", queue, "for the certificate")
    assert done.returncode == 0, done.stderr
    other = run("--connect", TLS, *tls("--tls-cert", str(CERTS / "client2.pem"), "--tls-key", str(CERTS / "client2-key.pem")),
                "queue", "take", queue, "--timeout", "0")
    assert other.returncode == NO_PERMISSION, other


def test_a_watcher_says_why_the_server_refuses_the_new_session(alice, tmp_path):
    """After LOST the client opens a new session by itself; when the server refuses it (here:
    the client certificate file now holds an expired one), `status --watch` says so on standard
    error, with the refusal, instead of only "connection lost"."""
    import queue
    import shutil
    import threading

    cert, key = tmp_path / "client.pem", tmp_path / "client-key.pem"
    shutil.copy(CERTS / "client.pem", cert)
    shutil.copy(CERTS / "client-key.pem", key)
    harness = os.environ.get("ZK_HARNESS", str(ROOT / "target/debug/zk-harness"))
    # By host name: the proxy resolves it (it used to accept only an address).
    proxy = subprocess.Popen([harness, "proxy", STRICT], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    proxy_lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: [proxy_lines.put(line.strip()) for line in proxy.stdout], daemon=True).start()

    def send(command: str) -> None:
        proxy.stdin.write(command + "\n")
        proxy.stdin.flush()
        assert proxy_lines.get(timeout=30) == "OK"

    watcher = None
    try:
        announced = proxy_lines.get(timeout=30)
        assert announced.startswith("ZK_CONNECT="), announced
        connect = announced.split("=", 1)[1].replace("127.0.0.1", "localhost")
        base = {k: v for k, v in os.environ.items() if not k.startswith(("ZKRECIPES_AUTH", "KRB5"))}
        watcher = subprocess.Popen(
            [CLI, "--connect", connect, *tls("--tls-cert", str(cert), "--tls-key", str(key)), *alice,
             "--session-timeout", "2s", "status", "--watch", path("watched")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=base)
        said: "queue.Queue[str]" = queue.Queue()
        shown: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=lambda: [said.put(line.strip()) for line in watcher.stderr], daemon=True).start()
        threading.Thread(target=lambda: [shown.put(line) for line in watcher.stdout], daemon=True).start()
        # Connected once (the watcher printed its first view) before the outage begins.
        shown.get(timeout=60)
        send("hole on")
        shutil.copy(CERTS / "client-expired.pem", cert)
        shutil.copy(CERTS / "client-expired-key.pem", key)
        # Out until the session expired: a connection back before that resumed the
        # old session, with the old certificate if the rotation had not looked yet
        # (CI: no refusal in 60 s).
        while "the session expired" not in said.get(timeout=60):
            pass
        send("hole off")
        while True:
            line = said.get(timeout=60)
            if "no new session yet" in line and "certificate" in line:
                break
        # Java's TLS answers an expired certificate with certificate_unknown, not certificate_expired.
        assert "refused our client certificate" in line and "expired" in line, line
    finally:
        if watcher is not None:
            watcher.kill()
            watcher.wait(timeout=30)
        proxy.stdin.close()
        proxy.wait(timeout=30)
