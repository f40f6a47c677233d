'use strict'
// A demo worker in Node.js: election member, producer when leading, consumer always.
// With ZKRECIPES_DEMO_METRICS_PORT (`run.py --prometheus`) it serves its client's metrics there.
const http = require('node:http')
const net = require('node:net')
const readline = require('node:readline')
const zk = require('zkrecipes')

const [connect, root, name, ledgerAddr, sessionTimeout] = process.argv.slice(2)

function ledgerClient (address) {
  const [host, port] = address.split(':')
  const socket = net.connect(Number(port), host)
  const lines = readline.createInterface({ input: socket })
  const waiting = []
  lines.on('line', (line) => waiting.shift()(line))
  let chain = Promise.resolve()
  return (line) => {
    const reply = chain.then(() => new Promise((resolve) => {
      waiting.push(resolve)
      socket.write(line + '\n')
    }))
    chain = reply.catch(() => {})
    return reply
  }
}

// This client's metrics at http://127.0.0.1:<port>/metrics for the demo's Prometheus, and a wait
// for a scrape begun after the work, so that Prometheus's last sample is the final count.
function serveMetrics (client, port) {
  let lastScrapeBegan = -Infinity
  let waiting = []
  const server = http.createServer((request, response) => {
    if (request.url !== '/metrics') {
      response.writeHead(404).end()
      return
    }
    const began = performance.now()
    const body = client.metrics().toPrometheus()
    response.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' })
    // Counted once written: the worker may exit as soon as it is told.
    response.end(body, () => {
      lastScrapeBegan = Math.max(lastScrapeBegan, began)
      const woken = waiting
      waiting = []
      for (const check of woken) check()
    })
  })
  server.listen(port, '127.0.0.1')
  return {
    awaitScrape (timeoutMs) {
      const since = performance.now()
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs)
        const check = () => {
          if (lastScrapeBegan <= since) return waiting.push(check)
          clearTimeout(timer)
          resolve(true)
        }
        waiting.push(check)
      })
    }
  }
}

async function main () {
  const ask = ledgerClient(ledgerAddr)
  await ask(`HELLO ${name} ${process.pid}`)
  const client = await zk.Client.connect(connect, { sessionTimeoutMs: Number(sessionTimeout) * 1000, identity: name })
  const metricsPort = process.env.ZKRECIPES_DEMO_METRICS_PORT
  const endpoint = metricsPort ? serveMetrics(client, Number(metricsPort)) : null
  const lock = client.writeLock(`${root}/lock`)
  const audit = client.readWriteLock(`${root}/audit`)
  const jobs = client.workQueue(`${root}/jobs`) // at least once: a dead worker's job goes to another
  const election = client.leaderElection(`${root}/election`, name)
  let leading = false

  const produce = async () => {
    while ((await ask('DONE?')) === 'NO') {
      const n = Number(await ask(`NEXT ${await jobs.size()}`))
      if (n < 0) {
        await new Promise((resolve) => setTimeout(resolve, 200))
        continue
      }
      await jobs.offer(`job-${n}`)
      await ask(`OFFERED ${n}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
  // The flows beside the job loop keep their first failure here: main reports it at the end
  // instead of the process dying of an unhandled rejection.
  let failure = null
  const failed = (err) => { failure = failure ?? err }
  let producing = null
  election.on('elected_complete', () => {
    leading = true
    producing = ask(`LEADER ${name}`).then(produce).catch(failed)
  })
  await election.start()

  // An interval audit beside the job loop, on one ReadWriteLock object: the job loop's write
  // request waits while an audit reads. The audit in flight is kept, so that shutting down can
  // wait for it before the client closes.
  let auditing = null
  const auditOnce = async () => {
    await audit.readLock.acquire()
    try {
      const token = audit.readLock.fencingToken
      await ask(`AUDIT ${name} ${token}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
      await ask(`AUDITED ${name} ${token}`)
    } finally { await audit.readLock.release() }
  }
  const auditTimer = setInterval(() => {
    if (!leading || auditing) return
    auditing = auditOnce().catch(failed).finally(() => { auditing = null })
  }, 1000)

  while ((await ask('DONE?')) === 'NO') {
    const delivery = await jobs.next({ timeoutMs: 500 })
    if (delivery === null) continue
    const job = Number(delivery.data.toString().split('-')[1])
    await ask(`TAKEN ${job} ${name}`)
    await lock.acquire()
    try {
      await audit.writeLock.acquire()
      try {
        await ask(`APPLY ${job} ${lock.fencingToken} ${name} ${audit.writeLock.fencingToken}`)
      } finally { await audit.writeLock.release() }
    } finally { await lock.release() }
    await delivery.ack()
  }
  // Shutting down: no new audit, the one in flight ends (its read lock released), then the
  // election and the client close.
  clearInterval(auditTimer)
  await auditing
  await producing
  if (failure) throw failure
  await election.stop()
  if (endpoint) await endpoint.awaitScrape(5000)
  // What this worker's own metrics say, for the demo's table (the core estimates the percentiles).
  const metrics = client.metrics()
  const lockPath = `${root}/lock`
  const ms = (h, q) => (h ? (h.quantile(q) ?? 0) * 1000 : 0).toFixed(3)
  const waits = metrics.histogram('zkrecipes.lock.wait.duration', { path: lockPath })
  const holds = metrics.histogram('zkrecipes.lock.hold.duration', { path: lockPath })
  await ask(`METRICS ${name} ${ms(waits, 0.5)} ${ms(waits, 0.99)} ${ms(holds, 0.5)} ${ms(holds, 0.99)} ` +
    `${metrics.counter('zkrecipes.lock.acquisitions', { path: lockPath, outcome: 'acquired' })} ` +
    `${metrics.counter('zkrecipes.work_queue.redeliveries')}`)
  await client.close()
  process.exit(0)
}

main().catch((err) => { console.error(err); process.exit(1) })
