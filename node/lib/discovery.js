'use strict'
// Service discovery on Curator's registry: ServiceDiscovery, ServiceCache, ServiceProvider.

const { DISPATCH, EVENT_OF, EventEmitter, KIND, ZkError, asyncDispose, call, deliver, native, nativeEvents, now, optionsOf, requireClient, requireString } = require('./base.js')

// An instance as the native module takes it: the payload and another writer's fields as JSON
// text. Only types are checked here; every rule (ports, names, types, templates) is the core's.
function fieldsOf (instance) {
  if (instance === null || typeof instance !== 'object') throw new TypeError(`instance must be an object like { name, address, port }, got ${typeof instance}`)
  const { name, id, address, port, sslPort, payload, serviceType, uriSpec, enabled, registrationTimeUtc, extra } = instance
  requireString('name', name)
  for (const [what, value] of [['id', id], ['address', address], ['serviceType', serviceType], ['uriSpec', uriSpec]]) {
    if (value !== undefined && value !== null) requireString(what, value)
  }
  for (const [what, value] of [['port', port], ['sslPort', sslPort], ['registrationTimeUtc', registrationTimeUtc]]) {
    if (value !== undefined && value !== null && !Number.isInteger(value)) throw new TypeError(`${what} must be a whole number, got ${typeof value} ${String(value)}`)
  }
  if (enabled !== undefined && enabled !== null && typeof enabled !== 'boolean') throw new TypeError(`enabled must be a boolean, got ${typeof enabled}`)
  return {
    name,
    id: id ?? undefined,
    address: address ?? undefined,
    port: port ?? undefined,
    sslPort: sslPort ?? undefined,
    payload: JSON.stringify(payload === undefined ? null : payload),
    serviceType: serviceType ?? undefined,
    uriSpec: uriSpec ?? undefined,
    enabled: enabled ?? undefined,
    registrationTimeUtc: registrationTimeUtc ?? undefined,
    extra: JSON.stringify(extra ?? {}),
  }
}

// What the native module passes: a frozen instance with its payload and extra fields parsed.
function instanceOf (fields) {
  if (fields === null || fields === undefined) return null
  return Object.freeze({
    name: fields.name,
    id: fields.id,
    address: fields.address ?? null,
    port: fields.port ?? null,
    sslPort: fields.sslPort ?? null,
    payload: fields.payload === undefined || fields.payload === null ? null : JSON.parse(fields.payload),
    registrationTimeUtc: fields.registrationTimeUtc,
    serviceType: fields.serviceType,
    uriSpec: fields.uriSpec ?? null,
    enabled: fields.enabled,
    extra: Object.freeze(fields.extra ? JSON.parse(fields.extra) : {}),
    uri: fields.uri ?? null,
  })
}

/** The instance a registrant's JSON describes (a Buffer or a string). */
function serviceInstanceFromJson (json) {
  const bytes = typeof json === 'string' ? Buffer.from(json, 'utf8') : json
  if (!Buffer.isBuffer(bytes)) throw new TypeError(`json must be a Buffer or a string, got ${typeof json}`)
  return instanceOf(now(() => native.serviceInstanceFromJson(bytes)))
}

/** The instance's JSON as Curator writes it (what the registry holds). */
function serviceInstanceToJson (instance) {
  const fields = fieldsOf(instance)
  return now(() => native.serviceInstanceToJson(fields))
}

/** Spring Cloud Zookeeper's payload (its ZookeeperInstance); metadata defaults to { instance_status: 'UP' }. */
function springPayload (id, name, metadata) {
  requireString('id', id)
  requireString('name', name)
  const shown = metadata ?? { instance_status: 'UP' }
  return JSON.parse(now(() => native.springPayload(id, name, JSON.stringify(shown))))
}

function discoveryEventOf (type, service, id, errorCode, errorMessage) {
  const event = { type, service, id }
  if (errorCode !== null && errorCode !== undefined) event.reason = new ZkError(errorCode, errorMessage)
  return Object.freeze(event)
}

function serviceCacheEventOf (type, instance, old) {
  const event = { type }
  if (instance !== null && instance !== undefined) event.instance = instanceOf(instance)
  if (old !== null && old !== undefined) event.old = instanceOf(old)
  return Object.freeze(event)
}

/**
 * Curator's service registry at `basePath` ('/services', Spring Cloud Zookeeper's default):
 * instances at `<base>/<name>/<id>`, each its JSON as Curator 5.9 writes it. `register()`
 * resolves with the instance as registered (its id and time given) once its node exists; a
 * DYNAMIC instance is registered again by itself under every new session ('reregistered') and
 * never taken from another live session (NODE_EXISTS). `close()` unregisters every instance and
 * closes the caches and providers made here. Emits 'reregistered', 'registration_stopped' (with
 * `reason`), and 'event' for each.
 */
class ServiceDiscovery extends EventEmitter {
  constructor (client, basePath = '/services') {
    super()
    const handle = requireClient(client)
    requireString('basePath', basePath)
    this._native = now(() => new native.NativeServiceDiscovery(handle, basePath))
    nativeEvents(this)
  }

  [DISPATCH] (event) {
    deliver(this, 'event', [event])
    deliver(this, event.type.toLowerCase(), [event])
  }

  get basePath () { return this._native.basePath() }
  async register (instance) {
    const fields = fieldsOf(instance)
    return instanceOf(await call(() => this._native.register(fields)))
  }

  async update (instance) {
    const fields = fieldsOf(instance)
    await call(() => this._native.update(fields))
  }

  async unregister (instance) {
    const { name, id } = fieldsOf(instance)
    if (id === undefined) throw new TypeError('the instance has no id: unregister the instance register() resolved with')
    await call(() => this._native.unregister(name, id))
  }

  registered () { return this._native.registered().map(instanceOf) }
  async queryForNames () { return call(() => this._native.queryForNames()) }
  async queryForInstances (name) {
    requireString('name', name)
    return (await call(() => this._native.queryForInstances(name))).map(instanceOf)
  }

  async queryForInstance (name, id) {
    requireString('name', name)
    requireString('id', id)
    return instanceOf(await call(() => this._native.queryForInstance(name, id)))
  }

  serviceCache (name) {
    requireString('name', name)
    return new ServiceCache(now(() => this._native.serviceCache(name)))
  }

  serviceProvider (name, options) {
    requireString('name', name)
    const { strategy, downTimeoutMs, downErrors } = optionsOf(options, '{ strategy, downTimeoutMs, downErrors }')
    if (strategy !== undefined) requireString('strategy', strategy)
    if (downTimeoutMs !== undefined && typeof downTimeoutMs !== 'number') throw new TypeError(`downTimeoutMs must be a number, got ${typeof downTimeoutMs}`)
    if (downErrors !== undefined && !Number.isInteger(downErrors)) throw new TypeError(`downErrors must be a whole number, got ${typeof downErrors}`)
    return new ServiceProvider(now(() => this._native.serviceProvider(name, strategy, downTimeoutMs, downErrors)))
  }

  async close () { await call(() => this._native.close()) }
  async [asyncDispose] () { await this.close() }
}

ServiceDiscovery.prototype[KIND] = 'ServiceDiscovery'
ServiceDiscovery.prototype[EVENT_OF] = discoveryEventOf

/**
 * A service's instances kept in memory (Curator's ServiceCache) on one watch: `start()`
 * resolves once they are loaded; `instances()` answers from one consistent copy. Emits 'added',
 * 'changed' (with `old`), 'removed', 'initialized', 'suspended', 'reconnected', 'lost', and
 * 'event' for each.
 */
class ServiceCache extends EventEmitter {
  constructor (handle) {
    super()
    this._native = handle
    nativeEvents(this)
  }

  [DISPATCH] (event) {
    deliver(this, 'event', [event])
    deliver(this, event.type.toLowerCase(), [event])
  }

  get name () { return this._native.name() }
  async start () { await call(() => this._native.start()) }
  async awaitInitialized (options) {
    const { timeoutMs } = optionsOf(options, '{ timeoutMs }')
    await call(() => this._native.awaitInitialized(timeoutMs))
  }

  instances () { return this._native.instances().map(instanceOf) }
  close () { this._native.close() }
  async [asyncDispose] () { this.close() }
}

ServiceCache.prototype[KIND] = 'ServiceCache'
ServiceCache.prototype[EVENT_OF] = serviceCacheEventOf

/**
 * Chooses an instance to call (Curator's ServiceProvider): an enabled instance not taken down
 * by its errors (`noteError`), by its strategy ('ROUND_ROBIN', 'RANDOM', 'STICKY').
 */
class ServiceProvider {
  constructor (handle) { this._native = handle }
  get strategy () { return this._native.strategy() }
  async start () { await call(() => this._native.start()) }
  getInstance () { return instanceOf(this._native.getInstance()) }
  getAllInstances () { return this._native.getAllInstances().map(instanceOf) }
  noteError (instance) {
    const fields = fieldsOf(instance)
    now(() => this._native.noteError(fields))
  }

  close () { this._native.close() }
  async [asyncDispose] () { this.close() }
}

module.exports = { ServiceCache, ServiceDiscovery, ServiceProvider, serviceInstanceFromJson, serviceInstanceToJson, springPayload }
