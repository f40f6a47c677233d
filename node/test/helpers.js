'use strict'
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const { execFileSync } = require('node:child_process')
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

// What the ESM entry exports under `names` is what the CommonJS one does: one module, not two.
async function assertEsmExports (names) {
  const esm = await import('zkrecipes')
  for (const name of names) assert.equal(esm[name], zk[name], `the ESM entry's ${name}`)
}

// An operator's command against the test server through the harness binary (rm, children,
// ephemerals): what it printed, trimmed. It fails after 30 s rather than hang the suite.
function harness (command, ...args) {
  return execFileSync(process.env.ZK_HARNESS, [command, connectString, ...args], { timeout: 30000 }).toString().trim()
}

// Runs `make` (a function `(client, i, listener)` that builds one recipe object, adds and removes
// `listener` and returns the object, or a promise of it; it may use nothing but its arguments,
// since its source is what runs) `count` times in a child node
// with --expose-gc, drops every object, and reports `{ collected, rounds }`. What the library
// promises is that a dropped object CAN be collected, not when a collector gets round to it: the
// child drives the collector (a full GC, then a turn of the event loop for the finalizers and
// the wrapper's setImmediate unsubscribe) until every one is collected, for as long as 60 s.
function collectedAfterDropping (count, make) {
  const script = `
    const zk = require('zkrecipes')
    ;(async () => {
      const c = await zk.Client.connect(${JSON.stringify(connectString)})
      let collected = 0
      const registry = new FinalizationRegistry(() => { collected++ })
      const make = ${make}
      const f = () => {}
      // In a function of its own, so that no variable of this frame keeps an object alive.
      await (async () => {
        for (let i = 0; i < ${count}; i++) registry.register(await make(c, i, f), i)
      })()
      const deadline = Date.now() + 60000
      let rounds = 0
      while (collected < ${count} && Date.now() < deadline) {
        await new Promise((resolve) => setImmediate(resolve))
        global.gc()
        await new Promise((resolve) => setTimeout(resolve, 10))
        rounds++
      }
      console.log(JSON.stringify({ collected, rounds }))
      await c.close()
    })()
  `
  const out = execFileSync(process.execPath, ['--expose-gc', '-e', script], { cwd: __dirname, timeout: 120000 }).toString().trim()
  return JSON.parse(out)
}

// The metrics tests' scenario: `mine` acquires and releases 100 times; every tenth time `theirs`
// holds the lock and `mine` times out after 300 ms.
async function hundredAcquisitionsTenTimedOut (mine, theirs) {
  const assert = require('node:assert/strict')
  for (let i = 0; i < 100; i++) {
    if (i % 10 === 9) {
      assert.equal(await theirs.acquire(), true)
      assert.equal(await mine.acquire({ timeoutMs: 300 }), false)
      await theirs.release()
    } else {
      assert.equal(await mine.acquire({ timeoutMs: 20000 }), true)
      await mine.release()
    }
  }
}

// The installed package, copied into `project`'s node_modules without anything else (a project
// that never installed OpenTelemetry): with its platform package beside it, where npm installed
// one (a dist's layout; the suite's own tarball carries its addon inside).
function copyInstalledPackage (project) {
  const fs = require('node:fs')
  const path = require('node:path')
  const installed = path.dirname(require.resolve('zkrecipes'))
  const modules = path.dirname(installed)
  for (const name of fs.readdirSync(modules).filter((n) => n === 'zkrecipes' || n.startsWith('zkrecipes-'))) {
    fs.cpSync(path.join(modules, name), path.join(project, 'node_modules', name), { recursive: true })
  }
}

module.exports = { zk, connectString, copyInstalledPackage, unique, withClients, sleep, eventually, record, assertEsmExports, harness, collectedAfterDropping, hundredAcquisitionsTenTimedOut }
