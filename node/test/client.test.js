'use strict'
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { zk, connectString, unique } = require('./helpers')

test('state events and double close', async () => {
  const c = await zk.Client.connect(connectString, { identity: 'node-test', sessionTimeoutMs: 5000 })
  assert.equal(c.state, 'CONNECTED')
  assert.equal(c.identity, 'node-test')
  assert.equal(typeof c.sessionId, 'bigint')
  const states = []
  const closed = new Promise((resolve) => c.on('state', (s) => { states.push(s); if (s === 'CLOSED') resolve() }))
  await c.close()
  await c.close()
  await withDeadline(closed, 10000, 'CLOSED event')
  // A chance for a second CLOSED (from the second close) that must not come.
  await new Promise((resolve) => setTimeout(resolve, 100))
  assert.deepEqual(states, ['CLOSED'])
})

test('bad input: TypeError for wrong types, INVALID_PATH, INVALID_ARGUMENT', async () => {
  const c = await zk.Client.connect(connectString)
  try {
    assert.throws(() => c.writeLock(42), TypeError)
    assert.throws(() => new zk.WriteLock({}, '/x'), TypeError)
    for (const bad of ['', 'relative', '/trailing/', '//x', '/a/./b', '/a/../b', '/ctl\u0001', '/zookeeper/x']) {
      assert.throws(() => c.writeLock(bad), (e) => e instanceof zk.ZkError && e.code === 'INVALID_PATH', bad)
      assert.throws(() => c.queue(bad), { code: 'INVALID_PATH' })
      assert.throws(() => c.readWriteLock(bad), { code: 'INVALID_PATH' })
      assert.throws(() => c.leaderElection(bad, 'h'), { code: 'INVALID_PATH' })
    }
    const lock = c.writeLock(unique('bad'))
    await assert.rejects(lock.acquire({ timeoutMs: 'soon' }), TypeError)
    await assert.rejects(lock.acquire(5), TypeError)
    await assert.rejects(lock.acquire({ timeoutMs: -1 }), { code: 'INVALID_ARGUMENT' })
    await assert.rejects(lock.acquire({ timeoutMs: NaN }), { code: 'INVALID_ARGUMENT' })
    await assert.rejects(c.queue(unique('q')).offer(42), TypeError)
    await assert.rejects(zk.Client.connect(42), TypeError)
    await assert.rejects(zk.Client.connect(connectString, { sessionTimeoutMs: -5 }), { code: 'INVALID_ARGUMENT' })
    await assert.rejects(zk.Client.connect(connectString, { auth: 'digest' }), TypeError)
  } finally {
    await c.close()
  }
})

test('unreachable server rejects with CONNECTION_LOSS within the connect timeout', async () => {
  const started = Date.now()
  await assert.rejects(zk.Client.connect('127.0.0.1:1', { connectTimeoutMs: 500 }), { code: 'CONNECTION_LOSS' })
  assert.ok(Date.now() - started < 3000)
})

test('use after close rejects with CLOSED', async () => {
  const c = await zk.Client.connect(connectString)
  const lock = c.writeLock(unique('closed'))
  const q = c.queue(unique('closedq'))
  const e = c.leaderElection(unique('closede'), 'h')
  await c.close()
  await assert.rejects(lock.acquire(), { code: 'CLOSED' })
  await assert.rejects(q.offer('x'), { code: 'CLOSED' })
  await assert.rejects(q.poll(), { code: 'CLOSED' })
  await assert.rejects(e.start(), { code: 'CLOSED' })
  assert.throws(() => c.sessionId, { code: 'CLOSED' })
})

// Runs a Node program (argv[1]: the server); killed if it has not exited by `deadlineMs`
// after it printed `marker` (or after `startMs` at all), so that no read waits forever.
function runScript (source, { marker = null, deadlineMs = 10000, startMs = 30000 } = {}) {
  return new Promise((resolve) => {
    const started = Date.now()
    const child = spawn(process.execPath, ['-e', source, connectString], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    let markedAt = null
    let killer = setTimeout(() => child.kill('SIGKILL'), marker === null ? deadlineMs : startMs)
    child.stdout.on('data', (d) => {
      out += d
      if (marker !== null && markedAt === null && out.includes(marker)) {
        markedAt = Date.now()
        clearTimeout(killer)
        killer = setTimeout(() => child.kill('SIGKILL'), deadlineMs)
      }
    })
    child.on('exit', (code, signal) => {
      clearTimeout(killer)
      const now = Date.now()
      resolve({ code, signal, out, ms: now - started, afterMarkerMs: markedAt === null ? null : now - markedAt })
    })
  })
}

function withDeadline (promise, ms, what) {
  let timer
  const expired = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}

test('the process exits by itself after close()', async () => {
  // README: "the process exits by itself once every client is closed". Measured on this
  // process's clock from the moment the child says it closed; idle it takes well under
  // 100 ms, a child still alive 5 s later is killed and fails the test.
  const result = await runScript(`
    const zk = require('zkrecipes')
    ;(async () => {
      const c = await zk.Client.connect(process.argv[1])
      const lock = c.writeLock('/node-test/exit-' + process.pid)
      lock.on('acquired', () => {})
      await lock.acquire()
      await c.close()
      console.log('CLOSED')
    })()
  `, { marker: 'CLOSED', deadlineMs: 5000 })
  assert.match(result.out, /CLOSED/)
  assert.deepEqual([result.code, result.signal], [0, null],
    `must exit by itself after close(), not be killed ${result.afterMarkerMs} ms later`)
})

test('an open client keeps the process alive; unref() lets it exit', async () => {
  // The timer starts once connected and is unref'd: only the open client may keep the
  // process alive for those 1.5 s (the chance for an exit that must not happen).
  const alive = await runScript(`
    const zk = require('zkrecipes')
    zk.Client.connect(process.argv[1]).then(() => {
      console.log('OPEN')
      setTimeout(() => { console.log('STILL ALIVE'); process.exit(0) }, 1500).unref()
    })
  `)
  assert.match(alive.out, /OPEN\nSTILL ALIVE/)
  assert.deepEqual([alive.code, alive.signal], [0, null])
  const unref = await runScript(`
    const zk = require('zkrecipes')
    zk.Client.connect(process.argv[1]).then((c) => { c.unref(); console.log('UNREF') })
    setTimeout(() => { console.log('STILL ALIVE') }, 5000).unref()
  `)
  assert.deepEqual([unref.code, unref.signal], [0, null])
  assert.match(unref.out, /UNREF/)
  assert.doesNotMatch(unref.out, /STILL ALIVE/)
})

test('ESM import works', async () => {
  const esm = await import('zkrecipes')
  assert.equal(typeof esm.Client.connect, 'function')
  assert.equal(esm.ZkError, zk.ZkError)
})

test('an ACL of another identity is NO_AUTH; credentials stay out of errors', async () => {
  const dir = unique('acl')
  const alice = await zk.Client.connect(connectString, { auth: ['digest', 'alice:s3cret'] })
  const mallory = await zk.Client.connect(connectString, { auth: ['digest', 'mallory:guess'] })
  try {
    await alice.queue(dir).offer('private')
    await assert.rejects(mallory.queue(dir).poll(), (e) => e.code === 'NO_AUTH' && !e.message.includes('s3cret'))
    await assert.rejects(mallory.writeLock(dir).tryAcquire(), { code: 'NO_AUTH' })
    assert.deepEqual(await alice.queue(dir).poll(), Buffer.from('private'))
  } finally {
    await alice.close()
    await mallory.close()
  }
})

test('without an addon for this platform, the error names the platform it looked for', async () => {
  const { execFileSync } = require('node:child_process')
  let failure = null
  try {
    execFileSync(process.execPath, ['-e', "require('zkrecipes')"], {
      cwd: __dirname,
      env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: '/nonexistent/zkrecipes.node' },
      stdio: 'pipe',
      timeout: 30000
    })
  } catch (err) {
    failure = err.stderr.toString()
  }
  assert.ok(failure, 'loading must fail')
  assert.match(failure, /zkrecipes: no native addon for linux-x64-gnu/)
  assert.match(failure, /zkrecipes-linux-x64-gnu/)
  assert.match(failure, /ZKRECIPES_NO_ADDON/)
})

test('on Windows and macOS the loader names the packages the release publishes', async () => {
  const { execFileSync } = require('node:child_process')
  const cases = [['win32', 'x64', 'win32-x64-gnu'], ['darwin', 'arm64', 'darwin-arm64'], ['darwin', 'x64', 'darwin-x64']]
  for (const [platform, arch, expected] of cases) {
    // A Node.js that says it runs there, where this Linux package has no addon: the loader's
    // error names the package npm would have installed there, as a prebuilt one.
    const script = `Object.defineProperty(process, 'platform', { value: '${platform}' });` +
      `Object.defineProperty(process, 'arch', { value: '${arch}' }); require('zkrecipes')`
    let failure = null
    try {
      execFileSync(process.execPath, ['-e', script], { cwd: __dirname, stdio: 'pipe', timeout: 30000 })
    } catch (err) {
      failure = err.stderr.toString()
    }
    assert.ok(failure, `loading as ${platform}-${arch} must fail here`)
    assert.match(failure, new RegExp(`no native addon for ${expected} `))
    assert.match(failure, new RegExp(`npm installs zkrecipes-${expected} as an optional dependency`))
  }
})
