'use strict'
const crypto = require('node:crypto')
const zk = require('zkrecipes')

const connectString = process.env.ZK_CONNECT
if (!connectString) throw new Error('ZK_CONNECT must point at a ZooKeeper (tests/with-zk sets it)')

function unique (name) {
  return `/node-test/${name}-${crypto.randomUUID()}`
}

async function withClients (n, fn, options = {}) {
  const clients = []
  for (let i = 0; i < n; i++) clients.push(await zk.Client.connect(connectString, options))
  try {
    return await fn(...clients)
  } finally {
    for (const c of clients) await c.close()
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function eventually (what, check, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return
    await sleep(20)
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`)
}

// Keeps every `name` event of `emitter`; `until(what, ready)` resolves once `ready(events)`
// holds, rejects after `timeoutMs`.
function record (emitter, name = 'event', timeoutMs = 20000) {
  const events = []
  const waiters = new Set()
  emitter.on(name, (event) => {
    events.push(event)
    for (const check of [...waiters]) check()
  })
  events.until = (what, ready) => new Promise((resolve, reject) => {
    const done = () => { clearTimeout(timer); waiters.delete(check) }
    const check = () => { if (ready(events)) { done(); resolve(events) } }
    const timer = setTimeout(() => {
      done()
      reject(new Error(`${what}: not within ${timeoutMs} ms; heard ${events.map((e) => e.type + (e.node ? ' ' + e.node.path : '')).join(', ')}`))
    }, timeoutMs)
    waiters.add(check)
    check()
  })
  return events
}

module.exports = { zk, connectString, unique, withClients, sleep, eventually, record }
