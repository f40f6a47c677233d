"""One lock acquire/release and one queue offer/take through an installed
zkrecipes wheel: `python smoke.py HOST:PORT`. Prints what it did; exits
non-zero on any failure."""
import platform
import sys
import uuid

import zkrecipes

connect = sys.argv[1]
root = f"/dist-smoke/{uuid.uuid4().hex}"
with zkrecipes.Client(connect, session_timeout=10.0) as client:
    lock = client.write_lock(f"{root}/lock")
    assert lock.acquire(timeout=10.0), "the free lock was not acquired"
    token = lock.fencing_token
    assert token is not None and token > 0, token
    lock.release()
    queue = client.queue(f"{root}/queue")
    queue.offer(b"job-1")
    assert queue.take(timeout=10.0) == b"job-1"
    assert queue.poll() is None
print(f"python {platform.machine()} zkrecipes {zkrecipes.__version__}: lock token {token}, queue ok")
if "--no-kerberos" in sys.argv:
    # A machine without MIT Kerberos: the wheel loaded and works; GSSAPI names what is missing.
    try:
        zkrecipes.Client(connect, sasl=zkrecipes.Sasl.gssapi(), connect_timeout=5.0)
        raise SystemExit("GSSAPI connected without a Kerberos library")
    except zkrecipes.AuthFailedError as e:
        assert "libgssapi_krb5" in str(e), e
        print(f"without Kerberos, GSSAPI says: {e}")
