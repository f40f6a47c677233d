'use strict'
// zkrecipes from Node.js: uncontended acquire + release (binding overhead vs Rust).
const readline = require('node:readline')
const zk = require('zkrecipes')

async function main () {
  const [workload, connect, count] = process.argv.slice(2)
  if (workload !== 'cycle') throw new Error(`unknown workload ${workload}`)
  const n = Number(count || 2000)
  const client = await zk.Client.connect(connect)
  const lock = client.writeLock(`/bench/node-${process.pid}/cycle`)
  for (let i = 0; i < 50; i++) { await lock.acquire(); await lock.release() }
  console.log('READY')
  await new Promise((resolve) => readline.createInterface({ input: process.stdin }).once('line', resolve))
  const samples = []
  const started = process.hrtime.bigint()
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint()
    await lock.acquire()
    await lock.release()
    samples.push(Number(process.hrtime.bigint() - t) / 1e6)
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  samples.sort((a, b) => a - b)
  console.log(JSON.stringify({ ops: n, seconds, median_ms: samples[n >> 1], p99_ms: samples[Math.min(n - 1, Math.floor(n * 0.99))] }))
  await client.close()
  process.exit(0)
}
main().catch((err) => { console.error(err); process.exit(1) })
