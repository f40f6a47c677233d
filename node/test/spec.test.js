'use strict'
// The behaviour specs of tests/spec, run against the installed package: every scenario is a
// test. The format and the calls are in tests/spec/README.md; the Python, Java and Kotlin
// runners run the same files.

const { test } = require('node:test')
const assert = require('node:assert')
const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const zk = require('zkrecipes')

const SPECS = process.env.ZKRECIPES_SPECS || path.resolve(__dirname, '..', '..', '..', 'tests', 'spec')
const WAIT_MS = 10000 // how long an `acquire` or `await_leadership` waits

function scenarios () {
  const found = []
  for (const file of fs.readdirSync(SPECS).filter((f) => f.endsWith('.spec')).sort()) {
    fs.readFileSync(path.join(SPECS, file), 'utf8').split('\n').forEach((raw, at) => {
      const text = raw.split('#')[0].trim()
      if (!text) return
      if (text.startsWith('scenario ')) {
        found.push({ file: file.replace(/\.spec$/, ''), name: text.slice('scenario '.length), steps: [], only: [] })
        return
      }
      if (text.startsWith('only ')) {
        found[found.length - 1].only.push(...text.split(/\s+/).slice(1))
        return
      }
      const [call, expected] = text.split('=>')
      found[found.length - 1].steps.push({ line: at + 1, words: call.trim().split(/\s+/), expected: expected === undefined ? null : expected.trim() })
    })
  }
  return found.filter((s) => s.only.length === 0 || s.only.includes('node'))
}

// ZKRECIPES_SPEC_MUTATE=1: a wrong expectation, to show the runner can fail.
const mutated = (expected) => expected === 'true' && process.env.ZKRECIPES_SPEC_MUTATE ? 'false' : expected

function shown (value) {
  if (value === null || value === undefined) return 'none'
  if (typeof value === 'boolean') return String(value)
  if (Buffer.isBuffer(value)) return value.toString()
  if (typeof value === 'object' && 'postValue' in value) return String(value.postValue)
  return String(value)
}

const joined = (ids) => [...ids].sort().join(',')

class Runner {
  constructor (connect, root) {
    Object.assign(this, { connect, root, clients: new Map(), objects: new Map(), kinds: new Map(), kept: new Map() })
  }

  path (word) { return word.startsWith('=') ? word.slice(1) : `${this.root}/${word}` }

  make (client, kind, at, args) {
    const makers = {
      lock: () => client.writeLock(at),
      multi_lock: () => client.multiLock([at, ...args.map((word) => this.path(word))]),
      read_lock: () => client.readWriteLock(at).readLock,
      write_lock: () => client.readWriteLock(at).writeLock,
      queue: () => client.queue(at),
      atomic_long: () => client.atomicLong(at),
      shared_count: () => client.sharedCount(at, Number(args[0])),
      semaphore: () => client.semaphore(at, Number(args[0])),
      latch: () => client.leaderLatch(at),
      barrier: () => client.barrier(at),
      double_barrier: () => client.doubleBarrier(at, Number(args[0])),
      work_queue: () => client.workQueue(at),
      election: () => client.leaderElection(at, args[0]),
      persistent_node: () => client.persistentNode(at, { mode: args[0], data: args[1] }),
      node_cache: () => client.nodeCache(at),
      group_member: () => client.groupMember(at, args[0], { payload: args[1] }),
      service_discovery: () => client.serviceDiscovery(at)
    }
    return makers[kind]()
  }

  // Leases and jobs a later call releases.
  keep (name, thing) {
    if (thing !== null) this.kept.get(name).push(thing)
    return thing !== null
  }

  async call (name, verb, args) {
    const obj = this.objects.get(name)
    if (!this.kept.has(name)) this.kept.set(name, [])
    const kept = this.kept.get(name)
    const lock = {
      acquire: () => obj.acquire({ timeoutMs: WAIT_MS }),
      try_acquire: () => obj.tryAcquire(),
      release: () => obj.release(),
      held: () => obj.isHeld
    }
    const consumed = async (wait) => {
      const job = await obj.next({ timeoutMs: wait })
      return this.keep(name, job) ? job.data : null
    }
    const calls = {
      lock,
      multi_lock: lock,
      read_lock: lock,
      write_lock: lock,
      queue: { offer: () => obj.offer(args[0]), poll: () => obj.poll(), size: () => obj.size() },
      atomic_long: {
        get: () => obj.get(),
        increment: () => obj.increment(),
        add: () => obj.add(BigInt(args[0])),
        compare_and_set: () => obj.compareAndSet(BigInt(args[0]), BigInt(args[1]))
      },
      shared_count: { start: () => obj.start(), get: () => obj.get(), set: () => obj.set(Number(args[0])), close: () => obj.close() },
      semaphore: {
        acquire: async () => this.keep(name, await obj.acquire({ timeoutMs: WAIT_MS })),
        try_acquire: async () => this.keep(name, await obj.acquire({ timeoutMs: 0 })),
        release: () => kept.shift().release(),
        held: () => obj.held
      },
      latch: {
        start: () => obj.start(),
        await_leadership: async () => (await obj.awaitLeadership({ timeoutMs: WAIT_MS })) !== null,
        has_leadership: () => obj.hasLeadership(),
        close: () => obj.close()
      },
      barrier: { set: () => obj.set(), remove: () => obj.remove(), is_set: () => obj.isSet(), wait: () => obj.wait({ timeoutMs: 0 }) },
      double_barrier: {
        enter: () => obj.enter({ timeoutMs: WAIT_MS }),
        try_enter: () => obj.enter({ timeoutMs: 0 }),
        leave: () => obj.leave({ timeoutMs: WAIT_MS })
      },
      work_queue: {
        offer: () => obj.offer(args[0]),
        consume: () => consumed(WAIT_MS),
        try_consume: () => consumed(0),
        ack: () => kept.shift().ack(),
        nack: () => kept.shift().nack(),
        size: () => obj.size()
      },
      election: {
        start: () => obj.start(),
        await_leadership: () => obj.awaitLeadership({ timeoutMs: WAIT_MS }),
        is_leader: () => obj.isLeader(),
        stop: () => obj.stop()
      },
      persistent_node: { start: () => obj.start(), close: () => obj.close() },
      node_cache: { start: () => obj.start(), data: () => obj.node && obj.node.data, close: () => obj.close() },
      group_member: { start: () => obj.start(), members: () => joined(obj.members().keys()), close: () => obj.close() },
      service_discovery: {
        register: () => obj.register({ name: args[0], id: args[1], port: Number(args[2]), serviceType: args[3] }),
        update: () => {
          const kept = obj.registered().find((i) => i.name === args[0] && i.id === args[1])
          return obj.update({ ...(kept ?? { name: args[0], id: args[1] }), port: Number(args[2]) })
        },
        unregister: () => obj.unregister({ name: args[0], id: args[1] }),
        registered: () => obj.registered().some((i) => i.name === args[0] && i.id === args[1]),
        names: async () => joined(await obj.queryForNames()) || null,
        ids: async () => joined((await obj.queryForInstances(args[0])).map((i) => i.id)) || null,
        port: async () => (await obj.queryForInstance(args[0], args[1]))?.port ?? null,
        close: () => obj.close()
      }
    }
    return calls[this.kinds.get(name)][verb]()
  }

  async step ({ line, words, expected }) {
    const said = `line ${line}: ${words.join(' ')}`
    if (words[0] === 'client') {
      this.clients.set(words[1], await zk.Client.connect(this.connect))
      return
    }
    const [actor, verb, ...args] = words
    expected = mutated(expected)
    let result
    try {
      if (this.clients.has(actor) && verb === 'close') {
        result = await this.clients.get(actor).close()
      } else if (this.clients.has(actor)) {
        this.kinds.set(args[0], verb)
        this.objects.set(args[0], this.make(this.clients.get(actor), verb, this.path(args[1]), args.slice(2)))
      } else {
        result = await this.call(actor, verb, args)
      }
    } catch (err) {
      if (!(err instanceof zk.ZkError)) throw err
      assert.equal(`error ${err.code}`, expected, `${said} threw ${err.message}`)
      return
    }
    if (expected !== null) assert.equal(expected === 'ok' ? 'ok' : shown(result), expected, said)
  }

  async close () {
    for (const client of this.clients.values()) await client.close()
  }
}

for (const scenario of scenarios()) {
  test(`${scenario.file}: ${scenario.name}`, async () => {
    const runner = new Runner(process.env.ZK_CONNECT, `/spec-${crypto.randomBytes(6).toString('hex')}`)
    try {
      for (const step of scenario.steps) await runner.step(step)
    } finally {
      await runner.close()
    }
  })
}
