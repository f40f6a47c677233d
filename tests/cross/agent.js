'use strict'
// Cross-language test agent (Node.js); same protocol as agent.py.
const readline = require('node:readline')
const zk = require('zkrecipes')

async function main () {
  // The secured variant: TLS with a client certificate and SASL DIGEST-MD5 (see agent.py).
  const env = process.env
  const secure = env.ZKRECIPES_AGENT_CA
    ? {
        tls: { ca: env.ZKRECIPES_AGENT_CA, cert: env.ZKRECIPES_AGENT_CERT, key: env.ZKRECIPES_AGENT_KEY },
        sasl: { mechanism: 'DIGEST-MD5', username: env.ZKRECIPES_AGENT_USER, password: env.ZKRECIPES_AGENT_PASSWORD },
        acl: 'open',
      }
    : {}
  const sessionTimeoutMs = 1000 * Number(env.ZKRECIPES_AGENT_SESSION_TIMEOUT || 5)
  const client = await zk.Client.connect(process.argv[2], { sessionTimeoutMs, ...secure })
  // Counted from right after connecting.
  let lost = 0
  client.on('state', (state) => { if (state === 'LOST') lost += 1 })
  const locks = new Map()
  const lock = (d) => {
    if (!locks.has(d)) locks.set(d, client.writeLock(d))
    return locks.get(d)
  }
  let election = null
  let semaphore = null
  let lease = null
  let latch = null
  const workQueues = new Map()
  const workQueue = (d) => {
    if (!workQueues.has(d)) workQueues.set(d, client.workQueue(d))
    return workQueues.get(d)
  }
  let delivery = null
  const yes = (b) => (b ? 'YES' : 'NO')
  const lines = readline.createInterface({ input: process.stdin })
  for await (const line of lines) {
    const [cmd, ...args] = line.trim().split(/\s+/)
    let reply
    try {
      if (cmd === 'lock') {
        await lock(args[0]).acquire()
        reply = `HELD ${lock(args[0]).fencingToken}`
      } else if (cmd === 'trylock') {
        reply = (await lock(args[0]).tryAcquire()) ? `HELD ${lock(args[0]).fencingToken}` : 'BUSY'
      } else if (cmd === 'unlock') {
        await lock(args[0]).release()
        reply = 'OK'
      } else if (cmd === 'offer') {
        await client.queue(args[0]).offer(args[1] === '-' ? Buffer.alloc(0) : Buffer.from(args[1], 'hex'))
        reply = 'OK'
      } else if (cmd === 'poll') {
        const item = await client.queue(args[0]).poll()
        reply = item === null ? 'EMPTY' : `ITEM ${item.toString('hex') || '-'}`
      } else if (cmd === 'elect') {
        election = client.leaderElection(args[0], args[1])
        await election.start()
        reply = 'STARTED'
      } else if (cmd === 'leader?') {
        reply = election !== null && election.isLeader() ? 'YES' : 'NO'
      } else if (cmd === 'stop') {
        await election.stop()
        reply = 'STOPPED'
      } else if (cmd === 'session') {
        reply = `SESSION ${BigInt.asUintN(64, BigInt(client.sessionId)).toString(16)}`
      } else if (cmd === 'lost?') {
        reply = `LOST ${lost}`
      } else if (cmd === 'state') {
        reply = client.state
      } else if (cmd === 'held?') {
        reply = yes(lock(args[0]).isHeld)
      } else if (cmd === 'lease') {
        semaphore = client.semaphore(args[0], 1)
        lease = await semaphore.acquire()
        reply = `LEASED ${lease.fencingToken}`
      } else if (cmd === 'leased?') {
        // Reading the semaphore keeps it reachable while the lease is kept.
        reply = yes(semaphore !== null && lease.isHeld)
      } else if (cmd === 'latch') {
        latch = client.leaderLatch(args[0], { id: args[1] })
        await latch.start()
        const token = await latch.awaitLeadership({ timeoutMs: 30000 })
        reply = token === null ? 'NOT_LEADING' : `LEADING ${token}`
      } else if (cmd === 'leading?') {
        reply = yes(latch !== null && latch.hasLeadership())
      } else if (cmd === 'latch-token') {
        reply = `TOKEN ${latch?.fencingToken ?? '-'}`
      } else if (cmd === 'wq-offer') {
        await workQueue(args[0]).offer(args[1] === '-' ? Buffer.alloc(0) : Buffer.from(args[1], 'hex'))
        reply = 'OK'
      } else if (cmd === 'wq-take') {
        delivery = await workQueue(args[0]).next({ timeoutMs: 30000 })
        reply = delivery === null ? 'EMPTY' : `JOB ${delivery.data.toString('hex') || '-'}`
      } else if (cmd === 'wq-done') {
        await delivery.ack()
        delivery = null
        reply = 'OK'
      } else if (cmd === 'quit') {
        break
      } else {
        reply = `ERR ${cmd}`
      }
    } catch (err) {
      // The test reads a failure as a reply.
      reply = `ERR ${cmd} ${err?.code ?? ''} ${err?.message ?? err}`.replace(/\n/g, ' ')
    }
    process.stdout.write(reply + '\n')
  }
  // Leaving the loop closes the line reader but not stdin, whose open pipe would keep the
  // process alive after the client is closed (the test waited 15 s, then killed it).
  process.stdin.destroy()
  await client.close()
}

main().catch((err) => { console.error(err); process.exit(1) })
