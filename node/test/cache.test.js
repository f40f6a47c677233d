'use strict'
// The caches from Node.js: events in order (Buffers, bigint zxids, the old node of a change), a
// children cache of many nodes, depth limits, a node cache that creates nothing, listeners that
// call back into the cache (and close it), close while events flow and during a start, garbage
// collection, and bad input as typed errors. Another client writes with persistent nodes.
const test = require('node:test')
const assert = require('node:assert/strict')
const { zk, connectString, unique, withClients, record, assertEsmExports, harness, collectedAfterDropping } = require('./helpers')

const line = (events) => events.map((e) => e.type + (e.node ? ' ' + e.node.path : ''))
const persistent = (client, path, data) => client.persistentNode(path, { data, mode: 'persistent' })

test('the ESM entry exports the caches; the event names are the core\'s', async () => {
  await assertEsmExports(['Cache', 'NodeCache', 'ChildrenCache', 'TreeCache', 'CACHE_EVENTS'])
  assert.deepEqual([...zk.CACHE_EVENTS], ['CREATED', 'CHANGED', 'DELETED', 'INITIALIZED', 'SUSPENDED', 'RECONNECTED', 'LOST'])
})

test('a tree cache tells every change in order', () => withClients(2, async (c, writer) => {
  const path = unique('tree')
  const root = persistent(writer, path, 'r')
  await root.start()
  const a = persistent(writer, `${path}/a`, '1')
  await a.start()
  const cache = c.treeCache(path)
  const events = record(cache)
  const created = record(cache, 'created')
  const changed = record(cache, 'changed')
  await cache.start()
  await events.until('the first load', (e) => e.length >= 3)
  assert.deepEqual(line(events), [`CREATED ${path}`, `CREATED ${path}/a`, 'INITIALIZED'], 'parents first, then initialized')
  assert.equal(created.length, 2)
  assert.ok(cache.isInitialized && cache.size === 2 && cache.has(`${path}/a`) && !cache.has(`${path}/b`) && !cache.has(7))
  const first = cache.get(`${path}/a`)
  assert.ok(Buffer.isBuffer(first.data) && first.data.toString() === '1' && first.name === 'a')
  assert.equal(typeof first.stat.czxid, 'bigint')
  assert.equal(first.stat.ephemeralOwner, 0n)
  assert.ok(Object.isFrozen(first) && Object.isFrozen(first.stat))

  const b = persistent(writer, `${path}/a/b`, '2')
  await b.start()
  await events.until('the grandchild', (e) => e.length >= 4)
  await a.setData('3')
  await changed.until('the change', (e) => e.length >= 1)
  assert.deepEqual(line(events).slice(3), [`CREATED ${path}/a/b`, `CHANGED ${path}/a`], "a parent whose child came is no 'changed'")
  const change = changed[0]
  assert.equal(change, events[4], "'event' and 'changed' get the same object")
  assert.equal(change.old.data.toString(), '1')
  assert.equal(change.node.data.toString(), '3')
  assert.ok(change.node.stat.mzxid > change.old.stat.mzxid && change.node.stat.czxid === change.old.stat.czxid)
  assert.equal(change.node.stat.version, 1)
  assert.deepEqual(cache.children(`${path}/a`), ['b'])
  assert.deepEqual(cache.children(), ['a'])

  await b.close()
  await a.close()
  await events.until('the deletes', (e) => e.length >= 7)
  assert.deepEqual(line(events).slice(5), [`DELETED ${path}/a/b`, `DELETED ${path}/a`])
  assert.equal(events[6].node.data.toString(), '3', 'a deleted node as it was')
  assert.deepEqual(cache.snapshot().map((n) => n.path), [path])
  await cache[Symbol.asyncDispose]()
  assert.equal(cache.size, 0, 'a closed cache is empty')
  assert.equal(cache.get(path), null)
  await assert.rejects(cache.start(), (err) => err instanceof zk.ZkError && err.code === 'CLOSED')
  cache.close() // idempotent
  await root.close()
}))

test('a children cache of many nodes', () => withClients(2, async (c, writer) => {
  const path = unique('children')
  const n = 100
  const parent = persistent(writer, path, 'parent')
  await parent.start()
  const names = Array.from({ length: n }, (_, i) => `c${String(i).padStart(3, '0')}`)
  const children = names.map((name, i) => persistent(writer, `${path}/${name}`, String(i)))
  await Promise.all(children.map((child) => child.start()))
  const cache = c.childrenCache(path)
  const events = record(cache)
  await cache.start()
  assert.equal(cache.size, n)
  assert.equal(cache.get(path), null, 'never the parent')
  assert.equal(cache.has(path), false)
  assert.deepEqual(cache.children(), names)
  const snapshot = cache.snapshot()
  assert.deepEqual(snapshot.map((node) => node.name), names)
  assert.ok(snapshot.every((node, i) => node.data.toString() === String(i)))
  await events.until('the first load', (e) => e.length >= n + 1)
  assert.deepEqual(events.slice(0, n).map((e) => e.node.name), names)
  assert.equal(events[n].type, 'INITIALIZED')
  await children[0].close()
  await events.until('the delete', (e) => e.length >= n + 2)
  assert.equal(events[n + 1].type, 'DELETED')
  assert.equal(cache.size, n - 1)
  cache.close()
  await Promise.all(children.slice(1).map((child) => child.close()))
  await parent.close()
}))

test('a node cache creates nothing and sees its node come and go', () => withClients(2, async (c, writer) => {
  const parent = unique('node')
  const path = `${parent}/n`
  const cache = c.nodeCache(path)
  const events = record(cache)
  await cache.start()
  assert.equal(cache.node, null)
  assert.equal(cache.size, 0)
  const listed = harness('children', parent)
  assert.equal(listed, '0', 'nothing created')
  const node = persistent(writer, path, 'v')
  await node.start()
  const child = persistent(writer, `${path}/child`, 'c')
  await child.start() // outside a node cache
  await events.until('the node', (e) => e.some((x) => x.type === 'CREATED'))
  assert.equal(cache.node.data.toString(), 'v')
  await child.close()
  await node.close()
  await events.until('the delete', (e) => e.at(-1).type === 'DELETED')
  assert.ok(events.every((e) => !e.node || e.node.path === path), 'only its node')
  assert.equal(cache.node, null)
  cache.close()
}))

test('max depth limits a tree cache', () => withClients(2, async (c, writer) => {
  const path = unique('depth')
  const nodes = [path, `${path}/a`, `${path}/a/b`].map((p) => persistent(writer, p, ''))
  for (const node of nodes) await node.start()
  const one = c.treeCache(path, { maxDepth: 1 })
  const zero = c.treeCache(path, { maxDepth: 0 })
  await Promise.all([one.start(), zero.start()])
  assert.deepEqual(one.snapshot().map((n) => n.path), [path, `${path}/a`])
  assert.deepEqual(zero.snapshot().map((n) => n.path), [path])
  one.close()
  zero.close()
  for (const node of nodes.reverse()) await node.close()
}))

test('a listener may call back into the cache and close it', () => withClients(2, async (c, writer) => {
  const path = unique('reentrant')
  const cache = c.treeCache(path)
  const seen = []
  let created
  const createdX = new Promise((resolve) => { created = resolve })
  const closed = new Promise((resolve) => {
    cache.on('event', (event) => {
      if (!event.node) return
      // From its own listener: the copy, at least as new as the event.
      const got = cache.get(event.node.path)
      seen.push([event.type, event.node.path, got !== null && got.stat.mzxid >= event.node.stat.mzxid, cache.snapshot().length >= 1])
      if (event.node.path === `${path}/x`) created()
      if (event.node.data.toString() === 'close') {
        cache.close()
        resolve()
      }
    })
  })
  await cache.start()
  const root = persistent(writer, path, '')
  await root.start()
  const x = persistent(writer, `${path}/x`, '1')
  await x.start()
  await createdX // else the two writes may be read as one
  await x.setData('close')
  await closed
  assert.deepEqual(seen, [['CREATED', path, true, true], ['CREATED', `${path}/x`, true, true], ['CHANGED', `${path}/x`, true, true]])
  assert.equal(cache.size, 0)
  await x.close()
  await root.close()
}))

test('close while events flow and during a start', () => withClients(2, async (c, writer) => {
  const path = unique('flow')
  const node = persistent(writer, path, '0')
  await node.start()
  const cache = c.nodeCache(path)
  const changed = record(cache, 'changed')
  await cache.start()
  let writing = true
  const writes = (async () => {
    for (let i = 1; writing; i++) await node.setData(String(i))
  })()
  await changed.until('a few changes', (e) => e.length >= 5)
  cache.close()
  assert.equal(cache.size, 0)
  assert.equal(cache.node, null)
  writing = false
  await writes
  const versions = changed.map((e) => e.node.stat.version)
  assert.deepEqual(versions, [...new Set(versions)].sort((x, y) => x - y), 'in order, each once, up to the close')

  // A close during a start: the start ends (closed, or loaded just before), never hangs.
  for (let i = 0; i < 5; i++) {
    const starting = c.treeCache(path)
    const started = starting.start().catch((err) => err)
    starting.close()
    const outcome = await started
    assert.ok(outcome === undefined || outcome.code === 'CLOSED', String(outcome))
    assert.equal(starting.size, 0)
  }
  await node.close()
}))

test('bad input is typed', () => withClients(1, async (c) => {
  const path = unique('bad')
  assert.throws(() => c.treeCache('relative'), (err) => err instanceof zk.ZkError && err.code === 'INVALID_PATH')
  assert.throws(() => c.childrenCache(`${path}/`), { code: 'INVALID_PATH' })
  assert.throws(() => c.nodeCache(5), TypeError)
  // The core's range, with the code of every language.
  assert.throws(() => c.treeCache(path, { maxDepth: -1 }), (err) => err.code === 'INVALID_ARGUMENT' && err.message.includes('maxDepth must be 0 to 4294967295'))
  assert.throws(() => c.treeCache(path, { maxDepth: 2 ** 32 }), (err) => err.code === 'INVALID_ARGUMENT')
  assert.throws(() => c.treeCache(path, { maxDepth: 1.5 }), TypeError)
  assert.throws(() => c.treeCache(path, 3), TypeError)
  assert.throws(() => new zk.Cache({}), TypeError)
  const cache = c.nodeCache(path)
  assert.throws(() => cache.on('create', () => {}), (err) => err instanceof TypeError && err.message.includes("'created'"))
  assert.throws(() => cache.get(5), TypeError)
  await assert.rejects(cache.awaitInitialized({ timeoutMs: 50 }), { code: 'TIMEOUT' }) // never started
  await assert.rejects(cache.awaitInitialized({ timeoutMs: -1 }), { code: 'INVALID_ARGUMENT' })
  await cache.start()
  await cache.awaitInitialized({ timeoutMs: 0 })
  cache.close()
}))

test('with the client closed, a start rejects with CLOSED and nothing new is made', async () => {
  const c = await zk.Client.connect(connectString)
  const path = unique('closed-client')
  const recipes = [c.treeCache(path), c.persistentNode(`${path}/n`), c.groupMember(path, 'm')]
  await c.close()
  for (const recipe of recipes) await assert.rejects(recipe.start(), { code: 'CLOSED' })
  assert.throws(() => c.nodeCache(path), { code: 'CLOSED' })
  assert.throws(() => c.persistentNode(path), { code: 'CLOSED' })
  assert.throws(() => c.groupMember(path, 'm'), { code: 'CLOSED' })
})

test('caches dropped unclosed are collected once their listeners are gone', () => {
  const { collected, rounds } = collectedAfterDropping(100, async (c, i, listener) => {
    const cache = c.treeCache('/gc-test/cache-' + i)
    cache.on('event', listener)
    await cache.start()
    cache.off('event', listener)
    return cache
  })
  assert.equal(collected, 100, `only ${collected} of 100 dropped caches were collected after ${rounds} full collections`)
})
