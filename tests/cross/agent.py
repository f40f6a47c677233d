"""Cross-language test agent (Python): runs commands from stdin, one reply line each.
With ZKRECIPES_AGENT_CA/CERT/KEY it connects over TLS, with ZKRECIPES_AGENT_USER/PASSWORD by SASL.

    lock <dir> | trylock <dir> -> HELD <token> | BUSY        unlock <dir> -> OK
    offer <dir> <hex|->        -> OK                          poll <dir>   -> ITEM <hex|-> | EMPTY
    elect <root> <host>        -> STARTED   leader? -> YES|NO   stop -> STOPPED   quit
"""

import sys

import zkrecipes

import os

# The secured variant (test_cross's secure test): TLS with a client certificate and SASL DIGEST-MD5.
env = os.environ.get
tls = zkrecipes.Tls(env("ZKRECIPES_AGENT_CA"), env("ZKRECIPES_AGENT_CERT"), env("ZKRECIPES_AGENT_KEY")) if env("ZKRECIPES_AGENT_CA") else None
sasl = zkrecipes.Sasl.digest_md5(env("ZKRECIPES_AGENT_USER"), env("ZKRECIPES_AGENT_PASSWORD")) if env("ZKRECIPES_AGENT_USER") else None
client = zkrecipes.Client(sys.argv[1], session_timeout=5.0, tls=tls, sasl=sasl, acl="open" if tls else None)
locks = {}
election = None


def lock(d):
    if d not in locks:
        locks[d] = client.write_lock(d)
    return locks[d]


for line in sys.stdin:
    cmd, *args = line.split()
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
    elif cmd == "quit":
        break
    else:
        reply = f"ERR {cmd}"
    print(reply, flush=True)
client.close()
