'use strict'
// Service discovery from Node.js: instances registered, queried, updated and unregistered with
// Curator's JSON; a cache's events and a listener that calls back into it; providers'
// strategies and down instances; registrations left unawaited and closed; Spring's payload; and
// bad input as typed errors.
const test = require('node:test')
const assert = require('node:assert/strict')
const { zk, unique, withClients, record, assertEsmExports, harness } = require('./helpers')

test('the ESM entry exports the discovery recipes', async () => {
  await assertEsmExports(['ServiceDiscovery', 'ServiceCache', 'ServiceProvider', 'springPayload', 'SERVICE_TYPES'])
})

test('instances register, query, update and unregister with Curator\'s JSON', () => withClients(2, async (c1, c2) => {
  const base = unique('services')
  const registry = c1.serviceDiscovery(base)
  assert.deepEqual(await registry.queryForNames(), [])
  const a = await registry.register({ name: 'api', address: '10.0.0.5', port: 8080, payload: { zone: 'eu-1' }, uriSpec: '{scheme}://{address}:{port}' })
  assert.ok(a.id && a.registrationTimeUtc > 0, 'the core gives the id and the time')
  assert.equal(a.uri, 'http://10.0.0.5:8080')
  assert.equal(a.serviceType, 'DYNAMIC')
  await registry.register({ name: 'api', id: 'b', address: 'h', sslPort: 443, serviceType: 'static' })
  const other = new zk.ServiceDiscovery(c2, base)
  assert.deepEqual(await other.queryForNames(), ['api'])
  const found = await other.queryForInstances('api')
  assert.deepEqual(found.map((i) => i.id).sort(), [a.id, 'b'].sort())
  assert.deepEqual(await other.queryForInstance('api', a.id), a)
  const stored = JSON.parse(zk.serviceInstanceToJson(a).toString())
  assert.deepEqual(Object.keys(stored), ['name', 'id', 'address', 'port', 'sslPort', 'payload', 'registrationTimeUTC', 'serviceType', 'uriSpec'])
  await registry.update({ ...a, port: 9090, enabled: false })
  const moved = await other.queryForInstance('api', a.id)
  assert.equal(moved.port, 9090)
  assert.equal(moved.enabled, false)
  await registry.unregister({ name: 'api', id: 'b' })
  assert.equal(await other.queryForInstance('api', 'b'), null)
  await assert.rejects(registry.update({ name: 'api', id: 'b' }), { code: 'NO_NODE' })
  await registry.close()
  assert.deepEqual(await other.queryForInstances('api'), [], 'close unregistered every instance')
  await other.close()
}))

test('a cache hears instances come, change and go, and a listener may call back into it', () => withClients(1, async (c) => {
  const registry = c.serviceDiscovery(unique('services-cache'))
  const cache = registry.serviceCache('api')
  const seen = []
  cache.on('event', (event) => seen.push([event.type, event.instance ? event.instance.id : null, cache.instances().length]))
  const events = record(cache)
  await cache.start()
  const a = await registry.register({ name: 'api', id: 'a', address: 'h', port: 1 })
  await events.until('ADDED a', (e) => e.some((x) => x.type === 'ADDED'))
  await registry.update({ ...a, port: 2 })
  await events.until('CHANGED a', (e) => e.some((x) => x.type === 'CHANGED'))
  const changed = events.find((e) => e.type === 'CHANGED')
  assert.deepEqual([changed.old.port, changed.instance.port], [1, 2])
  await registry.unregister(a)
  await events.until('REMOVED a', (e) => e.some((x) => x.type === 'REMOVED'))
  assert.deepEqual(seen.filter(([type]) => type !== 'INITIALIZED'), [['ADDED', 'a', 1], ['CHANGED', 'a', 1], ['REMOVED', 'a', 0]])
  assert.throws(() => cache.on('created', () => {}), TypeError, 'a cache event name of another recipe')
  cache.close()
  await registry.close()
}))

test('providers choose enabled, live instances by their strategy', () => withClients(1, async (c) => {
  const registry = c.serviceDiscovery(unique('services-provider'))
  for (const id of ['a', 'b', 'c']) await registry.register({ name: 'api', id, address: 'h', port: 1 })
  await registry.register({ name: 'api', id: 'off', address: 'h', port: 1, enabled: false })
  for (const strategy of zk.PROVIDER_STRATEGIES) {
    const provider = registry.serviceProvider('api', { strategy, downTimeoutMs: 60000, downErrors: 2 })
    await provider.start()
    assert.equal(provider.strategy, strategy)
    assert.equal(provider.getAllInstances().length, 4)
    const chosen = Array.from({ length: 30 }, () => provider.getInstance().id)
    assert.ok(!chosen.includes('off'), strategy)
    if (strategy === 'ROUND_ROBIN') assert.deepEqual(chosen.slice(0, 3).sort(), ['a', 'b', 'c'])
    if (strategy === 'STICKY') assert.equal(new Set(chosen).size, 1)
    const b = await registry.queryForInstance('api', 'b')
    provider.noteError(b)
    provider.noteError(b)
    assert.ok(Array.from({ length: 30 }, () => provider.getInstance().id).every((id) => id !== 'b'), `${strategy}: b is down`)
    provider.close()
  }
  await registry.close()
}))

test('registrations left unawaited leave no node once the registry is closed', () => withClients(1, async (c) => {
  const base = unique('services-unawaited')
  for (let round = 0; round < 40; round++) {
    const registry = c.serviceDiscovery(base)
    // Closed before it settles: it resolves, or rejects with CLOSED.
    const registering = registry.register({ name: 'api', id: `i${round}`, address: 'h', port: 1 }).then(() => null, (err) => err.code)
    await registry.close()
    assert.ok([null, 'CLOSED'].includes(await registering))
  }
  assert.equal(harness('children', `${base}/api`), '0')
}))

test('a registration deleted by somebody else is made again and its registry says so', () => withClients(1, async (c) => {
  const base = unique('services-again')
  const registry = c.serviceDiscovery(base)
  const events = record(registry)
  const a = await registry.register({ name: 'api', id: 'a', address: 'h', port: 1 })
  harness('rm', `${base}/api/a`)
  await events.until('REREGISTERED', (e) => e.length >= 1)
  assert.deepEqual([events[0].type, events[0].service, events[0].id, events[0].reason], ['REREGISTERED', 'api', 'a', undefined])
  assert.deepEqual(await registry.queryForInstance('api', 'a'), a)
  await registry.close()
}))

test('Spring\'s payload names its class', () => {
  const payload = zk.springPayload('app-1', 'app')
  assert.deepEqual(payload, { '@class': 'org.springframework.cloud.zookeeper.discovery.ZookeeperInstance', id: 'app-1', name: 'app', metadata: { instance_status: 'UP' } })
  const read = zk.serviceInstanceFromJson('{"name":"app","id":"x","payload":' + JSON.stringify(payload) + ',"weight":3}')
  assert.deepEqual([read.payload, read.extra], [payload, { weight: 3 }])
})

test('bad input is a typed error and registers nothing', () => withClients(1, async (c) => {
  const registry = c.serviceDiscovery(unique('services-bad'))
  for (const [bad, said] of [
    [{ name: 'a/b', id: 'i' }, /a service name is a node name/],
    [{ name: 'api', id: '' }, /an instance id is a node name/],
    [{ name: 'api', port: 70000 }, /port is a port/],
    [{ name: 'api', serviceType: 'ephemeral' }, /a service type is/],
    [{ name: 'api', uriSpec: '{open' }, /not closed/],
  ]) {
    await assert.rejects(registry.register(bad), (err) => err.code === 'INVALID_ARGUMENT' && said.test(err.message))
  }
  await assert.rejects(registry.register({ name: 'api', port: 1.5 }), TypeError)
  await assert.rejects(registry.register('api'), TypeError)
  assert.throws(() => registry.serviceProvider('api', { strategy: 'fastest' }), { code: 'INVALID_ARGUMENT' })
  assert.throws(() => registry.serviceProvider('api', { downErrors: 0 }), { code: 'INVALID_ARGUMENT' })
  assert.throws(() => zk.serviceInstanceFromJson('[]'), { code: 'INVALID_ARGUMENT' })
  assert.deepEqual(await registry.queryForNames(), [])
  await registry.close()
}))
