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
  const client = await zk.Client.connect(process.argv[2], { sessionTimeoutMs: 5000, ...secure })
  const locks = new Map()
  const lock = (d) => {
    if (!locks.has(d)) locks.set(d, client.writeLock(d))
    return locks.get(d)
  }
  let election = null
  const lines = readline.createInterface({ input: process.stdin })
  for await (const line of lines) {
    const [cmd, ...args] = line.trim().split(/\s+/)
    let reply
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
    } else if (cmd === 'quit') {
      break
    } else {
      reply = `ERR ${cmd}`
    }
    process.stdout.write(reply + '\n')
  }
  await client.close()
}

main().catch((err) => { console.error(err); process.exit(1) })
