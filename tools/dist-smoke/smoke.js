// One lock acquire/release and one queue offer/take through an installed
// zkrecipes package: `node smoke.js HOST:PORT`. Exits non-zero on any failure.
'use strict'
const assert = require('node:assert')
const { randomUUID } = require('node:crypto')
const { Client } = require('zkrecipes')

async function main (connect) {
  const root = `/dist-smoke/${randomUUID()}`
  const client = await Client.connect(connect, { sessionTimeoutMs: 10_000 })
  try {
    const lock = client.writeLock(`${root}/lock`)
    assert.ok(await lock.acquire({ timeoutMs: 10_000 }), 'the free lock was not acquired')
    const token = lock.fencingToken
    assert.ok(typeof token === 'bigint' && token > 0n, String(token))
    await lock.release()
    const queue = client.queue(`${root}/queue`)
    await queue.offer('job-1')
    assert.strictEqual((await queue.take({ timeoutMs: 10_000 })).toString(), 'job-1')
    assert.strictEqual(await queue.poll(), null)
    console.log(`node ${process.arch}: lock token ${token}, queue ok`)
  } finally {
    await client.close()
  }
}

main(process.argv[2]).catch((err) => {
  console.error(err)
  process.exitCode = 1
})
