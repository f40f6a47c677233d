"""Cross-language test agent (Python): runs commands from stdin, one reply line each.
With ZKRECIPES_AGENT_CA/CERT/KEY it connects over TLS, with ZKRECIPES_AGENT_USER/PASSWORD by SASL.

    lock <dir> | trylock <dir> -> HELD <token> | BUSY        unlock <dir> -> OK
    offer <dir> <hex|->        -> OK                          poll <dir>   -> ITEM <hex|-> | EMPTY
    elect <root> <host>        -> STARTED   leader? -> YES|NO   stop -> STOPPED   quit

What a holder keeps through a rolling restart (test_rolling_restart), the same in every agent:

    session        -> SESSION <hex id>     (the client's session id, as an unsigned 64-bit number)
    lost?          -> LOST <n>             (LOST connection states heard since connect)
    state          -> CONNECTED|SUSPENDED|RECONNECTED|LOST|CLOSED   (the client's current state)
    held? <dir>    -> YES|NO               (is-held of the write lock object `lock <dir>` used)
    lease <path>   -> LEASED <token>       (one lease of a 1-permit semaphore at path, kept)
    leased?        -> YES|NO               (that lease is held: not released, not lost)
    latch <path> <id> -> LEADING <token> | NOT_LEADING   (starts a leader latch, awaits leadership 30 s)
    leading?       -> YES|NO               (that latch has the leadership)
    latch-token    -> TOKEN <n|->          (that latch's fencing token now: a latch that lost its
                                            node, or gave up after a long disconnection, leads
                                            again with another token when it is alone)
    wq-offer <dir> <hex|-> -> OK           (a job into the work queue at dir)
    wq-take <dir>  -> JOB <hex|-> | EMPTY  (one job consumed, its delivery kept open; EMPTY after 30 s)
    wq-done        -> OK                   (acknowledges the kept delivery: fails if its claim was lost)

There is no `wq-owned?`: no binding tells whether a delivery's claim still stands (the core's
Delivery::lost() is not exposed); `wq-done` succeeding is the proof, since an acknowledgement
checks the claim's session and version on the server.
A failed command answers `ERR <command> <error>`. ZKRECIPES_AGENT_SESSION_TIMEOUT sets the
session timeout in seconds (default 5).
"""

import os
import sys
import threading

import zkrecipes

# The secured variant (test_cross's secure test): TLS with a client certificate and SASL DIGEST-MD5.
env = os.environ.get
tls = zkrecipes.Tls(env("ZKRECIPES_AGENT_CA"), env("ZKRECIPES_AGENT_CERT"), env("ZKRECIPES_AGENT_KEY")) if env("ZKRECIPES_AGENT_CA") else None
sasl = zkrecipes.Sasl.digest_md5(env("ZKRECIPES_AGENT_USER"), env("ZKRECIPES_AGENT_PASSWORD")) if env("ZKRECIPES_AGENT_USER") else None
timeout = float(env("ZKRECIPES_AGENT_SESSION_TIMEOUT") or 5)
client = zkrecipes.Client(sys.argv[1], session_timeout=timeout, tls=tls, sasl=sasl, acl="open" if tls else None)
# Counted from right after connecting (listeners run on a library thread).
lost = 0
counting = threading.Lock()


def on_state(state):
    global lost
    if state == zkrecipes.ConnectionState.LOST:
        with counting:
            lost += 1


client.add_listener(on_state)
locks = {}
election = None
lease = None
latch = None
work_queues = {}
delivery = None


def lock(d):
    if d not in locks:
        locks[d] = client.write_lock(d)
    return locks[d]


def work_queue(d):
    if d not in work_queues:
        work_queues[d] = client.work_queue(d)
    return work_queues[d]


def yes(b):
    return "YES" if b else "NO"


for line in sys.stdin:
    cmd, *args = line.split()
    try:
        if cmd == "lock":
            lock(args[0]).acquire()
            reply = f"HELD {lock(args[0]).fencing_token}"
        elif cmd == "trylock":
            reply = f"HELD {lock(args[0]).fencing_token}" if lock(args[0]).acquire(blocking=False) else "BUSY"
        elif cmd == "unlock":
            lock(args[0]).release()
            reply = "OK"
        elif cmd == "offer":
            client.queue(args[0]).offer(b"" if args[1] == "-" else bytes.fromhex(args[1]))
            reply = "OK"
        elif cmd == "poll":
            item = client.queue(args[0]).poll()
            reply = "EMPTY" if item is None else f"ITEM {item.hex() or '-'}"
        elif cmd == "elect":
            election = client.leader_election(args[0], args[1])
            election.start()
            reply = "STARTED"
        elif cmd == "leader?":
            reply = "YES" if election is not None and election.is_leader() else "NO"
        elif cmd == "stop":
            election.stop()
            reply = "STOPPED"
        elif cmd == "session":
            reply = f"SESSION {client.session_id & 0xFFFF_FFFF_FFFF_FFFF:x}"
        elif cmd == "lost?":
            with counting:
                reply = f"LOST {lost}"
        elif cmd == "state":
            reply = client.state.value
        elif cmd == "held?":
            reply = yes(lock(args[0]).is_held)
        elif cmd == "lease":
            semaphore = client.semaphore(args[0], 1)
            lease = semaphore.acquire()
            reply = f"LEASED {lease.fencing_token}"
        elif cmd == "leased?":
            reply = yes(lease is not None and lease.is_held)
        elif cmd == "latch":
            latch = client.leader_latch(args[0], args[1])
            latch.start()
            token = latch.await_leadership(timeout=30)
            reply = "NOT_LEADING" if token is None else f"LEADING {token}"
        elif cmd == "leading?":
            reply = yes(latch is not None and latch.has_leadership())
        elif cmd == "latch-token":
            token = None if latch is None else latch.fencing_token
            reply = f"TOKEN {'-' if token is None else token}"
        elif cmd == "wq-offer":
            work_queue(args[0]).offer(b"" if args[1] == "-" else bytes.fromhex(args[1]))
            reply = "OK"
        elif cmd == "wq-take":
            delivery = work_queue(args[0]).consume(timeout=30)
            reply = "EMPTY" if delivery is None else f"JOB {delivery.data.hex() or '-'}"
        elif cmd == "wq-done":
            delivery.ack()
            delivery = None
            reply = "OK"
        elif cmd == "quit":
            break
        else:
            reply = f"ERR {cmd}"
    except Exception as err:  # noqa: BLE001 - the test reads the failure as a reply
        reply = f"ERR {cmd} {err!r}".replace("\n", " ")
    print(reply, flush=True)
client.close()
