'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { zk, connectString, unique, withClients, sleep, eventually, harness, collectedAfterDropping } = require('./helpers')

test('acquire, tryAcquire, release, fencing token, participants', () => withClients(2, async (a, b) => {
  const dir = unique('lock')
  const mine = a.writeLock(dir)
  const theirs = new zk.WriteLock(b, dir)
  assert.equal(mine.fencingToken, null)
  assert.equal(await mine.acquire(), true)
  assert.equal(typeof mine.fencingToken, 'bigint')
  assert.equal(mine.isHeld, true)
  assert.equal(await theirs.tryAcquire(), false)
  assert.equal(await theirs.acquire({ timeoutMs: 200 }), false)
  const people = await mine.participants()
  assert.deepEqual(people.map((p) => p.identity), [a.identity])
  const token = mine.fencingToken
  await mine.release()
  assert.equal(mine.isHeld, false)
  assert.equal(await theirs.tryAcquire(), true)
  assert.ok(theirs.fencingToken > token)
  await theirs.release()
}))

test('async functions sharing one lock exclude each other; release when not held rejects NOT_OWNER', () => withClients(1, async (c) => {
  // Issue 11, defect 7: one object, one fixed owner let two async functions both "hold" it.
  const lock = c.writeLock(unique('shared-object'))
  let inside = false
  let sections = 0
  await Promise.all([0, 1, 2, 3].map(async () => {
    for (let i = 0; i < 3; i++) {
      await lock.acquire()
      assert.equal(inside, false, 'two holders through one object')
      inside = true
      await new Promise((resolve) => setTimeout(resolve, 2))
      inside = false
      sections++
      await lock.release()
    }
  }))
  assert.equal(sections, 12)
  await lock.acquire()
  assert.equal(lock.holdCount, 1)
  assert.equal(await lock.acquire({ timeoutMs: 50 }), false, 'no reentrancy without a caller identity')
  assert.equal(await lock.tryAcquire(), false)
  await lock.release()
  assert.equal(lock.isHeld, false)
  await assert.rejects(lock.release(), (err) => err instanceof zk.ZkError && err.code === 'NOT_OWNER')
}))

test('timed acquires answer false and leave nothing, whatever the timeout', () => withClients(2, async (a, b) => {
  const dir = unique('timed')
  const held = b.writeLock(dir)
  await held.acquire()
  const lock = a.writeLock(dir)
  for (const timeoutMs of [0, 0.001, 1, 5]) {
    assert.equal(await lock.acquire({ timeoutMs }), false)
    assert.equal((await lock.participants()).length, 1, `timeout ${timeoutMs} left a node`)
  }
  await held.release()
  assert.equal(await lock.acquire({ timeoutMs: 0 }), true, 'zero is a try: a free lock is taken')
  await lock.release()
}))

test('several clients in one process never overlap; tokens strictly increase', () => withClients(4, async (...clients) => {
  const dir = unique('contend')
  let inside = false
  const tokens = []
  await Promise.all(clients.map(async (c) => {
    const lock = c.writeLock(dir)
    for (let i = 0; i < 5; i++) {
      await lock.acquire()
      assert.equal(inside, false, 'two holders at once')
      inside = true
      tokens.push(lock.fencingToken)
      await sleep(2)
      inside = false
      await lock.release()
    }
  }))
  assert.equal(tokens.length, 20)
  for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i] > tokens[i - 1], `tokens ${tokens}`)
}))

test('events acquired / released in order; a throwing listener becomes an error event', () => withClients(1, async (c) => {
  const lock = c.writeLock(unique('events'))
  const seen = []
  const errors = []
  lock.on('acquired', () => seen.push('acquired'))
  lock.on('released', () => seen.push('released'))
  lock.on('acquired', () => { throw new Error('listener bug') })
  lock.on('error', (err) => errors.push(err.message))
  await lock.acquire()
  await lock.release()
  await eventually('events', () => seen.length === 2 && errors.length === 1)
  assert.deepEqual(seen, ['acquired', 'released'])
  assert.deepEqual(errors, ['listener bug'])
  await lock.acquire()
  await lock.release()
  await eventually('recipe goes on', () => seen.length === 4)
}))

test('codes and event names are the core\'s; a rejection keeps the addon error as cause', async () => {
  assert.deepEqual([...zk.ERROR_CODES], [
    'INVALID_PATH', 'INVALID_ARGUMENT', 'CONNECTION_LOSS', 'TLS_REFUSED', 'SESSION_EXPIRED', 'TIMEOUT', 'NO_NODE',
    'NODE_EXISTS', 'NOT_EMPTY', 'BAD_VERSION', 'NO_AUTH', 'AUTH_FAILED', 'NO_SUCH_ELEMENT', 'NOT_OWNER',
    'WOULD_DEADLOCK', 'CLOSED', 'INTERRUPTED', 'INTERNAL',
  ])
  assert.deepEqual([...zk.LOCK_EVENTS], ['ACQUIRED', 'RELEASED', 'SUSPENDED', 'RECONNECTED', 'LOST'])
  assert.equal(zk.ELECTION_EVENTS.length, 14)
  assert.deepEqual([...zk.CONNECTION_STATES], ['CONNECTED', 'SUSPENDED', 'RECONNECTED', 'LOST', 'CLOSED'])
  await withClients(1, async (c) => {
    const err = await c.writeLock('/no/such').release().catch((e) => e)
    assert.ok(err instanceof zk.ZkError)
    assert.equal(err.code, 'NOT_OWNER')
    assert.ok(err.cause instanceof Error, 'the addon error is the cause')
    assert.equal(err.cause.code, 'NOT_OWNER', 'the addon passes the code as a property, nothing is parsed')
    assert.equal(err.cause.message, err.message)
    assert.ok(!err.message.startsWith('NOT_OWNER'), err.message)
    // A millisecond option is answered in milliseconds.
    const negative = await c.writeLock(unique('negative')).acquire({ timeoutMs: -1 }).catch((e) => e)
    assert.equal(negative.code, 'INVALID_ARGUMENT')
    assert.ok(negative.message.includes('-1 ms'), negative.message)
  })
  // A misspelt event name is a TypeError, not a listener that never runs.
  await withClients(1, async (c) => {
    assert.throws(() => c.writeLock(unique('typo')).on('aquired', () => {}), TypeError)
    assert.throws(() => c.leaderElection(unique('typo')).on('elected', () => {}), TypeError)
    assert.throws(() => c.on('State', () => {}), TypeError)
    c.writeLock(unique('ok')).on('acquired', () => {}).on('error', () => {})
  })
  // A recipe made on a closed client fails at once, as in Java.
  const closed = await zk.Client.connect(connectString)
  await closed.close()
  assert.throws(() => closed.writeLock('/x'), (e) => e.code === 'CLOSED')
  assert.throws(() => closed.queue('/x'), (e) => e.code === 'CLOSED')
})

test('lost when an operator deletes the lock node', () => withClients(1, async (c) => {
  const dir = unique('lost')
  const lock = c.writeLock(dir)
  const lost = new Promise((resolve) => lock.once('lost', resolve))
  const acquired = new Promise((resolve) => lock.once('acquired', resolve))
  await lock.acquire()
  const token = lock.fencingToken
  const [holder] = await lock.participants()
  assert.deepEqual(await acquired, { type: 'ACQUIRED', fencingToken: token }, 'ACQUIRED carries the fencing token')
  harness('rm', `${dir}/${holder.node}`)
  const event = await lost
  assert.equal(event.type, 'LOST')
  assert.ok(event.reason instanceof zk.ZkError)
  assert.equal(event.reason.code, 'NO_NODE')
  assert.ok(event.reason.message.includes(holder.node), event.reason.message)
  assert.equal(lock.isHeld, false)
}))

test('read/write lock: readers share, a writer waits for them, a scope upgrade is WOULD_DEADLOCK', () => withClients(2, async (a, b) => {
  const dir = unique('rw')
  const rwA = a.readWriteLock(dir)
  const rwB = new zk.ReadWriteLock(b, dir)
  await rwA.readLock.acquire()
  assert.equal(await rwB.readLock.tryAcquire(), true)
  await rwB.readLock.release()
  assert.equal(await rwB.writeLock.tryAcquire(), false)
  // Outside a scope an acquire has no identity: the same flow's upgrade is another holder,
  // which waits for the read hold (as ReentrantReadWriteLock's does); its deadline ends it.
  assert.equal(await rwA.writeLock.acquire({ timeoutMs: 200 }), false)
  // Inside the read holder's scope the flow is known: its upgrade is refused at once.
  await rwA.readLock.withLock(async () => {
    assert.equal(rwA.readLock.holdCount, 1)
    await assert.rejects(rwA.writeLock.acquire(), { code: 'WOULD_DEADLOCK' })
  })
  await rwA.readLock.release()
  await rwA.writeLock.acquire()
  // Outside a scope a read request beside this object's write hold waits (no implicit downgrade).
  assert.equal(await rwA.readLock.acquire({ timeoutMs: 50 }), false)
  await rwA.writeLock.release()
  // Inside the write holder's scope the read request is a downgrade, granted at once.
  const downgraded = await rwA.writeLock.withLock(async () => {
    return rwA.readLock.withLock(async () => rwA.readLock.isHeld && rwA.writeLock.isHeld)
  })
  assert.equal(downgraded, true)
  assert.equal(rwA.readLock.isHeld || rwA.writeLock.isHeld, false)
  assert.equal(await rwB.readLock.tryAcquire(), true)
  await rwB.readLock.release()
}))

test('issue 48: an interval audit on the read side beside a job loop on the write side of one object', () => withClients(1, async (c) => {
  // The demo's worker: two async flows on one ReadWriteLock object. The write request of the
  // job loop waits for the audit's read hold (it was refused with WOULD_DEADLOCK) and is granted
  // once the audit releases.
  const rw = c.readWriteLock(unique('rw-flows'))
  let auditing = false
  let releaseAudit
  const auditHeld = new Promise((resolve) => {
    rw.readLock.acquire().then(() => {
      auditing = true
      resolve()
      return new Promise((resolve) => { releaseAudit = resolve })
    }).then(async () => {
      auditing = false
      await rw.readLock.release()
    })
  })
  await auditHeld
  let writing = false
  const job = rw.writeLock.acquire().then(() => {
    assert.equal(auditing, false, 'the write ran beside the audit')
    writing = true
  })
  await eventually('the write is in line', async () => (await rw.writeLock.participants()).length === 2)
  assert.equal(writing, false, 'the write must wait for the audit')
  releaseAudit()
  await job
  assert.equal(rw.writeLock.isHeld, true)
  await rw.writeLock.release()
  // The same in scopes: two flows, each its own holder.
  let inRead = false
  let overlapped = false
  let entered
  const readEntered = new Promise((resolve) => { entered = resolve })
  await Promise.all([
    rw.readLock.withLock(async () => { inRead = true; entered(); await sleep(50); inRead = false }),
    readEntered.then(() => rw.writeLock.withLock(async () => { overlapped = inRead })),
  ])
  assert.equal(overlapped, false)
  await assert.rejects(rw.writeLock.withLock(() => {}, { timeoutMs: -1 }), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(rw.writeLock.withLock('nope'), TypeError)
  assert.equal(await rw.writeLock.withLock(() => 42, { timeoutMs: 5000 }), 42)
  await assert.rejects(rw.writeLock.withLock(async () => { throw new Error('boom') }), /boom/)
  assert.equal(rw.writeLock.isHeld, false, 'a throwing scope releases')
}))

test('withLock scopes (adversarial review): a plain release never ends a scope hold, a scope ends with its withLock, fn keeps its error', () => withClients(1, async (c) => {
  const rw = c.readWriteLock(unique('rw-scopes'))
  // A plain reader beside a scope's older read hold: its release ends its own hold, not the
  // scope's (which then failed NOT_OWNER and left the plain node for good).
  let finishScope
  const scopeMayEnd = new Promise((resolve) => { finishScope = resolve })
  let entered
  const inScope = new Promise((resolve) => { entered = resolve })
  const scoped = rw.readLock.withLock(async () => { entered(); await scopeMayEnd; return 'scope done' })
  await inScope
  await rw.readLock.acquire()
  await rw.readLock.release()
  assert.equal(rw.readLock.holdCount, 1, 'the scope still holds')
  await assert.rejects(rw.readLock.release(), { code: 'NOT_OWNER' })
  await assert.rejects(rw.writeLock.release(), { code: 'NOT_OWNER' })
  finishScope()
  assert.equal(await scoped, 'scope done')
  assert.deepEqual(await rw.readLock.participants(), [])
  // Work started inside a scope that runs after it ended is a holder of its own: ticks of one
  // interval never write beside each other.
  const account = c.writeLock(unique('account'))
  let writing = false
  let overlaps = 0
  let ticks = 0
  let timer
  const writes = []
  const started = new Promise((resolve) => {
    rw.writeLock.withLock(async () => {
      timer = setInterval(() => {
        ticks++
        writes.push(account.withLock(async () => {
          if (writing) overlaps++
          writing = true
          await sleep(20) // the write's own duration
          writing = false
        }).catch(() => { overlaps++ }))
        if (ticks === 12) { clearInterval(timer); resolve() }
      }, 5)
    })
  })
  await started
  await Promise.all(writes)
  assert.equal(overlaps, 0, 'a write beside another one, or a failed write')
  // A lock a scope took with a plain acquire and kept ends with the scope: nobody else could
  // release it afterwards.
  const kept = c.writeLock(unique('kept'))
  await rw.writeLock.withLock(async () => { assert.equal(await kept.acquire(), true) })
  assert.equal(kept.isHeld, false)
  assert.deepEqual(await kept.participants(), [])
  // fn's own error survives a failed release.
  const doomed = await zk.Client.connect(connectString)
  const lock = doomed.writeLock(unique('doomed'))
  await assert.rejects(lock.withLock(async () => {
    await doomed.close()
    throw new Error('body error')
  }), /body error/)
  // Dispose ends every hold, scopes' too.
  const other = c.writeLock(unique('dispose-scope'))
  let disposeEntered
  const disposeIn = new Promise((resolve) => { disposeEntered = resolve })
  const pending = other.withLock(async () => { disposeEntered(); await sleep(10) }).catch((err) => err.code)
  await disposeIn
  await other[Symbol.asyncDispose]()
  assert.equal(other.isHeld, false)
  assert.ok([undefined, 'NOT_OWNER'].includes(await pending))
}))

test('await using releases', async () => {
  const c = await zk.Client.connect(connectString)
  const dir = unique('dispose')
  {
    const lock = c.writeLock(dir)
    await lock.acquire()
    await lock[Symbol.asyncDispose]()
    assert.equal(lock.isHeld, false)
  }
  await c[Symbol.asyncDispose]()
  assert.equal(c.state, 'CLOSED')
})

const CHILD = `
const zk = require('zkrecipes')
;(async () => {
  const c = await zk.Client.connect(process.argv[1])
  const lock = c.writeLock(process.argv[2])
  for (let i = 0; i < 10; i++) {
    await lock.acquire()
    const start = Date.now()
    await new Promise((r) => setTimeout(r, 5))
    console.log(JSON.stringify({ token: String(lock.fencingToken), start, end: Date.now() }))
    await lock.release()
  }
  await c.close()
})()
`

test('two Node processes contending: no overlap, tokens strictly increase', async () => {
  const dir = unique('procs')
  const run = () => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', CHILD, connectString, dir], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => { out += d })
    // Ten holds of 5 ms each: idle it takes well under a second.
    const killer = setTimeout(() => child.kill('SIGKILL'), 60000)
    child.on('exit', (code, signal) => {
      clearTimeout(killer)
      if (code === 0) resolve(out.trim().split('\n').map((l) => JSON.parse(l)))
      else reject(new Error(`exit ${code} ${signal || ''}: ${out}`))
    })
  })
  const [one, two] = await Promise.all([run(), run()])
  const all = [...one, ...two].sort((x, y) => (BigInt(x.token) < BigInt(y.token) ? -1 : 1))
  assert.equal(all.length, 20)
  for (let i = 1; i < all.length; i++) {
    assert.ok(BigInt(all[i].token) > BigInt(all[i - 1].token))
    assert.ok(all[i].start >= all[i - 1].end, 'critical sections overlap')
  }
})

test('recipe objects that had listeners are collected once dropped', () => {
  // Issue 16: the wrapper's own newListener/removeListener listeners counted as
  // "watched", so an object that ever had a listener stayed subscribed and alive.
  const { collected, rounds } = collectedAfterDropping(2000, (c, i, listener) => {
    const lock = c.writeLock('/gc-test/lock-' + i)
    lock.on('acquired', listener)
    lock.off('acquired', listener)
    return lock
  })
  assert.equal(collected, 2000, `only ${collected} of 2000 dropped locks were collected after ${rounds} full collections`)
})

test('ReadWriteLock and DistributedQueue dispose: holds released, claim marker deleted', () => withClients(1, async (c) => {
  const rw = c.readWriteLock(unique('rw-dispose'))
  await rw.writeLock.acquire()
  await rw[Symbol.asyncDispose]()
  assert.equal(rw.writeLock.isHeld, false)
  await rw.readLock.acquire()
  await rw.readLock.acquire()
  assert.equal(rw.readLock.holdCount, 2)
  await rw[Symbol.asyncDispose]()
  assert.equal(rw.readLock.isHeld, false)

  const dir = unique('queue-dispose')
  const queue = c.queue(dir)
  await queue.offer('x')
  assert.equal((await queue.poll()).toString(), 'x')
  const ephemerals = () => harness('ephemerals', dir + '.zkrecipes')
  assert.match(ephemerals(), /claim-/, 'a consumer keeps the claim marker of its last take')
  await queue[Symbol.asyncDispose]()
  assert.equal(ephemerals(), '', 'the claim marker is gone after dispose')
  assert.equal(await queue.poll(), null, 'the queue stays usable')
}))

test('a multi-lock: a withLock scope is one holder, tokens per path, disposal releases, bad paths are errors', () => withClients(2, async (a, b) => {
  const [x, y] = [unique('multi-x'), unique('multi-y')]
  const locks = a.multiLock([y, x])
  assert.deepEqual(locks.dirs, [y, x])
  assert.throws(() => a.multiLock(x), TypeError)
  assert.throws(() => a.multiLock([, x]), TypeError) // eslint-disable-line no-sparse-arrays
  assert.throws(() => a.multiLock([x, x]), (err) => err.code === 'INVALID_ARGUMENT')
  assert.throws(() => a.multiLock([]), (err) => err.code === 'INVALID_ARGUMENT')
  const single = b.writeLock(x)
  const tokens = await locks.withLock(async (given) => {
    assert.deepEqual(given, locks.fencingTokens, 'fn gets the tokens')
    assert.equal(await locks.acquire(), true, 'reentrant inside the scope')
    assert.equal(locks.holdCount, 2)
    assert.equal(await single.tryAcquire(), false)
    return locks.fencingTokens
  })
  assert.equal(tokens.length, 2)
  assert.ok(tokens[1] < tokens[0], 'taken in path order: x, then y')
  assert.equal(locks.isHeld, false, 'the scope released what it still held')
  assert.equal(await locks.acquire(), true)
  await locks[Symbol.asyncDispose]()
  assert.equal(locks.isHeld, false)
  assert.equal(await single.tryAcquire(), true)
  await single.release()
}))
