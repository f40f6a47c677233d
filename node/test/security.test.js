'use strict'
// TLS, SASL DIGEST-MD5 and ACL policies against the harness's secured servers
// (tests/with-secure-zk sets ZK_TLS_CONNECT, ZK_TLS_STRICT_CONNECT, ZK_CERTS).
const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const os = require('node:os')
const readline = require('node:readline')
const { spawn } = require('node:child_process')
const { zk, unique, eventually } = require('./helpers')

const tlsAt = process.env.ZK_TLS_CONNECT
const strictAt = process.env.ZK_TLS_STRICT_CONNECT
const certs = process.env.ZK_CERTS
if (!tlsAt || !strictAt || !certs) throw new Error('run under tests/with-secure-zk')
const cert = (name) => path.join(certs, name)
const tls = { ca: cert('ca.pem') }
const mutual = { ca: cert('ca.pem'), cert: cert('client.pem'), key: cert('client-key.pem') }
const alice = { mechanism: 'DIGEST-MD5', username: 'alice', password: 'alice-secret' }
const bob = { mechanism: 'DIGEST-MD5', username: 'bob', password: Buffer.from('bob-secret') }

async function refused (connectString, options, check) {
  const started = Date.now()
  await assert.rejects(zk.Client.connect(connectString, { connectTimeoutMs: 8000, ...options }), check)
  assert.ok(Date.now() - started < 8000, 'a refusal is final, not retried until the timeout')
}

test('a lock and a queue over TLS with SASL DIGEST-MD5', async () => {
  const c = await zk.Client.connect(tlsAt, { tls, sasl: alice })
  try {
    assert.equal(c.isTls, true)
    assert.ok(c.authenticatedAs.includes('sasl:alice'), String(c.authenticatedAs))
    const lock = c.writeLock(unique('tls-lock'))
    const token = await lock.acquire()
    assert.ok(token > 0n)
    await lock.release()
    const q = c.queue(unique('tls-queue'))
    await q.offer(Buffer.from('over tls'))
    assert.equal((await q.poll()).toString(), 'over tls')
  } finally { await c.close() }
})

test('PEM as text and Buffer, tcp+tls://, a client certificate as x509 identity', async () => {
  const text = fs.readFileSync(cert('ca.pem'), 'utf8')
  const c1 = await zk.Client.connect(`tcp+tls://${tlsAt}`, { tls: { ca: text } })
  await c1.close()
  const c2 = await zk.Client.connect(tlsAt, { tls: { ...mutual, ca: fs.readFileSync(cert('ca.pem')) } })
  try {
    assert.ok((await c2.whoami()).some((id) => id.startsWith('x509:') && id.includes('CN=zkclient')))
  } finally { await c2.close() }
})

test('the strict server: certificate and SASL required', async () => {
  const c = await zk.Client.connect(strictAt, { tls: mutual, sasl: alice })
  await c.close()
  await refused(strictAt, { tls, sasl: alice }, (e) => e.code === 'TLS_REFUSED' && /requires a client certificate/.test(e.message))
  await refused(strictAt, { tls: mutual }, { code: 'AUTH_FAILED' })
})

test('failures name their cause', async () => {
  await refused(tlsAt, { tls: { ca: cert('other-ca.pem') } }, (e) => e.code === 'TLS_REFUSED' && /unknown CA/.test(e.message))
  const port = tlsAt.split(':').pop()
  await refused(`127.0.0.1:${port}`, { tls }, (e) => /hostname mismatch/.test(e.message))
  const unverified = await zk.Client.connect(`127.0.0.1:${port}`, { tls: { ...tls, verifyHostname: false } })
  await unverified.close()
  await refused(tlsAt, {}, (e) => e.code === 'TLS_REFUSED' && /speaks TLS/.test(e.message))
  await refused(tlsAt, { tls, sasl: { ...alice, password: 'wrong-one' } },
    (e) => e.code === 'AUTH_FAILED' && !e.message.includes('wrong-one'))
  await assert.rejects(zk.Client.connect(tlsAt, { tls: { ca: cert('missing.pem') } }),
    (e) => e.code === 'INVALID_ARGUMENT' && e.message.includes('missing.pem'))
  await assert.rejects(zk.Client.connect(tlsAt, { tls: { ca: cert('ca.pem'), cert: cert('client.pem') } }),
    (e) => e.code === 'INVALID_ARGUMENT' && /both or neither/.test(e.message))
  await assert.rejects(zk.Client.connect(tlsAt, { tls: 'ca.pem' }), TypeError)
  await assert.rejects(zk.Client.connect(tlsAt, { tls: { ca: 42 } }), TypeError)
  // From the review: `tls: {}` and misspelled keys went plaintext without a word.
  await assert.rejects(zk.Client.connect(tlsAt, { tls: {} }), TypeError)
  await assert.rejects(zk.Client.connect(tlsAt, { tls: { ...tls, verify_hostname: false } }), TypeError)
  // A misspelt sasl key is refused, not dropped (it connected without the password).
  await assert.rejects(zk.Client.connect(tlsAt, { tls, sasl: { mechanism: 'DIGEST-MD5', user: 'alice', password: 'alice-secret' } }), /unknown sasl option user/)
  await assert.rejects(zk.Client.connect(`tcp://${tlsAt}`, { tls }), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(zk.Client.connect(tlsAt, { tls, acl: 'everyone' }), { code: 'INVALID_ARGUMENT' })
  await assert.rejects(zk.Client.connect(tlsAt, { tls, sasl: { mechanism: 'PLAIN' } }), { code: 'INVALID_ARGUMENT' })
  // A password given to GSSAPI was dropped without a word; it logs in with the ticket cache only.
  await assert.rejects(zk.Client.connect(tlsAt, { tls, sasl: { mechanism: 'GSSAPI', password: 'pw' } }),
    (e) => e.code === 'INVALID_ARGUMENT' && /ticket cache/.test(e.message))
  // Permissions that are numbers but no bitmask are a TypeError, as in Python (were "bad letters").
  for (const perms of [1.5, NaN, Infinity]) {
    await assert.rejects(zk.Client.connect(tlsAt, { tls, acl: [{ perms, scheme: 'world', id: 'anyone' }] }),
      (e) => e instanceof TypeError && /not an integer/.test(e.message), String(perms))
  }
  await assert.rejects(zk.Client.connect(tlsAt, { tls, acl: [{ perms: 99, scheme: 'world', id: 'anyone' }] }),
    (e) => e.code === 'INVALID_ARGUMENT' && /1 \(read\) to 31/.test(e.message))
})

test('one ACL entry is a list of one', async () => {
  const dir = unique('acl-one')
  const a = await zk.Client.connect(tlsAt, { tls, sasl: alice, acl: { perms: 'all', scheme: 'sasl', id: 'alice' } })
  const b = await zk.Client.connect(tlsAt, { tls, sasl: bob })
  try {
    await a.queue(dir).offer(Buffer.from('x'))
    await assert.rejects(b.queue(dir).peek(), { code: 'NO_AUTH' })
  } finally { await a.close(); await b.close() }
})

test('creator-world-read: bob reads alice\'s queue but cannot take from it', async () => {
  const dir = unique('world-read')
  const a = await zk.Client.connect(tlsAt, { tls, sasl: alice, acl: 'creator-world-read' })
  const b = await zk.Client.connect(tlsAt, { tls, sasl: bob })
  try {
    await a.queue(dir).offer(Buffer.from("alice's"))
    assert.equal((await b.queue(dir).peek()).toString(), "alice's")
    await assert.rejects(b.queue(dir).poll(), (e) => e.code === 'NO_AUTH' && e.message.includes('sasl:bob') && e.message.includes(dir))
    assert.equal((await a.queue(dir).poll()).toString(), "alice's")
  } finally { await a.close(); await b.close() }
})

test('an explicit ACL list', async () => {
  const dir = unique('acl-list')
  const a = await zk.Client.connect(tlsAt, { tls, sasl: alice, acl: [{ perms: 'all', scheme: 'sasl', id: 'alice' }, { perms: 1, scheme: 'sasl', id: 'bob' }] })
  const b = await zk.Client.connect(tlsAt, { tls, sasl: bob })
  const anonymous = await zk.Client.connect(tlsAt, { tls })
  try {
    await a.queue(dir).offer(Buffer.from('x'))
    assert.equal((await b.queue(dir).peek()).toString(), 'x')
    await assert.rejects(b.queue(dir).poll(), { code: 'NO_AUTH' })
    await assert.rejects(anonymous.queue(dir).peek(), (e) => e.code === 'NO_AUTH' && /no identity/.test(e.message))
  } finally { await a.close(); await b.close(); await anonymous.close() }
})

test('Kerberos: SASL GSSAPI with the client keytab', async () => {
  const c = await zk.Client.connect(process.env.ZK_KRB5_CONNECT, { sasl: { mechanism: 'GSSAPI' } })
  try {
    assert.deepEqual(c.authenticatedAs, ['sasl:client'])
    const q = c.queue(unique('krb5'))
    await q.offer(Buffer.from('kerberos'))
    assert.equal((await q.poll()).toString(), 'kerberos')
  } finally { await c.close() }
})

test('Kerberos: two clients of one process as two principals, one from a keytab of its own', async () => {
  const own = { mechanism: 'GSSAPI', principal: process.env.ZK_KRB5_SECOND_PRINCIPAL, keytab: process.env.ZK_KRB5_SECOND_KEYTAB }
  const reporter = await zk.Client.connect(process.env.ZK_KRB5_CONNECT, { sasl: own })
  const client = await zk.Client.connect(process.env.ZK_KRB5_CONNECT, { sasl: { mechanism: 'GSSAPI' }, acl: 'creator' })
  try {
    assert.deepEqual(reporter.authenticatedAs, ['sasl:reporter'])
    assert.deepEqual(client.authenticatedAs, ['sasl:client'])
    const dir = unique('krb5-two')
    await client.queue(dir).offer(Buffer.from('for client only'))
    await assert.rejects(reporter.queue(dir).poll(), { code: 'NO_AUTH' })
  } finally { await reporter.close(); await client.close() }
  await assert.rejects(async () => zk.Client.connect(process.env.ZK_KRB5_CONNECT, { sasl: { mechanism: 'GSSAPI', keytab: 42 } }),
    (e) => e instanceof TypeError && /sasl.keytab/.test(e.message))
  await assert.rejects(zk.Client.connect(process.env.ZK_KRB5_CONNECT, { sasl: { ...own, principal: process.env.ZK_KRB5_PRINCIPAL } }),
    (e) => e.code === 'AUTH_FAILED' && e.message.includes(process.env.ZK_KRB5_PRINCIPAL) && e.message.includes(process.env.ZK_KRB5_SECOND_KEYTAB))
})

test('Kerberos without a ticket or keytab: AUTH_FAILED that names kinit', async () => {
  // process.env writes through to the C environment libgssapi reads.
  const saved = { KRB5CCNAME: process.env.KRB5CCNAME, KRB5_CLIENT_KTNAME: process.env.KRB5_CLIENT_KTNAME }
  const empty = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'zk-no-ticket-'))
  process.env.KRB5CCNAME = `FILE:${path.join(empty, 'cache')}`
  delete process.env.KRB5_CLIENT_KTNAME
  try {
    await refused(process.env.ZK_KRB5_CONNECT, { sasl: { mechanism: 'GSSAPI' } },
      (e) => e.code === 'AUTH_FAILED' && /kinit/.test(e.message) && /KRB5CCNAME/.test(e.message))
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]; else process.env[name] = value
    }
    fs.rmSync(empty, { recursive: true, force: true })
  }
})

// `zk-harness proxy` before `server`: the connect string through it (by the certificate's host
// name: TLS runs end to end through the proxy), send(command), and stop().
async function faultProxy (server) {
  const proc = spawn(process.env.ZK_HARNESS, ['proxy', server.replace('localhost', '127.0.0.1')],
    { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = readline.createInterface({ input: proc.stdout })[Symbol.asyncIterator]()
  const next = async (what) => {
    let timer
    const late = new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(`${what}: no answer within 30 s`)), 30000) })
    try { return (await Promise.race([lines.next(), late])).value } finally { clearTimeout(timer) }
  }
  const connect = await next('the proxy')
  assert.match(connect, /^ZK_CONNECT=/)
  return {
    connectString: connect.slice('ZK_CONNECT='.length).replace('127.0.0.1', 'localhost'),
    send: async (command) => { proc.stdin.write(command + '\n'); assert.equal(await next(command), 'OK') },
    stop: () => new Promise((resolve) => { proc.once('exit', resolve); proc.stdin.end() })
  }
}

test('a new session the server refuses after LOST is reported in sessionError', { timeout: 120000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zkrecipes-relost-'))
  const [certFile, keyFile] = [path.join(dir, 'client.pem'), path.join(dir, 'client-key.pem')]
  fs.copyFileSync(cert('client.pem'), certFile)
  fs.copyFileSync(cert('client-key.pem'), keyFile)
  const proxy = await faultProxy(strictAt)
  const c = await zk.Client.connect(proxy.connectString, {
    tls: { ca: cert('ca.pem'), cert: certFile, key: keyFile }, sasl: alice, sessionTimeoutMs: 2000
  })
  try {
    assert.equal(c.sessionError, null)
    const lost = new Promise((resolve) => c.on('state', (state) => { if (state === 'LOST') resolve() }))
    // The certificate file is re-read when it changes: the next session presents this one.
    fs.copyFileSync(cert('client-expired.pem'), certFile)
    fs.copyFileSync(cert('client-expired-key.pem'), keyFile)
    await proxy.send('hole on')
    await lost
    await proxy.send('hole off')
    await eventually('the refusal reported', () => c.sessionError !== null, 30000)
    assert.ok(c.sessionError instanceof zk.ZkError, String(c.sessionError))
    assert.match(c.sessionError.message, /refused our client certificate/)
    assert.notEqual(c.state, 'RECONNECTED')
  } finally {
    await c.close()
    await proxy.stop()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
