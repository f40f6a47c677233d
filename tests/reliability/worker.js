'use strict'
// Reliability worker (Node.js); same arguments and protocol as worker.py.
const net = require('node:net')
const readline = require('node:readline')
const zk = require('zkrecipes')

const [connect, resource, name, role, count, sessionS, root] = process.argv.slice(2)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function resourceClient () {
  const [host, port] = resource.split(':')
  const socket = net.connect(Number(port), host)
  const waiting = []
  readline.createInterface({ input: socket }).on('line', (line) => waiting.shift()(line))
  let chain = Promise.resolve()
  return (line) => {
    const reply = chain.then(() => new Promise((resolve) => { waiting.push(resolve); socket.write(line + '\n') }))
    chain = reply.catch(() => {})
    return reply
  }
}

async function main () {
  const ask = resourceClient()
  await ask(`HELLO ${name} ${process.pid}`)
  const client = await zk.Client.connect(connect, { sessionTimeoutMs: Number(sessionS) * 1000, connectTimeoutMs: 30000, identity: name })
  if (role === 'lock') {
    const lock = client.writeLock(`${root}/lock`)
    lock.on('lost', () => { ask(`LOST ${name}`) })
    for (let done = 0; done < Number(count) && (await ask('STOP?')) === 'NO';) {
      try {
        if (!(await lock.acquire({ timeoutMs: 30000 }))) continue
      } catch (err) { await sleep(100); continue }
      const token = lock.fencingToken
      await ask(`BEGIN ${name} ${token}`)
      for (let w = 0; w < 3; w++) { await ask(`WRITE ${name} ${token}`); await sleep(5) }
      await ask(`END ${name} ${token}`)
      try { await lock.release() } catch (err) {}
      done++
    }
  } else if (role === 'produce') {
    const q = client.queue(`${root}/queue`)
    for (let i = 0; i < Number(count); i++) {
      const item = `${name}-${i}`
      try { await q.offer(item); await ask(`OFFERED ${item}`) } catch (err) { await ask(`OFFER_LOST ${item}`) }
    }
  } else if (role === 'consume') {
    const q = client.queue(`${root}/queue`)
    while ((await ask('STOP?')) === 'NO') {
      let item
      try { item = await q.take({ timeoutMs: 500 }) } catch (err) { await sleep(100); continue }
      if (item !== null) await ask(`GOT ${item.toString()} ${name}`)
    }
  } else if (role === 'work-produce') {
    const q = client.workQueue(`${root}/work`)
    for (let i = 0; i < Number(count); i += 10) {
      const items = []
      for (let j = i; j < Math.min(i + 10, Number(count)); j++) items.push(`${name}-${j}`)
      let outcome = 'OFFERED'
      try { await q.offerAll(items) } catch (err) { outcome = 'OFFER_LOST' }
      for (const item of items) await ask(`${outcome} ${item}`)
    }
  } else if (role === 'work-consume') {
    // At least once: report the job, then acknowledge it.
    const q = client.workQueue(`${root}/work`, { prefetch: 4 })
    while ((await ask('STOP?')) === 'NO') {
      let job
      try { job = await q.next({ timeoutMs: 500 }) } catch (err) { await sleep(100); continue }
      if (job === null) continue
      await ask(`GOT ${job.data.toString()} ${name}`)
      await sleep(20) // the work: a kill lands while jobs are in hand
      try { await job.ack() } catch (err) {}
    }
  } else if (role === 'elect') {
    const election = client.leaderElection(`${root}/election`, name)
    election.on('elected_complete', () => { ask(`ELECTED ${name}`) })
    election.on('failed', () => { ask(`UNELECTED ${name}`) })
    election.on('stop_start', () => { ask(`UNELECTED ${name}`) })
    await election.start()
    while ((await ask('STOP?')) === 'NO') await sleep(200)
    await election.stop()
  }
  await ask(`DONE ${name}`)
  await client.close()
  process.exit(0)
}
main().catch((err) => { console.error(err); process.exit(1) })
